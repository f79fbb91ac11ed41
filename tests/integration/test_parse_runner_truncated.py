"""The live runner records a step whose YCSB output was cut short as `truncated`, and the run as failed."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import psutil
import pytest
from test_failures_integration import when_the_run_step_runs  # same folder

from ycsb_runner.bench import BenchOptions, run_bench
from ycsb_runner.errors import RunFailed
from ycsb_runner.install.embedded import EmbeddedServer

pytestmark = pytest.mark.integration
SUITE = """name = "cut"
[dataset]
recordcount = 200
load_threads = 2
[run]
threads = [2]
operationcount = 100000000
maxexecutiontime = 20
status_interval = 1
[[mix]]
name = "read100"
read = 1.0
"""


def _ycsb_clients() -> list[psutil.Process]:
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if any("ycsb.Client" in part for part in child.cmdline()):
                found.append(child)
        except psutil.Error:
            continue
    return found


def test_ycsb_killed_mid_run_is_a_truncated_step(tmp_path: Path) -> None:
    suite = tmp_path / "cut.toml"
    suite.write_text(SUITE)
    results = tmp_path / "results"
    killed: list[int] = []
    with EmbeddedServer(log=lambda _m: None) as server:

        def kill_the_clients() -> bool:
            for proc in _ycsb_clients():
                proc.send_signal(signal.SIGKILL)
                killed.append(proc.pid)
            return bool(killed)

        t = when_the_run_step_runs(results, kill_the_clients, timeout_s=180)
        with pytest.raises(RunFailed):
            run_bench(
                BenchOptions(
                    suite=str(suite), url=server.url, results=results, monitors=False, canaries=False
                ),
                log=lambda _m: None,
            )
        t.join()
    assert killed, "the YCSB client of the run step was never seen"
    manifest = json.loads(next(results.glob("*/manifest.json")).read_text())
    assert manifest["status"] == "failed"
    load, run = manifest["steps"]
    assert load["status"] == "completed"
    assert run["status"] == "truncated", run
    assert any("no [OVERALL] summary" in r for r in run["reasons"]), run["reasons"]
