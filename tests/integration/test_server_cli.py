"""`ycsb-runner server start|status|stop` as a script would use them."""

from __future__ import annotations

import subprocess
import sys

import psutil
import pytest
from pymongo import MongoClient

pytestmark = pytest.mark.integration
CLI = [sys.executable, "-m", "ycsb_runner", "server"]


def test_start_prints_url_last_then_status_and_stop() -> None:
    if subprocess.run([*CLI, "status"], capture_output=True, check=False).returncode == 0:
        pytest.skip("an embedded server started by hand is running; not touching it")
    start = subprocess.run([*CLI, "start"], capture_output=True, text=True, timeout=120, check=False)
    assert start.returncode == 0, start.stderr
    url = start.stdout.strip().splitlines()[-1]
    assert url.startswith("mongodb://127.0.0.1:")
    try:
        with MongoClient(url, serverSelectionTimeoutMS=5000) as c:
            assert c.admin.command("ping")["ok"] == 1.0
        status = subprocess.run([*CLI, "status"], capture_output=True, text=True, timeout=60, check=False)
        assert status.returncode == 0 and url in status.stdout
        pid = int(status.stdout.split(" pid ")[1].split()[0])
        again = subprocess.run([*CLI, "start"], capture_output=True, text=True, timeout=60, check=False)
        assert again.returncode != 0 and "already running" in again.stderr and "Traceback" not in again.stderr
    finally:
        stop = subprocess.run([*CLI, "stop"], capture_output=True, text=True, timeout=60, check=False)
    assert stop.returncode == 0
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert subprocess.run([*CLI, "status"], capture_output=True, check=False).returncode == 1
