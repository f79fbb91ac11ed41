"""The plan's duration estimate (issue 22, item 11): from the throughput earlier runs measured for the same
steps against the same target, else an assumed rate that says so; the target bounds it, maxexecutiontime
caps it. Earlier runs: the checked-in run folder tests/data/runs/audit-analyse (suite audit-analyse-tiny)."""

from __future__ import annotations

import dataclasses
import re
import shlex
import shutil
import socket
import statistics
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ycsb_runner.cli import app
from ycsb_runner.prepare.estimate import earlier_rates, step_rates
from ycsb_runner.prepare.plan import EMBEDDED_OPS_S, JVM_OVERHEAD_S, MeasuredRates, build_plan, rate_key
from ycsb_runner.prepare.suite import load_suite
from ycsb_runner.runs.history import index_run
from ycsb_runner.runs.model import ALL_CLIENTS, RunResult

ROOT = Path(__file__).parents[2]
RUN = ROOT / "tests" / "data" / "runs" / "audit-analyse"
SUITE = ROOT / "tests" / "suites" / "analyse-audit.toml"
# the run's measured throughput (manifest.json): the load, and the four runs of read50_update50 at 2 threads
LOAD_RATE = 183.8235294117647
RUN_RATES = [116.14401858304298, 131.86813186813185, 112.95180722891567, 102.84538909838875]


def _results(tmp_path: Path, n: int = 1, history: bool = True) -> Path:
    """*n* copies of the checked-in run, as run on this host, in a results folder (indexed in its history)."""
    results = tmp_path / "results"
    for i in range(n):
        folder = Path(shutil.copytree(RUN, results / f"2026120{i + 1}-audit-analyse"))
        result = RunResult.load(folder)
        result.manifest.run_id = folder.name
        result.manifest.host = dataclasses.replace(result.manifest.host, hostname=socket.gethostname())
        result.manifest.started_at += i * 86400
        result.save_manifest()
        if history:
            index_run(result, results)
    return results


def _run_steps(plan) -> list:
    return [s for s in plan.steps if s.kind == "run"]


def test_an_unknown_rate_is_assumed_and_said() -> None:
    suite = load_suite(
        "quick"
    )  # 10,000 records, estimated_throughput 2,000; runs end at maxexecutiontime 15 s
    embedded = build_plan(suite)
    assert (
        embedded.estimate_source
        == f"unknown rate: assuming {EMBEDDED_OPS_S:,.0f} ops/s on the embedded server"
    )
    load = embedded.steps[0]
    assert load.est_seconds == pytest.approx(10000 / EMBEDDED_OPS_S + JVM_OVERHEAD_S)
    assert all(s.est_seconds == 15 + JVM_OVERHEAD_S for s in _run_steps(embedded))  # capped
    own = build_plan(suite, MeasuredRates(embedded=False))
    assert own.estimate_source == "unknown rate: assuming the suite's estimated_throughput, 2,000 ops/s"
    assert own.steps[0].est_seconds == pytest.approx(10000 / 2000 + JVM_OVERHEAD_S)


def test_the_target_bounds_the_rate_and_maxexecutiontime_caps_it() -> None:
    slow = load_suite("quick", ["target=500", "operationcount=1000"])
    plan = build_plan(slow, MeasuredRates(embedded=False))
    assert plan.estimate_source.endswith(", at most the target 500 ops/s")
    assert all(s.est_seconds == pytest.approx(1000 / 500 + JVM_OVERHEAD_S) for s in _run_steps(plan))
    capped = build_plan(
        load_suite("quick", ["target=10", "operationcount=1000"]), MeasuredRates(embedded=False)
    )
    assert all(s.est_seconds == 15 + JVM_OVERHEAD_S for s in _run_steps(capped))  # 100 s at 10 ops/s > 15 s
    fast = MeasuredRates({rate_key("run", m.name, 4, 10000, 500): 5000.0 for m in slow.mixes}, runs=1)
    assert all(
        s.est_seconds == pytest.approx(1000 / 500 + JVM_OVERHEAD_S)
        for s in _run_steps(build_plan(slow, fast))
    )


def test_the_readme_command_example_is_minutes_and_without_a_time_limit_longer() -> None:
    """The README's `command` example (12 runs) on the embedded server: its maxexecutiontime keeps each run
    to 15 s; without one each run does its operationcount, which takes longer at the assumed rate."""
    example = ["threads=4", "load_threads=4", "target=0"]
    timed = build_plan(load_suite("alibaba-audit", [*example, "maxexecutiontime=15"], 0.0002))
    assert len(_run_steps(timed)) == 12 and 3 * 60 < timed.est_seconds < 10 * 60
    assert all(s.est_seconds == 15 + JVM_OVERHEAD_S for s in _run_steps(timed))
    untimed = build_plan(load_suite("alibaba-audit", example, 0.0002))
    ops = untimed.suite.run.operationcount
    assert all(
        s.est_seconds == pytest.approx(ops / EMBEDDED_OPS_S + JVM_OVERHEAD_S) for s in _run_steps(untimed)
    )
    assert untimed.est_seconds > 3 * timed.est_seconds and untimed.estimate.endswith(
        f"({untimed.estimate_source})"
    )


def test_measured_rates_come_from_the_runs_steps(tmp_path: Path) -> None:
    rates = step_rates(RunResult.load(RUN).manifest)
    assert rates == {
        rate_key("load", "load", 2, 300, 0): [LOAD_RATE],
        rate_key("run", "read50_update50", 2, 300, 0): RUN_RATES,
    }


@pytest.mark.parametrize("history", [True, False], ids=["history", "folders"])
def test_earlier_runs_against_the_same_target_give_the_estimate(tmp_path: Path, history: bool) -> None:
    results = _results(tmp_path, n=2, history=history)
    measured = earlier_rates("audit-analyse-tiny", None, results)
    assert measured.runs == 2 and measured.embedded
    assert measured.rates[rate_key("run", "read50_update50", 2, 300, 0)] == statistics.median(RUN_RATES * 2)
    plan = build_plan(load_suite(str(SUITE)), measured)
    assert plan.estimate_source == "from 2 earlier runs"
    assert plan.steps[0].est_seconds == pytest.approx(300 / LOAD_RATE + JVM_OVERHEAD_S)
    runs = _run_steps(plan)
    assert len(runs) == 4
    assert all(
        s.est_seconds == pytest.approx(300 / statistics.median(RUN_RATES) + JVM_OVERHEAD_S) for s in runs
    )
    # another target, another suite, other threads: nothing known
    assert earlier_rates("audit-analyse-tiny", "mongodb://db1:27017/ycsb", results).runs == 0
    assert earlier_rates("quick", None, results).runs == 0
    other = build_plan(load_suite(str(SUITE), ["threads=8"]), measured)
    assert other.estimate_source == (
        "from 2 earlier runs; other steps: unknown rate: "
        f"assuming {EMBEDDED_OPS_S:,.0f} ops/s on the embedded server"
    )
    assert all(
        s.est_seconds == pytest.approx(300 / EMBEDDED_OPS_S + JVM_OVERHEAD_S) for s in _run_steps(other)
    )


def test_dry_run_and_render_say_where_the_estimate_comes_from(tmp_path: Path, monkeypatch) -> None:
    results = _results(tmp_path)
    switch = [f'--audit-option={k}_cmd=["true"]' for k in ("on", "off", "status")]
    args = ["bench", str(SUITE), "--dry-run", "--audit-strategy", "command", *switch]
    res = CliRunner().invoke(app, [*args, "--results", str(results)])
    assert res.exit_code == 0, res.output
    header = next(line for line in res.stdout.splitlines() if "steps," in line)
    # 1 load at 184 ops/s, 4 runs of 300 operations at 115 ops/s, 3 audit switches (2 s each)
    assert "estimated 33 s (from 1 earlier run)" in header, header
    res = CliRunner().invoke(app, [*args, "--results", str(tmp_path / "empty")])
    assert f"(unknown rate: assuming {EMBEDDED_OPS_S:,.0f} ops/s on the embedded server)" in res.stdout
    monkeypatch.setenv("YCSB_RUNNER_RESULTS", str(results))
    res = CliRunner().invoke(app, ["render", str(SUITE)])
    assert "estimated 33 s (from 1 earlier run)" in res.stdout


def test_a_multi_client_step_counts_once_at_its_merged_rate() -> None:
    manifest = RunResult.load(RUN).manifest
    load = manifest.steps[0]
    shares = [
        dataclasses.replace(load, keys=dataclasses.replace(load.keys, client=c), throughput_ops_s=t)
        for c, t in (("db1", 90.0), ("db2", 95.0), (ALL_CLIENTS, 185.0))
    ]
    manifest.steps = [*shares, *manifest.steps[1:]]
    assert step_rates(manifest)[rate_key("load", "load", 2, 300, 0)] == [185.0]


def _readme_benches() -> list[list[str]]:
    """The `$ ycsb-runner bench ...` examples of the README and the documentation site on the embedded server
    (no MONGODB_URL), as argv."""
    from docs_pages import text as docs_text

    text = docs_text().replace("\\\n", " ")
    return [shlex.split(m)[2:] for m in re.findall(r"^\$ (ycsb-runner bench .*)$", text, re.M)]


def test_every_readme_bench_example_on_the_embedded_server_is_minutes() -> None:
    """Issue 22, item 11: the README's examples are runs of minutes, not hours, on the embedded server at its
    assumed rate (the `restart` example had no maxexecutiontime: 500,000 operations a run, 16.9 h)."""
    examples = _readme_benches()
    assert len(examples) >= 4
    for argv in examples:
        suite, overrides, scale = argv[0], [], None
        for flag, value in zip(argv, argv[1:], strict=False):
            if flag == "--set":
                overrides.append(value)
            elif flag == "--scale":
                scale = float(value)
        plan = build_plan(load_suite(suite, overrides, scale))
        assert plan.est_seconds < 30 * 60, (argv, plan.estimate)  # minutes, not hours
