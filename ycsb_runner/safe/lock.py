"""One ``bench`` per target at a time: a second one against the same target refuses (exit 2) and names the
running one. The lock is an ``flock`` on one file per address of the target (``<lock dir>/<ip>_<port>.lock``,
every address the URL's hosts resolve to, and every member a replica set reports), so ``localhost`` and
``127.0.0.1``, or two URLs naming different members of one replica set, are the same target. The lock folder
is the same for every checkout on the machine (``$XDG_RUNTIME_DIR/ycsb-runner/locks``, else
``/tmp/ycsb-runner-<uid>/locks``; ``YCSB_RUNNER_LOCK_DIR`` names another). The kernel drops a lock when the
holder dies however it dies (SIGKILL included), so a stale lock file of a dead process is simply taken over.
The file's content (pid, run id, suite, start time) is only there to name the holder. Nor may the run history
live in the database under test (``check_not_the_target``): its writes would perturb the run.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ycsb_runner import config
from ycsb_runner.errors import UserError

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


def target_id(url: str | None, host: str) -> str:
    """The target a run measured, as the estimate compares runs: ``embedded@HOST`` (the embedded server of
    that host) or the URL's hosts (``target_key``)."""
    return f"embedded@{host}" if url is None else target_key(url)


def check_not_the_target(history_url: str | None, target_url: str) -> None:
    """Refuse a MongoDB history (*history_url* as resolved: ``config.Config.history``; None: an SQLite file)
    in the very database under test (its writes would perturb the run)."""
    url = history_url or ""
    if not url.startswith(("mongodb://", "mongodb+srv://")):
        return

    def database(u: str) -> str:
        return u.split("://", 1)[1].split("/", 1)[1].split("?", 1)[0] if "/" in u.split("://", 1)[1] else ""

    if target_key(url) == target_key(target_url) and database(url) in ("", database(target_url)):
        raise UserError(
            "--history-url names the database under test: give the history a database of its own "
            "(e.g. .../ycsb_history), or a server that is not being measured"
        )


def url_hosts(url: str) -> list[tuple[str, int]]:
    """The (host, port) pairs of a mongodb:// URL's seed list (lower-cased, default port 27017)."""
    rest = url.split("://", 1)[-1]
    hosts = rest.split("/", 1)[0].split("?", 1)[0].rsplit("@", 1)[-1]
    out = []
    for h in hosts.split(","):
        h = h.strip().lower()
        if not h:
            continue
        if h.startswith("["):
            host, _, port = h[1:].partition("]")
            port = port.lstrip(":")
        else:
            host, _, port = h.partition(":")
        out.append((host, int(port) if port.isdigit() else 27017))
    return out


def resolved_addresses(host: str, port: int) -> list[str]:
    """Every address *host* resolves to, as ``ip:port`` (the name itself when it does not resolve)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return [f"{host}:{port}"]
    return sorted({f"{info[4][0]}:{port}" for info in infos})


def target_keys(url: str | None, members: tuple[str, ...] = ()) -> list[str]:
    """The lock keys of a target: ``embedded``, or every address of the URL's hosts and of *members* (the
    ``host:port`` list a replica set reports), so that any spelling of one server meets the same lock. A
    ``mongodb+srv://`` name is resolved by the driver: its members stand for it."""
    if url is None:
        return [EMBEDDED]
    pairs = [] if url.startswith("mongodb+srv://") else url_hosts(url)
    pairs += url_hosts("mongodb://" + ",".join(members)) if members else []
    if not pairs:
        return [target_key(url)]
    return sorted({a for host, port in pairs for a in resolved_addresses(host, port)})


def replica_set_members(url: str, timeout_ms: int = 5000) -> tuple[str | None, tuple[str, ...]]:
    """The replica set's name and every member it reports (``hello``: hosts, passives, arbiters); (None,
    ()) for a standalone server or when it cannot be asked (the connection check reports why)."""
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    try:
        with MongoClient(url, serverSelectionTimeoutMS=timeout_ms, connectTimeoutMS=timeout_ms) as client:
            hello = client.admin.command("hello")
    except (PyMongoError, ValueError, OSError):
        return None, ()
    members = tuple(str(h) for key in ("hosts", "passives", "arbiters") for h in hello.get(key) or ())
    return hello.get("setName"), members


def lock_dir() -> Path:
    """``$YCSB_RUNNER_LOCK_DIR``, else a folder every checkout of this user on the machine shares."""
    env = config.current().lock_dir
    if env:
        return Path(env)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        return Path(runtime) / "ycsb-runner" / "locks"
    return Path(tempfile.gettempdir()) / f"ycsb-runner-{os.getuid()}" / "locks"


def _private_dir(path: Path) -> None:
    """Create the default lock folder and its parent (mode 0700); refuse one another user owns or can write
    (the parent sits in a shared /tmp, where anyone may have made it first)."""
    for folder in (path.parent, path):
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = folder.lstat()
        if folder.is_symlink() or st.st_uid != os.getuid() or st.st_mode & 0o022:
            raise UserError(
                f"the bench lock folder {folder} is not private to you (owner uid {st.st_uid}, mode "
                f"{st.st_mode & 0o777:o}): remove it, or set YCSB_RUNNER_LOCK_DIR"
            )


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
def target_lock(
    key: str | list[str] | tuple[str, ...], *, suite: str, run_id: str | None = None
) -> Iterator[Callable[[str], None]]:
    """Hold the lock of every target key (``target_keys``) for the block; UserError (exit 2) when a live
    process holds any of them.

    Yields ``note(run_id)``, which records the run folder's name in the locks once it is known."""
    keys = sorted({key} if isinstance(key, str) else set(key))
    fds: list[int] = []
    try:
        for k in keys:
            fds.append(_take(k))
        info = {
            "pid": os.getpid(),
            "suite": suite,
            "run_id": run_id,
            "target": ",".join(keys),
            "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }

        def note(name: str | None) -> None:
            info["run_id"] = name
            for fd in fds:
                os.ftruncate(fd, 0)
                os.pwrite(fd, json.dumps(info).encode(), 0)

        note(run_id)
        yield note
    finally:
        for fd in fds:
            os.close(fd)  # releases the flock


def run_lock(
    url: str | None, *, suite: str, run_id: str | None = None
) -> contextlib.AbstractContextManager[Callable[[str], None]]:
    """A bench's lock of its target (``target_lock``): the embedded server (*url* None), or every address of
    the URL's hosts and of the replica set's members (asked now)."""
    members = replica_set_members(url)[1] if url is not None else ()
    return target_lock(target_keys(url, members), suite=suite, run_id=run_id)


def _take(key: str) -> int:
    """The open, flock-ed lock file of one key (UserError when a live process holds it)."""
    path = lock_path(key)
    try:
        if not config.current().lock_dir:
            _private_dir(path.parent)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as err:
        raise UserError(f"cannot create the bench lock {path}: {err.strerror}; or pass --no-lock") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = describe_holder(_read_holder(fd))
        os.close(fd)
        where = "the embedded server" if key == EMBEDDED else key
        raise UserError(
            f"another bench is running against {where}: {holder}; wait for it, or pass --no-lock "
            "to run anyway (both results will be perturbed)"
        ) from None
    return fd


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
