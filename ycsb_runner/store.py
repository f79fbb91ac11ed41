"""Self-contained result folders: ``results/<run-id>/`` with a manifest, CSVs and each step's raw logs.

Every file is written atomically (a temporary file in the same folder, then a rename), so an interrupted
run or a full disk never leaves a half-written CSV; a full disk becomes a one-line error.
"""

from __future__ import annotations

import errno
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from ycsb_runner.errors import UserError

MANIFEST = "manifest.json"
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


def new_run_id(suite_name: str, now: float | None = None) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    return f"{stamp}-{re.sub(r'[^A-Za-z0-9_.-]+', '-', suite_name)}"


class RunDir:
    """One run's folder. ``steps/<label>/`` holds each step's logs; the top holds manifest and CSVs."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def create(cls, results: Path, suite_name: str) -> RunDir:
        run_id = new_run_id(suite_name)
        root = results / run_id
        n = 1
        while root.exists():
            n += 1
            root = results / f"{run_id}-{n}"
        try:
            (root / "steps").mkdir(parents=True)
        except OSError as err:
            raise _disk_error(root, err) from err
        return cls(root)

    @classmethod
    def open(cls, path: Path) -> RunDir:
        if not (path / MANIFEST).is_file():
            raise UserError(f"{path} is not a ycsb-runner result folder (no {MANIFEST})")
        return cls(path)

    @property
    def run_id(self) -> str:
        return self.root.name

    def step_dir(self, label: str) -> Path:
        d = self.root / "steps" / label
        d.mkdir(parents=True, exist_ok=True)
        return d

    def write_manifest(self, manifest: dict) -> None:
        atomic_write_json(self.root / MANIFEST, _json_safe(manifest))

    def manifest(self) -> dict:
        """The run's manifest; a one-line error when it is unreadable, truncated or not a JSON object."""
        path = self.root / MANIFEST
        try:
            doc = json.loads(path.read_bytes())
        except OSError as err:
            raise UserError(f"cannot read {path}: {err.strerror or err}") from None
        except ValueError as err:  # JSONDecodeError, UnicodeDecodeError
            raise UserError(
                f"{path} is not valid JSON ({err}): the file is damaged or was cut short "
                "(e.g. a full disk); re-run the suite or restore the file"
            ) from None
        if not isinstance(doc, dict):
            raise UserError(
                f"{path} holds a JSON {type(doc).__name__}, not an object: it is not a ycsb-runner manifest"
            )
        return doc

    def write_status(self, status: str, error: str | None) -> bool:
        """Set the manifest's status and error when the full manifest cannot be written (full disk): the last
        saved manifest, compacted, written atomically or else over the old file's own bytes. True if saved."""
        path = self.root / MANIFEST
        try:
            old = path.read_bytes()
            doc = json.loads(old)
        except (OSError, ValueError):
            return False
        if not isinstance(doc, dict):
            return False
        doc.update(status=status, error=error, ended_at=time.time())
        data = json.dumps(_json_safe(doc), separators=(",", ":"), default=str).encode() + b"\n"
        try:
            atomic_write_bytes(path, data)
            return True
        except UserError:
            pass
        if len(data) > len(old):
            return False
        try:  # no room for a second copy: reuse the old file's blocks (the new text is no longer)
            with open(path, "r+b") as f:
                f.write(data)
                f.truncate()
            return True
        except OSError:
            return False

    def write_csv(self, name: str, df: pd.DataFrame) -> Path:
        path = self.root / name
        atomic_write_csv(path, df)
        return path

    def read_csv(self, name: str) -> pd.DataFrame:
        path = self.root / name
        if not path.is_file() or path.stat().st_size == 0:
            return pd.DataFrame()
        return pd.read_csv(path)


def mark_abandoned(results: Path, hostname: str) -> list[Path]:
    """Runs under *results* whose manifest still says ``running`` although the ycsb-runner that wrote it, on
    this host, no longer runs (killed by SIGKILL, a power cut): mark them ``killed``; return their folders."""
    import psutil

    marked = []
    for path in sorted(results.glob(f"*/{MANIFEST}")) if results.is_dir() else []:
        try:
            doc = json.loads(path.read_bytes())
        except (OSError, ValueError):
            continue
        if not isinstance(doc, dict) or doc.get("status") != "running":
            continue
        pid = (doc.get("tool") or {}).get("pid")
        if not isinstance(pid, int) or (doc.get("host") or {}).get("hostname") != hostname:
            continue
        if pid == os.getpid() or psutil.pid_exists(pid):
            continue
        error = "ycsb-runner stopped without finishing (killed?); steps after the last saved one are missing"
        if RunDir(path.parent).write_status("killed", error):
            marked.append(path.parent)
    return marked


def _json_safe(obj: Any) -> Any:
    """NaN/inf are not JSON: store them as null."""
    if isinstance(obj, float):
        return obj if obj == obj and obj not in (float("inf"), float("-inf")) else None
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_json_safe(v) for v in obj]
    return obj
