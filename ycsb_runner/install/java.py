"""Find a Java runtime and tell which one it is."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ycsb_runner.errors import UserError


@dataclass(frozen=True)
class JavaInfo:
    path: str
    version: str
    description: str


def find_java() -> JavaInfo:
    """``$JAVA_HOME/bin/java`` or ``java`` on PATH, with its version; a clear error when there is none."""
    home = os.environ.get("JAVA_HOME")
    candidate = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not candidate or not Path(candidate).exists():
        raise UserError(
            "Java not found: install a JDK 11+ (e.g. `apt-get install openjdk-17-jre-headless`) "
            "or set JAVA_HOME"
        )
    try:
        out = subprocess.run(
            [candidate, "-version"], capture_output=True, text=True, timeout=30, check=False
        ).stderr
    except OSError as err:
        raise UserError(f"cannot run {candidate}: {err}; check JAVA_HOME") from err
    match = re.search(r'version "([^"]+)"', out)
    first = out.strip().splitlines()[0] if out.strip() else "unknown"
    return JavaInfo(path=candidate, version=match.group(1) if match else "unknown", description=first)
