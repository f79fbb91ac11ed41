"""ServerSampler: logic against a scripted client, then real sampling of our own FerretDB instance."""

from __future__ import annotations

import math
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymongo
import pytest
from bson import json_util
from pymongo.errors import AutoReconnect, OperationFailure

from ycsb_runner.install.ferretdb import ferretdb_binary
from ycsb_runner.monitors.server_status import ServerSampler

DATA = Path(__file__).parents[1] / "data" / "serverstatus"
FERRETDB = ferretdb_binary()  # built by `make setup` (absent only where a real mongod is the embedded server)


# ---------------------------------------------------------------------------------------------------------
# scripted client: the sampler's projection, own-command counting and error handling


class _Admin:
    def __init__(self, owner: ScriptedClient) -> None:
        self.owner = owner

    def command(self, cmd: dict[str, Any]) -> dict[str, Any]:
        self.owner.sent.append(dict(cmd))
        if self.owner.fail_next:
            exc = self.owner.fail_next.pop(0)
            if exc is not None:
                raise exc
        if "hostInfo" in cmd:
            return json_util.loads((DATA / "mongod-7.0-hostinfo.json").read_text())
        doc = json_util.loads((DATA / "mongod-7.0-s1.json").read_text())
        if cmd.get("wiredTiger") == 0:
            doc.pop("wiredTiger")
        return doc


class ScriptedClient:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.fail_next: list[Exception | None] = []
        self.admin = _Admin(self)


def test_projection_wiredtiger_every_nth_and_own_commands() -> None:
    client = ScriptedClient()
    sampler = ServerSampler(client, interval_s=60, wt_every=3)  # type: ignore[arg-type]
    sampler.start()
    for _ in range(5):
        sampler.sample_now()
    sampler.stop()
    assert client.sent[0] == {"hostInfo": 1}
    polls = client.sent[1:]
    assert len(polls) == 7  # start + 5 + stop
    assert all(p["serverStatus"] == 1 and p["repl"] == 0 and p["locks"] == 0 for p in polls)
    with_wt = [i for i, p in enumerate(polls) if "wiredTiger" not in p]
    assert with_wt == [0, 3, 6]
    assert sampler.own_commands == 8
    samples = sampler.samples
    assert [s.own_commands_before for s in samples] == list(range(1, 8))
    has_cache = ["wiredTiger.cache.bytes currently in the cache" in s.fields for s in samples]
    assert has_cache == [i in with_wt for i in range(7)]
    assert sampler.num_cores == 4
    assert sampler.errors == []


def test_errors_are_recorded_not_raised_and_counted_right() -> None:
    client = ScriptedClient()
    sampler = ServerSampler(client, interval_s=60)  # type: ignore[arg-type]
    client.fail_next = [
        OperationFailure("not authorized on admin to execute command { hostInfo: 1 }"),
        None,
    ]
    sampler.start()
    client.fail_next = [AutoReconnect("connection to mongodb://app:s3cret@db:27017 closed")]
    assert sampler.sample_now() is None
    assert sampler.sample_now() is not None
    sampler.stop()
    errors = sampler.errors
    assert [e.message.split(":")[0] for e in errors] == ["hostInfo", "serverStatus"]
    assert "s3cret" not in errors[1].message and "app:***@" in errors[1].message
    # the refused hostInfo reached the server (counts); the dropped connection did not
    assert sampler.own_commands == 1 + 3
    assert len(sampler.samples) == 3
    assert sampler.num_cores is None  # no hostInfo, no local pid


# ---------------------------------------------------------------------------------------------------------
# real FerretDB


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_ferretdb(port: int, data: Path) -> subprocess.Popen:
    data.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [str(FERRETDB), "-listen-addr", f"127.0.0.1:{port}", "-sqlite-url", f"file:{data}/"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = pymongo.MongoClient(f"mongodb://127.0.0.1:{port}", serverSelectionTimeoutMS=200)
    deadline = time.monotonic() + 15
    try:
        while True:
            try:
                client.admin.command("ping")
                return proc
            except pymongo.errors.PyMongoError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    proc.kill()
                    pytest.fail("FerretDB did not start")
                time.sleep(0.1)
    finally:
        client.close()


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture
def ferretdb(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen, Path]]:
    if not FERRETDB.exists():
        if shutil.which("mongod"):
            pytest.skip("the embedded server is a real mongod here: no FerretDB was built")
        pytest.fail(f"FerretDB not built at {FERRETDB}: run `make setup`")
    port = _free_port()
    proc = _start_ferretdb(port, tmp_path / "data")
    try:
        yield f"mongodb://127.0.0.1:{port}", proc, tmp_path / "data"
    finally:
        _stop(proc)


def _client(url: str) -> pymongo.MongoClient:
    # long heartbeat: no driver hello falls inside the measured window
    return pymongo.MongoClient(url, serverSelectionTimeoutMS=2000, heartbeatFrequencyMS=60_000)


def test_ferretdb_counters_match_the_commands_sent(ferretdb: tuple[str, subprocess.Popen, Path]) -> None:
    url, proc, _ = ferretdb
    client, sampler_client = _client(url), _client(url)  # own client: no extra handshakes in the window
    col = client.ycsb.usertable
    col.insert_one({"_id": "warm"})
    with ServerSampler(sampler_client, interval_s=0.1, pid=proc.pid) as sampler:
        s0 = sampler.sample_now()
        for i in range(200):
            col.insert_one({"_id": f"user{i}", "field0": "x" * 100})
        for i in range(150):
            col.find_one({"_id": f"user{i}"})
        for i in range(40):
            col.update_one({"_id": f"user{i}"}, {"$set": {"field0": "y"}})
        for i in range(7):
            col.delete_one({"_id": f"user{i}"})
        for _ in range(4):
            client.admin.command("ping")
        s1 = sampler.sample_now()
        time.sleep(0.25)
    assert s0 is not None and s1 is not None
    f = sampler.figures(s0.t, s1.t)
    client.close()
    sampler_client.close()
    assert sampler.errors == []
    assert f.source == "ferretdb.metrics.commands"
    polls_in_window = s1.own_commands_before - s0.own_commands_before
    assert polls_in_window >= 1 and f.own_commands == polls_in_window
    served = (
        s1.fields["metrics.commands.serverStatus.total"] - s0.fields["metrics.commands.serverStatus.total"]
    )
    assert served == polls_in_window  # the sampler counts exactly what the server saw from it
    dt = f.duration_s
    assert f.insert_per_s * dt == pytest.approx(200)
    assert f.query_per_s * dt == pytest.approx(150)
    assert f.update_per_s * dt == pytest.approx(40)
    assert f.delete_per_s * dt == pytest.approx(7)
    deltas = {k: s1.fields[k] - s0.fields.get(k, 0) for k in s1.fields if k.startswith("metrics.")}
    # our pings plus any driver handshake/heartbeat (a new pooled connection says "ismaster"); the
    # sampler's own polls are taken out
    handshakes = sum(deltas.get(f"metrics.commands.{c}.total", 0) for c in ("hello", "ismaster", "isMaster"))
    assert handshakes <= 2, deltas
    assert f.command_per_s * dt == pytest.approx(4 + handshakes), f"own={polls_in_window} deltas={deltas}"
    assert f.ops_per_s * dt == pytest.approx(397)
    assert f.cpu_source == "psutil" and f.cpu_core_pct > 0 and f.cpu_pct > 0
    assert f.cpu_pct == pytest.approx(f.cpu_core_pct / sampler.num_cores)
    for name in ("reads_avg_rt_us", "writes_avg_rt_us", "commands_avg_rt_us", "connections_current"):
        assert math.isnan(getattr(f, name)) and name in f.unavailable
    assert "wt_cache_bytes" in f.unavailable
    ts = sampler.time_series()
    assert len(ts) >= 2 and (ts["source"] == "ferretdb.metrics.commands").all()
    assert ts["insert_per_s"].mul(ts["dt_s"]).sum() == pytest.approx(200)  # the warm-up was before start()
    print(
        f"\nFerretDB window {dt:.3f}s: {f.ops_per_s:.0f} ops/s, cpu {f.cpu_core_pct:.0f}% of a core, "
        f"{len(sampler.samples)} samples, unavailable={list(f.unavailable)}"
    )


def test_without_pid_cpu_is_unavailable(ferretdb: tuple[str, subprocess.Popen, Path]) -> None:
    url, _, _ = ferretdb
    client = _client(url)
    with ServerSampler(client, interval_s=0.1) as sampler:
        time.sleep(0.3)
    client.close()
    f = sampler.figures()
    assert f.cpu_source == "" and {"cpu_pct", "cpu_core_pct"} <= set(f.unavailable)
    assert math.isnan(f.cpu_pct)
    assert f.insert_per_s == 0.0  # reported (no inserts happened), not unavailable


def test_sampler_survives_a_server_restart(ferretdb: tuple[str, subprocess.Popen, Path]) -> None:
    url, proc, data = ferretdb
    port = int(url.rsplit(":", 1)[1])
    client = pymongo.MongoClient(url, serverSelectionTimeoutMS=150, connectTimeoutMS=150)
    sampler = ServerSampler(client, interval_s=0.1).start()
    try:
        client.ycsb.t.insert_many([{"i": i} for i in range(10)])
        time.sleep(0.3)
        _stop(proc)
        time.sleep(0.6)
        proc2 = _start_ferretdb(port, data)
        try:
            client.ycsb.t.insert_one({"i": 99})
            time.sleep(0.5)
        finally:
            sampler.stop()
            _stop(proc2)
    finally:
        sampler.stop()
        client.close()
    assert any(e.message.startswith("serverStatus") for e in sampler.errors)
    pids = {s.fields["pid"] for s in sampler.samples}
    assert len(pids) == 2  # samples from both server processes
    f = sampler.figures()
    assert any("skipped" in n for n in f.notes)
    assert f.n_intervals == len(sampler.samples) - 2
