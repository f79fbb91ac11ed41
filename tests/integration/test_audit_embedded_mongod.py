"""The embedded mongod's clean stop and restart (for the ``restart`` audit strategy).

No mongod is installed here, so the mongod-only paths are checked as far as this machine allows: the
command line (pure), the PRIMARY wait and the shutdown fallback against a real embedded FerretDB. What a
5.0+ mongod does on SIGTERM (step down for ``shutdownTimeoutMillisForSignaledShutdown``, default 15 s) is
from the MongoDB manual (server parameters, "shutdownTimeoutMillisForSignaledShutdown"; "shutdown"
command: ``force``, ``timeoutSecs``).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import psutil
import pytest

from ycsb_runner.errors import UserError
from ycsb_runner.install import embedded as srv


def test_mongod_command_line_bounds_the_signalled_step_down() -> None:
    argv = srv.mongod_argv("/usr/bin/mongod", Path("/d"), 27017, ["--auditDestination", "file"])
    i = argv.index("--setParameter")
    assert argv[i + 1] == "shutdownTimeoutMillisForSignaledShutdown=1000"
    assert i < argv.index("--quiet")  # restart() keeps everything up to --quiet: the bound survives restarts
    assert argv[argv.index("--quiet") + 1 :] == ["--auditDestination", "file"]
    assert argv[argv.index("--replSet") + 1] == "rs0"


@pytest.mark.integration
def test_wait_primary_and_shutdown_fallback_on_a_real_server() -> None:
    info = srv.start(record=False, log=lambda _m: None)
    try:
        started = time.monotonic()
        srv._wait_primary(info.url, timeout=10)  # FerretDB's hello says isWritablePrimary: true
        assert time.monotonic() - started < 5
        as_mongod = replace(info, kind="mongod")
        # FerretDB refuses the shutdown command: the stop must still end the process (signals)
        assert srv._mongod_shutdown(as_mongod, timeout=3) is False and psutil.pid_exists(info.pid)
        srv._stop_process(as_mongod)
        assert not psutil.pid_exists(info.pid) or psutil.Process(info.pid).status() == psutil.STATUS_ZOMBIE
    finally:
        srv.stop(info)
    with pytest.raises(UserError, match="did not become primary within 1s"):
        srv._wait_primary(f"mongodb://127.0.0.1:{srv.free_port()}/", timeout=1)
