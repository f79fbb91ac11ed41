"""``ycsb-runner site`` over a real short history (a copy of the session's nights: eight of a small `quick`
on the embedded server, then three with the server throttled, nights.py; the last four judged by regress
as cron would the morning after each, which records its alerts), its pages loaded in headless Chromium
with no network at 1400 and 800 px: no console error, the series chart draws a point per night, the alerts
regress raised are marked, hovering a point shows its run id, and a point's link is the run's report.

Marked `alone` as the nights it reads are made in that session (it compares no speed itself)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from urllib.parse import unquote

import pytest
from nights import NORMAL_NIGHTS, SLOW_NIGHTS, copy_nights

from ycsb_runner.nightly.regress_service import run_regress
from ycsb_runner.report.run_report import write_report
from ycsb_runner.runs.history import RunFilter, SqliteHistory
from ycsb_runner.site.build import build_site

ROOT = Path(__file__).parents[2]
NIGHTS = NORMAL_NIGHTS + len(SLOW_NIGHTS)
JUDGED_FROM = SLOW_NIGHTS[0] - 1  # the night before the slow ones
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NO_CHROMIUM = "needs chromium (tools/test-needs.sh installs it: apt-get install -y chromium)"
pytestmark = [pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM), pytest.mark.alone]


def _script(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(slow_server_nights: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = copy_nights(slow_server_nights, tmp_path_factory.mktemp("site-nights") / "results")
    ended = SqliteHistory(results / "history.sqlite").runs().set_index("run_id")["ended_at"]
    for night in range(JUDGED_FROM, NIGHTS):  # the mornings after, as cron runs regress (alerts recorded)
        run_regress("quick", filt=RunFilter(until=str(ended[f"night-{night}"])), results=results)
    write_report(results / "night-0")  # (the nights ran without reports: a point links to one)
    return build_site(results).parent


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    bench = _script(ROOT / "bench" / "site_bench.py")
    b = bench.Browser(CHROMIUM)
    try:
        yield b
    finally:
        b.close()


HOVER = """(() => { const d = document.querySelector('div.chart');
  Plotly.Fx.hover(d, [{curveNumber: 0, pointNumber: 0}]);
  const t = document.querySelector('.hoverlayer');
  return {hover: t ? t.textContent : '', names: d.data.map(x => x.name), link: d.data[0].customdata[0],
          n: d.data[0].x.length}; })()"""


@pytest.mark.parametrize("width", [1400, 800])
def test_every_page_loads_with_no_console_error(site: Path, browser, width: int) -> None:
    pages = [site / "index.html", site / "alerts.html", *site.glob("suites/*.html")]
    pages.append(sorted((site / "series").rglob("*.html"))[0])
    for page in pages:
        got = browser.visit(page, width)
        assert got["errors"] == [], (page, got["errors"])


@pytest.mark.parametrize("width", [1400, 800])
def test_a_series_chart_draws_every_night_its_alerts_hover_and_link(site: Path, browser, width: int) -> None:
    results = site.parent
    flagged = run_regress("quick", results=results).exit_code == 1
    checked = 0
    for page in sorted((site / "series").rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        if flagged and '"name":"alerts"' not in text:
            continue
        got = browser.visit(page, width, check=HOVER)
        assert got["errors"] == []
        assert got["points"][0] >= NIGHTS  # a point per night (+ the change point and alert marks)
        shown = got["check"]
        assert shown["n"] == NIGHTS
        assert "night-0" in shown["hover"]  # the run id of the point hovered
        assert (page.parent / unquote(shown["link"])).resolve() == (
            results / "night-0" / "report.html"
        ).resolve()
        assert (results / "night-0" / "report.html").is_file()
        if flagged:
            assert "alerts" in shown["names"]
        checked += 1
        break
    assert checked == 1, "no series page to check (flagged: an alert marked on one)"
