"""Number parsing: Java's Double.toString/Long.toString values and locale-formatted status numbers."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

import numpy as np
import pandas as pd

# Long.MAX_VALUE (an empty HdrHistogram's min) and anything near it means "no data".
NO_DATA_ABS = 9.2e18


def to_float(values: pd.Series) -> pd.Series:
    """Parse summary values (ints, doubles, E-notation, NaN, Infinity) to float64; Long.MAX_VALUE -> NaN."""
    if values.empty:
        return pd.Series(np.empty(0, dtype="float64"), index=values.index)
    out = pd.to_numeric(values.astype(object).str.strip(), errors="coerce").astype("float64")
    return out.mask(np.isfinite(out) & (out.abs() >= NO_DATA_ABS))


def percentile_label(p: float) -> str:
    """Column name for a percentile: 95 -> 'p95', 99.9 -> 'p99.9'."""
    return f"p{p:g}"


def _csv_floats(text: str, n: int) -> np.ndarray | None:
    """*text*'s *n* lines as floats through pandas' C reader; None where a line is no plain number."""
    try:
        frame = pd.read_csv(
            io.StringIO(text),
            header=None,
            names=["v"],
            sep="\x1f",
            dtype="float64",
            engine="c",
            skip_blank_lines=False,
            quoting=csv.QUOTE_NONE,
        )
    except (ValueError, pd.errors.ParserError):
        return None
    return frame["v"].to_numpy(dtype="float64", copy=True) if len(frame) == n else None


def floats_from_text(values: Sequence[str], *, decimal_comma: bool = False) -> np.ndarray:
    """Parse many short number strings at C speed (joined, then pandas' CSV reader); '' -> NaN.

    Understands ints, doubles, E-notation, NaN, Infinity/inf, ``∞``, U+FFFD (JDK 8 NaN) and, with
    ``decimal_comma``, ``1234,57``. Unparseable entries become NaN; Long.MAX_VALUE becomes NaN.
    """
    n = len(values)
    if n == 0:
        return np.empty(0, dtype="float64")
    text = "\n".join(values)
    if decimal_comma:
        text = text.replace(",", ".")
    if "\u221e" in text:
        text = text.replace("\u221e", "inf")
    if "\ufffd" in text:
        text = text.replace("\ufffd", "nan")
    out = _csv_floats(text, n) if "\x1f" not in text and '"' not in text else None
    if out is None:  # odd values (quotes, separators, line breaks): element by element, coercing
        series = pd.Series(list(values), dtype=object).astype(str).str.strip()
        for old, new in (((",", "."),) if decimal_comma else ()) + (("\u221e", "inf"), ("\ufffd", "nan")):
            series = series.str.replace(old, new, regex=False)
        out = np.array(pd.to_numeric(series, errors="coerce"), dtype="float64")
    big = np.isfinite(out) & (np.abs(out) >= NO_DATA_ABS)
    if big.any():
        out[big] = np.nan
    return out
