"""tools/test_sessions.py, `make test`'s runner of its two pytest sessions side by side."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

RUNNER = Path(__file__).parents[2] / "tools" / "test_sessions.py"


def _runner(main: str, alone: str) -> subprocess.Popen[str]:
    """The runner with this Python as its "pytest": ``python -c MAIN`` and ``python -c ALONE``."""
    return subprocess.Popen(
        [sys.executable, str(RUNNER), sys.executable, "-c", main, "--", "-c", alone],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_both_sessions_run_the_alone_output_follows_and_a_failure_is_the_exit_code() -> None:
    main = "import os, time; time.sleep(0.5); print('main at', os.nice(0))"
    alone = "import os, sys; print('alone at', os.nice(0)); sys.exit(3)"
    proc = _runner(main, alone)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 3, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines[0] == "main at 19" and lines[-1].startswith("alone at "), lines  # in that order
    assert int(lines[-1].split()[-1]) < 19, lines  # the alone session ahead of the main one
    passed = _runner("print('main')", "print('alone')")
    assert passed.wait(timeout=60) == 0


def test_sigterm_stops_both_sessions_through_their_own_interrupt(tmp_path: Path) -> None:
    """SIGTERM to the runner reaches each session as SIGINT (pytest's Ctrl-C: it tears down its servers and
    folders), and the runner ends with their exit code (pytest's 2: interrupted)."""
    wait = (
        "import pathlib, sys, time\ntry:\n    pathlib.Path({ready!r}).touch()\n    time.sleep(60)\n"
        "except KeyboardInterrupt:\n    print({name!r}, 'torn down')\n    sys.exit(2)"
    )
    ready = {name: tmp_path / f"{name}.ready" for name in ("main", "alone")}
    proc = _runner(*(wait.format(ready=str(ready[n]), name=n) for n in ("main", "alone")))
    deadline = time.monotonic() + 60
    while not all(path.exists() for path in ready.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    assert "main torn down" in out and "alone torn down" in out, out
    assert proc.returncode == 2, out
