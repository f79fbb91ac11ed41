"""Several load generators for real: sshd instances on loopback ports (tools/loopback_sshd.py), all driving
the embedded server through ``ssh``, plus this machine as ``local``."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from hdrh.histogram import HdrHistogram
from loopback_sshd import SSHD, SshdError, loopback_sshd  # tools/ (conftest.py)
from pymongo import MongoClient

from ycsb_runner.bench import BenchOptions, run_bench
from ycsb_runner.errors import RunFailed, UserError
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
    results = tmp_path_factory.mktemp("results")
    started = time.time()
    with ArgvWatcher() as watcher:
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
    assert step["verdict"] == "completed", step["reasons"]
    return step


def test_multi_client_load_holds_exactly_recordcount(three_client_run, mongo_url: str) -> None:
    outcome, _, _ = three_client_run
    steps = outcome.result.steps
    load = steps[steps["phase"] == "load"].iloc[0]
    assert load["verdict"] == "completed", load["reasons"]
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


def _intervals(run_dir: Path, step: str, host: str, offset: float) -> list[tuple[float, float, object]]:
    """(start, end, interval) on the runner's clock of a client's READ and UPDATE logs."""
    out = []
    for section in ("READ", "UPDATE"):
        log = read_hdr_log(run_dir / "steps" / step / "clients" / host / "hdr" / f"{section}.hdr")
        for iv in log.intervals:
            start = (log.start_time_s or 0.0) + iv.start_s - offset
            out.append((start, start + iv.length_s, iv, section))
    return out


def test_common_window_of_three_clients_one_started_5s_late(
    ssh_hosts: Path, mongo_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """h3's YCSB starts 5 s after the go (as a slow JVM start would). The step's throughput must be that
    of the window where all three ran, checked here from the HDR logs alone, and its p99 that of one
    histogram of the same intervals; the old sum(ops) / max(runtime) figure is kept and differs."""
    from ycsb_runner.execute import multi

    real = multi.client_script
    made: list[str] = []

    def third_one_late(workdir: str, argv: list[str]) -> str:
        made.append(workdir)
        script = real(workdir, argv)
        if len(made) % 3 == 0:  # sessions are started in order h1, h2, h3
            go = "read go || { rm -f connection.properties; exit 98; }"
            assert go in script
            script = script.replace(go, go + "\nsleep 5", 1)
        return script

    monkeypatch.setattr(multi, "client_script", third_one_late)
    outcome = run_bench(
        BenchOptions(
            suite=SUITE,
            url=mongo_url,
            results=tmp_path,
            clients=list(HOSTS),
            overrides=["run.operationcount=100000000", "maxexecutiontime=15"],
            report=False,
            canaries=False,  # (three_client_run measures them over ssh)
        ),
        log=lambda _m: None,
    )
    step = completed_run_step(outcome.run_dir)
    fig = step["figures"]
    offsets = {c["client"]: c["clock_offset_s"] for c in fig["clients"]}
    assert all(abs(o) < 0.5 for o in offsets.values())  # loopback: one clock, measured as such
    assert all(0 < c["clock_rtt_s"] < 1 for c in fig["clients"])
    spans, intervals = {}, []
    for h in HOSTS:
        mine = _intervals(outcome.run_dir, step["step"], h, offsets[h])
        spans[h] = (min(a for a, *_ in mine), max(b for _, b, *_ in mine))
        intervals += mine
    assert 2.5 <= spans["h3"][0] - spans["h1"][0] <= 12  # h3 really started late (JVM starts vary)
    w0, w1 = max(a for a, _ in spans.values()), min(b for _, b in spans.values())
    inside = [(iv, sec) for a, b, iv, sec in intervals if w0 <= (a + b) / 2 <= w1]
    independent = sum(iv.total for iv, _ in inside) / (w1 - w0)
    ours, old = step["throughput_ops_s"], fig["throughput_sum_over_max_runtime_ops_s"]
    union = fig["throughput_union_ops_s"]
    print(
        f"\ncommon window {w1 - w0:.1f}s (ours {fig['common_window_s']:.1f}s): {ours:.1f} ops/s, independent "
        f"{independent:.1f}; union {fig['union_s']:.1f}s {union:.1f} ops/s; old sum/max {old:.1f} ops/s; "
        f"offsets {offsets}"
    )
    assert abs(ours - independent) <= 0.05 * independent
    # (the old sum/max figure is printed, not asserted: with some start and end times it equals the
    # common-window rate by chance, 86.5 vs 86.3 ops/s in a fresh clone)
    ops = outcome.result.operations
    merged = ops[(ops["phase"] == "run") & (ops["client"] == "all")].set_index("section")
    for section in ("READ", "UPDATE"):
        one = HdrHistogram(1, 3_600_000_000, 3)
        for iv, sec in inside:
            if sec == section:
                for i in iv.counts.nonzero()[0]:
                    one.record_value(int(iv.layout.lowest_values(i.reshape(1))[0]), int(iv.counts[i]))
        assert merged.at[section, "p99_us"] == one.get_value_at_percentile(99), section
        assert merged.at[section, "union_operations"] > one.get_total_count()  # the union is kept beside


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


def test_two_clients_local_and_ssh(ssh_hosts: Path, mongo_url: str, tmp_path: Path) -> None:
    outcome = run_bench(
        BenchOptions(
            suite=SUITE,
            url=mongo_url,
            results=tmp_path,
            clients=["local", "h2"],
            overrides=["recordcount=201", "operationcount=301"],
            report=True,
            canaries=False,  # (four BasicDB JVMs: three_client_run measures them over ssh)
        ),
        log=lambda _m: None,
    )
    with MongoClient(mongo_url) as c:
        assert c.ycsb.usertable.count_documents({}) == 201
    ops = outcome.result.operations
    ins = ops[(ops["phase"] == "load") & (ops["section"] == "INSERT")].set_index("client")
    assert int(ins.at["local", "operations"]) == 101 and int(ins.at["h2", "operations"]) == 100
    run = ops[(ops["phase"] == "run") & ops["section"].isin(["READ", "UPDATE"])]
    assert run.groupby("client")["operations"].sum().to_dict() == {"all": 301, "local": 151, "h2": 150}
    assert outcome.report is not None and outcome.report.stat().st_size > 0  # the report reads it too


def test_killing_one_clients_ycsb_fails_the_step_and_stops_the_others(
    ssh_hosts: Path, mongo_url: str, tmp_path: Path
) -> None:
    killed: list[int] = []
    ours: set[int] = set()

    def kill_one_run_phase() -> None:
        deadline = time.time() + 120
        while time.time() < deadline and not killed:
            javas = [
                p
                for p in own_processes()
                if "site.ycsb.Client" in " ".join(argv := argv_of(p))
                and "-t" in argv
                and "ycsb-runner-client-" in " ".join(argv)
            ]
            if len(javas) == 3 and time.time() - min(p.create_time() for p in javas) > 4:
                for p in javas:  # this step's clients and their shells (not another test's, beside it)
                    ours.update([p.pid, *[q.pid for q in p.parents()[:1]]])
                os.kill(javas[0].pid, signal.SIGKILL)
                killed.append(javas[0].pid)
                killed_at.append(time.time())
                return
            time.sleep(0.2)

    killed_at: list[float] = []
    killer = threading.Thread(target=kill_one_run_phase, daemon=True)
    killer.start()
    with pytest.raises(RunFailed) as err:
        run_bench(
            BenchOptions(
                suite=SUITE,
                url=mongo_url,
                results=tmp_path,
                clients=list(HOSTS),
                overrides=["maxexecutiontime=120", "run.operationcount=100000000", "target=60"],
                report=False,
                canaries=False,
            ),
            log=lambda _m: None,
        )
    after_kill = time.time() - killed_at[0] if killed_at else math.inf
    killer.join()
    assert killed, "no run-phase YCSB was seen to kill"
    # the others were stopped, not waited for: they had about 115 s of their 120 s left (a relation with a
    # wide margin, not a timing: this machine's load made the old 40 s bound fail at 46 s)
    assert after_kill < 60, after_kill
    run_dir = next(tmp_path.iterdir())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "failed"
    step = manifest["steps"][-1]
    assert step["phase"] == "run" and step["verdict"] == "failed"
    victim = [c for c in step["figures"]["clients"] if c["exit_code"] == 137]
    assert len(victim) == 1
    name = victim[0]["client"]
    assert re.search(rf"client {name}: YCSB ended by signal 9", " ".join(step["reasons"]))
    assert f"client {name}" in str(err.value)
    others = [c for c in step["figures"]["clients"] if c["client"] != name]
    assert all(c["stopped"] for c in others)
    for c in step["figures"]["clients"]:  # every client's logs kept, the stopped ones' status lines too
        d = run_dir / "steps" / step["step"] / "clients" / c["client"]
        assert "operations;" in (d / "stderr.txt").read_text(), c["client"]
    assert ours and not [pid for pid in ours if "ycsb-runner-client-" in " ".join(argv_of(pid))]


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


def test_findmax_splits_each_probes_target_across_the_clients(
    ssh_hosts: Path, mongo_url: str, tmp_path: Path
) -> None:
    from ycsb_runner.bench import run_findmax
    from ycsb_runner.findmax.search import FindmaxOptions, make_bound

    outcome = run_findmax(
        BenchOptions(
            suite=SUITE,
            url=mongo_url,
            results=tmp_path,
            clients=["local", "h2"],
            report=False,
            canaries=False,
        ),
        FindmaxOptions(mix=None, bound=make_bound(avg="10s"), probe_s=4, max_probes=2, start=41),
        log=lambda _m: None,
    )
    manifest = json.loads((outcome.run_dir / "manifest.json").read_text())
    probes = manifest["findmax"]["probes"]
    assert [p["target"] for p in probes][:1] == [41] and len(probes) == 2
    runs = {s["step"]: s for s in manifest["steps"] if s["phase"] == "run" and s["client"] == "all"}
    for p in probes:
        shares = {c["client"]: c["target"] for c in runs[p["step"]]["figures"]["clients"]}
        assert sum(shares.values()) == p["target"] and set(shares) == {"local", "h2"}
        assert abs(shares["local"] - shares["h2"]) <= 1
        # both clients' rates over their full intervals: paced by the split target, not by the whole one
        # (which would be 2x). Not within 10 % of it: YCSB catches up after a stall, so beside two CPU
        # burners full intervals ran at 1.31x (53.8 ops/s at 41), and 13 % under the common-window rate.
        assert 0 < p["throughput_ops_s"] <= 1.5 * p["target"], p
        assert p["throughput_ops_s"] >= 0.97 * p["target"] or not p["passed"]
