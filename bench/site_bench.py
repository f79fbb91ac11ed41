"""Time, peak memory and disk size of ``ycsb-runner site`` over a long, wide history, and how fast its pages
load in headless Chromium: 200 series x 365 nights.

    .venv/bin/python bench/site_bench.py [--series 200] [--nights 365] [--out DIR] [--no-browser]

The history is written as an SQLite history (``history.sqlite`` in a scratch results folder, one run folder
each with a report.html so the points link to something): the series of ``regress_scale_bench`` (5 a step:
throughput and two operations' average and p99 latency, 5 % AR(1) noise, a lasting 15 % step down in a share
of the steps) and a load-generator canary per night. It prints the build's wall time and the process's peak
RSS (``resource.getrusage``), the site's size on disk, and per page kind the time Chromium takes to load and
draw it (``--dump-dom`` with the network off: wall time of the browser process, so an upper bound).
Targets (issue 46): under 60 s, 200 MB, 50 MB, and 2 s a page.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ycsb_runner.nightly.history import RunRecord, SqliteHistory  # noqa: E402

SERIES_PER_STEP = [
    ("OVERALL", "throughput_ops_s", -1),
    ("READ", "avg_us", 1),
    ("READ", "p99_us", 1),
    ("UPDATE", "avg_us", 1),
    ("UPDATE", "p99_us", 1),
]


def synthetic_history(
    results: Path, n_series: int, nights: int, changes: float = 0.1, seed: int = 3, suite: str = "quick"
) -> list[str]:
    """Write RESULTS/history.sqlite (and a run folder with a report.html per night); the run ids."""
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
            "verdict": "completed",
            "started_at": f"{2025 + i // 336}-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}T02:00:00Z",
            "ended_at": f"{2025 + i // 336}-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}T02:30:00Z",
            "server_kind": "mongod",
            "server_version": "8.0.4",
            "client_host": "bench",
            "tags": {"build": f"b{i}"},
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


def load_seconds(browser: str, page: Path, width: int = 1400) -> tuple[float, str]:
    """Wall seconds for headless Chromium to load *page*, run its scripts and print the DOM (no network),
    and the DOM."""
    t0 = time.time()
    dom = subprocess.run(
        [
            browser,
            "--headless=new",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--proxy-server=127.0.0.1:9",  # no network: every request but file:// fails
            f"--window-size={width},900",
            "--virtual-time-budget=5000",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    return time.time() - t0, dom


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=200)
    ap.add_argument("--nights", type=int, default=365)
    ap.add_argument("--out", type=Path, help="keep the history and site here (default: a scratch folder)")
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()
    scratch = args.out or Path(tempfile.mkdtemp(prefix="site-bench-"))
    results = scratch / "results"
    synthetic_history(results, args.series, args.nights)
    from ycsb_runner.site.build import build_site

    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.time()
    index = build_site(results)
    wall = time.time() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    site = index.parent
    files = [p for p in site.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files) / 1e6
    pages = [p for p in files if p.suffix == ".html"]
    print(f"site of {args.series} series x {args.nights} nights: {len(pages)} pages in {wall:.1f} s")
    print(f"peak RSS {rss:.0f} MB (before the build: {rss0:.0f} MB); on disk {size:.1f} MB ({site})")
    ok = wall < 60 and rss < 200 and size < 50
    browser = None if args.no_browser else chromium()
    if browser:
        series = sorted((site / "series").rglob("*.html"))
        kinds = {
            "overview": index,
            "suite": next((site / "suites").glob("*.html")),
            "series": series[len(series) // 2],
            "alerts": site / "alerts.html",
        }
        for kind, page in kinds.items():
            seconds, dom = load_seconds(browser, page)
            drawn = dom.count('class="point"') + dom.count("class='point'")
            print(
                f"{kind} page: {seconds:.2f} s in headless Chromium ({page.stat().st_size / 1e3:.0f} kB, {drawn} points drawn)"
            )
            ok = ok and seconds < 2
    else:
        print("no chromium: page load times not measured")
    print(f"targets 60 s, 200 MB, 50 MB, 2 s a page: {'PASS' if ok else 'FAIL'}")
    if args.out is None:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
