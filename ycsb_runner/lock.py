"""One ``bench`` per target at a time: a second one against the same target refuses (exit 2) and names the
running one. The lock is an ``flock`` on ``<cache>/locks/<target>.lock``: the kernel drops it when the holder
dies however it dies (SIGKILL included), so a stale lock file of a dead process is simply taken over. The
file's content (pid, run id, suite, start time) is only there to name the holder.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ycsb_runner.errors import UserError
from ycsb_runner.paths import cache_dir

EMBEDDED = "embedded"


def target_key(url: str | None) -> str:
    """``embedded`` for the embedded server, else the URL's sorted host set (no credentials, no options)."""
    if url is None:
        return EMBEDDED
    rest = url.split("://", 1)[-1]
    hosts = rest.split("/", 1)[0].split("?", 1)[0].rsplit("@", 1)[-1]
    items = []
    for h in hosts.split(","):
        h = h.strip().lower()
        if h and ":" not in h.rsplit("]", 1)[-1]:
            h += ":27017"
        if h:
            items.append(h)
    return ",".join(sorted(items)) or "unknown"


def lock_dir() -> Path:
    env = os.environ.get("YCSB_RUNNER_LOCK_DIR")
    return Path(env) if env else cache_dir() / "locks"


def lock_path(key: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", key)[:60]
    return lock_dir() / f"{safe}-{hashlib.sha256(key.encode()).hexdigest()[:8]}.lock"


def describe_holder(text: str) -> str:
    try:
        info: dict[str, Any] = json.loads(text)
    except ValueError:
        return "another ycsb-runner bench"
    return (
        f"pid {info.get('pid')} (suite {info.get('suite')}, run {info.get('run_id') or '?'}, "
        f"since {info.get('since')})"
    )


@contextlib.contextmanager
def target_lock(key: str, *, suite: str, run_id: str | None = None) -> Iterator[Callable[[str], None]]:
    """Hold the lock of target *key* for the block; UserError (exit 2) when a live process holds it.

    Yields ``note(run_id)``, which records the run folder's name in the lock once it is known."""
    path = lock_path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as err:
        raise UserError(f"cannot create the bench lock {path}: {err.strerror}; or pass --no-lock") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = describe_holder(_read_holder(fd))
            where = "the embedded server" if key == EMBEDDED else key
            raise UserError(
                f"another bench is running against {where}: {holder}; wait for it, or pass --no-lock "
                "to run anyway (both results will be perturbed)"
            ) from None
        info = {
            "pid": os.getpid(),
            "suite": suite,
            "run_id": run_id,
            "target": key,
            "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }

        def note(name: str | None) -> None:
            info["run_id"] = name
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode(), 0)

        note(run_id)
        yield note
    finally:
        os.close(fd)  # releases the flock


def _read_holder(fd: int, wait_s: float = 1.0) -> str:
    """The holder's record; the holder writes it just after taking the lock, so a contender that comes at
    that moment waits briefly for a complete record rather than naming no one."""
    deadline = time.monotonic() + wait_s
    while True:
        text = os.pread(fd, 4096, 0).decode("utf-8", "replace")
        try:
            if isinstance(json.loads(text), dict):
                return text
        except ValueError:
            pass
        if time.monotonic() >= deadline:
            return text
        time.sleep(0.05)
