"""Load generators: this machine (``local``) or a host reached with the OpenSSH client.

A client is named as the user writes it: ``local``, ``host``, ``user@host``, ``user@host:2222`` or an alias of
``~/.ssh/config``. SSH runs with the user's own configuration (keys, agent, ``~/.ssh/config``, jump hosts) and
``BatchMode=yes`` (never a password prompt); ``[clients] ssh_config`` or ``YCSB_RUNNER_SSH_CONFIG`` names
another config file (``ssh -F``). Nothing secret is ever put on a command line: files (the connection
properties with the password) travel as a tar stream on ssh's stdin and are unpacked with mode 0600 in a
private ``mktemp -d`` folder there, removed afterwards.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ycsb_runner import config
from ycsb_runner.errors import UserError
from ycsb_runner.runs.model import LOCAL_CLIENT

_SPEC = re.compile(
    r"^(?:(?P<user>[A-Za-z0-9_][A-Za-z0-9_.-]*)@)?(?P<host>\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+)(?::(?P<port>\d+))?$"
)
CONNECT_TIMEOUT_S = 10


@dataclass(frozen=True)
class ClientSpec:
    """One load generator as named on the command line or in the suite."""

    name: str
    host: str | None = None  # None: this machine
    user: str | None = None
    port: int | None = None

    @property
    def local(self) -> bool:
        return self.host is None

    @property
    def folder(self) -> str:
        """The name as a folder name (``user@host:2222`` -> ``user@host-2222``)."""
        return re.sub(r"[^A-Za-z0-9_.@-]+", "-", self.name).strip("-") or "client"


def parse_client(text: str) -> ClientSpec:
    """``local`` | ``host`` | ``user@host`` | ``user@host:port`` | ``[::1]:port`` (UserError otherwise)."""
    text = text.strip()
    if text == LOCAL_CLIENT:
        return ClientSpec(LOCAL_CLIENT)
    m = _SPEC.match(text)
    if not m or text.startswith("-"):
        raise UserError(f"client {text!r}: expected local, host, user@host or user@host:port")
    port = int(m.group("port")) if m.group("port") else None
    if port is not None and not 0 < port < 65536:
        raise UserError(f"client {text!r}: port {port} is not between 1 and 65535")
    return ClientSpec(text, host=m.group("host").strip("[]"), user=m.group("user"), port=port)


def parse_clients(texts: list[str] | tuple[str, ...]) -> list[ClientSpec]:
    specs = [parse_client(t) for t in texts]
    names = [s.name for s in specs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise UserError(f"client {dup[0]} is given twice: name each load generator once")
    return specs


def ssh_config_path(suite_value: str = "") -> str | None:
    """The ssh config file to use instead of ``~/.ssh/config`` (env var first, then the suite), if any."""
    value = config.current().ssh_config or suite_value
    if not value:
        return None
    path = Path(value).expanduser()
    if not path.is_file():
        raise UserError(f"ssh config {path} does not exist: fix {config.SSH_CONFIG} or [clients] ssh_config")
    return str(path)


def load_generators(
    names: list[str], ssh_config: str, java: str, log: Callable[[str], None] = print
) -> list[Client]:
    """A run's clients (*names*: ``--client`` values, else the suite's ``[clients] hosts``), each checked
    over SSH; none for this machine alone (no names, or ``local``). *ssh_config*: the suite's."""
    if not names or names == ["local"]:
        return []
    config_file = ssh_config_path(ssh_config)
    clients = [Client(spec, config_file) for spec in parse_clients(names)]
    for note in check_clients(clients, java):
        log(note)
    return clients


def _tar(files: Mapping[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o600
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


STALE_MINUTES = 15
# The same on every POSIX shell and find (-mmin is in GNU and BSD find); prints each folder it removed.
CLEAR_STALE_SCRIPT = (
    'for d in "${TMPDIR:-/tmp}"/ycsb-runner-client-*; do '
    '[ -d "$d" ] && [ -O "$d" ] && [ ! -L "$d" ] || continue; '
    'if [ -f "$d/pid" ] && kill -0 "$(cat "$d/pid")" 2>/dev/null; then continue; fi; '
    f'[ -n "$(find "$d" -mmin -{STALE_MINUTES} -print 2>/dev/null | head -n 1)" ] && continue; '
    'rm -rf -- "$d" && echo "$d"; '
    "done; true"
)


class Client:
    """Runs shell scripts on one load generator (``sh -c`` here, ``ssh`` there) and moves files."""

    def __init__(self, spec: ClientSpec, ssh_config: str | None = None) -> None:
        self.spec = spec
        self.ssh_config = ssh_config

    @property
    def name(self) -> str:
        return self.spec.name

    def _ssh_options(self) -> list[str]:
        opts = ["-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}"]
        opts += ["-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=6"]
        if self.ssh_config:
            opts = ["-F", self.ssh_config, *opts]
        return opts

    def _destination(self) -> str:
        assert self.spec.host is not None
        host = f"[{self.spec.host}]" if ":" in self.spec.host else self.spec.host
        return f"{self.spec.user}@{host}" if self.spec.user else host

    def argv(self, script: str) -> list[str]:
        """The local argv that runs *script* (no secret in it) on the client."""
        if self.spec.local:
            return ["sh", "-c", script]
        return self._ssh_argv(script)

    def _ssh_argv(self, script: str) -> list[str]:
        port = ["-p", str(self.spec.port)] if self.spec.port else []
        return ["ssh", *self._ssh_options(), *port, "-T", "--", self._destination(), script]

    def start(
        self, script: str, *, stdin: int | IO[bytes], stdout: int | IO[bytes], stderr: int | IO[bytes]
    ) -> subprocess.Popen:
        """Start *script* on the client in a session of its own (the terminal's Ctrl-C does not reach it)."""
        return subprocess.Popen(
            self.argv(script), stdin=stdin, stdout=stdout, stderr=stderr, start_new_session=True
        )

    def run(self, script: str, *, stdin: bytes | None = None, timeout: float = 120) -> str:
        """Run *script* on the client; its stdout, or UserError naming the client with ssh's/sh's reason."""
        try:
            done = subprocess.run(
                self.argv(script),
                input=stdin if stdin is not None else b"",
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise UserError(f"client {self.name}: no answer within {timeout:.0f}s") from None
        except FileNotFoundError:
            raise UserError("the OpenSSH client (ssh) is not installed: install openssh-client") from None
        if done.returncode != 0:
            raise UserError(
                f"client {self.name}: {_last_line(done.stderr) or f'exit code {done.returncode}'}"
            )
        return done.stdout.decode(errors="replace")

    def check(self, java: str) -> list[str]:
        """Fail with one line when the client cannot be reached or has no usable Java at *java*; then clear
        what earlier benches left there (returns those folders)."""
        try:
            out = self.run(
                f"{shlex.quote(java)} -version >/dev/null 2>&1 || echo nojava", timeout=CONNECT_TIMEOUT_S + 20
            )
        except UserError as err:
            what = "is unreachable" if not self.spec.local else "cannot run commands"
            raise UserError(
                f"client {self.name} {what}: {str(err).split(': ', 1)[-1]} "
                f"(check that `{self.ssh_hint()}` works without a prompt)"
            ) from None
        if "nojava" in out:
            raise UserError(f"client {self.name}: no Java at {java}; install Java 11+ there")
        return self.clear_stale()

    def ssh_hint(self) -> str:
        """The command that checks this client by hand: ``ssh [-F cfg] [-p PORT] [user@]host true``."""
        if self.spec.local:
            return "sh -c true"
        config = ["-F", self.ssh_config] if self.ssh_config else []
        port = ["-p", str(self.spec.port)] if self.spec.port else []
        return shlex.join(["ssh", *config, *port, self._destination(), "true"])

    def clear_stale(self) -> list[str]:
        """Remove the work folders an earlier bench left on this client (its ssh link or the runner died
        before it could remove them): yours, with no live YCSB (``pid``) and nothing written for
        ``STALE_MINUTES``. Returns the folders removed; never raises."""
        try:
            out = self.run(CLEAR_STALE_SCRIPT, timeout=60)
        except UserError:
            return []
        return [ln for ln in out.splitlines() if "ycsb-runner-client-" in ln]

    def clock_offset(self, samples: int = 3, timeout: float = 30.0) -> tuple[float, float] | None:
        """(offset, round trip) in seconds: the client's clock minus this machine's, from ``date +%s.%N``
        read inside one established session (so ssh's connection set-up is not in the round trip), the
        sample with the shortest round trip; (0, 0) for ``local``; None when it cannot be read."""
        if self.spec.local:
            return 0.0, 0.0
        script = "echo ready; while read x; do date +%s.%N; done"
        try:
            proc = subprocess.Popen(
                self.argv(script), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
        except OSError:
            return None
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        best: tuple[float, float] | None = None
        try:
            assert proc.stdin is not None and proc.stdout is not None
            if proc.stdout.readline().strip() != b"ready":
                return None
            for _ in range(samples):
                t0 = time.time()
                proc.stdin.write(b"x\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
                t1 = time.time()
                remote = float(line.decode().strip())  # ValueError: no GNU date (%N)
                sample = (remote - (t0 + t1) / 2, t1 - t0)
                if best is None or sample[1] < best[1]:
                    best = sample
        except (OSError, ValueError):
            return None
        finally:
            timer.cancel()
            with contextlib.suppress(OSError):
                proc.stdin.close()  # type: ignore[union-attr]
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
            if proc.poll() is None:
                proc.kill()
        return best

    def make_workdir(self) -> str:
        """A new private folder (mode 0700) on the client, with ``hdr/`` in it."""
        if self.spec.local:
            d = tempfile.mkdtemp(prefix="ycsb-runner-client-")
            os.chmod(d, 0o700)
            os.mkdir(os.path.join(d, "hdr"))
            return d
        out = self.run(
            'd=$(mktemp -d "${TMPDIR:-/tmp}/ycsb-runner-client-XXXXXXXX") && mkdir "$d/hdr" && echo "$d"'
        )
        return out.strip().splitlines()[-1]

    def put_files(self, workdir: str, files: Mapping[str, str]) -> None:
        """Write *files* (name -> text) into *workdir* with mode 0600, through stdin (never argv)."""
        self.run(f"umask 077 && tar -x -m -o -f - -C {shlex.quote(workdir)}", stdin=_tar(files))

    def fetch_dir(self, remote: str, local: Path) -> None:
        """Copy the folder *remote* (on the client) to *local* (a tar stream back over ssh)."""
        local.mkdir(parents=True, exist_ok=True)
        if self.spec.local:
            shutil.copytree(remote, local, dirs_exist_ok=True)
            return
        script = f"test -d {shlex.quote(remote)} && tar -c -f - -C {shlex.quote(remote)} ."
        with tempfile.TemporaryFile() as buf:
            subprocess.run(
                self._ssh_argv(script),
                stdout=buf,
                stderr=subprocess.DEVNULL,
                stdin=subprocess.DEVNULL,
                timeout=600,
                check=False,
            )
            buf.seek(0)
            if buf.read(1):
                buf.seek(0)
                with tarfile.open(fileobj=buf, mode="r:") as tar:
                    tar.extractall(local, filter="data")

    def remove(self, workdir: str) -> None:
        """Remove *workdir* (and the password file in it); never raises."""
        if not workdir or "ycsb-runner-client-" not in workdir:
            return
        try:
            if self.spec.local:
                shutil.rmtree(workdir, ignore_errors=True)
            else:
                self.run(f"rm -rf -- {shlex.quote(workdir)}", timeout=60)
        except UserError:
            pass


def lib_dirs_of(classpath: list[str]) -> list[Path]:
    """The folders of a YCSB classpath (``/x/lib/*`` -> ``/x/lib``)."""
    return [Path(c[:-2] if c.endswith("/*") else c).absolute() for c in classpath]


def _files(d: Path) -> list[Path]:
    return sorted(f for f in d.iterdir() if f.is_file()) if d.is_dir() else []


def install_ycsb(client: Client, classpath: list[str], java: str, dest: str | None = None) -> str:
    """Put this machine's YCSB jars (the local cache) on *client*, at the same paths unless *dest* is given
    (then under it); check Java there. Nothing is copied when the client already has the same files (name
    and size). Returns what was done, in one line."""
    dirs = lib_dirs_of(classpath)
    if client.spec.local:
        return f"{client.name}: uses this machine's YCSB ({', '.join(map(str, dirs))})"
    client.check(java)
    root = Path(dest) if dest else Path("/")
    targets = [str(root / str(d).lstrip("/")) for d in dirs]
    q = " ".join(shlex.quote(t) for t in targets)
    listing = client.run(f"find {q} -maxdepth 1 -type f -exec wc -c {{}} + 2>/dev/null; true")
    have = {" ".join(reversed(ln.split(None, 1))) for ln in listing.splitlines() if ln.strip()}
    want = {f"{root / str(f).lstrip('/')} {f.stat().st_size}" for d in dirs for f in _files(d)}
    if want <= have:
        return f"{client.name}: YCSB already in place ({len(want)} files), Java at {java}"
    argv = client.argv(f"mkdir -p {q} && tar -x -m -f - -C /")
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    try:
        with tarfile.open(fileobj=proc.stdin, mode="w|") as tar:
            for d in dirs:
                for f in _files(d):
                    tar.add(f, arcname=str(root / str(f).lstrip("/")).lstrip("/"))
    except BrokenPipeError:
        pass
    finally:
        proc.stdin.close()
    assert proc.stderr is not None
    err = proc.stderr.read()
    if proc.wait(600) != 0:
        raise UserError(f"client {client.name}: copying YCSB failed: {_last_line(err) or proc.returncode}")
    return f"{client.name}: copied YCSB ({len(want)} files) to {', '.join(targets)}; Java at {java}"


def _last_line(raw: bytes) -> str:
    lines = [ln.strip() for ln in raw.decode(errors="replace").splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def check_clients(clients: list[Client], java: str) -> list[str]:
    """Every client reachable with Java, checked in parallel; the first failure as one line. Returns a note
    per stale work folder removed (``client NAME: removed FOLDER ...``)."""
    with ThreadPoolExecutor(max_workers=max(1, len(clients))) as pool:
        futures = [pool.submit(c.check, java) for c in clients]
        errors = [f.exception() for f in futures]
    for err in errors:
        if err is not None:
            raise err
    return [
        f"client {c.name}: removed {folder}, left by an earlier bench"
        for c, f in zip(clients, futures, strict=True)
        for folder in f.result() or []
    ]
