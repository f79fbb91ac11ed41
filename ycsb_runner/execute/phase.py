"""Run one YCSB process: its own process group, stderr streamed (status lines), stdout to a file,
a hard timeout as a last resort, and Ctrl-C/SIGTERM that stop it and keep what was written."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ycsb_runner.errors import UserError
from ycsb_runner.secrets import Masker


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


def _copy_masked(src: Path, dst: Path, masker: Masker, secrets: list[bytes]) -> None:
    """Move *src* to *dst*, replacing any secret on the way (streamed: raw outputs can be large)."""
    if not secrets:
        shutil.move(src, dst)
        return
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        for line in fin:
            for s in secrets:
                if s in line:
                    line = line.replace(s, b"***")
            fout.write(line)
    src.unlink()


def run_phase(
    argv: list[str],
    *,
    out_dir: Path,
    private_dir: Path,
    timeout_s: float,
    masker: Masker,
    secrets: list[str],
    on_stderr_line: Callable[[str], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    env: dict[str, str] | None = None,
) -> PhaseResult:
    """Run *argv* and return when it ends, times out (killed) or is interrupted (killed, then re-raised)."""
    stdout_tmp = private_dir / "stdout.partial"
    stdout_path = out_dir / "stdout.txt"
    stderr_path = out_dir / "stderr.txt"
    secret_bytes = [s.encode() for s in secrets if s]
    started = time.time()
    try:
        with open(stdout_tmp, "wb") as out:
            proc = subprocess.Popen(
                argv,
                stdout=out,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=env,
            )
    except FileNotFoundError as err:
        raise UserError(f"cannot start {argv[0]}: not found; install Java or set JAVA_HOME") from err
    if on_start:
        on_start(proc.pid)

    def pump() -> None:
        assert proc.stderr is not None
        with open(stderr_path, "w", encoding="utf-8") as err_file:
            for raw in proc.stderr:
                line = masker(raw.decode("utf-8", errors="replace"))
                err_file.write(line)
                err_file.flush()
                if on_stderr_line:
                    try:
                        on_stderr_line(line.rstrip("\n"))
                    except Exception:  # noqa: BLE001 - a display problem must not stop the benchmark
                        pass

    reader = threading.Thread(target=pump, name="ycsb-stderr", daemon=True)
    reader.start()
    timed_out = interrupted = False
    try:
        try:
            proc.wait(timeout=timeout_s)
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
        if stdout_tmp.exists():
            _copy_masked(stdout_tmp, stdout_path, masker, secret_bytes)
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
