"""Shared fixtures: the real YCSB install and one real embedded server (FerretDB or mongod) per session."""

from __future__ import annotations

import functools
import gc
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

# pytest-xdist workers start with COLUMNS=80 and LINES=24 in their environment, which rich would read into
# the CLI consoles' width when ycsb_runner.present.console is imported: tests that set COLUMNS for one
# CliRunner call would get 80. Give the workers the environment of a plain ``pytest`` run.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)

import figure_memo  # noqa: E402  (this folder's helper)
import pytest  # noqa: E402
import typer.testing  # noqa: E402
from hypothesis import settings  # noqa: E402
from pymongo import MongoClient  # noqa: E402

from ycsb_runner.errors import UserError  # noqa: E402
from ycsb_runner.install import JavaInfo, YcsbInstall, ensure_ycsb, find_java  # noqa: E402
from ycsb_runner.install.cds import jvm_flags, usable_archive  # noqa: E402
from ycsb_runner.install.embedded import EmbeddedServer, ServerInfo  # noqa: E402
from ycsb_runner.paths import cache_dir  # noqa: E402

DATA = Path(__file__).parent / "data"


def _c1_java_home() -> Path | None:
    """A JAVA_HOME whose ``bin/java`` runs the real Java with only its C1 compiler and the serial GC.

    Every test YCSB then costs about a sixth less CPU (its JVMs are short: the C2 compiler's work never
    pays off), and the tests share 2 cores. What the tests check does not depend on the JIT; the tool's own
    argv is unchanged (the wrapper adds the options). ``YCSB_RUNNER_TEST_JIT=full`` runs the real one as is.
    The class-data archive is keyed by the JVM build, so the wrapper starts from set-up's archive."""
    if os.environ.get("YCSB_RUNNER_TEST_JIT") == "full":
        return None
    try:
        real = find_java().path  # $JAVA_HOME's or PATH's, as the tool would pick
    except UserError:
        return None  # the tests that need Java say so
    home = cache_dir() / "test-java"
    script = home / "bin" / "java"
    if Path(real).resolve() == script.resolve():
        return home  # inherited (pytest-xdist workers start with the controller's environment)
    text = f'#!/bin/sh\nexec "{real}" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC "$@"\n'
    if not script.is_file() or script.read_text() != text:
        script.parent.mkdir(parents=True, exist_ok=True)
        tmp = script.with_name(f"java.{os.getpid()}")
        tmp.write_text(text)
        tmp.chmod(0o755)
        tmp.replace(script)  # several pytest-xdist workers may write it at once
    return home


if (_java_home := _c1_java_home()) is not None:
    os.environ["JAVA_HOME"] = str(_java_home)

# Property tests (hypothesis): `make test-fast` loads the "fast" profile (--hypothesis-profile=fast), where
# each test draws a quarter of its examples (tests/unit/property_examples.py); `make test` and CI draw all.
settings.register_profile("fast", max_examples=25)

# `ycsb-runner` builds its click command from the Typer app once per process (reading every command's
# annotations: ~10 ms); typer's CliRunner would build it again for each of the tests' ~700 in-process
# commands. Built once per app here, as the tool does; the command line is parsed afresh at every call.
typer.testing._get_command = functools.cache(typer.testing._get_command)

# Python's cyclic garbage collector, tuned for a test process: the tests' pandas frames and matplotlib
# figures make many short-lived objects, so at the default first threshold (700 allocations) it collects
# very often, and each full collection walks every object the imports made. Here the first threshold is
# higher, and what collection imported is frozen (never walked again). `make test-fast` took 160-166 user
# CPU-s instead of 172 (Dec 2026); its wall time, 96-108 s, stayed within this VM's run-to-run spread. The
# tool's own processes keep Python's defaults.
gc.set_threshold(20_000, 50, 50)


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.collect()
    gc.freeze()


# Each different figure drawn once per run (tests/figure_memo.py): the reports of the checked-in runs and
# histories drew 480 panels in `make test-fast`, 147 of them different.
figure_memo.install()


def pytest_configure(config: pytest.Config) -> None:
    figure_memo.start()


def pytest_unconfigure(config: pytest.Config) -> None:
    figure_memo.end()


# The Alibaba SDK's default credential chain would otherwise set up an ECS metadata (100.100.100.200)
# provider; tests talk to 127.0.0.1 only. (The SDK reads this variable when it is imported.)
os.environ["ALIBABA_CLOUD_ECS_METADATA_DISABLED"] = "true"


# `make test` runs the tests in pytest-xdist workers with --dist loadfile: a file's tests stay on one worker,
# so its module-scoped real runs happen once. The fault tests are independent of each other and together the
# longest file: their work units are test functions (the parameters of one function stay together; the
# damaged-manifest cases share one finished run).
SPLIT_BY_FUNCTION = ("tests/integration/test_faults.py", "tests/integration/test_faults_hostile.py")
FAULTS, HOSTILE = SPLIT_BY_FUNCTION
# Work units are handed out in collection order (xdist's own reordering, by number of tests, is turned off
# below): the units that take longest start first, so that none of them is left running alone at the end
# while the other workers idle. Worker-seconds of the integration units on 2 workers beside other checkouts'
# tests (Dec 2026; the unit files' from an earlier full `make test`), longest first; units not named follow
# in their usual order and fill the gaps. (The nightly histories, findmax and the site, marked `alone`, run
# in a session of their own after this one: see the Makefile.)
SLOW_FIRST = (
    "tests/integration/test_installed_package.py",  # 66 s: builds the wheel, set-up from scratch, a bench
    "tests/integration/test_multi_client_benches.py",  # 105 s
    "tests/integration/test_multi_clients.py",  # 98 s
    "tests/integration/test_audit_suite_integration.py",  # 92 s
    "tests/unit/test_parse_truncation.py",  # 57 s
    "tests/unit/test_parse_properties.py",  # 48 s
    "tests/integration/test_nightly_cron.py",  # 45 s
    "tests/integration/test_steady_integration.py",  # 40 s
    "tests/integration/test_bench_integration.py",  # 37 s
    "tests/integration/test_binding_workloads.py",  # 31 s
    f"{HOSTILE}::test_operations_csv_without_a_column_is_a_one_line_error",  # 27 s
    "tests/unit/test_analyse_runs.py",  # 23 s
    "tests/integration/test_nightly_integration.py",  # 20 s (two benches at once)
    "tests/integration/test_audit_restore.py",  # 19 s
    f"{FAULTS}::test_short_password_keeps_raw_logs_as_ycsb_printed",  # 18 s
    "tests/integration/test_binding_parity.py",  # 18 s
    f"{FAULTS}::test_sigkill_of_the_runner_leaves_no_server_or_java",  # 18 s
    f"{FAULTS}::test_signal_stops_cleanly_with_the_conventional_exit_code",  # 18 s
    "tests/integration/test_failures_integration.py",  # 16 s
    "tests/integration/test_binding_batches.py",  # 16 s
    "tests/unit/test_parse_status_fast.py",  # 15 s
    f"{HOSTILE}::test_secret_set_option_is_stored_masked",  # 15 s
    "tests/integration/test_cds_integration.py",  # 14 s
    "tests/integration/test_server_cli.py",  # 13 s
    f"{FAULTS}::test_damaged_manifest_is_a_one_line_error",  # 12 s
    f"{FAULTS}::test_query_string_secrets_appear_nowhere",  # 12 s
    "tests/integration/test_monitors_server.py",  # 11 s
)


def _scope(nodeid: str) -> str:
    """The work unit of a test: its file, or its function in a file split by function."""
    path, _, rest = nodeid.partition("::")
    return f"{path}::{rest.split('[', 1)[0]}" if path in SPLIT_BY_FUNCTION else path


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # (sorted in every run: pytest-xdist's workers, which collect, all see dist "no")
    rank = {scope: i for i, scope in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(_scope(item.nodeid), len(rank)))  # stable: in-file order kept


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    config.option.loadscopereorder = False  # keep the order above

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _scope(nodeid)

    return Scheduling(config, log)


@pytest.fixture(scope="session", autouse=True)
def _session_lock_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Bench locks of this test session only (each pytest-xdist worker is a session, with its own
    servers): a bench of one worker must not refuse another worker's (``another bench is running
    against the embedded server``), nor a bench someone runs by hand. The lock tests set their own."""
    old = os.environ.get("YCSB_RUNNER_LOCK_DIR")
    os.environ["YCSB_RUNNER_LOCK_DIR"] = str(tmp_path_factory.mktemp("locks"))
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("YCSB_RUNNER_LOCK_DIR", None)
        else:
            os.environ["YCSB_RUNNER_LOCK_DIR"] = old


@pytest.fixture(scope="session")
def ycsb() -> YcsbInstall:
    """The YCSB that `make setup` installed (a broken set-up fails the tests that need it)."""
    return ensure_ycsb(log=lambda _msg: None)


@pytest.fixture(scope="session")
def java() -> JavaInfo:
    """The Java the tool would pick (the tests' C1 wrapper, see above)."""
    return find_java()


@pytest.fixture(scope="session")
def java_path(java: JavaInfo) -> str:
    return java.path


@pytest.fixture(scope="session")
def server() -> Iterator[ServerInfo]:
    with EmbeddedServer(log=lambda _msg: None) as info:
        yield info


@pytest.fixture(scope="session")
def mongo_url(server: ServerInfo) -> str:
    return server.url


@pytest.fixture()
def mongo(mongo_url: str) -> Iterator[MongoClient]:
    with MongoClient(mongo_url, serverSelectionTimeoutMS=5000) as client:
        yield client


@pytest.fixture(scope="session")
def run_ycsb(ycsb: YcsbInstall, java: JavaInfo, mongo_url: str):
    """Run real YCSB directly: ``run_ycsb("load", {"recordcount": 100}, threads=2)`` -> (rc, out, err).
    Its JVMs start from set-up's class-data archive, as the runner's do."""
    archive_flags = jvm_flags(usable_archive(java, ycsb))

    def run(
        phase: str, props: dict[str, object], threads: int = 1, url: str | None = None, timeout: float = 300
    ) -> tuple[int, str, str]:
        argv = [
            java.path,
            "-Duser.language=en",
            "-Duser.country=US",
            *archive_flags,
            "-cp",
            ":".join(ycsb.classpath),
            "site.ycsb.Client",
            "-load" if phase == "load" else "-t",
            "-db",
            ycsb.binding_class,
            "-p",
            "workload=site.ycsb.workloads.CoreWorkload",
            "-p",
            f"mongodb.url={url or mongo_url}",
            "-threads",
            str(threads),
            "-s",
        ]
        for k, v in props.items():
            argv += ["-p", f"{k}={v}"]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        return proc.returncode, proc.stdout, proc.stderr

    return run


@pytest.fixture()
def results(tmp_path: Path) -> Path:
    """A results folder holding copies of the checked-in real runs (tests/data/runs)."""
    import shutil

    out = tmp_path / "results"
    out.mkdir()
    for name in ("tencent-analyse", "audit-analyse"):
        shutil.copytree(DATA / "runs" / name, out / name)
    return out


@pytest.fixture(scope="session")
def cron_entry() -> tuple[str, str]:
    """The schedule and the command of examples/nightly/crontab's one entry."""
    crontab = Path(__file__).parent.parent / "examples" / "nightly" / "crontab"
    lines = [ln for ln in crontab.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    lines = [ln for ln in lines if not re.match(r"^[A-Z_]+=", ln)]  # MAILTO=... and other variables
    assert len(lines) == 1
    fields = lines[0].split(None, 5)
    return " ".join(fields[:5]), fields[5]
