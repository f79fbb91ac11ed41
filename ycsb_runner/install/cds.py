"""A class-data-sharing archive of YCSB's classes, so that every YCSB JVM starts in about half the CPU.

Java's AppCDS maps a file of already parsed classes instead of reading and verifying the jars at every
start. ``ycsb-runner setup`` makes one: it runs a small YCSB load and run (every operation type) against a
throwaway embedded server with ``-XX:ArchiveClassesAtExit``. Local YCSB steps then start with
``-XX:SharedArchiveFile``. Measured here (Java 17, 2 cores, a 50-record load): 0.9 CPU-seconds per JVM
without it, 0.5 with it. It changes how classes are loaded, nothing YCSB measures: the first operations
of a step no longer wait for the driver's classes.

The archive belongs to one JVM build and one set of jars: its name is a digest of both, so a new JDK or
a rebuilt binding is simply not matched (YCSB then starts as before). Java 17 aborts when it maps a damaged
archive, so one is used only when its sha256 matches the one written after it was checked."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import subprocess
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ycsb_runner.errors import UserError
from ycsb_runner.install.java import JavaInfo
from ycsb_runner.install.ycsb import YcsbInstall
from ycsb_runner.parse import parse_output
from ycsb_runner.paths import cache_dir

# the JVM's notes about a mismatched archive (a warning on stdout, where YCSB's results go) are turned off
QUIET = "-Xlog:cds*=off"
TRAIN_TIMEOUT_S = 180.0
TRAIN_TABLE = "usertable_cds"
TRAIN_RECORDS, TRAIN_OPERATIONS = 100, 300
NOT_MADE = "YCSB class-data archive not made ({reason}): YCSB starts without it"


def _jars(install: YcsbInstall) -> list[Path]:
    """The jars of the class path (``lib/*`` entries expanded as the java launcher does)."""
    jars = []
    for entry in install.classpath:
        jars += Path(entry[:-1]).glob("*.jar") if entry.endswith("*") else [Path(entry)]
    return sorted(jars)


def archive_dir() -> Path:
    return cache_dir() / "ycsb" / "cds"


def _jvm_build(java: JavaInfo) -> str:
    """Which JVM build runs: the ``(build ...)`` ids of ``java -version``, not the launcher's path nor the
    VM's mode (a wrapper that adds ``-XX:TieredStopAtLevel=1`` runs the same JVM and shares the archive)."""
    builds = re.findall(r"\(build ([^,)]+)", java.build)
    return " ".join([java.version, *builds]) if builds else f"{java.path} {java.version}"


def archive_path(java: JavaInfo, install: YcsbInstall) -> Path:
    """Where the archive of this Java and these jars lives (it may not exist)."""
    h = hashlib.sha256()
    h.update(f"{_jvm_build(java)}\0{':'.join(install.classpath)}\0".encode())
    for jar in _jars(install):
        st = jar.stat() if jar.exists() else None
        h.update(f"{jar}\0{st and st.st_size}\0{st and st.st_mtime_ns}\0".encode())
    return archive_dir() / f"{h.hexdigest()[:16]}.jsa"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def usable_archive(java: JavaInfo, install: YcsbInstall) -> Path | None:
    """The archive, when set-up made and checked one for this Java and these jars and it is intact."""
    path = archive_path(java, install)
    sums = path.with_suffix(".sha256")
    try:
        return path if sums.read_text().split()[0] == _digest(path) else None
    except (OSError, IndexError):
        return None


def jvm_flags(archive: Path | None) -> list[str]:
    """The JVM options that start YCSB from *archive* (none without one)."""
    return [f"-XX:SharedArchiveFile={archive}", QUIET] if archive else []


def _ycsb(
    java: JavaInfo, install: YcsbInstall, url: str, phase: str, props: dict[str, object], jvm: list[str]
) -> list[str]:
    argv = [java.path, *jvm, "-cp", ":".join(install.classpath), "site.ycsb.Client", phase, "-db"]
    argv += [install.binding_class, "-p", "workload=site.ycsb.workloads.CoreWorkload", "-threads", "2", "-s"]
    for key, value in {
        "mongodb.url": url,
        "table": TRAIN_TABLE,
        "recordcount": TRAIN_RECORDS,
        **props,
    }.items():
        argv += ["-p", f"{key}={value}"]
    return argv


def _run(argv: list[str], what: str, cwd: Path, expected: int) -> None:
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=TRAIN_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{what} did not end within {TRAIN_TIMEOUT_S:g}s") from None
    # YCSB exits 0 on many failures: judge it as a bench step is judged (an archive made by a run that did
    # not talk to the server would lack the driver's classes)
    done = parse_output(proc.stdout, proc.stderr, exit_code=proc.returncode, expected_ops=expected).completion
    if not done.ok:
        raise RuntimeError(f"{what} failed ({'; '.join(done.reasons)[:200]})")


def build_archive(
    java: JavaInfo, install: YcsbInstall, url: str, log: Callable[[str], None] = print
) -> Path | None:
    """Make the archive with a small load and run (every operation type) against *url*, a throwaway
    server: YCSB writes the collection ``usertable_cds``. Idempotent; when it cannot be made, YCSB starts
    without one (the reason is logged)."""
    if "@" in urlsplit(url).netloc:  # the URL goes on YCSB's argv, where no credential may be
        raise ValueError("the class-data archive is made against a throwaway server: a URL without a user")
    if (ready := usable_archive(java, install)) is not None:
        return ready
    path = archive_path(java, install)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.stem}.tmp-{os.getpid()}.jsa")
    mix = {
        "operationcount": TRAIN_OPERATIONS,
        "readproportion": 0.4,
        "updateproportion": 0.2,
        "insertproportion": 0.1,
        "scanproportion": 0.1,
        "readmodifywriteproportion": 0.2,
    }
    try:
        _run(
            _ycsb(java, install, url, "-load", {}, []), "the archive's YCSB load", path.parent, TRAIN_RECORDS
        )
        dump = [f"-XX:ArchiveClassesAtExit={tmp}", QUIET]
        _run(
            _ycsb(java, install, url, "-t", mix, dump),
            "the archive's YCSB run",
            path.parent,
            TRAIN_OPERATIONS,
        )
        # a damaged archive aborts the JVM: check that Java maps this one (-Xshare:on fails when it cannot)
        _check_maps(java, install, tmp)
        digest = _digest(tmp)
        tmp.replace(path)
        path.with_suffix(".sha256").write_text(f"{digest}  {path.name}\n")
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as err:
        log(NOT_MADE.format(reason=err))
        return None
    finally:  # also on Ctrl-C: no half-written archive, nor what a JVM that aborted left behind
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
            for crash in path.parent.glob("hs_err_pid*.log"):
                crash.unlink(missing_ok=True)
    log(f"YCSB class-data archive: {path} ({path.stat().st_size / 1e6:.1f} MB)")
    return path


def ensure_archive(
    java: JavaInfo,
    install: YcsbInstall,
    embedded_server: Callable[[], AbstractContextManager[Any]],
    log: Callable[[str], None] = print,
) -> Path | None:
    """What ``ycsb-runner setup`` does: the archive, made against a throwaway server when there is none yet
    (``embedded_server()``: a context manager whose value has the server's ``url``, the embedded server of
    :mod:`ycsb_runner.install.embedded`, never ``$MONGODB_URL``); None, with the reason logged, when it cannot
    be made.
    """
    if (ready := usable_archive(java, install)) is not None:
        return ready
    try:
        with embedded_server() as embedded:
            return build_archive(java, install, embedded.url, log=log)
    except UserError as err:
        log(NOT_MADE.format(reason=err))
        return None


def _check_maps(java: JavaInfo, install: YcsbInstall, archive: Path) -> None:
    argv = [java.path, "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-cp", ":".join(install.classpath)]
    proc = subprocess.run(
        [*argv, "-version"], capture_output=True, text=True, timeout=60, cwd=archive.parent, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"Java cannot map the new archive (exit {proc.returncode})")
