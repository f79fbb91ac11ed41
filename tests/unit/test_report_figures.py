"""Report figures in detail (issue 22, item 10): a short step's load chart starts at the step's start and
names its single status point in the singular; legends sit below the axes (never over a line, e.g. the
INSERT p99 one); the audit chart's bar labels stay inside its frame. Figures are caught before they are
rendered to PNG and measured in display coordinates."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ycsb_runner.report import plots
from ycsb_runner.runs.model import RunResult

RUNS = Path(__file__).parents[1] / "data" / "runs"


@pytest.fixture
def figures(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    caught: list[Any] = []

    def keep(fig: Any) -> bytes:
        fig.canvas.draw()
        caught.append(fig)
        return b""

    monkeypatch.setattr(plots, "png", keep)
    return caught


def _one_status_point(tmp_path: Path) -> RunResult:
    run_dir = Path(shutil.copytree(RUNS / "tencent-analyse", tmp_path / "run"))
    ts = pd.read_csv(run_dir / "timeseries.csv")
    load = ts["step"] == "01-load-t2"
    ts = ts[~load | (ts["status_index"] <= 1)]  # the load step keeps its first status line only
    ts.to_csv(run_dir / "timeseries.csv", index=False)
    return RunResult.load(run_dir)


def test_a_short_steps_load_chart_starts_at_zero_and_says_one_status_point(tmp_path: Path, figures) -> None:
    panels = plots.draw(plots.plot_step_timeseries(_one_status_point(tmp_path), "load")[0])
    assert len(panels) == len(figures) == 1
    ax_tp, ax_lat = figures[0].axes
    assert ax_tp.get_title().endswith("\n1 status point")
    low, high = ax_lat.get_xlim()
    assert low == 0 and high >= 1.0  # not 1.9 to 2.1 around the one point


def test_latency_legends_sit_below_the_axes(figures) -> None:
    run = RunResult.load(RUNS / "tencent-analyse")
    plots.draw(plots.plot_step_timeseries(run, "load")[0])
    plots.draw(plots.plot_step_timeseries(run, "run")[0])
    assert len(figures) >= 3
    for fig in figures:
        ax_lat = fig.axes[1]
        legend, frame = ax_lat.get_legend().get_window_extent(), ax_lat.get_window_extent()
        assert legend.y1 <= frame.y0, (legend, frame)  # below the plotting area: covers no line
        assert any(
            "INSERT" in t.get_text() or "READ" in t.get_text() for t in ax_lat.get_legend().get_texts()
        )


def test_audit_bar_labels_stay_inside_the_frame(figures) -> None:
    overhead = pd.DataFrame(
        {
            "mix": ["insert100"] * 3,
            "label": ["throughput (ops/s)", "INSERT avg (µs)", "INSERT p99 (µs)"],
            "change_pct": [84.5, -46.0, 39.0],
            "ci_low_pct": [60.0, -70.0, 10.0],
            "ci_high_pct": [110.0, -20.0, 75.0],
            "published_pct": [-5.0, 12.0, None],
            "n": [3, 3, 3],
        }
    )
    assert len(plots.draw(plots.plot_audit_overhead(overhead))) == 1
    (ax,) = figures[0].axes
    frame = ax.get_window_extent()
    labels = ax.texts
    assert len(labels) == 3 and {t.get_text() for t in labels} == {"+84.5%", "-46.0%", "+39.0%"}
    for text in labels:
        box = text.get_window_extent()
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1, (text.get_text(), box, frame)
    assert ax.get_legend().get_window_extent().y1 <= frame.y0  # the legend is below, under no label


def test_a_report_without_an_instance_size_says_which_published_size_it_shows(tmp_path: Path) -> None:
    """Issue 22, item 3: `compare --reference` refuses without --size; the report, which cannot ask, says
    which published size it compares with instead of using 2C4G silently."""
    import json

    from typer.testing import CliRunner

    from ycsb_runner.cli import app
    from ycsb_runner.report.run_report import write_report

    run_dir = Path(shutil.copytree(RUNS / "tencent-analyse", tmp_path / "run"))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    del manifest["suite"]["scaling"]["size"]
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    res = CliRunner().invoke(app, ["compare", str(run_dir), "--reference", "tencent-mongodb44"])
    assert res.exit_code != 0 and "--size" in str(res.exception)
    page = write_report(run_dir)[0].read_text()
    assert "the run names no instance size: published figures of 2C4G" in page


def test_a_printed_report_draws_no_figure_and_its_pages_draw_each_panel_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report printed as JSON, CSV, a table or Markdown names its figures' files and never draws one
    (matplotlib is not started: ``Figure.panels``); the written pages draw each panel once, for the HTML
    page and the Markdown page's files alike, and the files are the ones the JSON named."""
    import json

    from typer.testing import CliRunner

    from ycsb_runner.cli import app

    drawn: list[Any] = []
    real = plots.png

    def counted(fig: Any) -> bytes:
        drawn.append(fig)
        return real(fig)

    monkeypatch.setattr(plots, "png", counted)
    run_dir = Path(shutil.copytree(RUNS / "tencent-analyse", tmp_path / "run"))
    runner = CliRunner(env={"COLUMNS": "120"})
    printed = {
        f: runner.invoke(app, ["report", str(run_dir), "-f", f]) for f in ("json", "csv", "table", "markdown")
    }
    assert all(res.exit_code == 0 for res in printed.values()), {f: r.output for f, r in printed.items()}
    assert drawn == []
    named = [
        name
        for section in json.loads(printed["json"].stdout)["sections"]
        for block in section["blocks"]
        for name in block.get("files", [])
    ]
    assert len(named) > 5 and f"(1/{sum('percentiles' in n for n in named)})" in printed["markdown"].stdout

    res = runner.invoke(app, ["report", str(run_dir), "--out", str(tmp_path / "pages")])
    assert res.exit_code == 0, res.output
    written = sorted(
        p.relative_to(tmp_path / "pages").as_posix() for p in (tmp_path / "pages").rglob("*.png")
    )
    assert written == sorted(named) and len(drawn) == len(named)
    page = (tmp_path / "pages" / "report.html").read_text()
    assert page.count("data:image/png;base64,") == len(named)
