"""The embedded server as FerretDB ships it and as set-up builds it, side by side in one run (a script that
prints figures, not a test).

Set-up builds FerretDB v1.24.2 with its ``_id`` lookups through its own ``_id`` index
(``ycsb_runner/install/ferretdb.py``: ``ID_LOOKUP_PATCH``). This script builds the launcher both ways (the
one as shipped into ``.cache/bin/ferretdb-embedded-as-shipped``), starts one server of each, and prints:

* ``find_one`` by ``_id`` at each ``--sizes`` (documents of 10 fields x 100 B, like YCSB's): median and p99
  in ms over ``--lookups`` random existing keys (fewer when a server takes longer than
  ``--lookup-budget-s`` for them; the count is printed), the two servers taking turns lookup by lookup;
* that both servers answer the same: scans of the binding's shape (``_id >= key``, sorted, limited to 1-100
  like workload E's uniform scan length) return the same ``_id`` lists (records per scan printed), and a
  query on a secondary field returns the same documents;
* YCSB through ``run_bench`` (the tool's own command lines, the project's binding): the load of
  ``--records`` records (YCSB's RunTime) and workloads A, C and E (zipfian; E: 95 % scans of up to 100
  records, 5 % inserts) for ``--seconds`` each at ``--threads`` threads, on each server in turn;
* the ratios (now / as shipped for throughput, as shipped / now for times).

Usage: .venv/bin/python bench/embedded_server_bench.py [--sizes 1000,10000,100000] [--lookups 200]
       [--lookup-budget-s 30] [--records 10000] [--seconds 30] [--threads 4]

Figures of 4 Dec 2026 are in the closing note of issue 37 and in the README (the embedded server).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from pymongo import MongoClient

from ycsb_runner.bench import BenchOptions, run_bench
from ycsb_runner.install.embedded import EmbeddedServer
from ycsb_runner.install.ferretdb import ensure_ferretdb
from ycsb_runner.runs.model import RunResult

SERVERS = ("as shipped", "now")
COLLECTION = "lookups"

SUITE = """
name = "embedded-server-bench"
description = "issue 37: YCSB A, C and E on the embedded server"
estimated_throughput = 100
[dataset]
recordcount = {records}
load_threads = {threads}
reload = "never"
[run]
threads = [{threads}]
operationcount = 100000000
maxexecutiontime = {seconds}
status_interval = 1
[mongodb]
driver_defaults = "stock"
[[mix]]
name = "a-read50-update50"
read = 0.5
update = 0.5
requestdistribution = "zipfian"
[[mix]]
name = "c-read100"
read = 1.0
requestdistribution = "zipfian"
[[mix]]
name = "e-scan95-insert5"
scan = 0.95
insert = 0.05
requestdistribution = "zipfian"
properties = {{ maxscanlength = "100", scanlengthdistribution = "uniform" }}
"""


def _documents(n: int, rng: random.Random):
    for i in range(n):
        doc = {f"field{f}": rng.randbytes(100) for f in range(10)}
        yield {"_id": f"user{i:012d}", "group": i % 100, **doc}


def _fill(clients: dict[str, MongoClient], n: int, seed: int) -> list[str]:
    """The same *n* documents in every server's lookup collection; their keys."""
    for client in clients.values():
        coll = client.ycsb[COLLECTION]
        coll.drop()
        rng = random.Random(seed)
        batch: list[dict] = []
        for doc in _documents(n, rng):
            batch.append(doc)
            if len(batch) == 1000:
                coll.insert_many(batch, ordered=False)
                batch = []
        if batch:
            coll.insert_many(batch, ordered=False)
        assert coll.estimated_document_count() == n
    return [f"user{i:012d}" for i in range(n)]


def _lookups(clients: dict[str, MongoClient], keys: list[str], args: argparse.Namespace) -> dict[str, list]:
    """Milliseconds per ``find_one`` by ``_id``, the servers taking turns; a server stops after
    ``--lookup-budget-s`` (at least 10 lookups)."""
    rng = random.Random(7)
    wanted = [rng.choice(keys) for _ in range(args.lookups)]
    times: dict[str, list[float]] = {name: [] for name in clients}
    spent = dict.fromkeys(clients, 0.0)
    for key in wanted:
        for name, client in clients.items():
            if spent[name] > args.lookup_budget_s and len(times[name]) >= 10:
                continue
            t0 = time.perf_counter()
            doc = client.ycsb[COLLECTION].find_one({"_id": key})
            dt = time.perf_counter() - t0
            assert doc is not None and doc["_id"] == key
            times[name].append(dt * 1000)
            spent[name] += dt
    return times


def _same_answers(clients: dict[str, MongoClient], keys: list[str]) -> tuple[float, int]:
    """Scans of the binding's shape and a secondary-field query give the same documents on every server;
    (mean records per scan, documents the secondary query returned)."""
    rng = random.Random(11)
    lengths = []
    for _ in range(200):
        start, limit = rng.choice(keys), rng.randint(1, 100)
        got = [
            [d["_id"] for d in c.ycsb[COLLECTION].find({"_id": {"$gte": start}}).sort("_id", 1).limit(limit)]
            for c in clients.values()
        ]
        assert all(g == got[0] for g in got), f"scan from {start} limit {limit} differs between servers"
        lengths.append(len(got[0]))
    by_group = [
        sorted(d["_id"] for d in c.ycsb[COLLECTION].find({"group": 7}, {"_id": 1})) for c in clients.values()
    ]
    assert all(g == by_group[0] for g in by_group), "a query on a secondary field differs between servers"
    return statistics.fmean(lengths), len(by_group[0])


def _ycsb(url: str, args: argparse.Namespace, folder: Path) -> dict[str, float]:
    suite = folder / "embedded-server-bench.toml"
    suite.write_text(SUITE.format(records=args.records, threads=args.threads, seconds=args.seconds))
    outcome = run_bench(
        BenchOptions(
            suite=str(suite),
            url=url,
            results=folder / "results",
            report=False,
            history=False,
            lock=False,
            monitors=False,
        ),
        log=lambda _m: None,
    )
    run = RunResult.load(outcome.run_dir)
    steps = run.steps.set_index("mix")
    assert set(run.steps["status"]) == {"completed"}, run.steps[["step", "status", "reasons"]]
    ops = run.operations
    scans = ops[(ops["mix"] == "e-scan95-insert5") & (ops["operation"] == "SCAN")]
    return {
        "load_s": float(steps.loc["load", "runtime_ms"]) / 1000,
        "A": float(steps.loc["a-read50-update50", "throughput_ops_s"]),
        "C": float(steps.loc["c-read100", "throughput_ops_s"]),
        "E": float(steps.loc["e-scan95-insert5", "throughput_ops_s"]),
        "E scans": float(scans["operations"].sum()),
    }


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values):8.2f} / {np.percentile(values, 99):8.2f} (n={len(values)})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--lookups", type=int, default=200)
    ap.add_argument("--lookup-budget-s", type=float, default=30.0)
    ap.add_argument("--records", type=int, default=10000)
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--threads", type=int, default=4)
    args = ap.parse_args()
    binaries = {"as shipped": ensure_ferretdb(patched=False), "now": ensure_ferretdb(patched=True)}
    print(f"embedded server bench, {time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.2f}")
    servers = {name: EmbeddedServer(log=lambda _m: None, ferretdb=binaries[name]) for name in SERVERS}
    infos = {name: server.__enter__() for name, server in servers.items()}
    try:
        clients = {name: MongoClient(info.url) for name, info in infos.items()}
        print(f"\nfind_one by _id, ms: median / p99 ({args.lookups} random keys, servers taking turns)")
        print(f"{'documents':>10}  {'as shipped':>32}  {'now':>32}  {'median ratio':>12}")
        per_scan = group = None
        for size in (int(s) for s in args.sizes.split(",")):
            keys = _fill(clients, size, seed=size)
            times = _lookups(clients, keys, args)
            ratio = statistics.median(times["as shipped"]) / statistics.median(times["now"])
            print(f"{size:>10,}  {_ms(times['as shipped']):>32}  {_ms(times['now']):>32}  {ratio:>11.1f}x")
            if size == args.records or per_scan is None:
                per_scan, group = _same_answers(clients, keys)
        print(
            f"same answers on both: 200 scans (_id >= key, sorted, limit 1-100): {per_scan:.2f} records per "
            f"scan on each; a secondary-field query: the same {group} documents"
        )
        for client in clients.values():
            client.ycsb[COLLECTION].drop()
            client.close()
        figures = {}
        with tempfile.TemporaryDirectory(prefix="embedded-server-bench-") as tmp:
            for name in SERVERS:
                folder = Path(tmp) / name.replace(" ", "-")
                folder.mkdir()
                figures[name] = _ycsb(infos[name].url, args, folder)
        print(
            f"\nYCSB ({args.records:,} records, {args.threads} threads, {args.seconds} s per workload; "
            "zipfian; E: 95 % scans of 1-100 records, 5 % inserts)"
        )
        print(f"{'':26}  {'as shipped':>12}  {'now':>12}  {'ratio':>9}")
        old, new = figures["as shipped"], figures["now"]
        print(
            f"{'load (s, YCSB RunTime)':26}  {old['load_s']:12.1f}  {new['load_s']:12.1f}  "
            f"{old['load_s'] / new['load_s']:8.1f}x"
        )
        for key, label in (("A", "A ops/s (50/50)"), ("C", "C ops/s (read)"), ("E", "E ops/s (scan)")):
            print(f"{label:26}  {old[key]:12.1f}  {new[key]:12.1f}  {new[key] / old[key]:8.1f}x")
        print(f"{'E scans done':26}  {old['E scans']:12,.0f}  {new['E scans']:12,.0f}")
    finally:
        for server in servers.values():
            server.__exit__(None, None, None)


if __name__ == "__main__":
    main()
