"""Build FerretDB v1.24.2 (SQLite handler) for the embedded test server.

``go install github.com/FerretDB/FerretDB/cmd/ferretdb@v1.24.2`` builds, but the binary panics at start-up
because the module on the Go proxy lacks its generated ``build/version/version.txt``. The project therefore
builds a tiny launcher (``tools/ferretdb``) on FerretDB's embeddable package, from the same module version.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from ycsb_runner.errors import UserError
from ycsb_runner.paths import cache_dir, project_root

FERRETDB_VERSION = "v1.24.2"


def ferretdb_binary() -> Path:
    """Where the launcher lives (``$YCSB_RUNNER_FERRETDB`` overrides)."""
    env = os.environ.get("YCSB_RUNNER_FERRETDB")
    return Path(env) if env else cache_dir() / "bin" / "ferretdb-embedded"


def _source_digest(src: Path) -> str:
    h = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go"):
        h.update((src / name).read_bytes())
    return h.hexdigest()[:16]


def ensure_ferretdb(log=print) -> Path:
    """Build the launcher if it is missing or its sources changed; return its path."""
    binary = ferretdb_binary()
    if os.environ.get("YCSB_RUNNER_FERRETDB"):
        if not binary.exists():
            raise UserError(f"YCSB_RUNNER_FERRETDB points at {binary}, which does not exist")
        return binary
    src = project_root() / "tools" / "ferretdb"
    if not (src / "go.mod").is_file():
        raise UserError(f"FerretDB launcher sources not found in {src}; run from a ycsb-runner checkout")
    stamp = binary.with_suffix(".stamp")
    digest = _source_digest(src)
    if binary.exists() and stamp.exists() and stamp.read_text().strip() == digest:
        return binary
    go = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)
    if not go:
        raise UserError(
            "neither mongod nor Go found: install MongoDB (mongod on PATH) or Go >= 1.24 to build FerretDB"
        )
    binary.parent.mkdir(parents=True, exist_ok=True)
    log(f"building FerretDB {FERRETDB_VERSION} (SQLite) with {go} -> {binary} (first time: a few minutes)")
    env = dict(os.environ, CGO_ENABLED="0")
    proc = subprocess.run(
        [go, "build", "-o", str(binary), "."], cwd=src, env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise UserError(f"building FerretDB failed ({tail}); check that the Go module proxy is reachable")
    stamp.write_text(digest + "\n")
    return binary
