"""The embedded server's records: a state file that names a folder ycsb-runner did not make never gets that
folder deleted (issue 38, case 17)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from ycsb_runner.install import embedded as server


def _dead_pid() -> int:
    import subprocess

    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _record(cache: Path, workdir: Path) -> None:
    state = cache / "server" / "state.json"
    state.parent.mkdir(parents=True)
    info = server.ServerInfo(
        kind="ferretdb", version="x", pid=_dead_pid(), port=1, url="mongodb://127.0.0.1:1/ycsb",
        workdir=str(workdir), log_path=str(workdir / "server.log"), argv=["/bin/ferretdb-embedded"],
        started_at=0.0,
    )  # fmt: skip
    state.write_text(json.dumps(info.as_dict()))


def test_a_foreign_workdir_in_the_state_file_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("YCSB_RUNNER_CACHE", str(tmp_path / "cache"))
    precious = tmp_path / "ycsb-runner-server-precious"  # even with ycsb-runner's prefix: no marker inside
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    _record(tmp_path / "cache", precious)
    assert server.status() is None
    assert (precious / "thesis.tex").read_text() == "years of work"
    assert not (tmp_path / "cache" / "server" / "state.json").exists()  # the stale record is gone


def test_a_workdir_ycsb_runner_made_is_removed_with_its_stale_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("YCSB_RUNNER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    workdir = server._make_workdir()
    assert workdir.parent == tmp_path
    _record(tmp_path / "cache", workdir)
    assert server.status() is None
    assert not workdir.exists()


def test_a_symlink_to_a_folder_of_ours_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    real = server._make_workdir()
    link = tmp_path / "ycsb-runner-server-link"
    link.symlink_to(real)
    assert server.remove_workdir(link) is False
    assert real.is_dir()
