"""The class-data archive's bookkeeping: which archive belongs to which Java and jars, and when one is
used (ycsb_runner.install.cds). Building and mapping one is tested with a real JVM in
tests/integration/test_cds_integration.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ycsb_runner.install import JavaInfo, YcsbInstall, cds


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> YcsbInstall:
    lib = tmp_path / "lib"
    lib.mkdir()
    for name in ("core-0.17.0.jar", "mongodb-driver-sync-5.14.0.jar"):
        (lib / name).write_bytes(b"PK" + name.encode())
    monkeypatch.setattr(cds, "archive_dir", lambda: tmp_path / "cds")
    return YcsbInstall(
        source="maven-build",
        home=str(tmp_path),
        classpath=[f"{lib}/*"],
        binding_class="ycsbrunner.binding.MongoDbClient",
        binding_jar="b.jar",
        core_jar="core-0.17.0.jar",
        driver_jar="mongodb-driver-sync-5.14.0.jar",
        driver_version="5.14.0",
    )


BUILD = """openjdk version "17.0.15" 2025-04-15
OpenJDK Runtime Environment (build 17.0.15+6-Debian-1deb12u1)
OpenJDK 64-Bit Server VM (build 17.0.15+6-Debian-1deb12u1, mixed mode, sharing)"""
JAVA = JavaInfo(path="/usr/bin/java", version="17.0.15", description="openjdk 17", build=BUILD)


def _made(path: Path, body: bytes = b"archive bytes") -> Path:
    """An archive as build_archive leaves it: the file and its checked sha256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    path.with_suffix(".sha256").write_text(f"{cds._digest(path)}  {path.name}\n")
    return path


def test_the_archive_name_follows_the_jvm_build_and_every_jar(install: YcsbInstall) -> None:
    first = cds.archive_path(JAVA, install)
    assert first == cds.archive_path(JAVA, install)
    # the same JVM behind another launcher (a wrapper script that adds options) shares the archive
    assert (
        cds.archive_path(JavaInfo("/opt/wrapped/bin/java", "17.0.15", "openjdk 17", BUILD), install) == first
    )
    other = BUILD.replace("1deb12u1", "1deb12u2")
    assert cds.archive_path(JavaInfo(JAVA.path, "17.0.15", JAVA.description, other), install) != first
    jar = Path(install.classpath[0][:-1]) / "core-0.17.0.jar"
    os.utime(jar, ns=(1, 1))  # a rebuilt jar: same name, other time
    second = cds.archive_path(JAVA, install)
    assert second != first
    (jar.parent / "extra-1.0.jar").write_bytes(b"PK")
    assert cds.archive_path(JAVA, install) not in (first, second)


def test_an_intact_archive_is_used_and_started_from(install: YcsbInstall) -> None:
    assert cds.usable_archive(JAVA, install) is None
    assert cds.jvm_flags(None) == []
    path = _made(cds.archive_path(JAVA, install))
    assert cds.usable_archive(JAVA, install) == path
    assert cds.jvm_flags(path) == [f"-XX:SharedArchiveFile={path}", "-Xlog:cds*=off"]


@pytest.mark.parametrize("damage", ["truncated", "no-checksum", "empty-checksum", "other-jars"])
def test_a_damaged_or_foreign_archive_is_not_used(install: YcsbInstall, damage: str) -> None:
    """Java 17 aborts when it maps a damaged archive: only one whose sha256 matches is handed to YCSB."""
    path = _made(cds.archive_path(JAVA, install), b"x" * 1000)
    if damage == "truncated":
        path.write_bytes(b"x" * 500)
    elif damage == "no-checksum":
        path.with_suffix(".sha256").unlink()
    elif damage == "empty-checksum":
        path.with_suffix(".sha256").write_text("")
    else:
        (Path(install.classpath[0][:-1]) / "core-0.17.0.jar").write_bytes(b"PK rebuilt")
    assert cds.usable_archive(JAVA, install) is None
