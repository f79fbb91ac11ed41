"""Reference implementations in virtualenvs of their own, for the benchmark scripts (not part of ycsb-runner).

Apache Otava 0.8.0 pins numpy 2.2 and MongoDB's signal-processing-algorithms 2.1.6 pins numpy < 2, so neither
can sit in the project's environment (numpy 2.4): each gets a virtualenv under ``.cache`` (created once, with
pip from PyPI) and is fed JSON over stdin by an inline script run with that virtualenv's python.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache"


@dataclass(frozen=True)
class Reference:
    """A virtualenv holding one reference package: its directory, the python that creates it, what pip
    installs (in order, each a list of arguments), and the import that proves it works."""

    venv: Path
    base_python: str
    installs: tuple[tuple[str, ...], ...]
    probe: str


OTAVA = Reference(
    CACHE / "otava-venv",
    sys.executable,
    (("apache-otava==0.8.0",),),
    "import otava.analysis",
)
# An sdist with a C extension; its build needs numpy < 2 and setuptools < 71 in the environment it builds in.
SPA = Reference(
    CACHE / "spa-venv",
    "python3.11",
    (("numpy<2", "setuptools<71", "wheel"), ("--no-build-isolation", "signal-processing-algorithms==2.1.6")),
    "from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive",
)


def ensure(ref: Reference) -> tuple[Path | None, str]:
    """The virtualenv's python with the package importable, or (None, why not)."""
    py = ref.venv / "bin" / "python"
    if py.exists() and _ok(py, ref.probe):
        return py, ""
    made = subprocess.run(
        [ref.base_python, "-m", "venv", str(ref.venv)], capture_output=True, text=True, check=False
    )
    if made.returncode != 0:
        return None, _last_line(made)
    for args in ref.installs:
        pip = subprocess.run(
            [str(py), "-m", "pip", "install", "-q", *args], capture_output=True, text=True, check=False
        )
        if pip.returncode != 0:
            return None, _last_line(pip)
    return (py, "") if _ok(py, ref.probe) else (None, f"{ref.probe!r} fails in {ref.venv}")


def run_json(
    py: Path | str,
    script: str,
    payload: Any,
    *,
    env: dict[str, str] | None = None,
    limit_mb: int | None = None,
) -> Any:
    """Run *script* with *py*, *payload* as JSON on stdin; its stdout parsed as JSON. *limit_mb* caps the
    child's address space (RLIMIT_AS), so that an allocation too large fails in the child (MemoryError)."""

    def cap() -> None:
        if limit_mb is not None:
            size = limit_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    proc = subprocess.run(
        [str(py), "-c", script],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
        preexec_fn=cap,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{py} failed: {_last_line(proc)}")
    return json.loads(proc.stdout)


def _ok(py: Path, probe: str) -> bool:
    return subprocess.run([str(py), "-c", probe], capture_output=True, check=False).returncode == 0


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = (proc.stderr or proc.stdout or "no output").strip().splitlines()
    return lines[-1] if lines else "no output"
