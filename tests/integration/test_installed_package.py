"""ycsb-runner as an installed package (issue 39): `python -m build` makes the sdist and, from it, the wheel;
the wheel goes into a fresh venv outside the checkout; from an empty folder, `ycsb-runner setup` builds
YCSB's binding and the embedded server from the sources the wheel carries (reusing this machine's Maven and
Go caches) into the user cache folder, and `ycsb-runner bench quick` writes its run to ./results.

The fresh venv has the wheel alone (`pip install --no-deps --no-index`); its dependencies (pandas, scipy,
...) are this checkout's venv's, reached through a path line in a .pth file, which does not run the
checkout's editable-install hook: `import ycsb_runner` finds the installed copy (checked below)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).parents[2]


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, (argv, done.stdout[-2000:], done.stderr[-2000:])
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The wheel built by `python -m build`, installed into a fresh venv; its bin folder and the folders a
    new user would have (an empty working folder, an empty user cache folder)."""
    if not shutil.which("go") and not shutil.which("mongod"):
        pytest.fail("set-up needs Go (or mongod on PATH): the tests' own set-up had it")
    top = tmp_path_factory.mktemp("installed")
    dist = top / "dist"
    env = {k: v for k, v in os.environ.items() if not k.startswith("YCSB_RUNNER_")}
    # --no-isolation: the build backend (hatchling) is this venv's, no download
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(ROOT)], top, env, 600)
    (wheel,) = dist.glob("ycsb_runner-*.whl")
    (sdist,) = dist.glob("ycsb_runner-*.tar.gz")
    fresh = top / "venv"
    venv.create(fresh)  # without pip of its own (ensurepip took seconds): this venv's pip installs into it
    py = fresh / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index"]
    _run([*pip, str(wheel)], top, env, 300)
    purelib = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], top, env, 60)
    deps = Path(purelib.stdout.strip()) / "zz_checkout_deps.pth"
    deps.write_text(sysconfig.get_paths()["purelib"] + "\n")  # a path line: the editable hook does not run
    work, user_cache = top / "work", top / "xdg-cache"
    work.mkdir()
    return {"bin": fresh / "bin", "work": work, "cache": user_cache, "wheel": wheel, "sdist": sdist}


def _user_env(installed: dict[str, Path]) -> dict[str, str]:
    """A new user's environment: no YCSB_RUNNER_* settings, the venv's bin first on PATH, an empty user
    cache folder; Go's build cache stays this machine's (by default it would follow XDG_CACHE_HOME)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("YCSB_RUNNER_") and k != "VIRTUAL_ENV"}
    checkout_bin = str(ROOT / ".venv" / "bin")
    path = [p for p in env["PATH"].split(os.pathsep) if p.rstrip("/") != checkout_bin]
    env["PATH"] = os.pathsep.join([str(installed["bin"]), *path])
    env["XDG_CACHE_HOME"] = str(installed["cache"])
    if shutil.which("go"):
        gocache = subprocess.run(["go", "env", "GOCACHE"], capture_output=True, text=True, check=True)
        env["GOCACHE"] = gocache.stdout.strip()
    env["YCSB_RUNNER_LOCK_DIR"] = os.environ["YCSB_RUNNER_LOCK_DIR"]  # this worker's (tests/conftest.py)
    return env


def test_the_sdist_and_the_wheel_carry_what_setup_builds_from(installed: dict[str, Path]) -> None:
    import tarfile
    import zipfile

    names = zipfile.ZipFile(installed["wheel"]).namelist()
    for carried in (
        "_java/pom.xml",
        "_ferretdb/go.mod",
        "_ferretdb/main.go",
        "_templates/",
        "suites/quick.toml",
    ):
        assert any(n.startswith(f"ycsb_runner/{carried}") for n in names), carried
    assert any(n.startswith("ycsb_runner/_java/src/main/java/") for n in names)
    assert not any("/target/" in n or "__pycache__" in n for n in names)
    with tarfile.open(installed["sdist"]) as sdist:
        members = sdist.getnames()
    assert any(m.endswith("/java/pom.xml") for m in members) and any(
        m.endswith("/tools/ferretdb/go.mod") for m in members
    )
    assert not any("/results/" in m or "/.cache/" in m or "/.venv/" in m for m in members)


def test_setup_and_bench_from_an_empty_folder(installed: dict[str, Path]) -> None:
    env, work = _user_env(installed), installed["work"]
    where = _run(
        [str(installed["bin"] / "python"), "-c", "import ycsb_runner; print(ycsb_runner.__file__)"],
        work,
        env,
        60,
    )
    installed_copy = Path(where.stdout.strip())
    assert installed_copy.is_relative_to(installed["bin"].parent), installed_copy  # not the checkout's
    _run(["ycsb-runner", "setup"], work, env, 1500)
    cache = installed["cache"] / "ycsb-runner"
    assert list((cache / "ycsb" / "lib").glob("core-0.17.0.jar")), sorted(cache.rglob("*"))[:20]
    version = _run(["ycsb-runner", "version"], work, env, 120).stdout
    lines = {line.split()[0]: line for line in version.splitlines() if line.strip()}
    assert str(cache) in lines["cache"] and "user cache folder" in lines["cache"]
    assert str(work / "results") in lines["results"] and "installed package" in lines["ycsb-runner"]
    assert "0.17.0" in lines["YCSB"] and str(cache) in lines["YCSB"] and "Java" in lines

    # the quick suite as a new user runs it, on a tenth of its records, with shorter runs and one of its
    # mixes, paced: what is checked is that it runs from the package, with YCSB's and the server's counts of
    # the load
    sets = [
        *("--set", "recordcount=1000", "--set", "maxexecutiontime=2", "--set", "mixes=a-read50-update50"),
        *("--set", "target=200"),
    ]
    bench = _run(["ycsb-runner", "bench", "quick", *sets], work, env, 900)
    runs = [p for p in (work / "results").iterdir() if not p.is_symlink() and (p / "manifest.json").is_file()]
    assert len(runs) == 1 and runs[0].name in bench.stdout + bench.stderr
    manifest = json.loads((runs[0] / "manifest.json").read_text())
    assert manifest["status"] == "completed" and manifest["suite"]["name"] == "quick"
    steps = pd.read_csv(runs[0] / "steps.csv")
    assert (steps["status"] == "completed").all() and set(steps["phase"]) == {"load", "run"}
    load = steps[steps["phase"] == "load"]
    ops = pd.read_csv(runs[0] / "operations.csv")
    inserted = ops[(ops["step"].isin(load["step"])) & (ops["section"] == "INSERT")]["operations"].sum()
    assert inserted == 1000 and load["documents"].tolist() == [1000]  # YCSB's count, the server's count
    assert (runs[0] / "report.html").is_file() and not (ROOT / "results" / runs[0].name).exists()
    assert (work / "results" / "latest").resolve() == runs[0].resolve()
    assert not (work / ".cache").exists()  # the cache is the user cache folder, not ./.cache
