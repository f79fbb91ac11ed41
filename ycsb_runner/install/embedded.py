"""The embedded local server: a real ``mongod`` when one is on PATH, else FerretDB (SQLite).

``start()`` launches it detached on a free loopback port in a throwaway folder, waits until it answers
``ping`` and records it in ``<cache>/server/state.json`` so that ``stop()`` (maybe from another process)
can end it. ``EmbeddedServer`` is the context-manager form used by ``bench`` and the tests.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil
from pymongo import MongoClient
from pymongo.errors import PyMongoError

from ycsb_runner.errors import UserError
from ycsb_runner.install.ferretdb import FERRETDB_VERSION, ensure_ferretdb
from ycsb_runner.paths import cache_dir
from ycsb_runner.safe.lifetime import clear_stale_private, die_with_parent


@dataclass
class ServerInfo:
    kind: str  # "mongod" | "ferretdb"
    version: str
    pid: int
    port: int
    url: str
    workdir: str
    log_path: str
    argv: list[str]
    started_at: float
    owner_pid: int | None = None  # set when the server must not outlive this process (bench, tests)
    owner_run: str | None = None  # the run id of the bench that owns it, once the run folder exists

    def as_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        """One line for ``server status``: kind, version, pid, URL and, for a private server, its owner."""
        line = f"{self.kind} {self.version} pid {self.pid} {self.url}"
        if self.owner_pid is not None:
            run = f"bench {self.owner_run}" if self.owner_run else "a ycsb-runner"
            line += f" (private to {run}, pid {self.owner_pid}; it stops with it)"
        return line


def state_file() -> Path:
    return cache_dir() / "server" / "state.json"


#: Written into every server folder ycsb-runner makes: a folder is removed only when it has it, so a state
#: file that names another folder (edited by hand, or another tool's) never gets that folder deleted.
WORKDIR_PREFIX = "ycsb-runner-server-"
WORKDIR_MARKER = ".ycsb-runner-server"


def _make_workdir() -> Path:
    workdir = Path(tempfile.mkdtemp(prefix=WORKDIR_PREFIX))
    (workdir / WORKDIR_MARKER).write_text("made by ycsb-runner for an embedded server, removed with it\n")
    return workdir


def remove_workdir(workdir: str | Path) -> bool:
    """Remove an embedded server's throwaway folder, only if ycsb-runner made it (its name and marker);
    True when removed."""
    path = Path(workdir)
    if not path.name.startswith(WORKDIR_PREFIX) or path.is_symlink() or not (path / WORKDIR_MARKER).is_file():
        return False
    shutil.rmtree(path, ignore_errors=True)
    return True


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_ready(url: str, proc: subprocess.Popen, log_path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log_path.read_text(errors="replace").strip().splitlines()[-3:]
            raise UserError(f"the embedded server exited at start-up ({' | '.join(tail)}); log: {log_path}")
        try:
            with MongoClient(url, serverSelectionTimeoutMS=500, connectTimeoutMS=500) as c:
                c.admin.command("ping")
                return
        except PyMongoError as err:
            last = err
            time.sleep(0.2)
    proc.kill()
    raise UserError(
        f"the embedded server did not answer ping within {timeout:.0f}s ({last}); log: {log_path}"
    )


def _launch(argv: list[str], log_path: Path, *, tied: bool = False) -> subprocess.Popen:
    """Start the server detached (own session: a terminal Ctrl-C is ours to handle), logging to a file.
    A *tied* server gets SIGTERM from the kernel when this process dies, even by SIGKILL."""
    with open(log_path, "ab") as log_file:
        return subprocess.Popen(
            argv,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            # GOGC: FerretDB's garbage collector runs a quarter as often (about 10 % less server CPU in
            # a small bench here, for about 12 MB more memory); a GOGC of the user's own wins. No effect on
            # mongod.
            env={"GOGC": "400", **os.environ, "DO_NOT_TRACK": "1"},
            preexec_fn=die_with_parent() if tied else None,
        )


def _init_replica_set(url: str, port: int, timeout: float = 60) -> None:
    with MongoClient(url, directConnection=True, serverSelectionTimeoutMS=5000) as c:
        try:
            members = [{"_id": 0, "host": f"127.0.0.1:{port}"}]
            c.admin.command("replSetInitiate", {"_id": "rs0", "members": members})
        except PyMongoError as err:
            if "already initialized" not in str(err):
                raise UserError(f"could not initiate the single-node replica set: {err}") from err
    _wait_primary(url, timeout)


def _wait_primary(url: str, timeout: float = 60) -> None:
    """Wait until the (single-node replica set) mongod is a writable primary, as after start-up: the
    first writes of a run must not meet NotWritablePrimary."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    with MongoClient(url, directConnection=True, serverSelectionTimeoutMS=2000) as c:
        while time.monotonic() < deadline:
            try:
                if c.admin.command("hello").get("isWritablePrimary"):
                    return
            except PyMongoError as err:
                last = err
            time.sleep(0.3)
    raise UserError(
        f"the embedded mongod did not become primary within {timeout:.0f}s" + (f" ({last})" if last else "")
    )


#: A signalled 5.0+ primary first tries to step down for shutdownTimeoutMillisForSignaledShutdown
#: (default 15 s, longer than the stop grace): keep it short, so a SIGTERM ends mongod cleanly.
MONGOD_SHUTDOWN_ARGS = ["--setParameter", "shutdownTimeoutMillisForSignaledShutdown=1000"]


def mongod_argv(mongod: str, data: Path, port: int, extra_args: list[str] | None = None) -> list[str]:
    """The embedded mongod's command line (one-node replica set ``rs0`` on loopback). Pure."""
    return [
        mongod,
        "--dbpath",
        str(data),
        "--port",
        str(port),
        "--bind_ip",
        "127.0.0.1",
        "--replSet",
        "rs0",
        *MONGOD_SHUTDOWN_ARGS,
        "--quiet",
        *(extra_args or []),
    ]


def _mongod_shutdown(info: ServerInfo, timeout: float = 20.0) -> bool:
    """Shut mongod down with the ``shutdown`` command (``force`` for a one-node set, bounded step-down),
    so WiredTiger closes cleanly. True when the process is gone; False to fall back to signals."""
    from pymongo.errors import AutoReconnect

    try:
        with MongoClient(info.url, directConnection=True, serverSelectionTimeoutMS=2000) as c:
            c.admin.command({"shutdown": 1, "force": True, "timeoutSecs": 5})
    except AutoReconnect:
        pass  # expected: the server drops the connection as it exits
    except PyMongoError:
        return False  # not reachable, or not a mongod that takes the command
    try:
        psutil.Process(info.pid).wait(timeout)
    except psutil.NoSuchProcess:
        pass
    except psutil.TimeoutExpired:
        return False
    return True


def _stop_process(info: ServerInfo) -> None:
    """End the server process: mongod by its shutdown command first, then (or for FerretDB) signals."""
    if info.kind == "mongod" and _alive(info) and _mongod_shutdown(info):
        return
    _terminate(info.pid)


def start(
    *,
    timeout: float = 60.0,
    extra_args: list[str] | None = None,
    record: bool = True,
    log=print,
    ferretdb: Path | None = None,
) -> ServerInfo:
    """Start a new embedded server; with *record*, as *the* server of ``server status|stop``. *ferretdb*: that
    FerretDB launcher, even with a mongod on PATH (``bench/embedded_server_bench.py``).

    Long because it is one sequence that undoes itself on failure: choose, launch, wait, initiate, record.
    """
    existing = status() if record else None
    if existing is not None:
        raise UserError(
            f"an embedded server is already running (pid {existing.pid}, {existing.url}); "
            "use `ycsb-runner server stop` first"
        )
    port = free_port()
    workdir = _make_workdir()
    log_path = workdir / "server.log"
    data = workdir / "data"
    data.mkdir()
    mongod = shutil.which("mongod") if ferretdb is None else None
    if mongod:
        kind = "mongod"
        argv = mongod_argv(mongod, data, port, extra_args)
        url = f"mongodb://127.0.0.1:{port}/ycsb?directConnection=true"
    else:
        kind = "ferretdb"
        binary = ferretdb or ensure_ferretdb(log=log)
        argv = [
            str(binary),
            "-listen-addr",
            f"127.0.0.1:{port}",
            "-sqlite-url",
            f"file:{data}/",
            "-log-level",
            "warn",
            *(extra_args or []),
        ]
        url = f"mongodb://127.0.0.1:{port}/ycsb"
    proc = _launch(argv, log_path, tied=not record)
    try:
        _wait_ready(url, proc, log_path, timeout)
        if kind == "mongod":
            _init_replica_set(url, port)
        with MongoClient(url, serverSelectionTimeoutMS=3000) as c:
            bi = c.admin.command("buildInfo")
        version = (
            f"FerretDB {FERRETDB_VERSION} (SQLite; reports MongoDB {bi.get('version')})"
            if kind == "ferretdb"
            else f"mongod {bi.get('version')}"
        )
    except BaseException:
        _terminate(proc.pid)
        remove_workdir(workdir)
        raise
    info = ServerInfo(
        kind=kind,
        version=version,
        pid=proc.pid,
        port=port,
        url=url,
        workdir=str(workdir),
        log_path=str(log_path),
        argv=argv,
        started_at=time.time(),
        owner_pid=None if record else os.getpid(),
    )
    if record:
        path = state_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(info.as_dict(), indent=2) + "\n")
    return info


def _terminate(pid: int, grace: float = 10.0) -> None:
    try:
        proc = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(grace)
    except psutil.TimeoutExpired:
        proc.kill()
        proc.wait(5)
    except psutil.NoSuchProcess:
        pass


def _alive(info: ServerInfo) -> bool:
    try:
        proc = psutil.Process(info.pid)
        return (
            proc.is_running()
            and proc.status() != psutil.STATUS_ZOMBIE
            and Path(info.argv[0]).name in " ".join(proc.cmdline())
        )
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def _owned_dir() -> Path:
    return cache_dir() / "server" / "owned"


def _record_owned(info: ServerInfo) -> Path:
    """A private server's record, so that ``server status`` shows it and a later ycsb-runner can clear it
    if its owner was killed; one file per owner and data folder, rewritten when the server restarts."""
    path = _owned_dir() / f"{info.owner_pid}-{Path(info.workdir).name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(info.as_dict(), indent=2) + "\n")
    return path


def clear_stale(log=None) -> list[ServerInfo]:
    """Stop and remove the private servers (and their data) of ycsb-runner processes that no longer run,
    e.g. killed with SIGKILL; return what was cleared."""
    for folder in clear_stale_private():
        if log is not None:
            log(f"removed the private folder {folder} left by a ycsb-runner that no longer runs")
    cleared = []
    for path in sorted(_owned_dir().glob("*.json")) if _owned_dir().is_dir() else []:
        try:
            info = ServerInfo(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError):
            path.unlink(missing_ok=True)
            continue
        if info.owner_pid is None or info.owner_pid == os.getpid() or psutil.pid_exists(info.owner_pid):
            continue
        if _alive(info):
            _terminate(info.pid)
        remove_workdir(info.workdir)
        path.unlink(missing_ok=True)
        cleared.append(info)
        if log is not None:
            log(
                f"cleared a stale embedded server (pid {info.pid}, data {info.workdir}) left by a "
                f"ycsb-runner that no longer runs (pid {info.owner_pid})"
            )
    return cleared


def status(log=None) -> ServerInfo | None:
    """The recorded embedded server if it is still running (a stale record is removed, and so are the
    private servers of killed ycsb-runner processes)."""
    clear_stale(log)
    path = state_file()
    if not path.is_file():
        return None
    try:
        info = ServerInfo(**json.loads(path.read_text()))
    except (ValueError, TypeError):
        path.unlink(missing_ok=True)
        return None
    if not _alive(info):
        path.unlink(missing_ok=True)
        remove_workdir(info.workdir)
        return None
    return info


def private_servers() -> list[ServerInfo]:
    """The embedded servers that running ycsb-runner processes (a ``bench``, the tests) started for
    themselves, oldest first; call after :func:`status`, which clears those of processes that died."""
    found = []
    for path in sorted(_owned_dir().glob("*.json")) if _owned_dir().is_dir() else []:
        try:
            info = ServerInfo(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError):
            continue
        if info.owner_pid is not None and psutil.pid_exists(info.owner_pid) and _alive(info):
            found.append(info)
    return sorted(found, key=lambda i: i.started_at)


def stop(info: ServerInfo | None = None, *, keep_data: bool = False) -> ServerInfo | None:
    """Stop the embedded server (the recorded one by default) and remove its throwaway folder."""
    info = info or status()
    if info is None:
        return None
    _stop_process(info)
    if not keep_data:
        remove_workdir(info.workdir)
    path = state_file()
    if path.is_file():
        try:
            if json.loads(path.read_text()).get("pid") == info.pid:
                path.unlink()
        except ValueError:
            path.unlink()
    return info


def restart(info: ServerInfo, extra_args: list[str] | None = None, *, timeout: float = 60.0) -> ServerInfo:
    """Restart the same server on the same port and data, with *extra_args* (audit strategy ``restart``);
    a mongod is shut down cleanly and waited for until it is PRIMARY again, as ``start()`` does."""
    _stop_process(info)
    base = info.argv[: info.argv.index("--quiet") + 1] if info.kind == "mongod" else info.argv[:7]
    argv = [*base, *(extra_args or [])]
    log_path = Path(info.log_path)
    proc = _launch(argv, log_path, tied=info.owner_pid is not None)
    _wait_ready(info.url, proc, log_path, timeout)
    if info.kind == "mongod":
        _wait_primary(info.url, timeout)
    new = ServerInfo(**{**info.as_dict(), "pid": proc.pid, "argv": argv, "started_at": time.time()})
    if new.owner_pid is not None:
        _record_owned(new)
    path = state_file()
    if path.is_file() and json.loads(path.read_text()).get("pid") == info.pid:
        path.write_text(json.dumps(new.as_dict(), indent=2) + "\n")
    return new


class EmbeddedServer:
    """``with EmbeddedServer() as srv: ... srv.url``; always stopped on exit, Ctrl-C included.

    It is private to its user (not recorded as the ``server start`` one), so a bench or a test run
    never touches a server someone started by hand."""

    def __init__(self, log=print, *, ferretdb: Path | None = None) -> None:
        self.info: ServerInfo | None = None
        self._log = log
        self._ferretdb = ferretdb

    def __enter__(self) -> ServerInfo:
        clear_stale(self._log)
        self.info = start(log=self._log, record=False, ferretdb=self._ferretdb)
        self._record = _record_owned(self.info)
        return self.info

    def restart_with(self, extra_args: list[str]) -> ServerInfo:
        """Restart it on the same port and data with *extra_args* (the ``restart`` audit strategy)."""
        if self.info is None:
            raise UserError("the embedded server is not running: nothing to restart")
        self.info = restart(self.info, extra_args)
        return self.info

    def owned_by_run(self, run_id: str) -> None:
        """Name the run this server serves in its record (``server status`` shows it)."""
        if self.info is not None:
            self.info = ServerInfo(**{**self.info.as_dict(), "owner_run": run_id})
            self._record = _record_owned(self.info)

    def __exit__(self, *exc: object) -> None:
        if self.info is not None:
            stop(self.info)
            self._record.unlink(missing_ok=True)
