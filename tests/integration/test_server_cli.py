"""`ycsb-runner server start|status|stop` as a script would use them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from pymongo import MongoClient

from ycsb_runner.paths import cache_dir

pytestmark = pytest.mark.integration
CLI = [sys.executable, "-m", "ycsb_runner", "server"]


def own_cache_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a ycsb-runner with a cache folder of its own (set-up's YCSB and server binary
    linked in): the servers of other test workers and checkouts and one started by hand are recorded in
    the shared cache's ``server`` folder, never in this one, so ``server`` commands see and stop only
    this test's."""
    cache = tmp_path / "cache"
    cache.mkdir()
    for entry in cache_dir().iterdir():
        if entry.name not in ("server", "locks"):
            (cache / entry.name).symlink_to(entry)
    env = {k: v for k, v in os.environ.items() if k != "MONGODB_URL"}
    env["YCSB_RUNNER_CACHE"] = str(cache)
    return env


def test_start_prints_url_last_then_status_and_stop(tmp_path: Path) -> None:
    env = own_cache_env(tmp_path)
    run = lambda *args, timeout=60: subprocess.run(  # noqa: E731
        [*CLI, *args], capture_output=True, text=True, timeout=timeout, env=env, check=False
    )
    assert run("status").returncode == 1  # nothing started in this cache yet
    start = run("start", timeout=120)
    assert start.returncode == 0, start.stderr
    url = start.stdout.strip().splitlines()[-1]
    assert url.startswith("mongodb://127.0.0.1:")
    try:
        with MongoClient(url, serverSelectionTimeoutMS=5000) as c:
            assert c.admin.command("ping")["ok"] == 1.0
        status = run("status")
        assert status.returncode == 0 and url in status.stdout
        pid = int(status.stdout.split(" pid ")[1].split()[0])
        again = run("start")
        assert again.returncode != 0 and "already running" in again.stderr and "Traceback" not in again.stderr
    finally:
        stop = run("stop")
    assert stop.returncode == 0
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert run("status").returncode == 1


SUITE = """name = "status-during-bench"
description = "a bench that runs until it is stopped"
estimated_throughput = 1000
[dataset]
recordcount = 100
load_threads = 2
[run]
threads = [2]
operationcount = 100000000
maxexecutiontime = 120
# paced: the bench only has to be running while `server status` looks (unpaced it took both cores)
target = 100
status_interval = 1
[[mix]]
name = "c-read100"
read = 1.0
"""


def test_status_shows_the_server_a_running_bench_started(tmp_path: Path) -> None:
    suite, results = tmp_path / "status.toml", tmp_path / "results"
    suite.write_text(SUITE)
    env = own_cache_env(tmp_path)  # this `server status` sees the bench's server alone
    bench = subprocess.Popen(
        [sys.executable, "-m", "ycsb_runner", "bench", str(suite), "--results", str(results), "--no-monitors",
         "--no-report", "--no-canaries"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while not any(
            " sec: " in p.read_text(errors="replace") for p in results.glob("*/steps/02-*/stderr.txt")
        ):
            assert bench.poll() is None and time.monotonic() < deadline, "the bench's run step did not start"
            time.sleep(0.2)
        run_id = next(p.name for p in results.iterdir() if p.is_dir() and not p.is_symlink())
        server_pid = next(p.pid for p in psutil.Process(bench.pid).children() if "ferretdb" in p.name() or
                          "mongod" in p.name())  # fmt: skip
        status = subprocess.run(
            [*CLI, "status"], capture_output=True, text=True, timeout=60, env=env, check=False
        )
        # listed, with its owner; exit 1: no server of `server start` runs (scripts test that)
        assert status.returncode == 1 and "Traceback" not in status.stderr, status.stderr
        assert "no embedded server started by `ycsb-runner server start`" in status.stderr
        mine = status.stdout.splitlines()
        assert len(mine) == 1 and f"bench {run_id}" in mine[0], status.stdout
        assert f"pid {server_pid} mongodb://127.0.0.1:" in mine[0] and f"pid {bench.pid};" in mine[0], mine[0]
        url = mine[0].split(f"pid {server_pid} ")[1].split()[0]
        with MongoClient(url, serverSelectionTimeoutMS=5000) as c:  # the URL it shows is the bench's server
            assert c.ycsb.usertable.estimated_document_count() == 100
    finally:
        bench.terminate()
        bench.communicate(timeout=60)
    assert bench.returncode == 143
    after = subprocess.run([*CLI, "status"], capture_output=True, text=True, timeout=60, env=env, check=False)
    assert run_id not in after.stdout
