"""Pre-flight checks and scaling of the built-in studies: advice before anything runs."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from ycsb_runner.cli import app
from ycsb_runner.errors import UserError
from ycsb_runner.prepare.preflight import preflight, steady_findings
from ycsb_runner.prepare.suite import load_suite


def _messages(findings: list, level: str) -> list[str]:
    return [f.message for f in findings if f.level == level]


def test_scaled_thread_study_gets_threads_target_and_w0_advice() -> None:
    suite = load_suite("tencent-threads", scale=0.0002)
    findings = preflight(suite, embedded=True)
    warnings = _messages(findings, "warning")
    assert any("--set threads=[20,40]" in w and "2,000 records" in w for w in warnings), warnings
    assert any("--set load_threads=40" in w for w in warnings)
    (error,) = _messages(findings, "error")
    assert "w=0" in error and "--set mongodb.url_options.w=1" in error
    # the advice works: with it there is no error, and a real mongod (MONGODB_URL) takes w=0
    fixed = load_suite(
        "tencent-threads", ["threads=[20,40]", "load_threads=40", "mongodb.url_options.w=1"], 0.0002
    )
    assert [f for f in preflight(fixed, embedded=True) if f not in steady_findings(fixed)] == []
    assert _messages(preflight(suite, embedded=False), "error") == []


def test_target_advice_names_a_rate_that_fits() -> None:
    suite = load_suite("alibaba-audit", ["maxexecutiontime=20"], scale=0.0002)
    (target,) = [w for w in _messages(preflight(suite, embedded=True), "warning") if "-target" in w]
    assert "-target 100,000 ops/s" in target and "--set target=0" in target
    rate = int(re.search(r"--set target=(\d+)$", target).group(1))
    assert rate == suite.run.operationcount // 20


def test_unscaled_study_has_no_scaling_advice() -> None:
    assert preflight(load_suite("alibaba-audit"), embedded=False) == []
    half = load_suite("quick", scale=0.5)  # 8-s steps: only the steady-state advice
    assert [f for f in preflight(half, embedded=True) if f not in steady_findings(half)] == []


def test_scale_fits_the_status_interval_to_the_step() -> None:
    assert load_suite("alibaba-audit").run.status_interval == 10
    slow = ["maxexecutiontime=30", "estimated_throughput=1000"]  # 500,000 ops at 1,000 ops/s outlast 30 s
    assert load_suite("alibaba-audit", slow, scale=0.001).run.status_interval == 3
    assert load_suite("alibaba-audit", ["maxexecutiontime=30"], scale=0.001).run.status_interval == 1  # 5 s
    assert load_suite("tencent-threads", scale=0.01).run.status_interval == 1  # 12 s steps
    explicit = load_suite("alibaba-audit", ["maxexecutiontime=30", "status_interval=5"], scale=0.001)
    assert explicit.run.status_interval == 5


def test_bench_stops_before_running_with_the_advice(tmp_path) -> None:
    res = CliRunner().invoke(
        app, ["bench", "tencent-threads", "--scale", "0.0002", "--results", str(tmp_path)]
    )
    assert res.exit_code != 0
    assert "stopped before running" in str(res.exception) and "mongodb.url_options.w=1" in str(res.exception)
    assert list(tmp_path.iterdir()) == []  # nothing ran, no result folder


def test_dry_run_shows_the_chosen_audit_strategy() -> None:
    options = ["--audit-option", 'on_args=["--auditDestination","console"]', "--audit-option", "off_args=[]"]
    args = ["bench", "alibaba-audit", "--dry-run", "--audit-strategy", "restart", *options]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "(strategy: restart)" in res.stdout and "choose with --audit-strategy" not in res.stdout


def test_dry_run_refuses_what_bench_refuses_with_the_plan_and_one_error() -> None:
    """Issue 22, items 5 and 11: the dry run exits 2 as bench does, the error is printed once."""
    res = CliRunner().invoke(app, ["bench", "tencent-threads", "--scale", "0.0002", "--dry-run"])
    assert isinstance(res.exception, UserError) and res.exception.exit_code == 2  # main() exits with it
    assert res.stdout.startswith("# suite tencent-threads") and "## step 01-load-t300" in res.stdout
    message = str(res.exception)
    assert message.startswith("stopped before running:") and "mongodb.url_options.w=1" in message
    assert "error:" not in res.stderr  # the CLI prints the one error line; the warnings are printed
    assert "--set threads=[20,40]" in res.stderr
    # a missing strategy option, which bench checks before the server starts, is refused too
    res = CliRunner().invoke(app, ["bench", "alibaba-audit", "--dry-run", "--audit-strategy", "restart"])
    assert isinstance(res.exception, UserError) and res.exception.exit_code == 2
    assert "--audit-option on_args=" in str(res.exception)
    # with the advice the dry run passes
    fixed = ["--set", "threads=[20,40]", "--set", "load_threads=40", "--set", "mongodb.url_options.w=1"]
    res = CliRunner().invoke(app, ["bench", "tencent-threads", "--scale", "0.0002", "--dry-run", *fixed])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize(
    ("option", "says"),
    [
        (["--max-error-rate", "5"], "--max-error-rate 5.0: must be a number from 0 to 1"),
        (["--run-id", "../../evil"], "--run-id '../../evil'"),
        (["--tag", "novalue"], "--tag 'novalue': expected KEY=VALUE"),
    ],
)
def test_dry_run_refuses_the_options_bench_refuses(tmp_path, option: list[str], says: str) -> None:
    """Issue 22, item 5: a bench option that bench refuses (exit 2) is refused by --dry-run too."""
    for dry in (["--dry-run"], []):
        res = CliRunner().invoke(app, ["bench", "quick", *dry, *option, "--results", str(tmp_path)])
        assert isinstance(res.exception, UserError) and res.exception.exit_code == 2, (dry, res.output)
        assert says in str(res.exception)
    assert list(tmp_path.iterdir()) == []


def test_audit_strategy_options_are_checked_before_the_server_starts(tmp_path) -> None:
    runner = CliRunner()
    base = ["bench", "alibaba-audit", "--scale", "0.0002", "--results", str(tmp_path)]
    base += ["--set", "threads=4", "--set", "load_threads=4", "--set", "target=0"]
    res = runner.invoke(app, [*base, "--audit-strategy", "restart"])
    assert res.exit_code != 0 and "--audit-option on_args=" in str(res.exception)
    res = runner.invoke(app, [*base, "--audit-strategy", "command", "--audit-option", 'on_cmd=["true"]'])
    message = str(res.exception)
    assert res.exit_code != 0 and "--audit-option off_cmd=..." in message and "status_cmd" in message
    assert "--audit-option on_cmd" not in message
    res = runner.invoke(app, [*base, "--audit-strategy", "mongodb-runtime"])
    assert res.exit_code != 0 and "needs MONGODB_URL" in str(res.exception)
    assert list(tmp_path.iterdir()) == []


def _fixed_by(message: str) -> list[str]:
    return re.findall(r"--set (\S+)", message)


def test_steps_too_short_for_a_steady_state_get_the_set_that_fixes_it() -> None:
    assert steady_findings(load_suite("quick")) == []  # 15 one-second intervals
    for overrides, scale in ((["warmup_s=10"], 1.0), (["status_interval=2"], 1.0), ([], 0.5)):
        suite = load_suite("quick", overrides, scale=scale)
        (finding,) = steady_findings(suite)
        assert finding.level == "warning" and "fewer than the 10" in finding.message
        assert any(f.message == finding.message for f in preflight(suite, embedded=True))
        for fix in _fixed_by(finding.message):  # each --set it names leaves a steady-state window
            assert steady_findings(load_suite("quick", [*overrides, fix], scale=scale)) == [], fix
    assert _fixed_by(steady_findings(load_suite("quick", ["status_interval=2"]))[0].message) == [
        "status_interval=1",
        "maxexecutiontime=30",
    ]


def test_a_step_bounded_by_its_operations_is_lengthened_by_operationcount() -> None:
    suite = load_suite("alibaba-audit", ["operationcount=10000", "status_interval=1"])  # 0.1 s at 100,000
    (finding,) = steady_findings(suite)
    (fix,) = _fixed_by(finding.message)
    assert fix.startswith("operationcount=")
    assert steady_findings(load_suite("alibaba-audit", ["status_interval=1", fix])) == []
