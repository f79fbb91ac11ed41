"""Failures a user meets: a server that dies mid-run, a missing Java, a broken YCSB set-up."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ycsb_runner.bench import BenchOptions, run_bench
from ycsb_runner.errors import RunFailed, UserError
from ycsb_runner.install.embedded import EmbeddedServer

pytestmark = pytest.mark.integration
SUITE = """name = "dies"
[dataset]
recordcount = 300
load_threads = 2
[run]
threads = [2]
operationcount = 100000000
maxexecutiontime = 8
status_interval = 1
[[mix]]
name = "read100"
read = 1.0
"""


def when_the_run_step_runs(results: Path, act: Callable[[], bool], timeout_s: float) -> threading.Thread:
    """A started thread that calls *act* once the run step (02-run-*) of the bench writing to *results* has
    printed a status line, again every 0.2 s until *act* returns True, for *timeout_s* at the most."""

    def wait_and_act() -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for err in results.glob("*/steps/02-run-*/stderr.txt"):
                if " sec: " in err.read_text(errors="replace") and act():
                    return
            time.sleep(0.2)

    thread = threading.Thread(target=wait_and_act, daemon=True)
    thread.start()
    return thread


def test_server_killed_mid_run_fails_the_run_and_keeps_the_load(tmp_path: Path) -> None:
    suite = tmp_path / "dies.toml"
    suite.write_text(SUITE)
    results = tmp_path / "results"
    with EmbeddedServer(log=lambda _m: None) as server:

        def kill_the_server() -> bool:
            os.kill(server.pid, signal.SIGKILL)
            return True

        t = when_the_run_step_runs(results, kill_the_server, timeout_s=120)
        with pytest.raises(RunFailed) as err:
            run_bench(
                BenchOptions(
                    suite=str(suite), url=server.url, results=results, monitors=False, canaries=False
                ),
                log=lambda _m: None,
            )
        t.join()
    assert "02-run-read100" in str(err.value)
    manifest = json.loads(next(results.glob("*/manifest.json")).read_text())
    assert manifest["status"] == "failed"
    load, run = manifest["steps"]
    assert load["status"] == "completed" and load["documents"] == 300
    assert run["status"] in ("failed", "truncated") and run["reasons"]
    assert (results / manifest["run_id"] / "operations.csv").stat().st_size > 0


def test_missing_java_is_one_clear_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-such-jdk"))
    with pytest.raises(UserError, match="Java not found"):
        run_bench(
            BenchOptions(suite="quick", url="mongodb://127.0.0.1:1/ycsb", results=tmp_path),
            log=lambda _m: None,
        )


def test_broken_ycsb_home_is_one_clear_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ycsb" / "lib").mkdir(parents=True)
    monkeypatch.setenv("YCSB_HOME", str(tmp_path / "ycsb"))
    with pytest.raises(UserError, match="core-0.17.0.jar"):
        run_bench(
            BenchOptions(suite="quick", url="mongodb://127.0.0.1:1/ycsb", results=tmp_path),
            log=lambda _m: None,
        )
