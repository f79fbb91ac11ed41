"""``findmax`` on the embedded server, checked against an independent sweep of fixed targets.

The search runs first (workload C, 4 threads, an average-latency bound); then the test runs plain
``bench`` steps at fixed ``-target`` rates around what it found and judges each from its own run folder
(steps.csv and the step's READ.hdr), not with the search's code: a target meets the bound when it achieved
97 % of it and the average latency after the warm-up is within the bound. The found rate must lie within
one resolution step of [the highest swept target that met the bound, the next target of the grid], widened
by three grid steps (12 % each) either way for the drift of a busy shared machine between the search and
the sweep (a minute apart); whether the strict relation held is printed.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from hdrh.histogram import HdrHistogram
from nights import ahead_of_other_workers

from ycsb_runner.bench import BenchOptions, run_bench, run_findmax
from ycsb_runner.findmax.search import FindmaxOptions, make_bound
from ycsb_runner.install.embedded import ServerInfo
from ycsb_runner.parse.hdr import read_hdr_log

# The search and its sweep compare the server's speed a minute apart: marked `alone` (`make test` runs them
# with no worker beside them). The probe at one op a second per thread asserts YCSB's pacing and how a probe
# is measured, not a speed (the server answers in milliseconds, busy or not, and YCSB's throttle catches up a
# late operation): it runs in the main session, beside the other workers.
pytestmark = [pytest.mark.integration]

SUITE = str(Path(__file__).parents[1] / "suites" / "findmax.toml")
# The bound: the average over the steady-state window. At 100-300 ops/s the server answers in 5-10 ms on
# average (20 ms while the machine is busy), and threads / throughput once saturated: 30 ms is met until
# the queue builds, or the probe falls short of its target first (4 threads at 300 ops/s: 13 ms). A p99
# bound is not: one stall of the shared machine put p99 at 245 ms at 93 ops/s.
AVG = "30ms"
LIMIT_US = 30_000.0
PROBE_S = 4
RESOLUTION = 5.0
GRID = 1.12  # the sweep's step: about two resolution steps
# The search's first probe: the middle (geometrically) of the capacities this machine showed, 84 ops/s
# beside CPU burners to about 3000 alone (Dec 2026). From 100 a search of a 3000 ops/s server took 10
# probes of its 12 (5 doublings before its first failure); from 1000 any capacity from 60 to 8000 ops/s is
# bracketed within 4 probes, and the search ends within 9.
START = 1000
# The sweep's targets: found x GRID**k, from the top down until one meets the bound. One step above the found
# rate is the highest that tells anything: the check below fails only when no target from three grid steps
# under the found rate up met the bound (a higher passing target could never fail it; the strict relation,
# printed, is false as soon as found x GRID passes).
SWEEP = (-3, -2, -1, 0, 1)


def _sweep_point(mongo_url: str, results: Path, target: int) -> tuple[bool, float, float]:
    """(met the bound, achieved ops/s, average latency µs) of one fixed-target bench, read from its folder."""
    out = run_bench(
        BenchOptions(
            suite=SUITE,
            url=mongo_url,
            results=results,
            overrides=[f"target={target}", f"maxexecutiontime={PROBE_S}", f"warmup_s={0.2 * PROBE_S:g}"],
            monitors=False,
            report=False,
            history=False,
            lock=False,
            canaries=False,  # (the search measures them)
        ),
        log=lambda _m: None,
    )
    steps = pd.read_csv(out.run_dir / "steps.csv")
    run = steps[steps["phase"] == "run"].iloc[0]
    assert run["status"] == "completed", run["reasons"]
    # READ.hdr after the warm-up: the average latency of every interval, the achieved rate of the whole
    # 1-s intervals (YCSB's closing interval, a fraction of a second around its shutdown, is left out)
    ivs = read_hdr_log(out.run_dir / "steps" / run["step"] / "hdr" / "READ.hdr").intervals
    first = min(iv.start_s for iv in ivs)
    after = [iv for iv in ivs if iv.start_s >= first + 0.2 * PROBE_S - 1e-9]
    one = HdrHistogram(1, 3_600_000_000, 3)
    for iv in after:
        for i in iv.counts.nonzero()[0]:
            one.record_value(int(iv.layout.lowest_values(i.reshape(1))[0]), int(iv.counts[i]))
    whole = [iv for iv in after if iv.length_s >= 0.9]
    achieved = sum(iv.total for iv in whole) / sum(iv.length_s for iv in whole)
    avg = float(one.get_mean_value())
    return achieved >= 0.97 * target and avg <= LIMIT_US, achieved, avg


@pytest.mark.alone
def test_findmax_agrees_with_a_sweep_of_fixed_targets(server: ServerInfo, tmp_path: Path) -> None:
    # the search and the sweep measure the server's capacity: with no other test worker beside them (the
    # `alone` mark) and ahead of other processes (as the nightly test runs its nights); beside two CPU
    # burners and three workers no rate met the bound at all (probes 100/50/25/16 achieved 84/50/22/13
    # ops/s, 50 at 40 ms)
    with ahead_of_other_workers(server.pid):
        _search_and_sweep(server.url, tmp_path)


def _search(mongo_url: str, results: Path) -> tuple[Path, dict]:
    outcome = run_findmax(
        BenchOptions(suite=SUITE, url=mongo_url, results=results, monitors=False, lock=False),
        FindmaxOptions(
            mix=None, bound=make_bound(avg=AVG), probe_s=PROBE_S, resolution_pct=RESOLUTION, start=START
        ),
        log=lambda _m: None,
    )
    search = json.loads((outcome.run_dir / "manifest.json").read_text())["findmax"]
    print(
        "findmax probes:",
        [(p["target"], round(p["throughput_ops_s"]), round(p["latency_us"])) for p in search["probes"]],
    )
    return outcome.run_dir, search


def _search_and_sweep(mongo_url: str, tmp_path: Path) -> None:
    run_dir, search = _search(mongo_url, tmp_path)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    found = search["max_ops_s"]
    probes = search["probes"]
    assert found is not None and search["converged"], search
    # one run step per probe, each at its own -target, judged on its steady-state window
    runs = [s for s in manifest["steps"] if s["phase"] == "run"]
    assert [s["step"] for s in runs] == [p["step"] for p in probes]
    for s, p in zip(runs, probes, strict=True):
        assert s["argv"][s["argv"].index("-target") + 1] == str(p["target"])
        assert (
            s["figures"]["warmup_s"] == pytest.approx(0.2 * PROBE_S)
            and s["figures"]["findmax_passed"] is p["passed"]
        )
    assert found in [p["target"] for p in probes if p["passed"]]
    assert search["lowest_failing_ops_s"] <= found * (1 + RESOLUTION / 100) + 1
    # the history has the found rate as its series; the report its curve
    with sqlite3.connect(tmp_path / "history.sqlite") as con:
        rows = con.execute("SELECT phase, metric, value FROM metrics WHERE phase = 'findmax'").fetchall()
    assert rows == [("findmax", "findmax_ops_s", float(found))]
    assert (run_dir / "report-figures" / "findmax.png").stat().st_size > 0
    assert "Max throughput: max" in (run_dir / "report.html").read_text()

    # from the highest target down, until one meets the bound (lower, while none did): what is judged below
    # is the highest swept target that met it, which the targets under it cannot change
    sweep = {}
    for k in (*sorted(SWEEP, reverse=True), *range(min(SWEEP) - 1, min(SWEEP) - 4, -1)):
        t = max(1, round(found * GRID**k))
        if t not in sweep:  # (small rates round to one target twice)
            sweep[t] = _sweep_point(mongo_url, tmp_path / "sweep", t)
        if sweep[t][0]:
            break
    print("sweep:", {t: (ok, round(x), round(avg)) for t, (ok, x, avg) in sorted(sweep.items())})
    passing = [t for t, (ok, _, _) in sweep.items() if ok]
    assert passing, f"no swept target met the bound: {sweep}"
    best = max(passing)  # the highest swept target that met the bound
    step = 1 + RESOLUTION / 100
    strict = best / step <= found <= best * GRID * step  # the acceptance: within a step of [best, next)
    print(f"found {found}, highest passing swept target {best}: within one resolution step: {strict}")
    # the margin the machine allows: three grid steps (12 % each) either way beyond the resolution step. Other
    # jobs on the 2 shared cores moved the server's capacity by up to 1.4x between the search and the sweep
    # (a minute apart): found 135 then every swept target up to 190 passed; found 114 then 160 passed; beside
    # two CPU burners, found 183 then nothing from 130 up passed (saturated at 104-175 ops/s, 22-38 ms). So
    # when the sweep disagrees, the search runs again right after it and the sweep is judged against the
    # search nearest in time.
    near = lambda rate: best / (GRID**3 * step) <= rate <= best * GRID**3 * step  # noqa: E731
    if not near(found):
        _, again = _search(mongo_url, tmp_path / "again")
        print(f"the search again, after the sweep: found {again['max_ops_s']}")
        assert again["max_ops_s"] is not None and near(again["max_ops_s"]), (found, again["max_ops_s"], sweep)


def test_a_probe_at_one_op_a_second_per_thread_meets_its_target(server: ServerInfo, tmp_path: Path) -> None:
    """16 threads at -target 16: each thread sleeps a second between its reads, and after the stop YCSB
    waits for those sleeps to end (its closing status line and HDR interval, about a second long, hold no
    operation). The server answers in milliseconds, so the probe meets its target: measured up to the
    closing interval it achieved 13 ops/s (81 %) and failed, which sent searches at 16 threads on a slow
    server down to rates where no probe could pass."""
    outcome = run_findmax(
        BenchOptions(
            suite=SUITE,
            url=server.url,
            results=tmp_path,
            monitors=False,
            report=False,
            lock=False,
            canaries=False,
        ),
        FindmaxOptions(
            mix=None, bound=make_bound(avg="1s"), threads=16, probe_s=PROBE_S, max_probes=2, start=16
        ),
        log=lambda _m: None,
    )
    probe, *_ = json.loads((outcome.run_dir / "manifest.json").read_text())["findmax"]["probes"]
    assert probe["target"] == 16 and probe["latency_us"] < 1e6, probe
    assert 0.97 * 16 <= probe["throughput_ops_s"] <= 1.1 * 16 and probe["passed"], probe
