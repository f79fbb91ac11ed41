"""Locate or install YCSB 0.17.0 and the MongoDB binding that will run.

Two sources:

* ``YCSB_HOME`` pointing at an unpacked release tarball (``ycsb-0.17.0`` or ``ycsb-mongodb-binding-0.17.0``):
  the stock binding ``site.ycsb.db.MongoDbClient`` on mongo-java-driver 3.8.0.
* Otherwise the project's own build (``java/`` of a checkout, or the copy an installed package carries,
  built in a folder under the cache): ``site.ycsb:core:0.17.0`` and its dependencies from Maven
  Central plus ycsb-runner's binding ``ycsbrunner.binding.MongoDbClient`` on mongodb-driver-sync 5.x
  (the stock binding is not published on Maven Central, and its 3.8.0 driver cannot talk to FerretDB).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tarfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ycsb_runner.errors import UserError
from ycsb_runner.paths import cache_dir, source_dir

STOCK_BINDING_CLASS = "site.ycsb.db.MongoDbClient"
OWN_BINDING_CLASS = "ycsbrunner.binding.MongoDbClient"
TARBALL_URL = (
    "https://github.com/brianfrankcooper/YCSB/releases/download/0.17.0/ycsb-mongodb-binding-0.17.0.tar.gz"
)


@dataclass(frozen=True)
class YcsbInstall:
    """What will run: where the jars are and which binding/driver they hold."""

    source: str  # "maven-build" | "tarball"
    home: str
    classpath: list[str]
    binding_class: str
    binding_jar: str
    core_jar: str
    driver_jar: str
    driver_version: str
    tarball_sha256: str | None = None
    jars: list[str] = field(default_factory=list)

    @property
    def stock_binding(self) -> bool:
        return self.binding_class == STOCK_BINDING_CLASS

    def as_dict(self) -> dict:
        return asdict(self)


def _jar_version(name: str, artifact: str) -> str | None:
    m = re.fullmatch(re.escape(artifact) + r"-(\d[\w.\-]*)\.jar", name)
    return m.group(1) if m else None


def _describe(source: str, home: Path, lib_dirs: list[Path], binding_class: str) -> YcsbInstall:
    jars = sorted(p for d in lib_dirs if d.is_dir() for p in d.glob("*.jar"))
    names = [j.name for j in jars]
    core = next((n for n in names if _jar_version(n, "core")), None)
    if core is None:
        raise UserError(f"no core-0.17.0.jar under {home}; is it a YCSB 0.17.0 folder? (YCSB_HOME)")
    if binding_class == STOCK_BINDING_CLASS:
        binding = next((n for n in names if n.startswith("mongodb-binding-")), None)
        driver_artifacts = ["mongo-java-driver", "mongodb-driver-sync", "mongodb-driver"]
    else:
        binding = next((n for n in names if n.startswith("ycsb-runner-mongodb-binding-")), None)
        driver_artifacts = ["mongodb-driver-sync"]
    if binding is None:
        raise UserError(f"no MongoDB binding jar under {home}; run `ycsb-runner setup` (or fix YCSB_HOME)")
    driver, driver_version = "unknown", "unknown"
    for artifact in driver_artifacts:
        for n in names:
            v = _jar_version(n, artifact)
            if v:
                driver, driver_version = n, v
                break
        if driver != "unknown":
            break
    sha = None
    sha_file = home.parent / (home.name + ".tar.gz.sha256")
    if sha_file.is_file():
        sha = sha_file.read_text().split()[0]
    return YcsbInstall(
        source=source,
        home=str(home),
        classpath=[str(d / "*") for d in lib_dirs if d.is_dir()],
        binding_class=binding_class,
        binding_jar=binding,
        core_jar=core,
        driver_jar=driver,
        driver_version=driver_version,
        tarball_sha256=sha,
        jars=names,
    )


def _from_home(home: Path) -> YcsbInstall:
    if not home.is_dir():
        raise UserError(f"YCSB_HOME={home} is not a folder; unpack ycsb-0.17.0.tar.gz there or unset it")
    lib_dirs = [home / "lib"]
    if (home / "mongodb-binding" / "lib").is_dir():  # full ycsb-0.17.0 tarball
        lib_dirs.append(home / "mongodb-binding" / "lib")
    return _describe("tarball", home, lib_dirs, STOCK_BINDING_CLASS)


def maven_lib_dir() -> Path:
    return cache_dir() / "ycsb" / "lib"


def locate_ycsb() -> YcsbInstall:
    """The YCSB that will run, without installing anything."""
    home = os.environ.get("YCSB_HOME")
    if home:
        return _from_home(Path(home).expanduser().resolve())
    lib = maven_lib_dir()
    if not lib.is_dir():
        raise UserError("YCSB is not set up: run `make setup` (or `ycsb-runner setup`)")
    return _describe("maven-build", lib.parent, [lib], OWN_BINDING_CLASS)


def _sources_digest(java_dir: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(java_dir.rglob("*")):
        if p.is_file() and "target" not in p.relative_to(java_dir).parts:
            h.update(str(p.relative_to(java_dir)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _maven_package(mvn: str, java_dir: Path, lib: Path) -> subprocess.CompletedProcess[str]:
    """``mvn package`` of a copy of *java_dir* (pom.xml and src/) in a throwaway folder under the cache, the
    jars into *lib*: Maven's ``target/`` never lands in the sources (read-only in an installed package)."""
    from ycsb_runner.install.ferretdb import writable_copy

    work = cache_dir() / "build" / f"java-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    try:
        writable_copy(java_dir, work, ignore=shutil.ignore_patterns("target"))
        return subprocess.run(
            [mvn, "-q", "-B", "-f", str(work / "pom.xml"), "package", f"-Dycsb.lib.dir={lib}"],
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def ensure_ycsb(log=print) -> YcsbInstall:
    """Install (idempotently) what ``locate_ycsb`` needs and return it."""
    if os.environ.get("YCSB_HOME"):
        return locate_ycsb()
    java_dir = source_dir("java")
    if not (java_dir / "pom.xml").is_file():
        raise UserError(
            f"the binding's sources are missing ({java_dir / 'pom.xml'} not found): reinstall ycsb-runner, "
            "or set YCSB_HOME to an unpacked YCSB 0.17.0 release"
        )
    lib = maven_lib_dir()
    stamp = lib.parent / "build.stamp"
    digest = _sources_digest(java_dir)
    if lib.is_dir() and stamp.is_file() and stamp.read_text().strip() == digest:
        return locate_ycsb()
    mvn = shutil.which("mvn")
    if not mvn:
        raise UserError("Maven (mvn) not found: install it (`apt-get install maven`) or set YCSB_HOME")
    # Build beside the current jars and swap them in at the end: a YCSB already running keeps its jars.
    fresh = lib.with_name(f"lib.new-{os.getpid()}")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(parents=True)
    log("building ycsb-runner's MongoDB binding and fetching YCSB 0.17.0 core from Maven Central")
    try:
        proc = _maven_package(mvn, java_dir, fresh)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    if proc.returncode != 0:
        shutil.rmtree(fresh, ignore_errors=True)
        lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "ERROR" in ln][:3]
        raise UserError(
            "Maven build of the binding failed: "
            + (" | ".join(lines) or f"see `mvn -f {java_dir}/pom.xml package`")
        )
    old = lib.with_name(f"lib.old-{os.getpid()}")
    if lib.exists():
        lib.rename(old)
    fresh.rename(lib)
    shutil.rmtree(old, ignore_errors=True)
    stamp.write_text(digest + "\n")
    return locate_ycsb()


def download_tarball(dest: Path | None = None, *, timeout: float = 30.0, log=print) -> Path:
    """Download and unpack the release tarball (needs GitHub; not reachable on every machine).

    No checksum is published for the release, so the sha256 computed here is stored next to the archive
    and recorded in every manifest that uses it.
    """
    dest = dest or cache_dir()
    dest.mkdir(parents=True, exist_ok=True)
    archive = dest / "ycsb-mongodb-binding-0.17.0.tar.gz"
    log(f"downloading {TARBALL_URL}")
    try:
        import urllib.request  # only here: it loads http.client and ssl (60-80 ms of every command)

        with urllib.request.urlopen(TARBALL_URL, timeout=timeout) as resp, open(archive, "wb") as out:
            shutil.copyfileobj(resp, out)
    except OSError as err:
        raise UserError(
            f"cannot download the YCSB release ({err}); without internet use the default Maven build "
            "(`ycsb-runner setup`)"
        ) from err
    sha = hashlib.sha256(archive.read_bytes()).hexdigest()
    (dest / "ycsb-mongodb-binding-0.17.0.tar.gz.sha256").write_text(f"{sha}  {archive.name}\n")
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    home = dest / "ycsb-mongodb-binding-0.17.0"
    log(f"sha256 {sha}; unpacked to {home}; use it with: export YCSB_HOME={home}")
    return home
