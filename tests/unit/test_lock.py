"""The per-target bench lock: a live holder refuses a second bench (named, exit 2); a dead one's lock is
taken over; target keys ignore credentials and option order."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ycsb_runner.errors import UserError
from ycsb_runner.safe.lock import check_not_the_target, lock_path, target_key, target_lock

HOLD = """
import sys, time
from ycsb_runner.safe.lock import target_lock
with target_lock(sys.argv[1], suite="quick") as note:
    note("held-run")
    print("held", flush=True)
    time.sleep(60)
"""


def test_target_keys() -> None:
    assert target_key(None) == "embedded"
    assert target_key("mongodb://u:pw@B:1,a/db?x=1") == target_key("mongodb://a:27017,b:1/other")
    assert "pw" not in target_key("mongodb://u:pw@h:2/db")


def test_live_holder_refuses_and_dead_holder_is_taken_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("YCSB_RUNNER_LOCK_DIR", str(tmp_path))
    key = "127.0.0.1:1"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, key],
        stdout=subprocess.PIPE,
        text=True,
        env={"YCSB_RUNNER_LOCK_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(UserError) as err, target_lock(key, suite="quick"):
            pass
        assert err.value.exit_code == 2
        assert f"pid {holder.pid}" in str(err.value) and "held-run" in str(err.value)
        assert "--no-lock" in str(err.value)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # the dead holder's file is still there, naming it: the lock is free all the same
    assert json.loads(lock_path(key).read_text())["pid"] == holder.pid
    with target_lock(key, suite="quick", run_id="mine") as note:
        assert json.loads(lock_path(key).read_text())["pid"] != holder.pid
        note("mine-2")
        assert json.loads(lock_path(key).read_text())["run_id"] == "mine-2"


def test_history_in_the_database_under_test_is_refused() -> None:
    with pytest.raises(UserError, match="database under test"):
        check_not_the_target("mongodb://127.0.0.1:5/ycsb", "mongodb://127.0.0.1:5/ycsb?w=1")
    check_not_the_target("mongodb://127.0.0.1:5/ycsb_history", "mongodb://127.0.0.1:5/ycsb")
    check_not_the_target("mongodb://other:5/ycsb", "mongodb://127.0.0.1:5/ycsb")
    check_not_the_target(None, "mongodb://127.0.0.1:5/ycsb")
