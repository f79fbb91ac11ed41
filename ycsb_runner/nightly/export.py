"""The run history in formats other tools read (``ycsb-runner history export``).

* ``ndjson`` and ``csv``: one object / row per run x series value (step, repetition, series keys, value)
  with the run's facts and every tag (NDJSON: a ``tags`` object; CSV: one ``tag.<key>`` column per key,
  written by the project's CSV writer with its formula guard), as PerfKitBenchmarker's publishers do;
* ``openmetrics``: the OpenMetrics text format, one gauge family per metric (``ycsb_<metric>``), labels
  run_id, suite, step, repetition, the series keys and ``tag_<key>`` per tag, each sample stamped with its
  run's start time, ``# EOF`` at the end; without timestamps (``timestamps=False``, ``bench --openmetrics``)
  it is a file node_exporter's textfile collector reads;
* ``bmf``: Bencher Metric Format, one JSON document per run and line (oldest first): benchmark
  ``<suite>/<phase>/<mix>/t<threads>/<audit>/<operation>``, one measure per metric, value the mean over the
  series' repetitions and lower/upper the smallest and largest (Bencher keeps a run's tags as its own
  branch and testbed);
* ``otava``: the CSV Apache Otava reads (a ``time`` column, one column per series ``series_name``, as
  ``regress`` judges it, with the median over its repetitions, the run id and every tag as attribute
  columns) and the Otava test configuration (YAML) that reads it (``otava_config``).

Pure functions over the history's ``runs()``/``metrics()`` frames; ``export_history`` opens the history.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ycsb_runner.errors import UserError

if TYPE_CHECKING:
    import pandas as pd

    from ycsb_runner.runs.model import RunResult

FORMATS = ("otava", "bmf", "openmetrics", "ndjson", "csv")
#: The run's facts each exported row carries (besides its tags).
RUN_FACTS = ["run_id", "suite", "started_at", "status", "fingerprint", "server_kind", "server_version"]
METRIC_PREFIX = "ycsb_"


def history_rows(runs: pd.DataFrame, metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per run x metric row (oldest run first): the run's facts, a ``tags`` dict, the step,
    repetition, series keys and value."""
    import pandas as pd

    from ycsb_runner.runs.history import METRIC_COLUMNS

    facts = runs.reindex(columns=[*RUN_FACTS, "tags"]).copy()
    facts["tags"] = facts["tags"].map(lambda t: dict(t) if isinstance(t, dict) else {})
    facts["_order"] = range(len(facts))
    rows = facts.merge(metrics.reindex(columns=METRIC_COLUMNS), on="run_id", how="inner")
    if rows.empty:
        return pd.DataFrame(columns=[*RUN_FACTS, "tags", *METRIC_COLUMNS[1:]])
    rows = rows.sort_values(["_order", "step", "repetition", "operation", "metric"], kind="stable")
    return rows.drop(columns="_order").reset_index(drop=True)


def _plain(v: Any) -> Any:
    if hasattr(v, "item") and not isinstance(v, str):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


# --- ndjson and csv ----------------------------------------------------------------------------------------


def to_ndjson(rows: pd.DataFrame) -> str:
    """One JSON object a line (every tag in ``tags``); non-ASCII kept, control characters JSON-escaped."""
    lines = [
        json.dumps({k: _plain(v) for k, v in rec.items()}, ensure_ascii=False, allow_nan=False)
        for rec in rows.to_dict(orient="records")
    ]
    return "".join(line + "\n" for line in lines)


def tag_keys(rows: pd.DataFrame) -> list[str]:
    """Every tag key of the rows' runs, sorted."""
    return sorted({k for tags in rows["tags"] for k in tags}) if not rows.empty else []


def flat_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """*rows* with one ``tag.<key>`` column per tag key (empty where a run has not that tag)."""
    flat = rows.drop(columns="tags")
    for key in tag_keys(rows):
        flat[f"tag.{key}"] = rows["tags"].map(lambda t, key=key: t.get(key, ""))
    return flat


def to_csv(rows: pd.DataFrame) -> str:
    """The rows as CSV through the project's writer (``safe.text.csv_text``) with the spreadsheet formula
    guard (``safe.files.formula_safe``)."""
    from ycsb_runner.safe.files import formula_safe
    from ycsb_runner.safe.text import csv_text

    return csv_text(formula_safe(flat_frame(rows)))


# --- OpenMetrics -------------------------------------------------------------------------------------------

_NAME_BAD = re.compile(r"[^a-zA-Z0-9_]")


def metric_name(metric: str) -> str:
    """``ycsb_<metric>``, characters outside ``[a-zA-Z0-9_]`` as ``_``."""
    return METRIC_PREFIX + _NAME_BAD.sub("_", metric)


def label_names(keys: list[str]) -> dict[str, str]:
    """A distinct OpenMetrics label name ``tag_<key>`` per tag key (``[a-zA-Z0-9_]``; a clash numbered)."""
    out: dict[str, str] = {}
    for key in keys:
        name, n = "tag_" + _NAME_BAD.sub("_", key), 2
        while name in out.values():
            name, n = f"tag_{_NAME_BAD.sub('_', key)}_{n}", n + 1
        out[key] = name
    return out


def label_value(text: Any) -> str:
    """A label value as the OpenMetrics text format escapes it: backslash, double quote, line feed."""
    return str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(v: float) -> str:
    return repr(float(v)) if not float(v).is_integer() or abs(v) >= 1e15 else f"{float(v):.1f}"


def to_openmetrics(rows: pd.DataFrame, *, timestamps: bool = True) -> str:
    """The rows as OpenMetrics text: one gauge family per metric, a sample per row (labels run_id, suite,
    step, repetition, the series keys but the metric, ``tag_<key>``), stamped with the run's start
    (seconds since the epoch) when *timestamps*; ends with ``# EOF``."""
    from ycsb_runner.runs.history import SERIES_KEYS
    from ycsb_runner.runs.model import epoch_of

    tags = label_names(tag_keys(rows))
    fixed = ["run_id", "suite", "step", "repetition", *(k for k in SERIES_KEYS if k != "metric")]
    out: list[str] = []
    for metric in sorted(set(rows["metric"])) if not rows.empty else []:
        name = metric_name(metric)
        out += [f"# TYPE {name} gauge", f"# HELP {name} ycsb-runner history metric {label_value(metric)}"]
        for rec in rows[rows["metric"] == metric].to_dict(orient="records"):
            value = _plain(rec["value"])
            if value is None:
                continue
            labels = [(k, rec[k]) for k in fixed] + [(tags[k], v) for k, v in sorted(rec["tags"].items())]
            text = ",".join(f'{k}="{label_value(_label_text(v))}"' for k, v in labels)
            line = f"{name}{{{text}}} {_number(value)}"
            when = epoch_of(rec["started_at"]) if timestamps and isinstance(rec["started_at"], str) else None
            out.append(line + (f" {when:.3f}" if when is not None else ""))
    out.append("# EOF")
    return "\n".join(out) + "\n"


def _label_text(v: Any) -> str:
    from ycsb_runner.runs.history import series_id

    return series_id([_plain(v)])[0]


# --- Bencher Metric Format ---------------------------------------------------------------------------------


def bmf_documents(rows: pd.DataFrame) -> list[tuple[str, dict[str, dict[str, dict[str, float]]]]]:
    """(run id, BMF document) per run, oldest first: ``{"<suite>/<phase>/<mix>/t<threads>/<audit>/
    <operation>": {metric: {value, lower_value, upper_value}}}`` over the series' repetitions (mean, min,
    max)."""
    docs: list[tuple[str, dict[str, dict[str, dict[str, float]]]]] = []
    if rows.empty:
        return docs
    for run_id, run in rows.groupby("run_id", sort=False):
        doc: dict[str, dict[str, dict[str, float]]] = {}
        named = run.assign(bench=[series_name(r, "/").rsplit("/", 1)[0] for r in run.to_dict("records")])
        for (suite, bench, metric), g in named.groupby(["suite", "bench", "metric"], sort=True):
            values = [float(v) for v in g["value"] if _plain(v) is not None]
            if not values:
                continue
            doc.setdefault(f"{suite}/{bench}", {})[str(metric)] = {
                "value": sum(values) / len(values),
                "lower_value": min(values),
                "upper_value": max(values),
            }
        docs.append((str(run_id), doc))
    return docs


def to_bmf(rows: pd.DataFrame) -> str:
    """One BMF JSON document per run and line (``bmf_documents``)."""
    return "".join(json.dumps(doc, ensure_ascii=False) + "\n" for _, doc in bmf_documents(rows))


# --- Apache Otava ------------------------------------------------------------------------------------------


def series_name(row: dict[str, Any], sep: str = ".") -> str:
    """A series' name from its keys (``run.a.t4.none.READ.p99_us``): the series ``regress`` judges, its
    repetitions and the steps of one cell together."""
    from ycsb_runner.runs.history import SERIES_KEYS, series_id

    values = series_id(row[k] for k in SERIES_KEYS)
    keys = dict(zip(SERIES_KEYS, values, strict=True))
    keys["threads"] = f"t{keys['threads']}"
    return sep.join(keys[k] for k in SERIES_KEYS)


def otava_frame(rows: pd.DataFrame) -> tuple[pd.DataFrame, list[str], list[str]]:
    """(the table Otava reads, its metric columns, its attribute columns): one row per run, ``time`` (ISO
    UTC), one column per series (``series_name``: the median over its repetitions), ``run_id`` and one
    column per tag key."""
    import pandas as pd

    if rows.empty:
        return pd.DataFrame(columns=["time", "run_id"]), [], ["run_id"]
    named = rows.assign(series=[series_name(r) for r in rows.to_dict(orient="records")])
    wide = named.pivot_table(index="run_id", columns="series", values="value", aggfunc="median", sort=True)
    order = list(dict.fromkeys(rows["run_id"]))
    facts = rows.drop_duplicates("run_id").set_index("run_id").loc[order]
    metrics = [str(c) for c in wide.columns]
    frame = pd.DataFrame({"time": facts["started_at"].to_numpy(), "run_id": order})
    keys = tag_keys(rows)
    for key in keys:
        frame[key] = [t.get(key, "") for t in facts["tags"]]
    for col in metrics:
        frame[col] = wide[col].reindex(order).to_numpy()
    return frame, metrics, ["run_id", *keys]


def to_otava_csv(rows: pd.DataFrame) -> str:
    """The Otava CSV (``otava_frame``) through the project's CSV writer (no formula guard: Otava reads the
    cells as they are; a tag's text stays exactly its text); a night without a series' value is ``nan``,
    which Otava's CSV reader takes as a number."""
    from ycsb_runner.safe.text import csv_text

    frame, metrics, _ = otava_frame(rows)
    frame[metrics] = frame[metrics].astype(object).where(frame[metrics].notna(), "nan")  # Otava: float()
    return csv_text(frame)


def _yaml_text(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax, ASCII only, is one)."""
    return json.dumps(text, ensure_ascii=True)


def otava_config(rows: pd.DataFrame, csv_file: str, test: str) -> str:
    """The Otava configuration (YAML) of a test *test* reading *csv_file* (``to_otava_csv``'s output):
    every series a metric (direction: -1 for latencies, 1 for the rest, so that a drop of throughput and a
    rise of latency are both regressions), the run id and the tags as attributes."""
    _, metrics, attributes = otava_frame(rows)
    lines = [
        "tests:",
        f"  {_yaml_text(test)}:",
        "    type: csv",
        f"    file: {_yaml_text(csv_file)}",
        "    time_column: time",
        "    attributes: [" + ", ".join(_yaml_text(a) for a in attributes) + "]",
        "    metrics:",
    ]
    for col in metrics:
        direction = -1 if col.endswith("_us") else 1
        lines += [f"      {_yaml_text(col)}:", f"        column: {_yaml_text(col)}"]
        lines.append(f"        direction: {direction}")
    lines += ["    csv_options:", '      delimiter: ","', "      quote_char: '\"'"]
    return "\n".join(lines) + "\n"


def run_openmetrics(result: RunResult) -> str:
    """One run folder's figures (the rows the history holds of it) in OpenMetrics, without timestamps (the
    scrape's time is the sample's: what node_exporter's textfile collector needs)."""
    import pandas as pd

    from ycsb_runner.runs.history import METRIC_COLUMNS, run_record

    record = run_record(result)
    rows = history_rows(pd.DataFrame([record.run]), pd.DataFrame(record.metrics, columns=METRIC_COLUMNS))
    return to_openmetrics(rows, timestamps=False)


# --- the entry point ---------------------------------------------------------------------------------------


def export_rows(rows: pd.DataFrame, fmt: str, *, timestamps: bool = True) -> str:
    """*rows* (``history_rows``) as the text of the format *fmt* (one of ``FORMATS``)."""
    writers = {
        "ndjson": to_ndjson,
        "csv": to_csv,
        "bmf": to_bmf,
        "otava": to_otava_csv,
        "openmetrics": lambda r: to_openmetrics(r, timestamps=timestamps),
    }
    if fmt not in writers:
        raise UserError(f"--format {fmt!r}: use one of {', '.join(FORMATS)}")
    return writers[fmt](rows)


def history_export_rows(
    suite: str | None = None, *, results: Path | None = None, history_url: str | None = None
) -> pd.DataFrame:
    """The history's rows (``history_rows``) of *suite*'s runs (or all runs), oldest first."""
    from ycsb_runner.nightly.regress_service import unknown_suite
    from ycsb_runner.runs.history import RunFilter, open_history, select_runs

    history = open_history(results, history_url)
    every = history.runs()
    if suite and (missing := unknown_suite(suite, every)):
        raise UserError(missing)
    runs = select_runs(every, RunFilter(suite=suite))
    return history_rows(runs, history.metrics([str(r) for r in runs["run_id"]]))


def export_history(
    fmt: str,
    suite: str | None = None,
    *,
    results: Path | None = None,
    history_url: str | None = None,
) -> str:
    """The history's runs (of *suite*, or all), oldest first, as the text of the format *fmt*: ``otava``,
    ``bmf``, ``openmetrics``, ``ndjson`` or ``csv`` (the module's docstring says what each holds)."""
    if fmt not in FORMATS:
        raise UserError(f"--format {fmt!r}: use one of {', '.join(FORMATS)}")
    return export_rows(history_export_rows(suite, results=results, history_url=history_url), fmt)
