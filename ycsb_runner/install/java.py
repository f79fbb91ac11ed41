"""Find a Java runtime and tell which one it is."""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ycsb_runner.errors import UserError


@dataclass(frozen=True)
class JavaInfo:
    path: str
    version: str
    description: str
    build: str = ""  # all of `java -version`: which JVM build runs, whatever the launcher's path


VERSION_TIMEOUT_S = 20.0


def _version_output(java: str, timeout_s: float) -> str:
    """``java -version``'s output; a hung one is killed with everything it started (own process group)."""
    try:
        proc = subprocess.Popen(
            [java, "-version"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as err:
        raise UserError(f"cannot run {java}: {err.strerror or err}; check JAVA_HOME") from None
    try:
        _, err_bytes = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise UserError(
            f"{java} -version did not answer within {timeout_s:g}s (killed): check the Java install or "
            "set JAVA_HOME to a working JDK 11+"
        ) from None
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        raise
    return err_bytes.decode("utf-8", errors="replace")


def find_java(timeout_s: float | None = None) -> JavaInfo:
    """``$JAVA_HOME/bin/java`` or ``java`` on PATH, with its version; a clear error when there is none or
    it hangs (*timeout_s*, default ``$YCSB_RUNNER_JAVA_TIMEOUT`` or 20 s)."""
    if timeout_s is None:
        timeout_s = _env_timeout()
    home = os.environ.get("JAVA_HOME")
    candidate = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not candidate or not Path(candidate).exists():
        raise UserError(
            "Java not found: install a JDK 11+ (e.g. `apt-get install openjdk-17-jre-headless`) "
            "or set JAVA_HOME"
        )
    out = _version_output(candidate, timeout_s)
    match = re.search(r'version "([^"]+)"', out)
    first = out.strip().splitlines()[0] if out.strip() else "unknown"
    return JavaInfo(
        path=candidate, version=match.group(1) if match else "unknown", description=first, build=out.strip()
    )


def _env_timeout() -> float:
    from ycsb_runner import config

    text = config.current().java_timeout
    if not text:
        return VERSION_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise UserError(f"{config.JAVA_TIMEOUT}={text}: must be a positive number of seconds")
    return value
