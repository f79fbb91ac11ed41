"""Time, peak memory and disk size of ``ycsb-runner site`` over a long, wide history, and how fast its pages
load in headless Chromium: 200 series x 365 nights.

    .venv/bin/python bench/site_bench.py [--series 200] [--nights 365] [--out DIR] [--no-browser]

The history is written as an SQLite history (``history.sqlite`` in a scratch results folder, one run folder
each with a report.html so the points link to something): the series of ``regress_scale_bench`` (5 a step:
throughput and two operations' average and p99 latency, 5 % AR(1) noise, a lasting 15 % step down in a share
of the steps) and a load-generator canary per night. It prints the build's wall time and the process's peak
RSS (``resource.getrusage``), the site's size on disk, and per page kind, at 1400 and 800 px, the time
headless Chromium takes to load it and draw its charts (DevTools protocol, network off), its console errors,
and for reference the time of an empty page (the machine's own overhead).
Targets (issue 46): under 60 s (CPU-s: the machine is shared), 200 MB, 50 MB, and 2 s a page.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ycsb_runner.runs.history import RunRecord, SqliteHistory  # noqa: E402

SERIES_PER_STEP = [
    ("OVERALL", "throughput_ops_s", -1),
    ("READ", "avg_us", 1),
    ("READ", "p99_us", 1),
    ("UPDATE", "avg_us", 1),
    ("UPDATE", "p99_us", 1),
]


def synthetic_history(
    results: Path,
    n_series: int,
    nights: int,
    changes: float = 0.1,
    seed: int = 3,
    suite: str = "quick",
    tag: str = "b",
) -> list[str]:
    """Write RESULTS/history.sqlite (and a run folder with a report.html per night); the run ids. Night i
    has the tag build=<tag><i>."""
    import numpy as np

    rng = np.random.default_rng(seed)
    run_ids = [f"night-{i:03d}" for i in range(nights)]
    values: dict[str, list[dict]] = {r: [] for r in run_ids}
    steps = max(1, n_series // len(SERIES_PER_STEP))
    for step in range(steps):
        shift = np.ones(nights)
        if rng.random() < changes:
            shift[int(rng.integers(nights // 2, max(nights // 2 + 1, nights - 5))) :] = 0.85
        for op, metric, sign in SERIES_PER_STEP:
            e = np.empty(nights)
            e[0] = rng.standard_normal()
            for t in range(1, nights):
                e[t] = 0.3 * e[t - 1] + np.sqrt(1 - 0.09) * rng.standard_normal()
            value = 1000.0 * (1 + 0.05 * e) * (shift if sign < 0 else 1 / shift)
            for r, v in zip(run_ids, value, strict=True):
                values[r].append(_row(r, f"{step:02d}-run", "run", f"mix{step:02d}", op, metric, float(v)))
    canary = 50000 * (1 + 0.02 * rng.standard_normal(nights))
    records = []
    for i, r in enumerate(run_ids):
        folder = results / r
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "report.html").write_text(f"<!DOCTYPE html><title>{r}</title><p>run {r}</p>\n")
        values[r].append(
            _row(r, "canary", "canary", "load-generator", "OVERALL", "canary_ops_s", float(canary[i]))
        )
        run = {
            "run_id": r,
            "suite": suite,
            "fingerprint": "f",
            "status": "completed",
            "started_at": f"{2025 + i // 336}-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}T02:00:00Z",
            "ended_at": f"{2025 + i // 336}-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}T02:30:00Z",
            "server_kind": "mongod",
            "server_version": "8.0.4",
            "client_host": "bench",
            "tags": {"build": f"{tag}{i}"},
            "folder": str(folder.resolve()),
            "error": "",
        }
        records.append(RunRecord(run, values[r]))
    SqliteHistory(results / "history.sqlite").replace_all(records)
    return run_ids


def _row(run_id: str, step: str, phase: str, mix: str, op: str, metric: str, value: float) -> dict:
    return {
        "run_id": run_id,
        "step": step,
        "repetition": 1,
        "phase": phase,
        "mix": mix,
        "threads": 8,
        "audit": "none",
        "operation": op,
        "metric": metric,
        "value": value,
    }


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


class Browser:
    """Headless Chromium driven over its DevTools protocol (``websocket-client``), with no network: every
    request but file:// goes to a closed proxy port. ``visit`` loads a page at a width and waits for its
    charts."""

    def __init__(self, binary: str) -> None:
        import re

        self.profile = tempfile.mkdtemp(prefix="site-chromium-")
        self.proc = subprocess.Popen(
            [
                binary,
                "--headless=new",
                "--disable-gpu",
                "--no-sandbox",
                "--no-first-run",
                "--proxy-server=127.0.0.1:9",
                "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stderr is not None
        deadline = time.time() + 60
        self.port = 0
        while time.time() < deadline and not self.port:
            line = self.proc.stderr.readline()
            if found := re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line):
                self.port = int(found.group(1))
            elif not line and self.proc.poll() is not None:
                break
        if not self.port:
            self.close()
            raise RuntimeError("chromium did not start its DevTools endpoint")
        self._id = 0

    def _page_socket(self) -> Any:
        import json
        import urllib.request

        import websocket

        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/json/new?about:blank", method="PUT")
        with urllib.request.urlopen(req, timeout=30) as resp:
            target = json.load(resp)
        return websocket.create_connection(target["webSocketDebuggerUrl"], timeout=30), target["id"]

    def visit(self, page: Path, width: int = 1400, check: str = "") -> dict[str, Any]:
        """Load *page* at *width* px: seconds until loaded and its charts drawn, the console errors and
        exceptions, each chart's points drawn, and *check* (a JavaScript expression) evaluated after."""
        import json
        import urllib.request

        ws, target = self._page_socket()
        events: list[dict[str, Any]] = []

        def call(method: str, **params: Any) -> dict[str, Any]:
            self._id += 1
            ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
            while True:
                msg = json.loads(ws.recv())
                if msg.get("id") == self._id:
                    return msg.get("result", {})
                events.append(msg)

        def value(expression: str) -> Any:
            got = call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
            return got.get("result", {}).get("value")

        try:
            for domain in ("Page", "Runtime", "Log"):
                call(f"{domain}.enable")
            call(
                "Emulation.setDeviceMetricsOverride",
                width=width,
                height=900,
                deviceScaleFactor=1,
                mobile=False,
            )
            t0 = time.time()
            call("Page.navigate", url=page.resolve().as_uri())
            drawn = (
                "document.readyState==='complete' && [...document.querySelectorAll('div.chart')]"
                ".every(d => d.dataset.points !== undefined || d.textContent)"
            )
            while time.time() - t0 < 30 and not value(drawn):
                time.sleep(0.02)
            seconds = time.time() - t0
            points = value("[...document.querySelectorAll('div.chart')].map(d => +(d.dataset.points || 0))")
            checked = value(check) if check else None
            call("Runtime.evaluate", expression="0")  # collect the events that came meanwhile
        finally:
            ws.close()
            urllib.request.urlopen(
                urllib.request.Request(f"http://127.0.0.1:{self.port}/json/close/{target}"), timeout=30
            ).close()
        errors = [
            json.dumps(e.get("params"))[:300]
            for e in events
            if e.get("method") == "Runtime.exceptionThrown"
            or (e.get("method") == "Runtime.consoleAPICalled" and e["params"].get("type") == "error")
            or (e.get("method") == "Log.entryAdded" and e["params"]["entry"].get("level") == "error")
        ]
        return {"seconds": seconds, "errors": errors, "points": points or [], "check": checked}

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=200)
    ap.add_argument("--nights", type=int, default=365)
    ap.add_argument("--out", type=Path, help="keep the history and site here (default: a scratch folder)")
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()
    scratch = args.out or Path(tempfile.mkdtemp(prefix="site-bench-"))
    results = scratch / "results"
    # in a process of its own: the peak RSS printed is the build's, not the synthesis's
    code = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); import site_bench; "
        "site_bench.synthetic_history(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))"
    )
    here = str(Path(__file__).resolve().parent)
    subprocess.run(
        [sys.executable, "-c", code, here, str(results), str(args.series), str(args.nights)], check=True
    )
    from ycsb_runner.nightly import regress_service
    from ycsb_runner.site.build import build_site

    judging = [0.0]
    run_regress = regress_service.run_regress

    def timed(*a: Any, **k: Any) -> Any:  # the share of regress's own judgement in the build
        c = time.process_time()
        try:
            return run_regress(*a, **k)
        finally:
            judging[0] += time.process_time() - c

    regress_service.run_regress = timed  # type: ignore[assignment]
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0, cpu0 = time.time(), time.process_time()
    index = build_site(results)
    wall, cpu = time.time() - t0, time.process_time() - cpu0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    site = index.parent
    files = [p for p in site.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files) / 1e6
    pages = [p for p in files if p.suffix == ".html"]
    print(
        f"site of {args.series} series x {args.nights} nights: {len(pages)} pages in {wall:.1f} s wall, "
        f"{cpu:.1f} CPU-s (regress's judgement {judging[0]:.1f} CPU-s, the pages {cpu - judging[0]:.1f})"
    )
    print(f"peak RSS {rss:.0f} MB (before the build: {rss0:.0f} MB); on disk {size:.1f} MB ({site})")
    ok = cpu < 60 and rss < 200 and size < 50
    binary = None if args.no_browser else chromium()
    if binary:
        series = sorted((site / "series").rglob("*.html"))
        kinds = {
            "overview": index,
            "suite": next((site / "suites").glob("*.html")),
            "series": series[len(series) // 2],
            "alerts": site / "alerts.html",
        }
        browser = Browser(binary)
        blank = site.parent / "blank.html"
        blank.write_text("<!DOCTYPE html><title>blank</title>\n")
        try:
            print(f"an empty page: {browser.visit(blank)['seconds']:.2f} s (this machine's overhead)")
            for width in (1400, 800):
                for kind, page in kinds.items():
                    got = browser.visit(page, width)
                    print(
                        f"{kind} page at {width} px: {got['seconds']:.2f} s to load and draw in Chromium "
                        f"({page.stat().st_size / 1e3:.0f} kB; points drawn {got['points']}; "
                        f"{len(got['errors'])} console errors)"
                    )
                    ok = ok and got["seconds"] < 2 and not got["errors"]
        finally:
            browser.close()
    else:
        print("no chromium: page load times not measured")
    print(f"targets 60 CPU-s, 200 MB, 50 MB, 2 s a page: {'PASS' if ok else 'FAIL'}")
    if args.out is None:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
