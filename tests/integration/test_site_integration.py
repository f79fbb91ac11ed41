"""``ycsb-runner site`` over a real short history (seven nights of a small `quick` on the embedded server, the
last two with the server throttled, each judged by regress as cron would: ``tools/site_pictures.py``), its
pages loaded in headless Chromium with no network at 1400 and 800 px: no console error, the series chart
draws a point per night, the alerts regress raised are marked, hovering a point shows its run id, and a
point's link is the run's report."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from urllib.parse import unquote

import pytest

from ycsb_runner.nightly.regress_service import run_regress
from ycsb_runner.site.build import build_site

ROOT = Path(__file__).parents[2]
NIGHTS, SLOW_FROM = 7, 5
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="needs chromium (tools/test-needs.sh installs it: apt-get install -y chromium)"
)


def _script(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("site-nights") / "results"
    pictures = _script(ROOT / "tools" / "site_pictures.py")
    pictures.real_history(results, NIGHTS, SLOW_FROM, None, log=lambda _m: None)
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
        assert "night-00" in shown["hover"]  # the run id of the point hovered
        assert (page.parent / unquote(shown["link"])).resolve() == (
            results / "night-00" / "report.html"
        ).resolve()
        assert (results / "night-00" / "report.html").is_file()
        if flagged:
            assert "alerts" in shown["names"]
        checked += 1
        break
    assert checked == 1, "no series page to check (flagged: an alert marked on one)"
