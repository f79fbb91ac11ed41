"""Pure text renderings of a reference table: tidy cells, Markdown pipe table, JSON document."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd


def tidy_numbers(frame: pd.DataFrame, whole: pd.DataFrame | None = None) -> pd.DataFrame:
    """Float columns holding only whole numbers become nullable integers (1392.0 -> 1392).

    The test is made on ``whole`` (default ``frame``), so a filtered table renders like the full one;
    ``*_proportion`` columns stay fractions.
    """
    basis = frame if whole is None else whole
    tidy = frame.copy()
    for column in tidy.columns:
        if column.endswith("_proportion") or not pd.api.types.is_float_dtype(tidy[column]):
            continue
        values = basis[column].dropna()
        if (values == values.round()).all():
            tidy[column] = tidy[column].astype("Int64")
    return tidy


def is_number_column(series: pd.Series) -> bool:
    """Numeric and not boolean: such columns are right-aligned."""
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def _cell(value: Any, missing: str) -> str:
    """One published figure as text: ``output.cell_text`` (``fine``: the figures as published), a missing
    one (None, NaN, NA) as *missing*."""
    from ycsb_runner.output import cell_text

    return (
        missing
        if value is None or (not isinstance(value, str) and pd.isna(value))
        else cell_text(value, fine=True)
    )


def to_markdown(frame: pd.DataFrame, whole: pd.DataFrame | None = None, missing: str = "-") -> str:
    """A GitHub-style pipe table (``output.pipe_table``); numeric columns are right-aligned."""
    from ycsb_runner.output import pipe_table

    tidy = tidy_numbers(frame, whole)
    align = ["---:" if is_number_column(tidy[c]) else "---" for c in tidy.columns]
    rows = ([_cell(v, missing) for v in row] for row in tidy.itertuples(index=False))
    return pipe_table([str(c) for c in tidy.columns], rows, align)


def to_csv(frame: pd.DataFrame, whole: pd.DataFrame | None = None) -> str:
    """CSV text (``output.csv_table``: the one dialect, formula guard included) with whole-number floats
    written as integers and NaN as an empty field."""
    from ycsb_runner.output import csv_table

    return csv_table(tidy_numbers(frame, whole))


def to_json_document(name: str, frame: pd.DataFrame, provenance: dict[str, Any]) -> str:
    """``{"name", "provenance", "rows": [...]}`` with NaN as ``null``, UTF-8 text kept readable."""
    rows = json.loads(frame.to_json(orient="records", force_ascii=False))
    document = {"name": name, "provenance": provenance, "rows": rows}
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"
