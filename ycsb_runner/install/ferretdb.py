"""Build FerretDB v1.24.2 (SQLite handler) for the embedded test server.

``go install github.com/FerretDB/FerretDB/cmd/ferretdb@v1.24.2`` builds, but the binary panics at start-up
because the module on the Go proxy lacks its generated ``build/version/version.txt``. The project therefore
builds a tiny launcher (``tools/ferretdb`` of a checkout, carried by the installed package) on FerretDB's
embeddable package, from the same module version.

It builds it with one line of FerretDB changed (``ID_LOOKUP_PATCH``): as shipped, the SQLite backend creates
each collection's ``_id`` index on ``_ferretdb_sjson->"_id"`` but filters, updates and deletes by ``_id`` on
``_ferretdb_sjson->'$._id'``. SQLite uses an index on an expression only for the same expression, so every
``_id`` lookup scanned the collection (61 ms at 10,000 documents, 1.1 s at 100,000). The patch makes the
backend's ``_id`` expression ``_ferretdb_sjson->'_id'``: by SQLite's definition of ``->`` the same value as
``'$._id'`` (a label without ``$`` is the member of that name), and an expression the planner matches to
FerretDB's own ``_id_`` index. Nothing else changes: no extra index, no second writer on FerretDB's
files, ``listIndexes``/``collStats``/drop as FerretDB keeps them, for every collection whoever creates it
and whenever.
``bench/embedded_server_bench.py`` measures the server with and without it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ycsb_runner import config
from ycsb_runner.errors import UserError
from ycsb_runner.paths import cache_dir, source_dir

FERRETDB_VERSION = "v1.24.2"
FERRETDB_MODULE = "github.com/FerretDB/FerretDB"


@dataclass(frozen=True)
class SourcePatch:
    """One exact change to one file of the FerretDB module (*old* must occur exactly once)."""

    path: str
    old: str
    new: str

    def apply(self, module_dir: Path) -> None:
        target = module_dir / self.path
        text = target.read_text()
        if text.count(self.old) != 1:
            raise UserError(
                f"FerretDB {FERRETDB_VERSION}'s {self.path} is not the file the launcher's patch was written "
                f"for ({self.old!r} found {text.count(self.old)} times); remove {cache_dir() / 'build'} and "
                "run `ycsb-runner setup` again"
            )
        target.chmod(target.stat().st_mode | stat.S_IWUSR)
        target.write_text(text.replace(self.old, self.new))


#: Every ``_id`` filter, update and delete of the SQLite backend through FerretDB's own ``_id_`` index
#: (module docstring).
ID_LOOKUP_PATCH = SourcePatch(
    path="internal/backends/sqlite/metadata/metadata.go",
    old="IDColumn = DefaultColumn + \"->'$._id'\"",
    new="IDColumn = DefaultColumn + \"->'_id'\"",
)


def ferretdb_binary(*, patched: bool = True) -> Path:
    """Where the launcher lives (``$YCSB_RUNNER_FERRETDB`` overrides the patched one); *patched* False: the
    server as FerretDB ships it, kept apart for ``bench/embedded_server_bench.py``."""
    env = config.current().ferretdb
    if patched and env:
        return Path(env)
    return cache_dir() / "bin" / ("ferretdb-embedded" if patched else "ferretdb-embedded-as-shipped")


def _launcher_sources() -> Path:
    """``tools/ferretdb`` of a checkout, or the copy an installed package carries."""
    return source_dir("ferretdb")


def _source_digest(src: Path, patched: bool) -> str:
    h = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go"):
        h.update((src / name).read_bytes())
    if patched:
        h.update(json.dumps([ID_LOOKUP_PATCH.path, ID_LOOKUP_PATCH.old, ID_LOOKUP_PATCH.new]).encode())
    return h.hexdigest()[:16]


def _go() -> str:
    go = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)
    if not go:
        raise UserError(
            "neither mongod nor Go found: install MongoDB (mongod on PATH) or Go >= 1.24 to build FerretDB"
        )
    return go


def _run_go(go: str, args: list[str], cwd: Path) -> str:
    proc = subprocess.run(
        [go, *args],
        cwd=cwd,
        env=dict(os.environ, CGO_ENABLED="0"),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise UserError(f"building FerretDB failed ({tail}); check that the Go module proxy is reachable")
    return proc.stdout


def writable_copy(src: Path, dst: Path, ignore: Callable[..., Any] | None = None) -> None:
    """*src* (a read-only folder of Go's module cache, an installed package's sources) copied to *dst* with
    every file and folder writable, so that the copy can be patched, built in and removed."""
    shutil.copytree(src, dst, copy_function=shutil.copyfile, ignore=ignore)
    for folder, _dirs, files in os.walk(dst):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)


def build_launcher(binary: Path, *, patched: bool = True) -> None:
    """Build the launcher into *binary* in a throwaway folder under the cache: the launcher's sources and,
    when *patched*, a copy of the FerretDB module with ``ID_LOOKUP_PATCH`` applied, used through a
    ``replace`` directive (Go's module cache itself is never written)."""
    go = _go()
    work = cache_dir() / "build" / binary.name
    shutil.rmtree(work, ignore_errors=True)
    launcher = work / "launcher"
    launcher.mkdir(parents=True)
    for name in ("go.mod", "go.sum", "main.go"):
        shutil.copyfile(_launcher_sources() / name, launcher / name)
    try:
        if patched:
            info = json.loads(
                _run_go(go, ["mod", "download", "-json", f"{FERRETDB_MODULE}@{FERRETDB_VERSION}"], launcher)
            )
            module = work / "FerretDB"
            writable_copy(Path(info["Dir"]), module)
            ID_LOOKUP_PATCH.apply(module)
            _run_go(go, ["mod", "edit", f"-replace={FERRETDB_MODULE}=../FerretDB"], launcher)
        binary.parent.mkdir(parents=True, exist_ok=True)
        _run_go(go, ["build", "-o", str(binary), "."], launcher)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def ensure_ferretdb(log=print, *, patched: bool = True) -> Path:
    """Build the launcher if it is missing or its sources (or the patch) changed; return its path."""
    binary = ferretdb_binary(patched=patched)
    if patched and config.current().ferretdb:
        if not binary.exists():
            raise UserError(f"{config.FERRETDB} points at {binary}, which does not exist")
        return binary
    src = _launcher_sources()
    if not (src / "go.mod").is_file():
        raise UserError(
            f"the FerretDB launcher's sources are missing ({src / 'go.mod'}): reinstall ycsb-runner"
        )
    stamp = binary.with_suffix(".stamp")
    digest = _source_digest(src, patched)
    if binary.exists() and stamp.exists() and stamp.read_text().strip() == digest:
        return binary
    what = "with its _id lookups through its _id index" if patched else "as shipped"
    log(f"building FerretDB {FERRETDB_VERSION} (SQLite, {what}) -> {binary} (first time: a few minutes)")
    build_launcher(binary, patched=patched)
    stamp.write_text(digest + "\n")
    return binary
