"""JSON exporters (`exportfile` with JSONMeasurementsExporter / JSONArrayMeasurementsExporter)."""

from __future__ import annotations

import json
from os import PathLike
from pathlib import Path

import pandas as pd

from .errors import ParseError
from .text import read_path_bytes, to_text

_SEPARATORS = " \t\r\n,[]"


def export_rows(text: str) -> tuple[pd.DataFrame, bool]:
    """``{"metric", "measurement", "value"}`` objects -> rows (section, metric, value_str).

    Works for the concatenated-objects stream and the array form alike, and keeps every object before a
    truncation. Numbers keep their original text. Returns (rows, complete).
    """
    decoder = json.JSONDecoder(parse_float=str, parse_int=str, parse_constant=str)
    idx, n = 0, len(text)
    rows: list[tuple[str, str, str]] = []
    complete = True
    while True:
        while idx < n and text[idx] in _SEPARATORS:
            idx += 1
        if idx >= n:
            break
        try:
            obj, idx = decoder.raw_decode(text, idx)
        except json.JSONDecodeError:
            complete = False
            break
        for item in obj if isinstance(obj, list) else [obj]:
            if isinstance(item, dict) and "metric" in item and "measurement" in item:
                value = item.get("value")
                rows.append(
                    (str(item["metric"]), str(item["measurement"]), "" if value is None else str(value))
                )
    frame = pd.DataFrame(rows, columns=["section", "metric", "value_str"], dtype=object)
    return frame, complete


def read_export(text_or_path: str | bytes | PathLike[str]) -> tuple[pd.DataFrame, bool]:
    """Rows from export text or a path to an export file; ParseError when there are none."""
    if isinstance(text_or_path, PathLike):
        text = to_text(read_path_bytes(text_or_path))
    elif isinstance(text_or_path, str) and "{" not in text_or_path:
        if not Path(text_or_path).is_file():
            raise ParseError(f"{text_or_path!r} is neither YCSB JSON export text nor an existing file")
        text = to_text(read_path_bytes(text_or_path))
    else:
        text = to_text(text_or_path)
    rows, complete = export_rows(text)
    if rows.empty:
        raise ParseError("not a YCSB JSON export: no {metric, measurement, value} objects found")
    return rows, complete
