"""End to end: an alibaba-audit-like suite (tests/suites/audit-small.toml) with real audit switching.

FerretDB, the embedded server, has no audit log. The switches below are honest stand-ins:

* ``command``: the on/off/status programs are small ``python -c`` scripts that write/read a state file
  (and append every switch to a history file). The strategy really runs them, and the runner verifies
  the state they report after every switch, but the server's behaviour does not change: for the server
  this is an A/A experiment, which the A/A test uses.
* ``restart``: the embedded FerretDB is really restarted (new pid) with ``-log-level debug`` for "on" and
  ``-log-level warn`` for "off" -- a different logging configuration, not an audit log.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import psutil
import pytest

from ycsb_runner.analyse.stats import ab_table
from ycsb_runner.bench import BenchOptions, run_bench
from ycsb_runner.errors import UserError
from ycsb_runner.install import embedded as srv
from ycsb_runner.report.run_report import write_report

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
SUITE = str(Path(__file__).parents[1] / "suites" / "audit-small.toml")
# A short single-mix variant for the restart, failure and signal tests (the runs end by time).
ONE_MIX = ["mixes=read50_update50", "repetitions=1", "recordcount=100"]

SWITCH = (
    "import pathlib, sys; a, s, h = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]); "
    "print(s.read_text().strip()) if a == 'status' else sys.exit('stand-in audit switch: refused') "
    "if a == 'fail' else (s.write_text(a), h.open('a').write(a + ' '))"
)


class Switch:
    """A state-file audit switch driven through the command strategy."""

    def __init__(self, folder: Path, start: str, on_action: str = "on") -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.state = folder / "audit-state.txt"
        self.history = folder / "audit-history.txt"
        self.state.write_text(start)
        self.history.write_text("")
        self.on_action = on_action

    def argv(self, action: str) -> list[str]:
        return [sys.executable, "-c", SWITCH, action, str(self.state), str(self.history)]

    def options(self) -> dict[str, Any]:
        return {
            "on_cmd": self.argv(self.on_action),
            "off_cmd": self.argv("off"),
            "status_cmd": self.argv("status"),
        }

    def cli_args(self) -> list[str]:
        return [
            arg
            for key, val in self.options().items()
            for arg in ("--audit-option", f"{key}={json.dumps(val)}")
        ]

    def status(self) -> str:
        out = subprocess.run(self.argv("status"), capture_output=True, text=True, check=True, timeout=30)
        return out.stdout.strip()

    def switches(self) -> list[str]:
        return self.history.read_text().split()


def bench_argv(results: Path, strategy: str, *options: str, sets: Sequence[str] = ()) -> list[str]:
    """``python -m ycsb_runner bench`` of the audit-small suite into *results* (no canaries), with each of
    *sets* as a ``--set``, audit switched by *strategy* and then its *options*."""
    return [
        sys.executable,
        "-m",
        "ycsb_runner",
        "bench",
        SUITE,
        "--results",
        str(results),
        "--no-canaries",
        *(a for o in sets for a in ("--set", o)),
        "--audit-strategy",
        strategy,
        *options,
    ]


def only_run_folder(results: Path) -> Path:
    """The one run folder in *results* (not the ``latest`` link nor the history)."""
    (run_dir,) = [p for p in results.iterdir() if p.is_dir() and not p.is_symlink()]
    return run_dir


# (phase, audit, status) of the steps of a one-mix run up to its "on" switch, when all went well
OFF_RUN_DONE = [("load", "none", "completed"), ("audit", "off", "completed"), ("run", "off", "completed")]


def _statuses(manifest: dict) -> list[tuple[str, str, str]]:
    return [(s["phase"], s["audit"], s["status"]) for s in manifest["steps"]]


def _runs(steps: list[dict]) -> list[dict]:
    return [s for s in steps if s["phase"] == "run"]


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.fixture(scope="module")
def command_run(mongo_url: str, tmp_path_factory: pytest.TempPathFactory):
    """The whole audit-small suite once, command strategy; the switch starts "on" so restoring matters."""
    tmp = tmp_path_factory.mktemp("audit-command")
    switch = Switch(tmp / "switch", start="on")
    outcome = run_bench(
        BenchOptions(
            suite=SUITE,
            url=mongo_url,
            results=tmp / "results",
            # 100 operations a run, not the suite's 300: what is checked is the order, the states and the
            # counts of thirteen YCSB steps (the A/A comparison only for its form)
            overrides=["operationcount=100"],
            audit_strategy="command",
            audit_options=switch.options(),
            sample_interval_s=1.0,
            canaries=False,  # (two BasicDB JVMs this file does not look at)
            report=False,  # (nor its report: the restart test writes one of an audit run and reads it)
        ),
        log=lambda _m: None,
    )
    return outcome, switch


def test_every_run_has_the_verified_audit_state(command_run) -> None:
    outcome, switch = command_run
    manifest = json.loads((outcome.run_dir / "manifest.json").read_text())
    assert manifest["status"] == "completed"
    assert manifest["audit_strategy"] == "command"
    assert (
        manifest["audit_baseline"]
        == "audit: off = what the user's off command does (not known to ycsb-runner)"
    )
    current = None
    for step in manifest["steps"]:
        if step["phase"] == "audit":
            assert step["status"] == "completed"
            assert step["audit_verified"] == step["audit"], step["step"]
            assert f"status command said '{step['audit']}'" in step["audit_detail"]
            current = step["audit_verified"]
        elif step["phase"] == "run":
            assert step["audit"] == current, f"{step['label']} ran with audit verified {current}"
    audit_steps = [s["audit"] for s in manifest["steps"] if s["phase"] == "audit"]
    # every switch in the plan ran the real command, plus the final restore to "on"
    assert switch.switches() == [*audit_steps, "on"]


def test_interleaved_order_per_mix(command_run) -> None:
    outcome, _ = command_run
    runs = _runs(json.loads((outcome.run_dir / "manifest.json").read_text())["steps"])
    for mix in ("insert100", "read50_update50"):
        mine = [r for r in runs if r["mix"] == mix]
        assert [(r["audit"], r["repetition"]) for r in mine] == [("off", 1), ("on", 1), ("on", 2), ("off", 2)]
    # insert100 changes the dataset: every run after one of its runs starts from a fresh load
    kinds = [s["phase"] for s in json.loads((outcome.run_dir / "manifest.json").read_text())["steps"]]
    assert kinds.count("load") == 5


def test_audit_state_restored_after_the_suite(command_run) -> None:
    _, switch = command_run
    assert switch.status() == "on"  # as before the suite, although its last arm was "off"


def test_results_on_disk(command_run) -> None:
    outcome, _ = command_run
    root = outcome.run_dir
    for name in ("manifest.json", "steps.csv", "summary.csv", "timeseries.csv", "operations.csv"):
        assert (root / name).stat().st_size > 0, name
    manifest = json.loads((outcome.run_dir / "manifest.json").read_text())
    steps = outcome.result.steps
    assert list(steps["step"]) == [s["step"] for s in manifest["steps"]]
    runs = steps[steps["phase"] == "run"]
    assert len(runs) == 8 and (runs["throughput_ops_s"] > 0).all()
    summary = outcome.result.summary
    assert set(summary["audit"]) >= {"on", "off"}
    for step in _runs(manifest["steps"]):
        d = root / "steps" / step["step"]
        assert (d / "stdout.txt").stat().st_size > 0 and (d / "stderr.txt").is_file(), step["step"]


def test_aa_comparison_on_real_runs_is_well_formed(command_run) -> None:
    """A/A: the stand-in switch changes nothing on the server, so "off" and "on" are the same treatment.

    Two runs per arm are too few for a verdict to be stable on a shared machine, so this asserts what
    holds whatever the timings: each arm's mean is the mean of its runs, the interval of the difference
    contains the observed difference, and the p-value is a probability."""
    outcome, _ = command_run
    steps = outcome.result.steps
    runs = steps[steps["phase"] == "run"]
    table = ab_table(runs, ["mix"], "audit", ["throughput_ops_s"], "off", "on")
    assert list(table["mix"]) == ["insert100", "read50_update50"]
    assert (table["n_a"] == 2).all() and (table["n_b"] == 2).all()
    for row in table.itertuples():
        mine = runs[runs["mix"] == row.mix]
        assert row.a_mean == pytest.approx(mine[mine["audit"] == "off"]["throughput_ops_s"].mean())
        assert row.b_mean == pytest.approx(mine[mine["audit"] == "on"]["throughput_ops_s"].mean())
        assert row.ci_low <= row.change <= row.ci_high
        assert 0 <= row.p_value <= 1


def test_restart_strategy_really_restarts_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    restarts: list[dict[str, Any]] = []
    real_restart = srv.restart

    def watched(info: srv.ServerInfo, extra_args: list[str] | None = None, **kw: Any) -> srv.ServerInfo:
        new = real_restart(info, extra_args, **kw)
        restarts.append(
            {
                "old": info.pid,
                "new": new.pid,
                "args": list(extra_args or []),
                "old_alive": _alive(info.pid),
                "new_alive": _alive(new.pid),
            }
        )
        return new

    monkeypatch.setattr(srv, "restart", watched)
    lines: list[str] = []
    outcome = run_bench(
        BenchOptions(
            suite=SUITE,
            url=None,
            results=tmp_path,
            overrides=[*ONE_MIX, "maxexecutiontime=2"],
            audit_strategy="restart",
            audit_options={"on_args": ["-log-level", "debug"], "off_args": ["-log-level", "warn"]},
            monitors=False,
            canaries=False,
        ),
        log=lines.append,
    )
    first = int(re.search(r"\(pid (\d+)\)", "\n".join(lines)).group(1))
    # off (the plan's first switch), on, then back to off = the state before the suite
    assert [r["args"] for r in restarts] == [
        ["-log-level", "warn"],
        ["-log-level", "debug"],
        ["-log-level", "warn"],
    ]
    pids = [first] + [r["new"] for r in restarts]
    assert len(set(pids)) == len(pids), "every restart must start a new server process"
    assert all(not r["old_alive"] and r["new_alive"] for r in restarts)
    assert not _alive(pids[-1]), "the embedded server must be stopped after the suite"
    manifest = json.loads((outcome.run_dir / "manifest.json").read_text())
    assert manifest["status"] == "completed"
    assert manifest["audit_baseline"] == "audit disabled = restart without auditLog"
    _, md = write_report(outcome.run_dir, tmp_path / "report")
    assert (
        "audit baseline" in md.read_text() and "audit disabled = restart without auditLog" in md.read_text()
    )
    audits = [s for s in manifest["steps"] if s["phase"] == "audit"]
    assert [(s["audit"], s["audit_verified"]) for s in audits] == [("off", "off"), ("on", "on")]
    assert audits[1]["audit_detail"].endswith("-log-level warn -log-level debug")
    runs = _runs(manifest["steps"])
    assert [r["audit"] for r in runs] == ["off", "on"]
    assert all(r["status"] == "completed" and r["throughput_ops_s"] > 0 for r in runs)


def test_failing_on_command_stops_the_suite(mongo_url: str, tmp_path: Path) -> None:
    switch = Switch(tmp_path / "switch", start="off", on_action="fail")
    with pytest.raises(UserError) as err:
        run_bench(
            BenchOptions(
                suite=SUITE,
                url=mongo_url,
                results=tmp_path / "results",
                overrides=[*ONE_MIX, "operationcount=100"],
                audit_strategy="command",
                audit_options=switch.options(),
                monitors=False,
                canaries=False,
            ),
            log=lambda _m: None,
        )
    assert err.value.exit_code != 0
    message = str(err.value)
    assert "audit on command failed" in message and "stand-in audit switch: refused" in message
    assert "\n" not in message
    manifest = json.loads((Path(err.value.run_dir) / "manifest.json").read_text())
    assert manifest["status"] == "failed"
    assert _statuses(manifest) == [*OFF_RUN_DONE, ("audit", "on", "failed")]
    assert not [s for s in manifest["steps"] if s["phase"] == "run" and s["audit"] == "on"]
    assert switch.status() == "off"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_during_on_run_restores_and_cleans_up(
    signum: int, tmp_path: Path, wait_for_on_run: Callable[[Path, subprocess.Popen], Path]
) -> None:
    switch = Switch(tmp_path / "switch", start="off")
    results = tmp_path / "results"
    env = {k: v for k, v in os.environ.items() if k != "MONGODB_URL"}  # its own embedded server
    sets = [*ONE_MIX, "maxexecutiontime=5", "operationcount=1000000"]
    argv = bench_argv(results, "command", *switch.cli_args(), sets=sets)
    with open(tmp_path / "out.txt", "wb") as out, open(tmp_path / "err.txt", "wb") as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=ROOT, env=env)
    try:
        wait_for_on_run(results, proc)
        children = psutil.Process(proc.pid).children(recursive=True)
        names = " ".join(" ".join(c.cmdline()) for c in children)
        assert "site.ycsb.Client" in names and ("ferretdb" in names.lower() or "mongod" in names)
        proc.send_signal(signum)
        code = proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    stderr = (tmp_path / "err.txt").read_text(errors="replace")
    assert code == 128 + signum, stderr[-2000:]  # 130 for SIGINT, 143 for SIGTERM
    assert "Traceback" not in stderr
    assert switch.status() == "off"
    assert switch.switches() == ["off", "on", "off"]
    left = [c.pid for c in children if _alive(c.pid)]
    assert not left, f"processes left behind: {left}"
    run_dir = only_run_folder(results)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert _statuses(manifest) == [*OFF_RUN_DONE, ("audit", "on", "completed"), ("run", "on", "interrupted")]
    steps = pd.read_csv(run_dir / "steps.csv")
    assert list(steps["status"]) == [s["status"] for s in manifest["steps"]]
    assert (run_dir / "steps" / manifest["steps"][2]["step"] / "stdout.txt").stat().st_size > 0


def test_mongodb_runtime_refuses_ferretdb_before_running(server: srv.ServerInfo, tmp_path: Path) -> None:
    if server.kind != "ferretdb":
        pytest.skip("the embedded server is a real mongod here")
    mongo_url = server.url
    env = dict(os.environ, MONGODB_URL=mongo_url)
    proc = subprocess.run(
        bench_argv(tmp_path, "mongodb-runtime"),
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert proc.returncode != 0
    assert "Traceback" not in proc.stdout + proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    assert "FerretDB" in errors[0] and "no audit log" in errors[0]
    assert not [p for p in tmp_path.rglob("*") if p.is_dir()], "no result folder may be created"
