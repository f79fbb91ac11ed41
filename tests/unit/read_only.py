"""``read_only``: a folder bound read-only onto itself for the length of a ``with`` block, for the tests of
what ycsb-runner does with files it cannot write (root ignores chmod; a read-only mount it does not)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """*folder* bound read-only onto itself (root ignores chmod, a read-only mount it does not)."""
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root (CI runs as root)")
    made = subprocess.run(["mount", "--bind", "-o", "ro", str(folder), str(folder)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"mount --bind -o ro failed: {made.stderr.decode(errors='replace').strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=True)
