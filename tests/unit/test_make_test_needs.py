"""`make test` on a fresh machine (issue 22, item 11): tools/test-needs.sh installs sshd for the multi-client
tests where it can (root with apt-get), else prints the command, and says when the seed documents are not
found and what to set. Run with stand-ins for id, apt-get and sudo that record their calls."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "tools" / "test-needs.sh"
PACKAGES = "openssh-server openssh-client"


def _run(
    tmp_path: Path,
    uid: int,
    *,
    sshd: Path,
    seeds: Path | None = None,
    ci: bool = False,
    chromium: Path | None = None,
):
    bin_ = tmp_path / "bin"
    bin_.mkdir(exist_ok=True)
    calls = tmp_path / "calls"
    for name, body in (
        ("id", f"echo {uid}"),
        ("apt-get", f'echo "apt-get $*" >> {calls}'),
        ("sudo", f'if [ "$1" = -n ]; then exit 1; fi; echo "sudo $*" >> {calls}'),
    ):
        (bin_ / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_ / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "YCSB_RUNNER_SEEDS")}
    if chromium is None:  # present: the sshd and seed tests see only their own lines
        chromium = bin_ / "chromium"
        chromium.write_text("#!/bin/sh\n")
        chromium.chmod(0o755)
    env.update(PATH=f"{bin_}:{env['PATH']}", SSHD=str(sshd), CHROMIUM=str(chromium))
    if seeds is not None:
        env["YCSB_RUNNER_SEEDS"] = str(seeds)
    if ci:
        env["CI"] = "true"
    res = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)
    return res, (calls.read_text().splitlines() if calls.exists() else [])


@pytest.fixture
def seeds(tmp_path: Path) -> Path:
    d = tmp_path / "seeds"
    d.mkdir()
    (d / "000_x.txt").write_text("seed")
    return d


def test_root_installs_sshd_with_apt_get(tmp_path: Path, seeds: Path) -> None:
    res, calls = _run(tmp_path, 0, sshd=tmp_path / "no-sshd", seeds=seeds)
    assert res.returncode == 0
    assert calls == ["apt-get update -qq", f"apt-get install -y -qq {PACKAGES}"]
    assert (
        res.stdout
        == f"make test: installing {PACKAGES} (the multi-client tests run sshd on loopback ports)\n"
    )


def test_a_user_is_told_the_one_command_and_nothing_is_installed(tmp_path: Path, seeds: Path) -> None:
    res, calls = _run(tmp_path, 1000, sshd=tmp_path / "no-sshd", seeds=seeds, ci=True)  # no passwordless sudo
    assert res.returncode == 0 and calls == []
    assert "the multi-client tests will be skipped" in res.stdout
    assert f"    sudo apt-get install -y {PACKAGES}\n" in res.stdout


def test_present_sshd_and_seeds_print_nothing(tmp_path: Path, seeds: Path) -> None:
    sshd = tmp_path / "sshd"
    sshd.write_text("#!/bin/sh\n")
    sshd.chmod(0o755)
    res, calls = _run(tmp_path, 0, sshd=sshd, seeds=seeds)
    assert (res.returncode, res.stdout, calls) == (0, "", [])


def test_missing_seeds_say_what_to_set(tmp_path: Path) -> None:
    sshd = tmp_path / "sshd"
    sshd.write_text("#!/bin/sh\n")
    sshd.chmod(0o755)
    res, _ = _run(tmp_path, 0, sshd=sshd, seeds=tmp_path)
    assert res.returncode == 0
    assert "seed documents not found" in res.stdout
    assert "YCSB_RUNNER_SEEDS=/path/to/shared/seeds make test" in res.stdout


def test_a_checkout_finds_the_shared_seeds_beside_it_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From a checkout at /work/main the seeds at /work/shared/seeds are found without YCSB_RUNNER_SEEDS, by
    this script and by the reference tests alike."""
    from test_reference import _seed_dir

    shared = [
        p / "shared" / "seeds" for p in ROOT.parents if any((p / "shared" / "seeds").glob("00[0-4]_*.txt"))
    ]
    if not shared:
        pytest.skip("no shared/seeds beside this checkout")
    monkeypatch.delenv("YCSB_RUNNER_SEEDS", raising=False)  # found by default, not because it was set
    assert _seed_dir() == shared[0]
    sshd = tmp_path / "sshd"
    sshd.write_text("#!/bin/sh\n")
    sshd.chmod(0o755)
    res, _ = _run(tmp_path, 0, sshd=sshd)
    assert "seed documents" not in res.stdout


def test_root_installs_chromium_for_the_site_test(tmp_path: Path, seeds: Path) -> None:
    sshd = tmp_path / "sshd"
    sshd.write_text("#!/bin/sh\n")
    sshd.chmod(0o755)
    res, calls = _run(tmp_path, 0, sshd=sshd, seeds=seeds, chromium=tmp_path / "no-chromium")
    assert res.returncode == 0
    assert calls == ["apt-get update -qq", "apt-get install -y -qq chromium"]
    (tmp_path / "u").mkdir()
    user, none = _run(tmp_path / "u", 1000, sshd=sshd, seeds=seeds, chromium=tmp_path / "no-chromium")
    assert none == [] and "    sudo apt-get install -y chromium\n" in user.stdout
