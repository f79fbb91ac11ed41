"""Atomic file writes for the run folder (its typed model is ``ycsb_runner.model``).

Every file is written atomically (a temporary file in the same folder, then a rename), so an interrupted
run or a full disk never leaves a half-written CSV; a full disk becomes a one-line error.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from ycsb_runner.errors import UserError

_UMASK = os.umask(0)
os.umask(_UMASK)


def _disk_error(path: Path, err: OSError) -> UserError:
    if err.errno == errno.ENOSPC:
        return UserError(
            f"disk full while writing {path}: free some space; results so far are in {path.parent}"
        )
    return UserError(f"cannot write {path}: {err.strerror or err}")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; results are meant to be shared like any file
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise _disk_error(path, err) from err


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, default=str, allow_nan=False) + "\n")


def atomic_write_csv(path: Path, df: pd.DataFrame) -> None:
    atomic_write_text(path, df.to_csv(index=False))
