"""Atomic file writes for the run folder (its typed model is ``ycsb_runner.runs.model``).

Every file is written atomically (a temporary file in the same folder, then a rename), so an interrupted
run or a full disk never leaves a half-written CSV; a full disk becomes a one-line error.
"""

from __future__ import annotations

import errno
import json
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ycsb_runner.errors import UserError

if TYPE_CHECKING:
    import pandas as pd

_UMASK = os.umask(0)
os.umask(_UMASK)


def disk_error(path: Path, err: OSError) -> UserError:
    """One line naming *path*, what went wrong and what to do (exit 2, as a disk full always was)."""
    code = err.errno
    if code in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return UserError(
            f"disk full while writing {path}: free some space; results so far are in {path.parent}"
        )
    if code == errno.EROFS:
        what = "its folder is on a read-only file system: write it elsewhere or remount the folder read-write"
    elif code in (errno.EACCES, errno.EPERM):
        what = "no permission to write there: write it elsewhere or make the folder writable"
    elif code in (errno.ENOTDIR, errno.EEXIST):
        blocker = next((p for p in path.parents if p.is_file()), path.parent)
        what = f"{blocker} is a file, not a folder: name a folder"
    elif code == errno.EISDIR:
        what = "a folder is in the way: remove it or write elsewhere"
    else:
        what = f"{err.strerror or err}: check the folder and try again"
    return UserError(f"cannot write {path}: {what}")


def check_inside(root: Path, path: Path) -> Path:
    """*path*, once it is known to stay inside *root* with every symbolic link on the way followed (a
    linked folder or file that leads out of it is a UserError: the tool writes, reads and deletes nothing
    outside the folder it works in)."""
    base = root.resolve()
    real = path.resolve()
    if real != base and base not in real.parents:
        raise UserError(
            f"{path} leads outside {root} (to {real}, through a symbolic link): ycsb-runner reads and "
            "writes only inside it; remove the link"
        )
    return path


def read_bounded(path: Path, limit: int, what: str) -> bytes:
    """The bytes of *path*, the one reader of the files the tool parses whole (manifests, suites): a file
    over *limit* bytes is refused (UserError, one line) before it is read, and no more than *limit* + 1
    bytes are ever read (a file that grows meanwhile is refused too); an unreadable file is one line."""

    def too_big(size: float) -> UserError:
        most = f"{limit / 2**20:g} MiB"
        return UserError(f"{path} is {size / 2**20:.1f} MiB: {what} is at most {most} (the right file?)")

    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > limit:
                raise too_big(size)
            data = f.read(limit + 1)
    except OSError as err:
        raise UserError(f"cannot read {path}: {err.strerror or err}") from None
    if len(data) > limit:
        raise too_big(len(data))
    return data


def atomic_write_bytes(path: Path, data: bytes, *, within: Path | None = None) -> None:
    """Write *path* atomically; *within*: refuse (UserError) when the path leads outside that folder."""
    if within is not None:
        check_inside(within, path)
    try:  # the folder may be read-only, a file, full: one line naming the path either way
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as err:
        raise disk_error(path, err) from err
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; results are meant to be shared like any file
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise disk_error(path, err) from err


def atomic_write_text(path: Path, text: str, *, within: Path | None = None) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), within=within)


def atomic_write_json(path: Path, obj: Any, *, within: Path | None = None) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, default=str, allow_nan=False) + "\n", within=within)


def atomic_write_csv(path: Path, df: pd.DataFrame, *, within: Path | None = None) -> None:
    """*df* as CSV, a field with a line break in it quoted (``safe.text.csv_text``)."""
    from ycsb_runner.safe.text import csv_text

    atomic_write_text(path, csv_text(df), within=within)


# CSV for spreadsheets (OWASP, "CSV Injection"): a text cell that starts with one of these is read as a
# formula by Excel, LibreOffice and Google Sheets; a cell that is a plain number ("-3.5", "+2 %") is not.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[-+]?(\d[\d,]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?( ?%)?|-")


def formula_safe(df: pd.DataFrame) -> pd.DataFrame:
    """*df* for ``--format csv`` (opened in spreadsheets): every text cell that starts with ``=``, ``+``,
    ``-``, ``@``, a tab or a carriage return, and is not a plain number, gets a leading ``'`` (the OWASP
    rule), so that a spreadsheet shows it as text. Numbers and every other cell are unchanged. The run
    folder's CSVs are written raw (pandas reads exactly what was measured): the names that go into them
    are refused at input when they could start a formula (``paths.SAFE_NAME``)."""

    def cell(value: Any) -> Any:
        if isinstance(value, str) and value.startswith(FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value):
            return "'" + value
        return value

    import pandas as pd

    text = [c for c in df.columns if df[c].dtype == object or pd.api.types.is_string_dtype(df[c])]
    if not text and not any(isinstance(c, str) and c.startswith(FORMULA_START) for c in df.columns):
        return df
    out = df.copy()
    for c in text:
        out[c] = out[c].map(cell)
    return out.rename(columns={c: cell(c) for c in out.columns if isinstance(c, str)})
