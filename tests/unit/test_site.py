"""``ycsb-runner site`` over a small synthetic history (``bench/site_bench.synthetic_history``): every page
is there, every link leads to a file, a series page carries its points, change point and alerts as data, and
text from tags is escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from tests.unit.bench_scripts import bench_script
from ycsb_runner.errors import UserError
from ycsb_runner.present import document, output
from ycsb_runner.present.document import Chart, Document, Links, Section, Spark, Table
from ycsb_runner.report import html
from ycsb_runner.site.build import build_site

HOSTILE = "</script><script>alert(1)</script><b>x"
NIGHTS = 24


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("site") / "results"
    bench_script("site_bench").synthetic_history(results, 10, NIGHTS, changes=1.0, seed=5, tag=HOSTILE)
    return build_site(results).parent


def pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def chart_data(page: Path) -> list[dict]:
    text = page.read_text(encoding="utf-8")
    found = re.findall(r"<script type='application/json' id='chart\d+-data'>(.*?)</script>", text, re.S)
    return [json.loads(f) for f in found]


def test_every_page_is_written(site: Path) -> None:
    names = {p.relative_to(site).as_posix() for p in pages(site)}
    assert {"index.html", "alerts.html"} <= names
    assert sum(n.startswith("suites/") for n in names) == 1
    assert sum(n.startswith("series/") for n in names) == 10  # 2 steps x 5 series
    assert (site / "assets" / "plotly-basic.min.js").stat().st_size > 1_000_000
    assert (site / "assets" / "site.js").is_file()


def test_every_link_leads_to_a_file(site: Path) -> None:
    checked = 0
    for page in pages(site):
        text = page.read_text(encoding="utf-8")
        targets = re.findall(r"(?:href|src)='([^']*)'", text)
        for chart in chart_data(page):
            targets += [u for t in chart["traces"] for u in t.get("customdata") or [] if u]
        for target in targets:
            path = unquote(target.split("#", 1)[0])
            if not path:
                continue  # a link into the page itself (the alerts filter)
            assert (page.parent / path).resolve().exists(), f"{page.name}: {target}"
            checked += 1
    assert checked > 10 * NIGHTS  # every series page links every night's report


def test_a_series_page_holds_its_points_change_point_and_alert(site: Path) -> None:
    series = list((site / "series").rglob("*.html"))
    flagged = [p for p in series if any(t["name"] == "alerts" for c in chart_data(p) for t in c["traces"])]
    assert flagged, "a 15 % step in every step cell raises an alert (seed 5: on two avg_us series)"
    trend, *_ = chart_data(flagged[0])
    traces = {t["name"]: t for t in trend["traces"]}
    values = trend["traces"][0]
    assert len(values["x"]) == NIGHTS and sum(v is not None for v in values["y"]) == NIGHTS
    assert values["customdata"][0].endswith("night-000/report.html")
    assert "night-000" in values["text"][0]  # hover: run id, date, value, tags
    assert "change point" in traces
    alert = traces["alerts"]
    assert re.search(r"alert a[0-9a-f]{10}: regression untriaged", alert["text"][0])
    assert any(name.startswith("baseline (level ") for name in traces)
    assert len(chart_data(flagged[0])) == 2  # the canaries of the same nights below


def test_tag_text_is_escaped(site: Path) -> None:
    for page in pages(site):
        text = page.read_text(encoding="utf-8")
        assert "<script>alert(1)" not in text and "<b>x" not in text, page
    values = chart_data(next((site / "series").rglob("*.html")))[0]["traces"][0]
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in values["text"][0]  # shown as text by the chart


def test_alerts_page_filters_by_state_suite_metric(site: Path) -> None:
    text = (site / "alerts.html").read_text(encoding="utf-8")
    assert {n for n in re.findall(r"<select name='(\w+)'", text)} == {"status", "suite", "metric"}
    assert "href='#status=untriaged'" in text
    assert "of 0 triaged" in text or "no alert triaged yet" in text


def test_an_unknown_suite_is_a_user_error(site: Path) -> None:
    with pytest.raises(UserError, match="no runs of suite 'nope'"):
        build_site(site.parent, ["nope"], site.parent / "other")


def test_a_folder_that_is_not_a_site_is_left_alone(site: Path, tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("mine")
    with pytest.raises(UserError, match="not a site"):
        build_site(site.parent, out=tmp_path)
    assert (tmp_path / "index.html").read_text() == "mine"
    assert build_site(site.parent, out=site) == site / "index.html"  # its own site: written again


def test_chart_blocks_in_every_writer() -> None:
    doc = Document(
        "t",
        "t",
        [
            Section(
                "s",
                [
                    Links([("a <b>", "x.html")]),
                    Spark("s <i>", "y.html", [1.0, None, 2.0], [2], "regression"),
                    Chart(
                        "c",
                        [{"name": "<n>", "x": [1], "y": [2], "text": [["</script>", "b"]]}],
                        {
                            "title": "<i>t",
                            "yaxis": {"title": {"text": "<a href='https://x'>m</a>"}},
                            "annotations": [{"x": 1, "text": "<b>host"}],
                        },
                    ),
                    Table(
                        __import__("pandas").DataFrame({"a": ["<x>"], "_a": ["z z.html"], "f": ["1"]}),
                        links={"a": "_a"},
                        filters=("f",),
                    ),
                ],
            )
        ],
        "",
    )
    page = html.HTML.page(doc)
    assert '</script>"' not in page and "\\u003c/script\\u003e" not in page  # escaped first as HTML text
    assert "\\u0026lt;/script\\u0026gt;" in page
    # a layout's texts too (an axis titled with a metric's name, an annotation): text, not the chart's markup
    assert (
        "\\u003ci\\u003et" not in page and "\\u003ca href" not in page and "\\u003cb\\u003ehost" not in page
    )
    assert "\\u0026lt;i\\u0026gt;t" in page and "\\u0026lt;b\\u0026gt;host" in page
    assert "\\u0026lt;a href=\\u0026#x27;https://x\\u0026#x27;\\u0026gt;m" in page
    assert "<a href='z z.html'>&lt;x&gt;</a>" in page and "a &lt;b&gt;" in page
    assert "<polyline" in page and "<select name='f'" in page
    assert "[a \\<b\\>](<x.html>)" in output.MARKDOWN.page(doc)
    kinds = [next(iter(b)) for b in document.as_data(doc)["sections"][0]["blocks"]]
    assert kinds == ["links", "series", "chart", "table"]


def test_a_triaged_alert_shows_its_state_on_every_page(tmp_path: Path) -> None:
    from ycsb_runner.nightly.regress_service import run_regress
    from ycsb_runner.runs.history import SqliteHistory

    results = tmp_path / "results"
    bench_script("site_bench").synthetic_history(results, 10, NIGHTS, changes=1.0, seed=5)
    assert run_regress("quick", results=results).exit_code == 1  # regress records its alerts
    history = SqliteHistory(results / "history.sqlite")
    alert = history.alerts("quick")[0]
    history.triage(alert.alert_id, "investigating", "bob", "<i>noisy</i> neighbour", None)
    site = build_site(results).parent
    alerts = (site / "alerts.html").read_text(encoding="utf-8")
    assert f"<td class='t'>{alert.alert_id}</td>\n      <td class='t'>investigating</td>" in alerts
    assert "&lt;i&gt;noisy&lt;/i&gt; neighbour" in alerts and "<i>noisy" not in alerts
    assert "of 1 triaged alerts, 0 invalid" in alerts
    marks = [
        t["text"]
        for p in (site / "series").rglob("*.html")
        for c in chart_data(p)
        for t in c["traces"]
        if t["name"] == "alerts"
    ]
    assert any(f"alert {alert.alert_id}: regression investigating" in x for m in marks for x in m)


def test_a_series_chart_shows_the_runs_of_other_parameters_and_where_parameters_or_host_changed(
    tmp_path: Path,
) -> None:
    """Regress compares the newest fingerprint's runs; the chart shows the older parameters' nights too (grey,
    not judged, each linked to its report) and marks the nights the parameters and the host changed."""
    import sqlite3

    results = tmp_path / "results"
    bench_script("site_bench").synthetic_history(results, 5, NIGHTS, changes=0.0, seed=5)
    with sqlite3.connect(results / "history.sqlite") as con:
        con.execute("UPDATE runs SET fingerprint = 'older' WHERE run_id < 'night-006'")
        con.execute("UPDATE runs SET client_host = 'old-host' WHERE run_id < 'night-010'")
    site = build_site(results).parent
    page = next((site / "series").rglob("*.html"))
    trend = chart_data(page)[0]
    traces = {t["name"]: t for t in trend["traces"]}
    judged = trend["traces"][0]
    assert len(judged["x"]) == NIGHTS - 6  # regress's comparable runs only
    other = traces["other parameters or host (not judged)"]
    hover = [t.split("<br>") for t in other["text"]]  # run id, date, value, status and host
    assert [h[0] for h in hover] == [f"night-{i:03d}" for i in range(6)]
    assert all(y is not None and y > 0 for y in other["y"])
    assert all(u.endswith(f"night-{i:03d}/report.html") for i, u in enumerate(other["customdata"]))
    assert "load generator old-host" in hover[0][3]
    marks = {a["text"]: a["x"] for a in trend["layout"]["annotations"]}
    dates = dict(zip([t.split("<br>")[0] for t in judged["text"]], judged["x"], strict=True))
    assert marks == {"parameters changed": dates["night-006"], "host changed": dates["night-010"]}
