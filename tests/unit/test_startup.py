"""Commands that need no data frame start without pandas (about 0.4 of a call's 0.9 CPU-s before)."""

from __future__ import annotations

import subprocess
import sys

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


def _loaded(*argv: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=list(argv))], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stderr.splitlines() if x.startswith("LOADED="))
    return {m for m in line.removeprefix("LOADED=").split(",") if m}


@pytest.mark.parametrize("argv", [("render", "quick"), ("--help",), ("render", "--help"), ("version",)])
def test_commands_without_a_frame_do_not_import_pandas(argv: tuple[str, ...]) -> None:
    assert _loaded(*argv) == set()


def test_the_probe_sees_pandas_when_a_command_needs_it() -> None:
    assert "pandas" in _loaded("reference", "list", "--format", "csv")
