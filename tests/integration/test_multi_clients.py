"""Several load generators for real: sshd instances on loopback ports (tools/loopback_sshd.py), all driving
the embedded server through ``ssh``, plus this machine as ``local``."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from hdrh.histogram import HdrHistogram
from loopback_sshd import SSHD, SshdError, loopback_sshd  # tools/ (conftest.py)

from ycsb_runner.bench import BenchOptions, run_bench
from ycsb_runner.errors import UserError
from ycsb_runner.parse.hdr import read_hdr_log

SUITE = str(Path(__file__).parents[1] / "suites" / "multi.toml")
SECRET = "s3cretPW-multi-0815"
HOSTS = ("h1", "h2", "h3")

pytestmark = pytest.mark.skipif(
    not Path(SSHD).exists(),
    reason="needs OpenSSH's sshd: sudo apt-get install openssh-server openssh-client "
    "(make test installs it as root)",
)


def _with_password(url: str) -> str:
    # FerretDB (SQLite) accepts PLAIN with any password, which lets us follow a real password around.
    sep = "&" if "?" in url else "?"
    return url.replace("mongodb://", f"mongodb://benchuser:{SECRET}@") + f"{sep}authMechanism=PLAIN"


@pytest.fixture(scope="module")
def ssh_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Three sshd on 127.0.0.1 (h1, h2, h3: tools/loopback_sshd.py) and an ssh config naming them, set as
    YCSB_RUNNER_SSH_CONFIG; ``nohost`` is a closed port."""
    try:
        with loopback_sshd(HOSTS, tmp_path_factory.mktemp("sshd"), closed=["nohost"]) as hosts:
            yield hosts.ssh_config
    except SshdError as err:
        pytest.fail(str(err))


def own_processes() -> list[psutil.Process]:
    """The processes this test session started: this process's descendants. They are the bench's (it runs
    in this process), its ssh sessions and local client, and, under the module's sshd (children of this
    process too), each remote client's shell and YCSB; not another test's beside it."""
    return psutil.Process().children(recursive=True)


def argv_of(p: psutil.Process | int) -> list[str]:
    """A process's argv; [] once it has ended."""
    try:
        return (p if isinstance(p, psutil.Process) else psutil.Process(p)).cmdline()
    except psutil.Error:
        return []


class ArgvWatcher:
    """The argv of every process a run started (``own_processes``), sampled while it goes on."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.is_set():
            for p in own_processes():
                if cmd := " ".join(argv_of(p)):
                    self.seen.append(cmd)
            self._stop.wait(0.2)

    def __enter__(self) -> ArgvWatcher:
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()


@pytest.fixture(scope="module")
def three_client_run(ssh_hosts: Path, mongo_url: str, tmp_path_factory: pytest.TempPathFactory):
    from ycsb_runner.execute import canary

    results = tmp_path_factory.mktemp("results")
    started = time.time()
    # the canaries' BasicDB probes (one per client before the steps and one after, one after the other) for
    # 1 s instead of 2: test_canaries_measure_every_client checks that each was measured, not what it got
    with ArgvWatcher() as watcher, pytest.MonkeyPatch.context() as mp:
        mp.setattr(canary, "SECONDS", 1)
        outcome = run_bench(
            BenchOptions(
                suite=SUITE,
                url=_with_password(mongo_url),
                results=results,
                clients=list(HOSTS),
                report=False,
                # 50 ops/s a client: each client's 300 operations last ~6 s, several 1-s telemetry samples
                # of its JVM, whose CPU is the difference of two (unthrottled on the patched server they took
                # under a second, and a fresh clone once saw h3's JVM in no sample; at 100 ops/s, 3 s, a
                # busy machine's late ssh sampler session still caught it in fewer than two)
                overrides=["target=150"],
            ),
            log=lambda _m: None,
        )
    wall = time.time() - started
    print(f"\n3-client bench (load 450 docs + run 900 ops over h1, h2, h3): {wall:.1f}s wall")
    return outcome, watcher.seen, wall


def completed_run_step(run_dir: Path) -> dict:
    """The manifest's first run step of the bench in *run_dir*, after checking that it completed."""
    manifest = json.loads((run_dir / "manifest.json").read_text())
    step = next(s for s in manifest["steps"] if s["phase"] == "run")
    assert step["status"] == "completed", step["reasons"]
    return step


def test_multi_client_load_holds_exactly_recordcount(three_client_run, mongo_url: str) -> None:
    outcome, _, _ = three_client_run
    steps = outcome.result.steps
    load = steps[steps["phase"] == "load"].iloc[0]
    assert load["status"] == "completed", load["reasons"]
    assert load["client"] == "all"
    assert load["documents"] == 450
    ops = outcome.result.operations
    ins = ops[(ops["phase"] == "load") & (ops["section"] == "INSERT")].set_index("client")
    assert sorted(ins.index) == ["all", "h1", "h2", "h3"]
    assert [int(ins.at[h, "operations"]) for h in HOSTS] == [150, 150, 150]
    assert int(ins.at["all", "return_OK"]) == 450 and int(ins.at["all", "errors"]) == 0
    manifest = json.loads((outcome.run_dir / "manifest.json").read_text())
    shares = manifest["steps"][0]["figures"]["clients"]
    assert [(c["client"], c["insertstart"], c["insertcount"]) for c in shares] == [
        ("h1", "0", "150"),
        ("h2", "150", "150"),
        ("h3", "300", "150"),
    ]


def test_run_counts_add_up_and_percentiles_are_those_of_all_values(three_client_run) -> None:
    outcome, _, _ = three_client_run
    ops = outcome.result.operations
    run = ops[ops["phase"] == "run"]
    step = run["step"].iloc[0]
    main = run[run["section"].isin(["READ", "UPDATE"])]
    per_client = main[main["client"] != "all"].groupby("client")["operations"].sum()
    assert sorted(per_client.index) == list(HOSTS)
    assert per_client.tolist() == [300, 300, 300]  # operationcount 900 split over three clients
    merged = main[main["client"] == "all"].set_index("section")
    assert int(merged["operations"].sum()) == 900
    for section in ("READ", "UPDATE"):
        one = HdrHistogram(1, 3_600_000_000, 3)  # one histogram of every value all clients recorded
        for h in HOSTS:
            log = read_hdr_log(outcome.run_dir / "steps" / step / "clients" / h / "hdr" / f"{section}.hdr")
            for iv in log.intervals:
                for i in iv.counts.nonzero()[0]:
                    one.record_value(int(iv.layout.lowest_values(i.reshape(1))[0]), int(iv.counts[i]))
        assert (
            one.get_total_count()
            == merged.at[section, "operations"]
            == merged.at[section, "union_operations"]
        )
        for p in (50, 95, 99):  # the raw union, kept beside the common window's percentiles
            assert merged.at[section, f"union_p{p}_us"] == one.get_value_at_percentile(p), (section, p)


def test_logs_of_every_client_are_kept_by_name(three_client_run) -> None:
    outcome, _, _ = three_client_run
    for step in outcome.result.manifest.steps:
        for h in HOSTS:
            d = outcome.run_dir / "steps" / step.label / "clients" / h
            assert "[OVERALL], RunTime(ms)" in (d / "stdout.txt").read_text(), (step.label, h)
            assert (d / "stderr.txt").stat().st_size > 0
            assert (d / "hdr" / ("INSERT.hdr" if step.keys.phase == "load" else "READ.hdr")).is_file()


def _own_workdirs(seen: list[str], ssh_dir: Path) -> set[Path]:
    """The client folders named on the argv of this module's ssh sessions (their ``-F`` config is in
    *ssh_dir*): another test file's clients, running beside this one on another worker, are not ours."""
    base = Path(os.environ.get("TMPDIR", "/tmp"))
    return {base / m for a in seen if str(ssh_dir) in a for m in re.findall(r"ycsb-runner-client-\w+", a)}


def test_no_password_on_any_argv_nor_in_the_results(three_client_run, ssh_hosts: Path) -> None:
    outcome, seen, _ = three_client_run
    assert any("site.ycsb.Client" in a for a in seen), "the watcher never saw YCSB running"
    assert any(a.startswith("ssh ") for a in seen), "the watcher never saw ssh running"
    assert not [a for a in seen if SECRET in a]
    for f in outcome.run_dir.rglob("*"):
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f
    own = _own_workdirs(seen, ssh_hosts)  # every client's private folder (with the password) is gone
    assert own and not [w for w in own if w.exists()], own


def test_canaries_measure_every_client(three_client_run) -> None:
    outcome, _, _ = three_client_run
    canaries = json.loads((outcome.run_dir / "manifest.json").read_text())["canaries"]
    assert canaries["errors"] == []
    measured = {g["client"]: g["ops_s"] for g in canaries["load_generator"]}
    assert sorted(measured) == list(HOSTS)  # each load generator over its own ssh session
    assert all(ops[when] > 0 for ops in measured.values() for when in ("before", "after")), measured
    assert all(g["seconds"] == 1 for g in canaries["load_generator"])  # (the fixture's shorter probes)


def test_an_unreachable_client_fails_before_anything_runs(
    ssh_hosts: Path, mongo_url: str, tmp_path: Path
) -> None:
    started = time.time()
    with pytest.raises(UserError) as err:
        run_bench(
            BenchOptions(
                suite=SUITE, url=mongo_url, results=tmp_path, clients=["h1", "nohost"], report=False
            ),
            log=lambda _m: None,
        )
    message = str(err.value)
    assert message.startswith("client nohost is unreachable: ") and "\n" not in message
    assert "Connection refused" in message
    assert not list(tmp_path.iterdir())  # no run folder: nothing ran
    assert time.time() - started < 30


def test_cli_unreachable_client_is_one_line_and_non_zero(
    ssh_hosts: Path, mongo_url: str, tmp_path: Path
) -> None:
    exe = Path(shutil.which("ycsb-runner") or Path(os.sys.executable).parent / "ycsb-runner")
    done = subprocess.run(
        [str(exe), "bench", SUITE, "--client", "h1", "--client", "nohost", "--results", str(tmp_path)],
        capture_output=True,
        text=True,
        env={**os.environ, "MONGODB_URL": mongo_url},
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("error")]
    assert len(errors) == 1 and errors[0].startswith("error: client nohost is unreachable: "), done.stderr
    assert done.stderr.rstrip().splitlines()[-1] == errors[0]  # the last line, nothing after it
    assert "Traceback" not in done.stderr


def test_probe_client_over_ssh_measures_what_a_client_can_generate(
    ssh_hosts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ycsb_runner.execute.probe import load_probes, target_warning

    probes = tmp_path / "probes.json"
    monkeypatch.setenv("YCSB_RUNNER_PROBE_FILE", str(probes))
    exe = Path(shutil.which("ycsb-runner") or Path(os.sys.executable).parent / "ycsb-runner")
    done = subprocess.run(
        [
            str(exe),
            "probe-client",
            SUITE,
            "--client",
            "h1",
            "--client",
            "local",
            "--seconds",
            "3",
            "-f",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    rows = {r["client"]: r for r in out["rows"]}
    assert set(rows) == {"h1", "local"}
    assert all(r["threads"] == 3 and r["ops_s"] > 1000 for r in rows.values())  # BasicDB does nothing: fast
    stored = load_probes()
    assert {p["client"] for p in stored.values()} == {"h1", "local"}
    cap = rows["h1"]["ops_s"] + rows["local"]["ops_s"]
    assert target_warning(0.4 * cap, ["h1", "local"], 6) is None
    assert "add clients" in (target_warning(0.6 * cap, ["h1", "local"], 6) or "")


def test_setup_copies_ycsb_from_the_local_cache(
    ssh_hosts: Path, ycsb, java_path: str, tmp_path: Path
) -> None:
    import filecmp

    from ycsb_runner.execute.clients import Client, install_ycsb, lib_dirs_of, parse_client, ssh_config_path

    client = Client(parse_client("h3"), ssh_config_path())
    first = install_ycsb(client, ycsb.classpath, java_path, dest=str(tmp_path / "remote"))
    assert first.startswith("h3: copied YCSB")
    for d in lib_dirs_of(ycsb.classpath):
        copy = tmp_path / "remote" / str(d).lstrip("/")
        names = sorted(f.name for f in d.iterdir() if f.is_file())
        assert sorted(f.name for f in copy.iterdir()) == names
        assert filecmp.cmpfiles(d, copy, names, shallow=False)[0] == names  # byte for byte
    again = install_ycsb(client, ycsb.classpath, java_path, dest=str(tmp_path / "remote"))
    assert again.startswith("h3: YCSB already in place")
    exe = Path(shutil.which("ycsb-runner") or Path(os.sys.executable).parent / "ycsb-runner")
    done = subprocess.run(
        [str(exe), "setup", "--no-server", "--client", "h1"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "h1: YCSB already in place" in done.stderr + done.stdout  # the same machine: the same files


def test_telemetry_per_client(three_client_run) -> None:
    outcome, _, _ = three_client_run
    cm = outcome.result.client_metrics
    run = cm[cm["phase"] == "run"]
    assert set(run["client"]) == set(HOSTS)  # each over its own ssh session
    for h in HOSTS:
        mine = run[run["client"] == h]
        assert len(mine) >= 1 and mine["host_cpu_pct"].between(0, 100).all(), h
        assert (mine["ycsb_cpu_core_pct"].dropna() > 0).any(), h  # the client's own JVM was followed
    step = [s for s in outcome.result.manifest.steps if s.keys.phase == "run"][0]
    assert all("host_cpu_pct" in c["telemetry"] for c in step.figures["clients"])


def test_tables_and_report_read_the_merged_rows(three_client_run) -> None:
    from ycsb_runner.analyse.results import results_table
    from ycsb_runner.analyse.table import step_metrics

    outcome, _, _ = three_client_run
    table = results_table(outcome.result)
    run = table[table["phase"] == "run"]
    assert int(run["operations"].sum()) == 900  # not 1800: per-client rows are not counted again
    metrics = step_metrics(outcome.result).set_index("phase")
    ops = outcome.result.operations
    merged_read = ops[(ops["phase"] == "run") & (ops["client"] == "all") & (ops["section"] == "READ")].iloc[0]
    assert metrics.at["run", "read_p99_us"] == merged_read["p99_us"]  # the exact one, not a blend
    assert metrics.at["load", "insert_ops"] == 450


def test_server_is_sampled_during_a_multi_client_run(three_client_run) -> None:
    outcome, _, _ = three_client_run
    sm = outcome.result.server_metrics
    run = sm[sm["phase"] == "run"]
    assert len(run) >= 1 and set(run["client"]) == {"all"}  # the server's figures belong to the whole step
    assert (run["ops_per_s"].dropna() > 0).any()
