"""A captured YCSB output file parsed by the entry point it needs (``ycsb-runner parse``, the runner).

``parse_file(path)`` looks at the file, not at the caller: a JSON ``exportfile`` goes to ``parse_export``; a
capture file is streamed (``parse_capture``: memory bounded whatever its size); a pipe (``/dev/stdin``,
``<(...)``, a FIFO), which can be read once only, is read whole (``parse_output``).
"""

from __future__ import annotations

import re
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

from ycsb_runner.errors import UserError

if TYPE_CHECKING:
    from .model import ParsedRun

_JSON_START = re.compile(rb"\s*(?:\{|\[\s*\{)\s*\"metric\"")
WAKE_S = 0.1  # a wait for a pipe's data returns to Python this often


def parse_file(
    path: str | PathLike[str],
    stderr: str | PathLike[str] | None = None,
    *,
    keep_status: bool = True,
    exit_code: int | None = None,
    expected_ops: int | None = None,
    max_error_rate: float = 0.01,
) -> ParsedRun:
    """The YCSB output in *path* parsed, with its *stderr* capture (default: ``<name>.stderr`` beside a
    ``<name>.stdout`` when there is one). A JSON export is parsed as one; a capture file is read as it is
    parsed (every status update kept with *keep_status*, else only their digest); a pipe is read whole.
    *exit_code*, *expected_ops* and *max_error_rate* judge the run as ``parse_output`` does. UserError (one
    line) for a folder, a missing or unreadable file, or input that is not YCSB output (``ParseError``)."""
    from .run_output import parse_capture, parse_output

    path = _checked(Path(path))
    err_path = None if stderr is None else Path(stderr)
    if err_path is None and path.suffix == ".stdout" and path.with_suffix(".stderr").is_file():
        err_path = path.with_suffix(".stderr")
    if err_path is not None:
        _checked(err_path)
    judging = {"exit_code": exit_code, "expected_ops": expected_ops, "max_error_rate": max_error_rate}
    whole = not path.is_file() or (err_path is not None and not err_path.is_file())
    data = _read(path) if whole else _head(path)
    if path.suffix.lower() == ".json" or _JSON_START.match(data[:4096]):
        return parse_output(b"", b"", export=data if whole else path, **judging)
    if whole:
        return parse_output(data, _read(err_path) if err_path else b"", **judging)
    return parse_capture(path, err_path, keep_status=keep_status, **judging)


def _checked(path: Path) -> Path:
    """*path* when it is a file or a pipe (``parse <(...)``, a FIFO) to read; one-line errors else."""
    if path.is_dir():
        from ycsb_runner.runs.model import STDOUT

        raise UserError(f"{path} is a directory: give the YCSB output file(s) in it, e.g. {path / STDOUT}")
    if not path.exists():
        raise UserError(f"file not found: {path}")
    return path


def _head(path: Path, size: int = 4096) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(size)
    except OSError as err:
        raise UserError(f"cannot read {path}: {err.strerror or err}") from None


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes() if path.is_file() else _read_stream(path)
    except OSError as err:
        raise UserError(f"cannot read {path}: {err.strerror or err}") from None


def _read_stream(path: Path) -> bytes:
    """A pipe (``/dev/stdin``, ``<(...)``, a FIFO) read whole, its waits WAKE_S long: a Ctrl-C the kernel
    gives another thread (numpy's OpenBLAS workers) only marks Python's handler to run and would never end
    a read blocked in the main thread (issue 52: a lost Ctrl-C); each wait's end runs it."""
    import os
    import select

    from ycsb_runner.errors import check_stop

    chunks = []
    with open(path, "rb", buffering=0) as fh:
        fd = fh.fileno()
        while True:
            if not select.select([fd], [], [], WAKE_S)[0]:
                check_stop()  # a Ctrl-C whose KeyboardInterrupt a library swallowed still ends the wait
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
