"""How fast does YCSB with many threads get going? Prints figures (a script, not a test).

Loads a small data set into a private embedded server, then runs YCSB (the installed binding) with
``--threads`` client threads and ``status.interval=1``, and prints, per URL variant:

* seconds from launch to YCSB's first status line, and to the first one that counts operations;
* seconds from launch until the server holds one connection per two client threads, and one per thread
  (counted on the server process's TCP sockets every 10 ms; nan when never reached), and the peak count:
  the connection ramp. (YCSB 0.17.0 prints its first status line as the threads start, before any
  operation, so that figure does not show the ramp.)
* the operations counted in the first status line, and the throughput of the whole run.

Variants take turns (run 1 of each, then run 2 of each, ...), and each figure is given as the median and
every run's value (the median of the runs that reached it, for the connection counts).

Usage: .venv/bin/python bench/connect_ramp_bench.py [--threads 300] [--records 200] [--seconds 6]
       [--repeat 3] [--variant NAME:URL_OPTIONS[;p:PROPERTY=VALUE...] ...]
A variant is ``name:query`` (URL options such as ``maxConnecting=2``) optionally followed by ``;p:k=v``
YCSB properties, e.g. ``driver:;p:mongodb.driver_defaults=driver``.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import threading
import time

import psutil

from ycsb_runner.install import ensure_ycsb, find_java
from ycsb_runner.install.embedded import EmbeddedServer

STATUS = re.compile(r"^\S+ \S+ (\d+) sec: (\d+) operations;")


def _argv(java: str, ycsb, url: str, phase: str, threads: int, props: dict[str, str]) -> list[str]:
    argv = [java, "-cp", ":".join(ycsb.classpath), "site.ycsb.Client", "-load" if phase == "load" else "-t"]
    argv += ["-db", ycsb.binding_class, "-threads", str(threads), "-s"]
    props = {"workload": "site.ycsb.workloads.CoreWorkload", "mongodb.url": url, **props}
    for k, v in props.items():
        argv += ["-p", f"{k}={v}"]
    return argv


def _with_options(url: str, options: str) -> str:
    if not options:
        return url
    return url + ("&" if "?" in url else ("?" if url.rstrip("/").count("/") > 2 else "/?")) + options


def _watch_connections(
    server_pid: int, port: int, want: int, start: float, stop: threading.Event, out: list
) -> None:
    """Appends (seconds until *want*/2 connections, seconds until *want*, peak count) to *out*; nan when a
    count was never reached."""
    server = psutil.Process(server_pid)
    half = full = float("nan")
    peak = 0
    while not stop.is_set():
        n = sum(1 for c in server.net_connections(kind="tcp") if c.laddr and c.laddr.port == port and c.raddr)
        peak = max(peak, n)
        now = time.monotonic() - start
        if n >= want // 2 and half != half:
            half = now
        if n >= want and full != full:
            full = now
        time.sleep(0.01)
    out.append((half, full, peak))


def one_run(java: str, ycsb, url: str, args: argparse.Namespace, props: dict[str, str]) -> dict[str, float]:
    run_props = {
        "recordcount": str(args.records),
        "operationcount": "1000000000",
        "maxexecutiontime": str(args.seconds),
        "status.interval": "1",
        **props,
    }
    start = time.monotonic()
    proc = subprocess.Popen(
        _argv(java, ycsb, url, "run", args.threads, run_props),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stop, ramp = threading.Event(), []
    watcher = threading.Thread(
        target=_watch_connections,
        args=(args.server_pid, args.port, args.threads, start, stop, ramp),
        daemon=True,
    )
    watcher.start()
    first = first_ops = None
    ops_first = 0
    assert proc.stderr is not None
    for line in proc.stderr:
        m = STATUS.match(line)
        if not m:
            continue
        now = time.monotonic() - start
        if first is None:
            first, ops_first = now, int(m.group(2))
        if first_ops is None and int(m.group(2)) > 0:
            first_ops = now
    out = proc.stdout.read() if proc.stdout else ""
    proc.wait()
    stop.set()
    watcher.join()
    thr = re.search(r"\[OVERALL\], Throughput\(ops/sec\), ([\d.]+)", out)
    if proc.returncode != 0 or first is None or thr is None:
        raise SystemExit(f"YCSB run failed (exit {proc.returncode})")
    return {
        "first_status_s": first,
        "first_ops_status_s": first_ops if first_ops is not None else float("nan"),
        "half_connections_s": ramp[0][0],
        "all_connections_s": ramp[0][1],
        "peak_connections": ramp[0][2],
        "ops_in_first_status": ops_first,
        "throughput": float(thr.group(1)),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=300)
    ap.add_argument("--records", type=int, default=200)
    ap.add_argument("--seconds", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--variant", action="append", default=[])
    args = ap.parse_args()
    variants = args.variant or ["installed="]
    ycsb, java = ensure_ycsb(log=lambda _m: None), find_java().path
    with EmbeddedServer(log=lambda _m: None) as srv:
        args.server_pid, args.port = srv.pid, srv.port
        base = _with_options(srv.url, f"maxPoolSize={args.threads}")
        load = _argv(java, ycsb, base, "load", 4, {"recordcount": str(args.records)})
        subprocess.run(load, capture_output=True, check=True)
        parsed = []
        for variant in variants:
            name, _, spec = variant.partition(":")
            options, *prop_specs = spec.split(";")
            props = dict(p.removeprefix("p:").split("=", 1) for p in prop_specs if p)
            parsed.append((name, options, props, _with_options(base, options)))
        # variants take turns, so that a change in the machine's load hits them alike
        runs: dict[str, list[dict[str, float]]] = {name: [] for name, *_ in parsed}
        for _ in range(args.repeat):
            for name, _options, props, url in parsed:
                runs[name].append(one_run(java, ycsb, url, args, props))
        for name, options, props, _url in parsed:
            print(f"{name}: threads={args.threads} url options={options or '-'} props={props or '-'}")
            for key in runs[name][0]:
                values = [r[key] for r in runs[name]]
                reached = [v for v in values if v == v]  # nan: a connection count never reached
                median = f"{statistics.median(reached):9.2f}" if reached else "      nan"
                shown = ", ".join(f"{v:.2f}" for v in values)
                print(f"  {key:22s} median {median}   runs: {shown}")


if __name__ == "__main__":
    main()
