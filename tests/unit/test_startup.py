"""Commands that need no data frame start without pandas (about 0.4 of a call's 0.9 CPU-s before)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import sys
from ycsb_runner.cli import main
sys.argv = ["ycsb-runner", *{argv!r}]
try:
    main()
except SystemExit as stop:
    assert not stop.code, stop.code
heavy = sorted(m for m in ("pandas", "numpy", "pymongo", "psutil", "scipy", "matplotlib") if m in sys.modules)
print("LOADED=" + ",".join(heavy), file=sys.stderr)
"""


def _loaded(results: Path, *argv: str) -> set[str]:
    """The heavy modules a call loaded, with *results* as its results folder: an empty one here, since
    earlier runs give `render` an estimate from their figures, which rightly needs frames (`make bench`
    leaves a run in the checkout's results/)."""
    env = {k: v for k, v in os.environ.items() if k != "YCSB_RUNNER_HISTORY_URL"}
    env["YCSB_RUNNER_RESULTS"] = str(results)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=list(argv))],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stderr.splitlines() if x.startswith("LOADED="))
    return {m for m in line.removeprefix("LOADED=").split(",") if m}


@pytest.mark.parametrize("argv", [("render", "quick"), ("--help",), ("render", "--help"), ("version",)])
def test_commands_without_a_frame_do_not_import_pandas(argv: tuple[str, ...], tmp_path: Path) -> None:
    assert _loaded(tmp_path, *argv) == set()


def test_the_probe_sees_pandas_when_a_command_needs_it(tmp_path: Path) -> None:
    assert "pandas" in _loaded(tmp_path, "reference", "list", "--format", "csv")
