"""Published vendor reference tables shipped with ycsb-runner, as pandas DataFrames.

Three tables, transcribed from the vendors' documents (see ``data/<name>.json`` for provenance):

* ``alibaba-audit`` - Alibaba Cloud: change in CPU, latency and opcounters after enabling the audit log.
* ``tencent-mongodb44`` - Tencent Cloud MongoDB 4.4: throughput/latency/CPU per size, storage type and mix.
* ``tencent-threads`` - Tencent Cloud: throughput/latency/CPU per size at 100 and 200 threads.

Every table has the join columns ``mix``, ``size``, ``storage`` and ``threads``.
"""

from __future__ import annotations

import copy
import difflib
import functools
import json
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import pandas as pd

from ycsb_runner.errors import UserError
from ycsb_runner.reference.parsing import mix_key, normalise_mix, normalise_size, parse_cpu_range

__all__ = [
    "ReferenceInfo",
    "list_references",
    "load_reference",
    "mix_key",
    "normalise_mix",
    "normalise_size",
    "parse_cpu_range",
    "provenance",
    "reference_names",
    "select",
]


@dataclass(frozen=True)
class ReferenceInfo:
    """One shipped reference table."""

    name: str
    title: str
    rows: int
    source: str


def _data_dir() -> Traversable:
    return resources.files(__name__).joinpath("data")


@functools.cache
def reference_names() -> tuple[str, ...]:
    """Names of the shipped tables: every ``data/<name>.csv`` that has a ``<name>.json`` beside it."""
    files = {entry.name for entry in _data_dir().iterdir()}
    return tuple(sorted(n[:-4] for n in files if n.endswith(".csv") and f"{n[:-4]}.json" in files))


def _check_name(name: str) -> str:
    names = reference_names()
    if name in names:
        return name
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise UserError(f"unknown reference table {name!r}; {hint}known tables: {', '.join(names)}")


@functools.cache
def _read_provenance(name: str) -> dict[str, Any]:
    with _data_dir().joinpath(f"{name}.json").open("r", encoding="utf-8") as fh:
        return json.load(fh)


@functools.cache
def _read_frame(name: str) -> pd.DataFrame:
    with _data_dir().joinpath(f"{name}.csv").open("r", encoding="utf-8") as fh:
        frame = pd.read_csv(fh, keep_default_na=False, na_values=[""])
    text_columns = [c for c in frame.columns if frame[c].dtype.kind not in "biuf"]
    frame[text_columns] = frame[text_columns].fillna("")
    return frame


def provenance(name: str) -> dict[str, Any]:
    """Where table ``name`` comes from: document, seed file, environment, units, transcription choices."""
    return copy.deepcopy(_read_provenance(_check_name(name)))


def load_reference(name: str) -> pd.DataFrame:
    """Table ``name`` as a DataFrame (where it comes from: :func:`provenance` of the same name).

    Missing numbers (a "-" cell, or a "no significant change" cell) are NaN; empty text is "".
    """
    return _read_frame(_check_name(name)).copy()


def list_references() -> list[ReferenceInfo]:
    """The shipped tables, sorted by name."""
    infos = []
    for name in reference_names():
        prov = _read_provenance(name)
        infos.append(
            ReferenceInfo(name=name, title=prov["title"], rows=len(_read_frame(name)), source=prov["source"])
        )
    return infos


def select(
    frame: pd.DataFrame,
    *,
    size: str | None = None,
    mix: str | None = None,
    storage: str | None = None,
    threads: int | None = None,
) -> pd.DataFrame:
    """Rows of a reference table matching the given keys (``None`` = any).

    ``size`` accepts "4C8G", "4c8gb" or "4核8GB"; ``mix`` accepts keys in any op order ("update95_read5").
    A value that matches no row raises :class:`UserError` listing the values the table has.
    """
    wanted: dict[str, object] = {}
    if size is not None:
        try:
            wanted["size"] = normalise_size(size)
        except ValueError:
            raise UserError(f"--size {size!r} is not a size like 4C8G or 4核8GB") from None
    if mix is not None:
        try:
            wanted["mix"] = normalise_mix(mix)
        except ValueError:
            raise UserError(f"--mix {mix!r} is not a mix key like read50_update50 or load") from None
    if storage is not None:
        wanted["storage"] = storage.strip().lower()
    if threads is not None:
        wanted["threads"] = threads
    mask = pd.Series(True, index=frame.index)
    for column, value in wanted.items():
        present = frame[column].unique().tolist()
        if value not in present:
            choices = ", ".join(str(v) for v in present)
            raise UserError(f"no rows with {column}={value}; this table has {column}: {choices}")
        mask &= frame[column] == value
    result = frame[mask]
    if result.empty:
        raise UserError(f"no rows match {wanted}; try fewer filters")
    return result
