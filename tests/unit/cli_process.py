"""``python -m ycsb_runner`` in a process of its own, for the unit tests that check what a shell sees: the
exit code and the one-line error on stderr."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping


def run_module(
    *args: str, env: Mapping[str, str] | None = None, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m ycsb_runner ARGS``, its stdout and stderr captured as text (the environment: *env*, else
    this process's)."""
    return subprocess.run(
        [sys.executable, "-m", "ycsb_runner", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )
