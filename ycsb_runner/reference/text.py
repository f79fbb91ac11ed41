"""A reference table's figures as published: whole-number floats as integers (``tidy_numbers``), and its
Markdown and CSV text through the one renderers' functions (``output``)."""

from __future__ import annotations

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


def to_markdown(frame: pd.DataFrame, whole: pd.DataFrame | None = None) -> str:
    """A GitHub-style pipe table of the published figures (``output.markdown_table``, ``fine``): numeric
    columns right-aligned, a missing figure as "-"."""
    from ycsb_runner.present.output import markdown_table

    return markdown_table(tidy_numbers(frame, whole), fine=True)


def to_csv(frame: pd.DataFrame, whole: pd.DataFrame | None = None) -> str:
    """CSV text (``output.csv_table``: the one dialect, formula guard included) with whole-number floats
    written as integers and NaN as an empty field."""
    from ycsb_runner.present.output import csv_table

    return csv_table(tidy_numbers(frame, whole))
