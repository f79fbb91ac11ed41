"""One Markdown renderer (ycsb_runner.output.pipe_table) behind the report's tables, every command's
``--format markdown`` and the reference tables."""

from __future__ import annotations

import math

import pandas as pd

from ycsb_runner.output import markdown_table, pipe_table
from ycsb_runner.reference.text import to_markdown


def test_pipe_table_escapes_and_aligns() -> None:
    text = pipe_table(["a|b", "n"], [["x\ny", 3], ["-", "1|2"]])
    assert text.splitlines() == ["| a\\|b | n |", "|---|---|", "| x y | 3 |", "| - | 1\\|2 |"]
    aligned = pipe_table(["name", "n"], [["x", "3"]], ["---", "---:"])
    assert aligned.splitlines()[1] == "| --- | ---: |"


def test_both_table_renderings_go_through_it() -> None:
    df = pd.DataFrame({"mix": ["read|100", "load"], "ops": [1234.5, math.nan], "n": [2.0, 1.0]})
    assert markdown_table(df).splitlines() == [
        "| mix | ops | n |",
        "|---|---|---|",
        "| read\\|100 | 1,234 | 2.00 |",
        "| load | - | 1.00 |",
    ]
    assert to_markdown(df).splitlines() == [
        "| mix | ops | n |",
        "| --- | ---: | ---: |",
        "| read\\|100 | 1,234.5 | 2 |",
        "| load | - | 1 |",
    ]
    assert markdown_table(df.iloc[0:0]) == "_(no rows)_\n"
