"""One Markdown renderer (ycsb_runner.present.output.pipe_table) behind the report's tables, every command's
``--format markdown`` and the reference tables."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from ycsb_runner.present.output import markdown_table, pipe_table
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


def test_one_number_formatter_has_each_fixed_form() -> None:
    """The results table's figures, an audit change with its unit and a p-value: ``cell_text``'s forms."""
    from ycsb_runner.present.output import cell_text

    assert [cell_text(v, decimals=0) for v in (1234.5, 2_000_000, math.nan, None)] == [
        "1,234",
        "2,000,000",
        "-",
        "-",
    ]
    assert cell_text(0.25, decimals=2, unit="%") == "0.25%"
    assert cell_text(math.nan, decimals=2, unit="%") == "-"
    assert cell_text(-45.83, decimals=1, signed=True, unit=" %") == "-45.8 %"
    assert cell_text(3, decimals=1, signed=True, unit=" pp") == "+3.0 pp"
    assert [cell_text(p, significant=2) for p in (0.0034, 1e-5, 0.5, 1.0, math.nan)] == [
        "0.0034",
        "1e-05",
        "0.5",
        "1",
        "-",
    ]


def test_one_csv_dialect_guards_formulas_everywhere() -> None:
    """A published table's CSV and a command's ``--format csv`` are one dialect: rows end in ``\\n``, a
    cell a spreadsheet would run as a formula starts with ``'``, a number stays a number."""
    from ycsb_runner.present.output import csv_table
    from ycsb_runner.reference.text import to_csv

    df = pd.DataFrame({"note": ["=HYPERLINK(1)", "@SUM(A1)", "-5 %"], "n": [1.0, -2.0, 3.0]})
    expected = "note,n\n'=HYPERLINK(1),1\n'@SUM(A1),-2\n-5 %,3\n"
    assert to_csv(df) == expected
    assert csv_table(df) == expected.replace(",1\n", ",1.0\n").replace(",-2\n", ",-2.0\n").replace(
        ",3\n", ",3.0\n"
    )


def test_one_header_labeller_for_reports_and_published_tables() -> None:
    """One units table and one set of acronyms: a report's ``change_pct`` and a published ``cpu_change_pct``
    are spelled the same way."""
    from ycsb_runner.present.output import column_label

    assert [
        column_label(c) for c in ("change_pct", "cpu_change_pct", "ral_us", "disk_gb", "cpu_change_pp")
    ] == [
        "change %",
        "CPU change %",
        "RAL (µs)",
        "disk (GB)",
        "CPU change (pp)",
    ]
    assert column_label("throughput_ops_s") == "throughput (ops/s)" and column_label("p_value") == "p"


def test_one_presentation_path() -> None:
    """No document writes itself in a format (an ``as_<format>`` method) and only the terminal renderer
    (``output.TableRenderer``) calls ``termtable.print_frame``: every command's document goes through the
    renderers."""
    package = Path(__file__).parents[2] / "ycsb_runner"
    found = [
        f"{path.relative_to(package)}:{no}"
        for path in sorted(package.rglob("*.py"))
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"def as_(markdown|csv|json|table)\b|print_frame\(", line)
        and not (path.name == "termtable.py" and "def print_frame(" in line)
    ]
    assert found == ["present/output.py:" + str(_terminal_call(package / "present/output.py"))], found


def _terminal_call(output: Path) -> int:
    """The line of the terminal renderer's one ``print_frame(`` call."""
    lines = output.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("class TableRenderer"))
    return next(i for i, line in enumerate(lines[start:], start + 1) if "print_frame(" in line)
