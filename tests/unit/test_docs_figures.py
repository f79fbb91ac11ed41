"""Issue 51: the merged-percentiles figure is drawn from a real two-client run kept in docs/data/multi-client/
(tools/multi_client_pictures.py); its curves are those of the run's own merge."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
from docs_pages import DOCS, ROOT

sys.path.insert(0, str(ROOT / "tools"))
import multi_client_pictures as mcp  # noqa: E402

DATA = DOCS / "data" / "multi-client"


def test_the_kept_run_has_two_clients_whose_merge_is_the_runs_own() -> None:
    c = mcp.curves(DATA)
    assert sorted(c.clients) == ["c1", "c2"]
    assert c.operations["all"] == c.operations["c1"] + c.operations["c2"] > 1000
    ops = pd.read_csv(DATA / "operations.csv")
    row = ops[(ops["step"] == c.step) & (ops["client"] == "all") & (ops["section"] == mcp.SECTION)].iloc[0]
    assert int(row["union_operations"]) == c.operations["all"]
    for p in (50, 95, 99):  # the percentiles the run computed (the suite's measurement.percentiles)
        assert float(row[f"union_p{p}_us"]) == c.merged[c.percentiles.index(p)], p
    for client in c.clients:  # each client's own row of the same step
        mine = ops[(ops["step"] == c.step) & (ops["client"] == client) & (ops["section"] == mcp.SECTION)]
        assert int(mine["operations"].iloc[0]) == c.operations[client]


def test_the_merged_curve_lies_between_the_clients_and_the_throttled_tail_is_longer() -> None:
    c = mcp.curves(DATA)
    for i, p in enumerate(c.percentiles):
        ys = [ys[i] for ys in c.clients.values()]
        assert min(ys) <= c.merged[i] <= max(ys), p  # a mixture's quantile is within its parts'
    i99 = c.percentiles.index(99)
    assert c.clients[mcp.SLOW][i99] > c.clients["c1"][i99]
    mean = sum(ys[i99] for ys in c.clients.values()) / 2
    assert c.merged[i99] != mean  # the figure's point: the mean of the p99s is not the merged p99


def test_the_figure_is_drawn(tmp_path: Path) -> None:
    png = tmp_path / "m.png"
    mcp.draw(mcp.curves(DATA), png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_pages_sentence_on_the_numbers_is_that_of_the_kept_run() -> None:
    shown = (DOCS / "images" / "merged-percentiles.txt").read_text(encoding="utf-8").strip()
    c = mcp.curves(DATA)
    assert shown == mcp.summary(c)
    assert f"{c.merged[c.percentiles.index(99)] / 1000:.1f} ms" in shown
