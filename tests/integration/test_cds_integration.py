"""The class-data archive with a real JVM and the embedded server: set-up's build makes an archive Java
maps, bench steps start from it (the JVM says where each class came from), and a damaged one is left
alone: YCSB then starts as before instead of aborting."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ycsb_runner.bench import BenchOptions, run_bench
from ycsb_runner.install import JavaInfo, YcsbInstall, cds
from ycsb_runner.install.embedded import EmbeddedServer

# 3 s, not 1: beside the other test workers a JVM without a usable archive (the damaged-archive test) once
# completed no operation within 1 s of a fresh clone's make test ("throughput is 0 ops/sec"); paced: what is
# checked is where the JVM's classes came from and that the steps complete, not how fast they went
SMALL = ["recordcount=100", "maxexecutiontime=3", "mixes=c-read100", "target=100"]


@pytest.fixture(scope="module")
def archive(
    ycsb: YcsbInstall, java: JavaInfo, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, list[str]]]:
    """An archive made here as `ycsb-runner setup` makes one (its own throwaway embedded server), not the
    one `make setup` made, and what the build logged."""
    folder = tmp_path_factory.mktemp("cds")
    logged: list[str] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cds, "archive_dir", lambda: folder)
        path = cds.ensure_archive(java, ycsb, lambda: EmbeddedServer(log=lambda _m: None), log=logged.append)
        assert path is not None, logged
        yield path, logged


def _bench(tmp: Path, jvm_args: list[str], mongo_url: str) -> dict:
    outcome = run_bench(
        BenchOptions(
            suite="quick",
            url=mongo_url,
            overrides=SMALL,
            results=tmp,
            jvm_args=jvm_args,
            monitors=False,
            report=False,
            canaries=False,  # (their BasicDB JVMs: test_bench_integration's run measures them)
        ),
        log=lambda _m: None,
    )
    return json.loads((outcome.run_dir / "manifest.json").read_text())


def test_the_build_makes_an_archive_java_maps_once(
    archive, ycsb: YcsbInstall, java: JavaInfo, monkeypatch
) -> None:
    path, logged = archive
    assert logged == [f"YCSB class-data archive: {path} ({path.stat().st_size / 1e6:.1f} MB)"]
    assert path.stat().st_size > 1_000_000 and sorted(p.name for p in path.parent.iterdir()) == [
        path.name,
        path.with_suffix(".sha256").name,
    ]
    # -Xshare:on fails instead of starting without the archive when it cannot map it
    argv = [java.path, "-Xshare:on", f"-XX:SharedArchiveFile={path}", "-cp", ":".join(ycsb.classpath)]
    proc = subprocess.run([*argv, "-version"], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    monkeypatch.setattr(cds, "archive_dir", lambda: path.parent)
    before = path.stat().st_mtime_ns
    again: list[str] = []
    assert cds.build_archive(java, ycsb, "mongodb://127.0.0.1:1/unused", log=again.append) == path
    assert again == [] and path.stat().st_mtime_ns == before  # already there: no JVM, no server needed


def test_bench_steps_start_from_the_archive(archive, mongo_url: str, tmp_path: Path, monkeypatch) -> None:
    path, _ = archive
    monkeypatch.setattr(cds, "archive_dir", lambda: path.parent)
    manifest = _bench(
        tmp_path / "results", [f"-Xlog:class+load=info:file={tmp_path}/classes-%p.txt"], mongo_url
    )
    assert manifest["status"] == "completed"
    assert manifest["java"]["class_data_archive"] == str(path)
    ycsb_steps = [s for s in manifest["steps"] if s["phase"] in ("load", "run")]
    assert len(ycsb_steps) == 2
    for step in ycsb_steps:
        assert f"-XX:SharedArchiveFile={path}" in step["argv"], step["argv"]
    logs = sorted(tmp_path.glob("classes-*.txt"))
    assert len(logs) == 2
    for log in logs:
        text = log.read_text()
        assert "site.ycsb.Client source: shared objects file (top)" in text
        assert "com.mongodb.client.internal.MongoClientImpl source: shared objects file (top)" in text


def test_a_damaged_archive_is_left_alone(archive, mongo_url: str, tmp_path: Path, monkeypatch) -> None:
    path, _ = archive
    broken = tmp_path / "cds"
    broken.mkdir()
    (broken / path.name).write_bytes(path.read_bytes()[: path.stat().st_size // 2])  # e.g. a full disk
    (broken / path.with_suffix(".sha256").name).write_text(path.with_suffix(".sha256").read_text())
    monkeypatch.setattr(cds, "archive_dir", lambda: broken)
    monkeypatch.chdir(tmp_path)
    manifest = _bench(tmp_path / "results", [], mongo_url)
    assert manifest["status"] == "completed"
    assert manifest["java"]["class_data_archive"] is None
    assert not any("SharedArchiveFile" in arg for s in manifest["steps"] for arg in s.get("argv") or [])
    assert not list(tmp_path.rglob("hs_err_pid*.log"))


def test_a_failed_build_says_why_and_leaves_nothing(
    ycsb: YcsbInstall, java: JavaInfo, mongo_url: str, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(cds, "archive_dir", lambda: tmp_path / "cds")
    broken = dataclasses.replace(ycsb, binding_class="no.such.MongoDbClient")  # YCSB cannot load its DB class
    logged: list[str] = []
    assert cds.build_archive(java, broken, mongo_url, log=logged.append) is None
    assert len(logged) == 1 and logged[0].startswith(
        "YCSB class-data archive not made (the archive's YCSB load"
    )
    assert logged[0].endswith("): YCSB starts without it")
    assert list((tmp_path / "cds").iterdir()) == []


def test_a_url_with_a_user_is_refused_before_any_jvm(ycsb: YcsbInstall, java: JavaInfo) -> None:
    with pytest.raises(ValueError, match="without a user"):
        cds.build_archive(java, ycsb, "mongodb://u:secret@127.0.0.1:1/ycsb", log=print)
