"""run_phase on small scripted children (no JVM): exit codes, the hard timeout, stderr kept."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ycsb_runner.execute.phase import run_phase


def _run(tmp_path: Path, code: str, timeout_s: float):
    out, private = tmp_path / "out", tmp_path / "private"
    out.mkdir(exist_ok=True)
    private.mkdir(exist_ok=True)
    return run_phase([sys.executable, "-c", code], out_dir=out, private_dir=private, timeout_s=timeout_s)


def test_exit_code_and_both_streams_are_kept(tmp_path: Path) -> None:
    done = _run(tmp_path, "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)", 30)
    assert (done.exit_code, done.timed_out, done.interrupted) == (3, False, False)
    assert done.stdout_path.read_text() == "out\n"
    assert done.stderr_path.read_text() == "err\n"


def test_a_child_past_its_timeout_is_killed(tmp_path: Path) -> None:
    started = time.monotonic()
    done = _run(
        tmp_path, "import sys, time; print('began', file=sys.stderr, flush=True); time.sleep(60)", 1.0
    )
    assert done.timed_out
    assert done.exit_code is not None and done.exit_code < 0  # ended by a signal, not by itself
    assert time.monotonic() - started < 30
    assert done.stderr_path.read_text() == "began\n"


def test_a_child_that_ends_before_its_timeout_is_not_timed_out(tmp_path: Path) -> None:
    done = _run(tmp_path, "import time; time.sleep(0.3)", 30)
    assert (done.exit_code, done.timed_out) == (0, False)
    assert done.seconds >= 0.3
