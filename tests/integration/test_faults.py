"""The fault suite (issue 9): real ``ycsb-runner`` processes, real YCSB, a real embedded server.

Run it alone with ``pytest -m faults``. Each test plays a fault a user meets: a short password, secrets in the
URL's query string, an unencoded password, a full disk, a lost terminal, a killed runner, damaged result
files, a hung ``java``, and suites or options that cannot be right.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import psutil
import pytest

from ycsb_runner.install import find_java
from ycsb_runner.install.embedded import ServerInfo
from ycsb_runner.paths import cache_dir

pytestmark = [pytest.mark.integration, pytest.mark.faults]

CLI = str(Path(sys.executable).parent / "ycsb-runner")
SUITE = """name = "faults"
description = "fault-suite run: seconds long"
estimated_throughput = 1000

[dataset]
recordcount = 200
load_threads = 2

[run]
threads = [2]
operationcount = {operationcount}
maxexecutiontime = {maxexecutiontime}
status_interval = 1

[measurement]
percentiles = [50, 95, 99]

[[mix]]
name = "read50_update50"
read = 0.5
update = 0.5
"""


def write_suite(folder: Path, operationcount: int = 400, maxexecutiontime: int = 60, target: int = 0) -> Path:
    """The fault suite in *folder*; a *target* (ops/s) paces its runs: for the tests whose run only has to
    go on while something happens to it (unpaced, YCSB and the server take both cores meanwhile)."""
    path = folder / "faults.toml"
    text = SUITE.format(operationcount=operationcount, maxexecutiontime=maxexecutiontime)
    if target:
        text = text.replace("status_interval = 1\n", f"status_interval = 1\ntarget = {target}\n", 1)
    path.write_text(text)
    return path


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MONGODB_URL"}
    env.update(COLUMNS="200", **extra)
    return env


def run_cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CLI, *args],
        capture_output=True,
        text=True,
        env=env or cli_env(),
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def bench_quietly(
    suite: Path, results: Path, *extra: str, env: dict[str, str] | None = None, canaries: bool = False
):
    """``bench`` of *suite* into *results* without monitors and report, and without canaries unless asked
    (two JVMs fewer: test_query_string_secrets_appear_nowhere keeps them, the secrets test of a whole run)."""
    quiet = ["--no-monitors", "--no-report", *([] if canaries else ["--no-canaries"])]
    return run_cli("bench", str(suite), "--results", str(results), *quiet, *extra, env=env)


def run_folders(results: Path) -> list[Path]:
    """The run folders in *results* (not the ``latest`` link); none when it does not exist."""
    return [p for p in results.iterdir() if p.is_dir() and not p.is_symlink()] if results.is_dir() else []


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str, alone: bool = True) -> str:
    """A non-zero exit, no traceback, and the error as one line (the only line of stderr when *alone*;
    ``bench`` prints progress lines before it) that contains every needle."""
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines, proc.stdout
    if alone:
        assert len(lines) == 1, proc.stderr
    assert lines[-1].startswith("error: "), proc.stderr
    for needle in needles:
        assert needle in lines[-1], lines[-1]
    return lines[-1]


def every_file(root: Path) -> Iterator[Path]:
    return (p for p in root.rglob("*") if p.is_file())


def tee_java(folder: Path) -> Path:
    """A JAVA_HOME whose ``java`` runs the real one and keeps a copy of exactly what YCSB printed."""
    real = find_java().path
    copies = folder / "printed"
    copies.mkdir()
    home = folder / "jdk"
    (home / "bin").mkdir(parents=True)
    script = home / "bin" / "java"
    script.write_text(
        "#!/bin/bash\n"
        f'if [ "$1" = "-version" ]; then exec "{real}" "$@"; fi\n'
        f'n="{copies}/$(date +%s%N)"\n'
        f'"{real}" "$@" > "$n.stdout" 2> >(tee "$n.stderr" >&2)\n'
        "rc=$?\n"
        'cat "$n.stdout"\n'
        "wait\n"
        "exit $rc\n"
    )
    script.chmod(0o755)
    return home


# --- 1. a short password never corrupts a result ---


@pytest.mark.parametrize("password", ["s", "99", "0"])
def test_short_password_keeps_raw_logs_as_ycsb_printed(
    password: str, tmp_path: Path, server: ServerInfo
) -> None:
    # FerretDB on SQLite takes any user and password with authMechanism=PLAIN (it does not check them), so
    # the password really travels: URL -> connection file -> YCSB's driver -> the server.
    url = f"mongodb://u:{password}@127.0.0.1:{server.port}/ycsb?authMechanism=PLAIN"
    results = tmp_path / "results"
    env = cli_env(MONGODB_URL=url, JAVA_HOME=str(tee_java(tmp_path)))
    proc = bench_quietly(write_suite(tmp_path), results, env=env)
    assert proc.returncode == 0, proc.stderr
    run = run_folders(results)[0]
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "completed"
    assert manifest["target"]["url"].startswith("mongodb://u:***@127.0.0.1")

    printed = sorted((tmp_path / "printed").glob("*.stdout"))
    steps = sorted((run / "steps").iterdir())
    assert [s.name for s in steps] == ["01-load-t2", "02-run-read50_update50-t2-r1"]
    assert len(printed) == len(steps)  # one JVM a step (no canaries: bench_quietly)
    credential = f"u:{password}@".encode()
    for step, out in zip(steps, printed, strict=True):
        for name, copy in (("stdout.txt", out), ("stderr.txt", out.with_suffix(".stderr"))):
            raw = (step / name).read_bytes()
            # byte-for-byte what YCSB printed, but for a URL password (the stock binding prints its URL)
            assert raw == copy.read_bytes().replace(credential, b"u:***@"), f"{step.name}/{name}"
            assert b"[OVERALL], RunTime(ms), " in raw or name == "stderr.txt"
    for path in [*every_file(run), *every_file(tmp_path / "printed")]:
        assert credential not in path.read_bytes(), path
    assert f"u:{password}@" not in proc.stdout + proc.stderr

    ops = pd.read_csv(run / "operations.csv")
    measured = ops[ops["operation"].isin(["INSERT", "READ", "UPDATE"])]
    assert set(measured["operation"]) == {"INSERT", "READ", "UPDATE"}
    for col in ("p50_us", "p95_us", "p99_us"):
        assert measured[col].notna().all(), (col, measured[["operation", col]])
    summary = pd.read_csv(run / "summary.csv")
    assert set(summary["metric"]) >= {"RunTime(ms)", "99thPercentileLatency(us)", "Operations"}


# --- 2. secrets in the query string ---

# options the drivers accept on a plain connection (the Java driver refuses proxyPassword without proxyHost,
# and pymongo turns TLS on for tlsCertificateKeyFilePassword: those two are in the render/error test)
QUERY_SECRETS = {
    "authMechanismProperties": "AWS_SESSION_TOKEN:tokvalQ1",
    "appToken": "tokvalQ3",
    "clientSecret": "secvalQ4",
}
UNUSABLE_SECRETS = {"proxyPassword": "proxyvalQ2", "tlsCertificateKeyFilePassword": "keypwQ6"}
NOT_SECRET = {"appName": "visibleQ5"}


def _query(options: dict[str, str]) -> str:
    return "&".join(f"{k}={v}" for k, v in options.items())


def test_query_string_secrets_appear_nowhere(tmp_path: Path, server: ServerInfo) -> None:
    url = f"mongodb://u:pwQ0x@127.0.0.1:{server.port}/ycsb?authMechanism=PLAIN&" + _query(
        {**QUERY_SECRETS, **NOT_SECRET}
    )
    results = tmp_path / "results"
    env = cli_env(MONGODB_URL=url)
    proc = bench_quietly(write_suite(tmp_path), results, env=env, canaries=True)
    assert proc.returncode == 0, proc.stderr
    secrets = ["pwQ0x", *(v.split(":")[-1] for v in QUERY_SECRETS.values())]
    files = list(every_file(results))
    assert any(p.name == "command.txt" for p in files) and any(p.name == "stdout.txt" for p in files)
    for path in files:
        data = path.read_text(errors="replace")
        for secret in secrets:
            assert secret not in data, (secret, path)
    manifest = json.loads(next(results.glob("*/manifest.json")).read_text())
    assert "appName=visibleQ5" in manifest["target"]["url"]  # only credentials are masked
    assert "authMechanismProperties=***" in manifest["target"]["url"]
    for secret in secrets:
        assert secret not in proc.stdout + proc.stderr


def test_query_string_secrets_masked_in_render_and_errors(tmp_path: Path) -> None:
    options = {**QUERY_SECRETS, **UNUSABLE_SECRETS, **NOT_SECRET}
    url = "mongodb://u:pwQ0x@127.0.0.1:1/ycsb?" + _query(options)
    secrets = ["pwQ0x", *(v.split(":")[-1] for v in {**QUERY_SECRETS, **UNUSABLE_SECRETS}.values())]
    rendered = run_cli("render", "quick", env=cli_env(MONGODB_URL=url))
    assert rendered.returncode == 0, rendered.stderr
    assert "tlsCertificateKeyFilePassword=***" in rendered.stdout
    assert "proxyPassword=***" in rendered.stdout
    assert "appName=visibleQ5" in rendered.stdout
    # the same options on an unreachable server: the error names the server, never a secret
    failed = run_cli(
        "bench", str(write_suite(tmp_path)), "--results", str(tmp_path / "r"), env=cli_env(MONGODB_URL=url)
    )
    assert_one_line_error(failed, "127.0.0.1:1", alone=False)
    for secret in secrets:
        assert secret not in rendered.stdout + rendered.stderr
        assert secret not in failed.stdout + failed.stderr


# --- 3. an unencoded password ---


@pytest.mark.parametrize("command", ["bench", "render"])
def test_unencoded_password_is_refused_without_printing_it(command: str, tmp_path: Path) -> None:
    url = "mongodb://u:p@ss:w/rd%@127.0.0.1:1/ycsb"
    args = ["bench", "quick", "--results", str(tmp_path)] if command == "bench" else ["render", "quick"]
    proc = run_cli(*args, env=cli_env(MONGODB_URL=url))
    assert_one_line_error(proc, "percent-encode")
    for part in ("p@ss", "ss:w", "rd%"):
        assert part not in proc.stdout + proc.stderr
    assert not list(tmp_path.glob("*/manifest.json"))


# --- 4. a full disk ---


@pytest.fixture()
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here ({done.stderr.strip()}); CI runs as root")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path) -> None:
    with open(disk / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass


def fill_when_the_run_starts(results: Path, disk: Path, poll_s: float) -> threading.Thread:
    """A started thread that fills *disk* once the bench writing to *results* has saved its load step (the
    second step's folder exists), looking every *poll_s* seconds for 120 s at the most."""

    def fill() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if list(results.glob("*/steps/02-*")):
                with contextlib.suppress(OSError):  # closing the filled file fails too
                    _fill(disk)
                return
            time.sleep(poll_s)

    filler = threading.Thread(target=fill, daemon=True)
    filler.start()
    return filler


def test_disk_full_during_a_run_leaves_no_private_file_and_a_failed_manifest(
    tmp_path: Path, small_disk: Path, server: ServerInfo
) -> None:
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    results = small_disk / "results"
    url = f"mongodb://u:pwD1sk@127.0.0.1:{server.port}/ycsb?authMechanism=PLAIN"

    filler = fill_when_the_run_starts(results, small_disk, poll_s=0.05)
    proc = bench_quietly(
        write_suite(tmp_path, operationcount=100000, maxexecutiontime=6, target=100),
        results,
        env=cli_env(MONGODB_URL=url, TMPDIR=str(private_tmp)),
    )
    filler.join()
    assert (small_disk / "filler").exists()
    assert_one_line_error(proc, "disk full", alone=False)
    assert proc.returncode == 2
    assert list(private_tmp.iterdir()) == []  # the private folder (connection URL inside) is gone
    manifest = json.loads(next(results.glob("*/manifest.json")).read_text())
    assert manifest["status"] == "failed", manifest["status"]
    assert "disk full" in manifest["error"]
    assert manifest["steps"][0]["status"] == "completed"


def test_disk_full_from_the_start_says_no_manifest_was_written(
    tmp_path: Path, small_disk: Path, server: ServerInfo
) -> None:
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    _fill(small_disk)
    proc = run_cli(
        "bench",
        str(write_suite(tmp_path)),
        "--results",
        str(small_disk / "results"),
        "--no-monitors",
        env=cli_env(MONGODB_URL=server.url, TMPDIR=str(private_tmp)),
    )
    assert_one_line_error(proc, "disk full", "manifest.json could not be written", alone=False)
    assert list(private_tmp.iterdir()) == []


# --- 5, 6. signals: a lost terminal, SIGTERM, Ctrl-C, SIGKILL ---


def _start_long_bench(tmp_path: Path, env: dict[str, str]) -> tuple[subprocess.Popen, Path]:
    results = tmp_path / "results"
    suite = write_suite(tmp_path, operationcount=100000000, maxexecutiontime=120, target=100)
    proc = subprocess.Popen(
        [
            CLI,
            "bench",
            str(suite),
            "--results",
            str(results),
            "--no-monitors",
            "--no-report",
            "--no-canaries",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if any(" sec: " in p.read_text(errors="replace") for p in results.glob("*/steps/02-*/stderr.txt")):
            return proc, results
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    proc.kill()
    out, err = proc.communicate()
    pytest.fail(f"the run step did not start: {err[-2000:]}")


def _children(pid: int) -> list[psutil.Process]:
    return psutil.Process(pid).children(recursive=True)


def _names(procs: list[psutil.Process]) -> set[str]:
    names = set()
    for p in procs:
        try:
            names.add(Path(p.exe()).name)
        except psutil.Error:
            pass
    return names


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGHUP, 129), (signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_stops_cleanly_with_the_conventional_exit_code(
    sig: signal.Signals, code: int, tmp_path: Path
) -> None:
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    proc, results = _start_long_bench(tmp_path, cli_env(TMPDIR=str(private_tmp)))  # embedded server
    children = _children(proc.pid)
    assert {"java", "ferretdb-embedded"} <= _names(children)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    last = [ln for ln in err.splitlines() if ln.strip()][-1]
    assert last.startswith("interrupted") and sig.name in last, last
    gone, alive = psutil.wait_procs(children, timeout=5)
    assert alive == [], alive
    assert list(private_tmp.iterdir()) == []
    manifest = json.loads(next(results.glob("*/manifest.json")).read_text())
    assert manifest["status"] == "interrupted"
    load, run = manifest["steps"]
    assert load["status"] == "completed" and run["status"] == "interrupted"
    assert sig.name in run["reasons"][0]
    assert len(pd.read_csv(next(results.glob("*/operations.csv")))) > 0  # the load step is kept


def test_sigkill_of_the_runner_leaves_no_server_or_java(tmp_path: Path) -> None:
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    # A cache folder of its own (the installed YCSB and server binary linked in), so the killed bench's
    # server record is in a folder only this test reads: any other ycsb-runner starting meanwhile (another
    # pytest-xdist worker, a bench by hand) would clear the stale server before the `server status` below.
    cache = tmp_path / "cache"
    cache.mkdir()
    for entry in cache_dir().iterdir():
        if entry.name not in ("server", "locks"):
            (cache / entry.name).symlink_to(entry)
    env = cli_env(TMPDIR=str(private_tmp), YCSB_RUNNER_CACHE=str(cache))
    proc, results = _start_long_bench(tmp_path, env)
    children = _children(proc.pid)
    assert {"java", "ferretdb-embedded"} <= _names(children)
    server_dirs = {
        a.split("file:")[1].rstrip("/").removesuffix("/data")
        for p in children
        if Path(p.exe()).name == "ferretdb-embedded"
        for a in p.cmdline()
        if a.startswith("file:")
    }
    assert len(server_dirs) == 1
    proc.kill()
    proc.communicate(timeout=30)
    gone, alive = psutil.wait_procs(children, timeout=5)
    assert alive == [], [p.cmdline() for p in alive]
    # the next ycsb-runner notices what the killed one left (server data, private folder) and clears it
    assert Path(next(iter(server_dirs))).exists()
    assert list(private_tmp.iterdir()) != []
    status = run_cli("server", "status", env=env)
    assert "cleared a stale embedded server" in status.stderr, status.stderr
    assert not Path(next(iter(server_dirs))).exists()
    assert list(private_tmp.iterdir()) == []
    manifest = next(p for p in sorted(results.glob("*/manifest.json")) if not p.parent.is_symlink())
    assert json.loads(manifest.read_text())["status"] == "running"
    # the next bench into the same results folder marks the killed run (before anything else can fail: here
    # at once, with no Java, rather than after the seconds an unreachable server takes to be given up)
    again = run_cli(
        "bench",
        str(write_suite(tmp_path)),
        "--results",
        str(results),
        env=cli_env(MONGODB_URL="mongodb://127.0.0.1:1/y", JAVA_HOME=str(tmp_path / "no-such-jdk")),
    )
    assert_one_line_error(again, "Java not found", alone=False)
    assert f"marked {manifest.parent} as killed" in again.stderr
    assert json.loads(manifest.read_text())["status"] == "killed"


# --- 7. one-line errors instead of tracebacks ---


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory, server: ServerInfo) -> Path:
    folder = tmp_path_factory.mktemp("finished")
    proc = bench_quietly(write_suite(folder), folder / "results", env=cli_env(MONGODB_URL=server.url))
    assert proc.returncode == 0, proc.stderr
    return run_folders(folder / "results")[0]


@pytest.fixture()
def run_to_damage(finished_run: Path, tmp_path: Path) -> Path:
    """A copy of ``finished_run``, under its name, for a test to damage."""
    run = tmp_path / finished_run.name
    shutil.copytree(finished_run, run)
    return run


@pytest.mark.parametrize("damage", ["truncated", "not-an-object"])
@pytest.mark.parametrize("command", ["report", "table", "compare"])
def test_damaged_manifest_is_a_one_line_error(command: str, damage: str, run_to_damage: Path) -> None:
    run = run_to_damage
    text = (run / "manifest.json").read_text()
    (run / "manifest.json").write_text(text[: len(text) // 2] if damage == "truncated" else "[1, 2]\n")
    extra = ["--reference", "tencent-mongodb44"] if command == "compare" else []
    proc = run_cli(command, str(run), *extra)
    assert_one_line_error(proc, "manifest.json")


def test_missing_tls_key_file_is_a_one_line_error(tmp_path: Path) -> None:
    url = f"mongodb://127.0.0.1:1/ycsb?tls=true&tlsCertificateKeyFile={tmp_path}/missing.pem"
    proc = run_cli(
        "bench", str(write_suite(tmp_path)), "--results", str(tmp_path / "r"), env=cli_env(MONGODB_URL=url)
    )
    assert_one_line_error(proc, "tlsCertificateKeyFile", "no such file", alone=False)


def test_hung_java_is_killed_after_a_timeout(tmp_path: Path) -> None:
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    # a sleep only this test starts (its pid and clock in the seconds: a run of this test in another checkout
    # or worker has another), left to init once its java is killed: found by its argv, not as a descendant
    marker = f"3517.{os.getpid()}{time.monotonic_ns() % 10**6:06d}"
    (home / "bin" / "java").write_text(f"#!/bin/sh\nsleep {marker} &\nwait\n")
    (home / "bin" / "java").chmod(0o755)
    started = time.monotonic()
    proc = run_cli(
        "bench",
        str(write_suite(tmp_path)),
        "--results",
        str(tmp_path / "r"),
        env=cli_env(JAVA_HOME=str(home), YCSB_RUNNER_JAVA_TIMEOUT="2", MONGODB_URL="mongodb://127.0.0.1:1/y"),
        timeout=60,
    )
    assert time.monotonic() - started < 30
    assert_one_line_error(proc, "-version did not answer within 2s", alone=False)
    time.sleep(0.5)
    left = [p for p in psutil.process_iter(["cmdline"]) if marker in " ".join(p.info["cmdline"] or [])]
    assert left == [], left


# --- 8. validation ---


@pytest.mark.parametrize("rate", ["-1", "nan", "inf", "1.5"])
def test_max_error_rate_outside_0_1_is_refused(rate: str, tmp_path: Path) -> None:
    proc = run_cli(
        "bench",
        "quick",
        f"--max-error-rate={rate}",
        "--results",
        str(tmp_path),
        env=cli_env(MONGODB_URL="mongodb://127.0.0.1:1/ycsb"),
    )
    assert_one_line_error(proc, "--max-error-rate", "from 0 to 1")
    assert not math.isfinite(float(rate)) or not 0 <= float(rate) <= 1


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (('name = "faults"', 'name = ""'), "name: empty"),
        (("threads = [2]", "threads = [2, 2, 2]"), "thread count 2 is listed more than once"),
        (("threads = [2]", "threads = [" + ", ".join(str(i) for i in range(1, 20001)) + "]"), "at most 100"),
    ],
)
def test_bad_suites_are_refused(change: tuple[str, str], needle: str, tmp_path: Path) -> None:
    path = write_suite(tmp_path)
    path.write_text(path.read_text().replace(*change))
    started = time.monotonic()
    proc = run_cli("render", str(path))
    assert time.monotonic() - started < 20
    assert_one_line_error(proc, needle)


def test_huge_suite_file_is_refused_quickly(tmp_path: Path) -> None:
    path = write_suite(tmp_path)
    huge = "threads = [" + ", ".join(str(i) for i in range(1, 2_000_001)) + "]"
    path.write_text(path.read_text().replace("threads = [2]", huge))
    started = time.monotonic()
    proc = run_cli("render", str(path))
    elapsed = time.monotonic() - started
    assert_one_line_error(proc, "at most 1 MiB")
    assert elapsed < 10, elapsed


def test_suite_path_that_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "suite.toml").mkdir()
    for path in (tmp_path, tmp_path / "suite.toml"):
        assert_one_line_error(run_cli("render", str(path)), "is a directory")
