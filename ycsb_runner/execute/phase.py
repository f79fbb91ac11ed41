"""Run one YCSB process: its own process group, stderr streamed (status lines), stdout to a file,
a hard timeout as a last resort, and Ctrl-C/SIGTERM that stop it and keep what was written."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ycsb_runner.errors import UserError
from ycsb_runner.runs.model import STDERR, STDOUT
from ycsb_runner.safe.lifetime import die_with_parent
from ycsb_runner.safe.secrets import mask_bytes


@dataclass
class PhaseResult:
    exit_code: int | None
    stdout_path: Path
    stderr_path: Path
    started_at: float
    ended_at: float
    pid: int | None
    timed_out: bool = False
    interrupted: bool = False

    @property
    def seconds(self) -> float:
        return self.ended_at - self.started_at


def _kill_group(proc: subprocess.Popen, grace: float = 10.0) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


def _copy_masked(src: Path, dst: Path) -> None:
    """Move *src* to *dst*, masking URL credentials on the way; every other byte is kept as YCSB wrote it
    (streamed: raw outputs can be large)."""
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        for line in fin:
            fout.write(mask_bytes(line))
    src.unlink()


# Below this much free space in the private folder (TMPDIR), YCSB's stdout may not have fit: Java's
# System.out drops what it cannot write without a word, so a full TMPDIR would look like a YCSB crash.
MIN_PRIVATE_FREE = 1 << 20


def _free_bytes(folder: Path) -> int | None:
    try:
        st = os.statvfs(folder)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def private_full(private_dir: Path) -> UserError | None:
    free = _free_bytes(private_dir)
    if free is None or free >= MIN_PRIVATE_FREE:
        return None
    return UserError(
        f"TMPDIR is full ({free // 1024} KiB free in {private_dir.parent}): YCSB's output goes there "
        "first (to mask credentials) and could not be kept whole; free space there, or point TMPDIR at "
        "another disk"
    )


def _wait(proc: subprocess.Popen, timeout_s: float) -> None:
    """``proc.wait(timeout_s)`` without its polling (it wakes every 50 ms for the whole run): block on the
    process's pidfd until it exits or *timeout_s* passes. Signals still interrupt it (Ctrl-C raises here).
    Where pidfds are missing (Linux before 5.3), the polling wait."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        proc.wait(timeout=timeout_s)
        return
    try:
        if not select.select([fd], [], [], timeout_s)[0]:
            raise subprocess.TimeoutExpired(proc.args, timeout_s)
    finally:
        os.close(fd)
    proc.wait()


def _start(argv: list[str], stdout_tmp: Path, env: dict[str, str] | None) -> subprocess.Popen:
    """Start *argv* in a process group of its own (it dies with this process): stdout to *stdout_tmp*,
    stderr piped, no stdin."""
    try:
        with open(stdout_tmp, "wb") as out:
            return subprocess.Popen(
                argv,
                stdout=out,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=env,
                preexec_fn=die_with_parent(),
            )
    except FileNotFoundError as err:
        raise UserError(f"cannot start {argv[0]}: not found; install Java or set JAVA_HOME") from err


def _pump_stderr(
    proc: subprocess.Popen,
    stderr_path: Path,
    on_line: Callable[[str], None] | None,
    write_error: list[OSError],
) -> None:
    """Stream stderr to its file (masked bytes, nothing else changed) and to the progress display (*on_line*).
    A write error (disk full) is kept in *write_error* for the caller, and the pipe is still drained so YCSB
    never blocks."""
    assert proc.stderr is not None
    err_file = None
    try:
        err_file = open(stderr_path, "wb")  # noqa: SIM115 - closed below; a failed open is tolerated
    except OSError as err:
        write_error.append(err)
    for raw in proc.stderr:
        line = mask_bytes(raw)
        if err_file is not None:
            try:
                err_file.write(line)
                err_file.flush()
            except OSError as err:
                write_error.append(err)
                with contextlib.suppress(OSError):
                    err_file.close()
                err_file = None
        if on_line:
            try:
                on_line(line.decode("utf-8", errors="replace").rstrip("\n"))
            except Exception:  # noqa: BLE001 - a display problem must not stop the benchmark
                pass
    if err_file is not None:
        with contextlib.suppress(OSError):
            err_file.close()


def _keep_stdout(stdout_tmp: Path, stdout_path: Path, write_error: list[OSError]) -> None:
    """Move stdout, masked, from the private folder into the step's folder; a write error is kept in
    *write_error* for the caller (and the partial copy in the private folder removed)."""
    if stdout_tmp.exists():
        try:
            _copy_masked(stdout_tmp, stdout_path)
        except OSError as err:
            write_error.append(err)
            stdout_tmp.unlink(missing_ok=True)


def run_phase(
    argv: list[str],
    *,
    out_dir: Path,
    private_dir: Path,
    timeout_s: float,
    on_stderr_line: Callable[[str], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    env: dict[str, str] | None = None,
) -> PhaseResult:
    """Run *argv* and return when it ends, times out (killed) or is interrupted (killed, then re-raised)."""
    stdout_tmp = private_dir / "stdout.partial"
    stdout_path = out_dir / STDOUT
    stderr_path = out_dir / STDERR
    if (full := private_full(private_dir)) is not None:
        raise full
    started = time.time()
    proc = _start(argv, stdout_tmp, env)
    if on_start:
        on_start(proc.pid)
    write_error: list[OSError] = []
    reader = threading.Thread(
        target=_pump_stderr,
        args=(proc, stderr_path, on_stderr_line, write_error),
        name="ycsb-stderr",
        daemon=True,
    )
    reader.start()
    timed_out = interrupted = False
    try:
        try:
            _wait(proc, timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
    except BaseException:
        interrupted = True
        _kill_group(proc)
        raise
    finally:
        reader.join(10)
        ended = time.time()
        full = private_full(private_dir)  # before the copy frees the space again
        _keep_stdout(stdout_tmp, stdout_path, write_error)
    if write_error:
        raise write_error[0]
    if full is not None:
        raise full
    return PhaseResult(
        exit_code=proc.returncode,
        stdout_path=stdout_path,
        stderr_path=stderr_path,
        started_at=started,
        ended_at=ended,
        pid=proc.pid,
        timed_out=timed_out,
        interrupted=interrupted,
    )
