"""The README's pictures of ``ycsb-runner site``, from a real history: `make docs-figures`.

    .venv/bin/python tools/site_pictures.py [--nights 14] [--slow-from 8] [--accept-after 10]
        [--keep DIR] [--images docs/images] [--width 1400]

Runs NIGHTS scaled-down `quick` nights against the embedded server (the nights from --slow-from on with the
server throttled: stopped 80 % of every half second, as cpulimit would), judges each night as cron would
(``regress``, which records its alerts), accepts the change after night --accept-after (``regress
accept``), builds the site and takes two screenshots with headless Chromium at --width px: the overview
(site-overview.png) and the series page of a flagged series (site-series.png). Prints how long the site
took to build. --keep DIR keeps the history and the site there (default: a scratch folder, removed).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # throttle

SMALL = ["maxexecutiontime=3", "recordcount=300", "mixes=a-read50-update50", "load_threads=2"]


def real_history(results: Path, nights: int, slow_from: int, accept_after: int | None, log=print) -> None:
    """NIGHTS real nights of a small `quick` in *results*, the server throttled from night *slow_from* on,
    each judged by regress; the change accepted after night *accept_after*."""
    from throttle import Throttle

    from ycsb_runner.bench import BenchOptions, run_bench
    from ycsb_runner.errors import UserError
    from ycsb_runner.install.embedded import EmbeddedServer
    from ycsb_runner.nightly.regress_service import accept_regressions, run_regress

    with EmbeddedServer(log=lambda _m: None) as server:
        for night in range(nights):
            slow = night >= slow_from
            opts = BenchOptions(
                suite="quick",
                url=server.url,
                overrides=SMALL,
                results=results,
                monitors=False,
                report=True,
                run_id=f"night-{night:02d}",
                tags={"night": str(night), "server": "slow" if slow else "normal"},
            )
            t0 = time.time()
            if slow:
                with Throttle(server.pid, share=0.2, period_s=0.5):
                    run_bench(opts, log=lambda _m: None)
            else:
                run_bench(opts, log=lambda _m: None)
            out = run_regress("quick", results=results)
            log(f"night {night} ({'slow' if slow else 'normal'}, {time.time() - t0:.0f} s): {out.closing}")
            if accept_after is not None and night == accept_after:
                try:
                    got = accept_regressions(
                        "quick", "the throttled server is the new normal", by="pictures", results=results
                    )
                    log(got.message)
                except UserError as e:
                    log(f"nothing accepted after night {night}: {e}")


def screenshot(browser: str, page: Path, png: Path, width: int, height: int = 1000) -> None:
    png.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            browser,
            "--headless=new",
            "--disable-gpu",
            "--no-sandbox",
            "--hide-scrollbars",
            "--proxy-server=127.0.0.1:9",  # no network
            f"--window-size={width},{height}",
            "--virtual-time-budget=15000",
            f"--screenshot={png}",
            page.resolve().as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=180,
    )


def flagged_series_page(site: Path) -> Path:
    """A series page with an alert marked (else the first series page)."""
    pages = sorted((site / "series").rglob("*.html"))
    for page in pages:
        text = page.read_text(encoding="utf-8")
        if re.search(r'"name":"alerts"', text) and "throughput" in page.name:
            return page
    return next((p for p in pages if '"name":"alerts"' in p.read_text(encoding="utf-8")), pages[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nights", type=int, default=14)
    ap.add_argument("--slow-from", type=int, default=8)
    ap.add_argument("--accept-after", type=int, default=10)
    ap.add_argument("--keep", type=Path)
    ap.add_argument("--images", type=Path, default=Path("docs/images"))
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--reuse", action="store_true", help="use the history already in --keep DIR")
    args = ap.parse_args()
    from ycsb_runner.site.build import build_site

    scratch = args.keep or Path(tempfile.mkdtemp(prefix="site-pictures-"))
    results = scratch / "results"
    if not args.reuse:
        real_history(results, args.nights, args.slow_from, args.accept_after)
    t0 = time.time()
    index = build_site(results)
    print(f"site of {args.nights} real nights built in {time.time() - t0:.1f} s: {index}")
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        sys.exit("no chromium: install it (apt-get install -y chromium) to take the pictures")
    series = flagged_series_page(index.parent)
    screenshot(browser, index, args.images / "site-overview.png", args.width, 700)
    screenshot(browser, series, args.images / "site-series.png", args.width, 1100)
    print(
        json.dumps(
            {
                "overview": str(args.images / "site-overview.png"),
                "series": str(args.images / "site-series.png"),
                "series_page": str(series),
            }
        )
    )
    if args.keep is None:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
