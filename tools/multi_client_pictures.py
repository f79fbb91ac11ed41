"""The figure of docs/concepts/merged-percentiles.md, from a real run of two load generators (docs-figures).

    .venv/bin/python tools/multi_client_pictures.py [--run] [--data docs/data/multi-client]
        [--image docs/images/merged-percentiles.png]

--run makes a new run first (needs OpenSSH's sshd): two sshd on loopback ports stand for two load-generator
hosts (c1, c2, as tests/integration/test_multi_clients.py does), both drive the embedded server with a small
read-only `quick` (2,000 records, 15-s step, 2 threads each), and c2's JVM is throttled the way an
overloaded host would be (stopped 60 % of every 0.2 s, cpulimit's method). The run step's HDR logs, its
operations.csv and its manifest are kept in --data (a small run folder, committed, with its provenance).

Then, from --data: each client's READ latency by percentile and the merged one, read from the clients' HDR
histograms added bucket by bucket (ycsb_runner.parse.merge, the same functions the run used), drawn with
matplotlib. Prints each client's p99, their mean and the merged p99, and checks the merged figures against
the run's own operations.csv (the ``union_p<N>_us`` of client=all: all intervals of every client).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # loopback_sshd, throttle

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = ("c1", "c2")
SLOW = "c2"
SECTION = "READ"
SMALL = [
    "recordcount=2000",
    "load_threads=2",
    "threads=[4]",
    "maxexecutiontime=15",
    "mixes=c-read100",
]
# the percentiles drawn: 0 to 99.99, denser towards the tail (x axis: the number of nines)
GRID = [*range(0, 90, 5), 90, 92.5, 95, 96, 97, 98, 99, 99.3, 99.5, 99.7, 99.8, 99.9, 99.95, 99.99]


@contextmanager
def loopback_hosts(names: Sequence[str]) -> Iterator[dict[str, subprocess.Popen]]:
    """One sshd on 127.0.0.1 per name (tools/loopback_sshd.py, keys made in a scratch folder) and
    YCSB_RUNNER_SSH_CONFIG naming them; yields name -> its sshd process; stops them after."""
    from loopback_sshd import SshdError, loopback_sshd

    d = Path(tempfile.mkdtemp(prefix="multi-client-pictures-"))
    try:
        with loopback_sshd(names, d) as hosts:
            yield hosts.sshd
    except SshdError as err:
        sys.exit(f"{err} (or draw from --data without --run)")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def javas_under(parent: int) -> list[int]:
    """The Java processes below *parent* (one client's sshd)."""
    import psutil

    try:
        kids = psutil.Process(parent).children(recursive=True)
    except psutil.Error:
        return []
    found = []
    for p in kids:
        try:
            if p.name() == "java":
                found.append(p.pid)
        except psutil.Error:  # gone in between
            continue
    return found


def make_run(data: Path) -> None:
    """A real two-client run (c2 throttled), its run step kept in *data*."""
    from throttle import Throttle

    from ycsb_runner.bench import BenchOptions, run_bench
    from ycsb_runner.install.embedded import EmbeddedServer

    scratch = Path(tempfile.mkdtemp(prefix="multi-client-run-"))
    try:
        with loopback_hosts(CLIENTS) as hosts, EmbeddedServer(log=lambda _m: None) as server:
            sshd = hosts[SLOW].pid
            # stopped 60 % of every 0.2 s, as an overloaded host would run it (asked again each period)
            with Throttle(lambda: javas_under(sshd), share=0.4, period_s=0.2):
                outcome = run_bench(
                    BenchOptions(
                        suite="quick",
                        url=server.url,
                        overrides=SMALL,
                        results=scratch,
                        clients=list(CLIENTS),
                        monitors=False,
                        canaries=False,
                        report=False,
                        history=False,
                        lock=True,  # one bench at a time on this machine: the figure is of latencies
                        run_id="docs-multi-client",
                        tags={"purpose": "docs-figure", "throttled": SLOW},
                    ),
                    log=lambda _m: None,
                )
        keep(outcome.run_dir, data)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def keep(run_dir: Path, data: Path) -> None:
    """The files the figure needs: manifest.json, operations.csv and the run step's HDR logs."""
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    step = next(s["step"] for s in manifest["steps"] if s["phase"] == "run")
    if data.exists():
        for old in ("manifest.json", "operations.csv", "steps"):
            target = data / old
            shutil.rmtree(target) if target.is_dir() else target.unlink(missing_ok=True)
    data.mkdir(parents=True, exist_ok=True)
    for name in ("manifest.json", "operations.csv"):
        shutil.copy2(run_dir / name, data / name)
    for client in CLIENTS:
        src = run_dir / "steps" / step / "clients" / client / "hdr"
        dst = data / "steps" / step / "clients" / client / "hdr"
        dst.mkdir(parents=True)
        for f in src.glob("*.hdr"):
            shutil.copy2(f, dst / f.name)
    (data / "README.md").write_text(provenance(manifest), encoding="utf-8")


def provenance(manifest: dict) -> str:
    """The README of the kept run: how it was made, from its manifest."""
    host = manifest.get("host") or {}
    load = ", ".join(f"{x:.1f}" for x in host.get("load_avg") or [])
    tool = manifest.get("tool") or {}
    step = next(s for s in manifest["steps"] if s["phase"] == "run")
    warnings = "; ".join(step.get("warnings") or []) or "none"
    return f"""# A real run of two load generators (the figure of docs/concepts/merged-percentiles.md)

Written by `make docs-figures` (`tools/multi_client_pictures.py --run`), which makes a new run and rewrites
this folder when OpenSSH's sshd is installed, else draws the figure from the run kept here. Kept: the run's
`manifest.json` and `operations.csv`, and the run step's HDR interval logs of each client
(`steps/<step>/clients/<client>/hdr/`, YCSB's `hdrhistogram.fileoutput`); the rest of the run folder (YCSB's
output, the load step) is left out.

How it was run: run id `{manifest.get("run_id")}`, started {manifest.get("started_at")}, ycsb-runner
{tool.get("version")}, on a host of {host.get("cpus_logical")} logical CPUs (load average {load} at the end:
a shared machine, so the latencies are those of a crowded host, not of FerretDB), against the embedded
FerretDB server. Suite `quick` scaled down: `{" ".join(SMALL)}`.
Clients {", ".join(f"`{c}`" for c in CLIENTS)}: one sshd each on a loopback port, standing for two hosts;
{SLOW}'s JVM throttled for the whole run (stopped 60 % of every 0.2 s, as an overloaded host would run it),
so its tail is longer.

The merged READ figures the figure draws are checked against the `union_operations` and `union_p<N>_us` of
the `client=all` READ row of `operations.csv`, which the run computed itself (by the tool, and by
`tests/unit/test_docs_figures.py`). The run step's warnings, as the run recorded them: {warnings}.
"""


@dataclass(frozen=True)
class Curves:
    """Latency (µs) at each percentile of GRID: per client and merged; the run's own figures beside."""

    step: str
    percentiles: list[float]
    clients: dict[str, list[float]]
    merged: list[float]
    operations: dict[str, int]


def curves(data: Path, section: str = SECTION) -> Curves:
    """Each client's *section* latencies by percentile, and those of the clients' histograms added. Reads
    every interval of every client (the union window). Pure but for reading *data*."""
    from ycsb_runner.parse.merge import add_histograms, client_histograms, read_client_logs

    manifest = json.loads((data / "manifest.json").read_text(encoding="utf-8"))
    step = next(s["step"] for s in manifest["steps"] if s["phase"] == "run")
    dirs = {c.name: c / "hdr" for c in sorted((data / "steps" / step / "clients").iterdir())}
    hists = {
        c: per[section] for c, per in client_histograms(read_client_logs(dirs)).items() if section in per
    }
    total = add_histograms(list(hists.values()))
    return Curves(
        step=step,
        percentiles=list(GRID),
        clients={c: [float(h.get_value_at_percentile(p)) for p in GRID] for c, h in hists.items()},
        merged=[float(total.get_value_at_percentile(p)) for p in GRID],
        operations={
            **{c: int(h.get_total_count()) for c, h in hists.items()},
            "all": int(total.get_total_count()),
        },
    )


def nines(p: float) -> float:
    """The x position of percentile *p*: 90 -> 1, 99 -> 2, 99.9 -> 3."""
    import math

    return -math.log10(1 - p / 100) if p < 100 else 5.0


def draw(c: Curves, png: Path, note: str = "") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [nines(p) for p in c.percentiles]
    fig, ax = plt.subplots(figsize=(9, 4.8), dpi=100)
    colours = {"c1": "#1f77b4", "c2": "#d62728"}
    for client, ys in c.clients.items():
        label = f"client {client} alone ({c.operations[client]:,} reads)"
        ax.plot(xs, [y / 1000 for y in ys], color=colours.get(client), lw=1.6, label=label)
    ax.plot(xs, [y / 1000 for y in c.merged], color="black", lw=2.4, ls="--",
            label=f"merged: the added histograms ({c.operations['all']:,} reads)")  # fmt: skip
    i99 = c.percentiles.index(99)
    mean99 = sum(ys[i99] for ys in c.clients.values()) / len(c.clients)
    ax.plot([nines(99)], [mean99 / 1000], "o", color="grey", ms=7, zorder=5)
    ax.plot([nines(99)], [c.merged[i99] / 1000], "D", color="black", ms=6, zorder=5)
    lines = [f"p99 of client {client}: {ys[i99] / 1000:.1f} ms" for client, ys in c.clients.items()]
    lines += [
        f"mean of those (wrong, grey dot): {mean99 / 1000:.1f} ms",
        f"merged p99: {c.merged[i99] / 1000:.1f} ms",
    ]
    ax.text(
        0.98,
        0.04,
        "\n".join(lines),
        transform=ax.transAxes,
        ha="right",
        va="bottom",
        fontsize=9,
        bbox={"boxstyle": "round", "facecolor": "white", "edgecolor": "lightgrey"},
    )
    ticks = [0, 50, 90, 99, 99.9, 99.99]
    ax.set_xticks([nines(p) for p in ticks], [f"p{p:g}" for p in ticks])
    ax.set_yscale("log")
    ax.set_ylabel("READ latency (ms, log scale)")
    ax.set_xlabel("percentile")
    ax.set_title("Two load generators, one step: each client's percentiles and the merged ones", fontsize=11)
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(loc="upper left", fontsize=9)
    if note:
        fig.text(0.01, 0.01, note, fontsize=8, color="dimgrey")
    fig.tight_layout(rect=(0, 0.04 if note else 0, 1, 1))
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png)
    plt.close(fig)


def summary(c: Curves) -> str:
    """The page's sentence on the figure's numbers (docs/concepts/merged-percentiles.md includes it)."""
    i99 = c.percentiles.index(99)
    p99s = {client: ys[i99] / 1000 for client, ys in c.clients.items()}
    mean = sum(p99s.values()) / len(p99s)
    merged = c.merged[i99] / 1000
    return (
        f"Here the p99s of READ were {' and '.join(f'{v:.1f} ms ({k})' for k, v in p99s.items())}: the "
        f"merged p99 is {merged:.1f} ms over all {c.operations['all']:,} reads, while the mean of the "
        f"clients' p99s (the grey dot) would say {mean:.1f} ms"
        + (", below what 1 % of all reads took." if mean < merged else ".")
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", action="store_true", help="make a new two-client run first (needs sshd)")
    ap.add_argument("--data", type=Path, default=ROOT / "docs" / "data" / "multi-client")
    ap.add_argument("--image", type=Path, default=ROOT / "docs" / "images" / "merged-percentiles.png")
    ap.add_argument("--summary", type=Path, help="write the page's sentence on the numbers there")
    args = ap.parse_args()
    if args.run:
        t0 = time.time()
        make_run(args.data)
        print(f"two-client run kept in {args.data} ({time.time() - t0:.0f} s)")
    import pandas as pd

    c = curves(args.data)
    ops = pd.read_csv(args.data / "operations.csv")
    row = ops[(ops["step"] == c.step) & (ops["client"] == "all") & (ops["section"] == SECTION)].iloc[0]
    i99 = c.percentiles.index(99)
    if int(row["union_operations"]) != c.operations["all"] or float(row["union_p99_us"]) != c.merged[i99]:
        sys.exit(
            f"the merged figures ({c.operations['all']} reads, p99 {c.merged[i99]} µs) differ from the run's "
            f"operations.csv ({row['union_operations']} reads, union_p99_us {row['union_p99_us']})"
        )
    draw(
        c,
        args.image,
        note=f"ycsb-runner, FerretDB embedded server; client {SLOW}'s JVM throttled; step {c.step}",
    )
    p99s = {client: ys[i99] for client, ys in c.clients.items()}
    if args.summary:
        args.summary.write_text(summary(c) + "\n", encoding="utf-8")
    print(
        f"{args.image}: p99 by client {p99s} µs, their mean {sum(p99s.values()) / len(p99s):.0f} µs, "
        f"merged {c.merged[i99]:.0f} µs (operations.csv client=all union_p99_us {row['union_p99_us']:.0f})"
    )


if __name__ == "__main__":
    main()
