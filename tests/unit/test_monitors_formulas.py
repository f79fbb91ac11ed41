"""Unit tests of the serverStatus formulas on hand-made mongod-shaped and captured FerretDB documents."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import pytest
from bson import json_util

from ycsb_runner.monitors import formulas
from ycsb_runner.monitors.formulas import ServerSample, make_sample, server_figures, server_time_series

DATA = Path(__file__).parents[1] / "data" / "serverstatus"


def load(name: str) -> dict:
    return json_util.loads((DATA / name).read_text())


def sample(doc: dict, t: float, own_before: int, **kw: float) -> ServerSample:
    return make_sample(doc, t=t, mono=t, own_commands_before=own_before, **kw)


@pytest.fixture
def mongod_samples() -> list[ServerSample]:
    # own commands: hostInfo (1) before s0; 5 polls between s0 and s1; 2 between s1 and s2
    return [
        sample(load("mongod-7.0-s0.json"), 100.0, 1),
        sample(load("mongod-7.0-s1.json"), 110.0, 6),
        sample(load("mongod-7.0-s2-no-wiredtiger.json"), 120.0, 8),
    ]


def test_extract_fields_keeps_what_the_formulas_need() -> None:
    fields = formulas.extract_server_fields(load("mongod-7.0-s1.json"))
    assert fields["opcounters.insert"] == 51000
    assert fields["opLatencies.writes.ops"] == 71510
    assert fields["extra_info.user_time_us"] == 62_000_000
    assert fields["wiredTiger.cache.maximum bytes configured"] == 8_000_000_000
    assert fields["metrics.commands.find.total"] == 32000
    assert fields["localTime"] == pytest.approx(1740823210.0)
    assert not any(k.startswith("opcountersRepl") for k in fields)  # not needed
    assert all(isinstance(v, float) for v in fields.values())


def test_host_num_cores() -> None:
    assert formulas.host_num_cores(load("mongod-7.0-hostinfo.json")) == 4
    assert formulas.host_num_cores(load("ferretdb-1.24.2-hostinfo.json")) >= 1
    assert formulas.host_num_cores(None) is None
    assert formulas.host_num_cores({"system": {}}) is None


def test_mongod_window_figures(mongod_samples: list[ServerSample]) -> None:
    f = server_figures(mongod_samples[:2], num_cores=4)
    assert f.source == "opcounters"  # mongod also has metrics.commands: opcounters win
    assert f.duration_s == pytest.approx(10.0)
    assert f.insert_per_s == pytest.approx(5000.0)
    assert f.query_per_s == pytest.approx(3000.0)
    assert f.update_per_s == pytest.approx(2000.0)
    assert f.delete_per_s == 0.0
    assert f.getmore_per_s == pytest.approx(10.0)
    assert f.own_commands == 5
    assert f.command_per_s == pytest.approx((1005 - 5) / 10)
    assert f.ops_per_s == pytest.approx((50000 + 30000 + 20000 + 100) / 10)
    assert f.reads_avg_rt_us == pytest.approx(250.0)
    assert f.writes_avg_rt_us == pytest.approx(600.0)
    assert f.commands_avg_rt_us == pytest.approx(40.0)
    assert f.cpu_source == "extra_info"
    assert f.cpu_core_pct == pytest.approx(150.0)  # 15 s CPU in 10 s
    assert f.cpu_pct == pytest.approx(37.5)  # over 4 cores
    assert f.connections_current == 52
    assert f.wt_cache_bytes == pytest.approx(1.1e9)  # mean of the two polls
    assert f.wt_cache_dirty_bytes == pytest.approx(20e6)
    assert f.wt_cache_max_bytes == 8e9
    assert f.unavailable == ()
    assert f.n_samples == 2 and f.n_intervals == 1


def test_window_over_three_samples_sums_intervals(mongod_samples: list[ServerSample]) -> None:
    f = server_figures(mongod_samples, num_cores=4)
    assert f.duration_s == pytest.approx(20.0)
    assert f.insert_per_s == pytest.approx(60000 / 20)
    assert f.own_commands == 7
    assert f.command_per_s == pytest.approx((1005 + 102 - 7) / 20)
    # writes: 70 000 x 600 µs + 10 000 x 500 µs
    assert f.writes_avg_rt_us == pytest.approx((70000 * 600 + 10000 * 500) / 80000)
    assert f.cpu_core_pct == pytest.approx(100 * (15 + 5) / 20)
    # cache only in s0, s1: the poll without wiredTiger does not count as 0
    assert f.wt_cache_bytes == pytest.approx(1.1e9)


def test_time_window_selection(mongod_samples: list[ServerSample]) -> None:
    f = server_figures(mongod_samples, num_cores=4, t_start=105.0, t_end=125.0)
    assert f.n_samples == 2
    assert f.insert_per_s == pytest.approx(1000.0)
    assert math.isnan(f.reads_avg_rt_us)  # no reads in that interval: n/a, but the field is reported
    assert "reads_avg_rt_us" not in f.unavailable
    assert any("no reads ops" in n for n in f.notes)
    assert f.wt_cache_bytes == 1.2e9  # only s1 of the window has the wiredTiger section
    g = server_figures(mongod_samples, num_cores=4, t_start=115.0)
    assert math.isnan(g.wt_cache_bytes) and "wt_cache_bytes" in g.unavailable


def test_missing_fields_are_nan_and_listed() -> None:
    s0, s1 = load("mongod-7.0-s0.json"), load("mongod-7.0-s1.json")
    for d in (s0, s1):
        del d["extra_info"], d["opLatencies"], d["connections"], d["wiredTiger"]
    f = server_figures([sample(s0, 0.0, 0), sample(s1, 10.0, 1)], num_cores=4)
    expected = {
        "reads_avg_rt_us",
        "writes_avg_rt_us",
        "commands_avg_rt_us",
        "cpu_pct",
        "cpu_core_pct",
        "connections_current",
        "wt_cache_bytes",
        "wt_cache_dirty_bytes",
        "wt_cache_max_bytes",
    }
    assert set(f.unavailable) == expected
    for name in expected:
        assert math.isnan(getattr(f, name)), name
    assert f.insert_per_s == pytest.approx(5000.0)
    assert f.as_dict()["unavailable"].split(";") == list(f.unavailable)


def test_psutil_cpu_when_extra_info_is_absent() -> None:
    s0, s1 = load("mongod-7.0-s0.json"), load("mongod-7.0-s1.json")
    for d in (s0, s1):
        del d["extra_info"]
    samples = [
        make_sample(s0, t=0.0, mono=50.0, own_commands_before=0, proc_cpu_s=10.0),
        make_sample(s1, t=10.0, mono=60.0, own_commands_before=1, proc_cpu_s=16.0),
    ]
    f = server_figures(samples, num_cores=2)
    assert f.cpu_source == "psutil"
    assert f.cpu_core_pct == pytest.approx(60.0)
    assert f.cpu_pct == pytest.approx(30.0)
    g = server_figures(samples, num_cores=None)
    assert math.isnan(g.cpu_pct) and "cpu_pct" in g.unavailable and g.cpu_core_pct == pytest.approx(60.0)


def test_restart_interval_is_skipped(mongod_samples: list[ServerSample]) -> None:
    restarted = copy.deepcopy(load("mongod-7.0-s0.json"))
    restarted["uptimeMillis"] = 5_000
    restarted["opcounters"] = dict.fromkeys(restarted["opcounters"], 7)
    after = copy.deepcopy(restarted)
    after["uptimeMillis"] = 15_000
    after["opcounters"]["insert"] = 7 + 2_000
    samples = [*mongod_samples[:2], sample(restarted, 130.0, 9), sample(after, 140.0, 10)]
    f = server_figures(samples, num_cores=4)
    assert f.n_intervals == 2
    assert any("skipped" in n for n in f.notes)
    assert f.duration_s == pytest.approx(20.0)
    assert f.insert_per_s == pytest.approx((50_000 + 2_000) / 20)


def test_single_sample_gives_no_rates(mongod_samples: list[ServerSample]) -> None:
    f = server_figures(mongod_samples[:1], num_cores=4)
    assert math.isnan(f.insert_per_s) and "insert_per_s" in f.unavailable
    assert f.connections_current == 5  # a level is still known
    assert any("1 sample" in n for n in f.notes)


def test_ferretdb_stand_in_counters_from_captured_documents() -> None:
    s0, s1 = load("ferretdb-1.24.2-s0.json"), load("ferretdb-1.24.2-s1.json")
    host = load("ferretdb-1.24.2-hostinfo.json")
    # own: the s0 poll is counted in s1 (FerretDB counts a command after replying)
    f = server_figures([sample(s0, 0.0, 0), sample(s1, 1.0, 1)], formulas.host_num_cores(host))
    assert f.source == "ferretdb.metrics.commands"
    dt = f.duration_s
    assert dt == pytest.approx((s1["uptimeMillis"] - s0["uptimeMillis"]) / 1000)
    assert f.insert_per_s * dt == pytest.approx(120)
    assert f.query_per_s * dt == pytest.approx(81)
    assert f.update_per_s * dt == pytest.approx(30)
    assert f.delete_per_s * dt == pytest.approx(10)
    assert f.getmore_per_s * dt == pytest.approx(2)
    assert f.command_per_s * dt == pytest.approx(3)  # the 3 pings; the serverStatus poll is taken out
    for name in ("reads_avg_rt_us", "writes_avg_rt_us", "cpu_pct", "connections_current", "wt_cache_bytes"):
        assert name in f.unavailable and math.isnan(getattr(f, name))


def test_time_series_rows_per_interval(mongod_samples: list[ServerSample]) -> None:
    ts = server_time_series(mongod_samples, num_cores=4)
    assert len(ts) == 2
    assert list(ts["insert_per_s"]) == pytest.approx([5000.0, 1000.0])
    assert list(ts["command_per_s"]) == pytest.approx([100.0, 10.0])
    assert ts["wt_cache_bytes"].iloc[0] == 1.2e9 and math.isnan(ts["wt_cache_bytes"].iloc[1])
    assert set(formulas.FIGURES) <= set(ts.columns)
    assert (ts["source"] == "opcounters").all()
    empty = server_time_series(mongod_samples[:1], num_cores=4)
    assert empty.empty and "cpu_pct" in empty.columns


def test_cpu_pct_uses_cores_available_to_the_process(mongod_samples: list[ServerSample]) -> None:
    """A mongod pinned to 2 of the host's 8 CPUs (cpuset / container). ``hostInfo.system`` reports both
    ``numCores`` and ``numCoresAvailableToProcess`` (MongoDB manual, hostInfo command page; server
    source ``src/mongo/db/commands/generic_servers.cpp``, HostInfoCommand)."""
    host = load("mongod-7.0-hostinfo.json")
    host["system"].update(numCores=8, numCoresAvailableToProcess=2)
    cores = formulas.host_num_cores(host)
    assert cores == 2
    f = server_figures(mongod_samples[:2], num_cores=cores)
    assert f.cpu_core_pct == pytest.approx(150.0)  # 15 s of CPU in 10 s
    assert f.cpu_pct == pytest.approx(75.0)  # of the 2 usable cores, not 18.75 % of 8
    del host["system"]["numCoresAvailableToProcess"]  # older servers: numCores is all there is
    assert formulas.host_num_cores(host) == 8


def test_mongos_command_rate_excludes_crud() -> None:
    """On mongos, ``opcounters.command`` also counts insert/update/delete (SERVER-71281); ``process`` is
    ``"mongos"`` in its serverStatus (MongoDB manual, serverStatus ``process`` field)."""
    s0, s1 = load("mongod-7.0-s0.json"), load("mongod-7.0-s1.json")
    for doc in (s0, s1):
        doc["process"] = "mongos"
    # mongos-shaped: the write commands are in opcounters.command as well (+50 000 +20 000 +0)
    s1["opcounters"]["command"] += 70_000
    figs = server_figures([sample(s0, 100.0, 1), sample(s1, 110.0, 6)], num_cores=4)
    assert figs.command_per_s == pytest.approx((1005 - 5) / 10)  # as on mongod: polls and CRUD out
    assert any("mongos" in n for n in figs.notes)
    plain = server_figures(
        [sample(load("mongod-7.0-s0.json"), 100.0, 1), sample(load("mongod-7.0-s1.json"), 110.0, 6)], 4
    )
    assert plain.command_per_s == pytest.approx(100.0)
    assert not any("mongos" in n for n in plain.notes)


def test_cores_say_where_they_come_from_and_fall_back_visibly() -> None:
    """``numCoresAvailableToProcess`` is on the manual's hostInfo page (-1 when its system call fails);
    FerretDB's hostInfo has ``numCores`` only (tests/data/serverstatus/ferretdb-1.24.2-hostinfo.json)."""
    from ycsb_runner.monitors.server_status import ServerSampler

    host = load("mongod-7.0-hostinfo.json")
    assert formulas.host_cores(host) == (4, formulas.CORES_AVAILABLE)
    host["system"]["numCoresAvailableToProcess"] = -1
    assert formulas.host_cores(host) == (4, formulas.CORES_ALL_UNREADABLE)
    ferret = load("ferretdb-1.24.2-hostinfo.json")
    assert formulas.host_cores(ferret) == (2, formulas.CORES_ALL_NOT_REPORTED)
    assert formulas.host_cores(None) == (None, "")
    remote = ServerSampler.__new__(ServerSampler)  # a remote server: no pid to check the affinity of
    remote.host_info, remote.pid = ferret, None
    warning = remote.cores_warning()
    assert warning is not None and "per 2 cores from hostInfo.system.numCores" in warning
    assert "does not report numCoresAvailableToProcess" in warning
    remote.host_info = load("mongod-7.0-hostinfo.json")
    assert remote.cores_warning() is None
