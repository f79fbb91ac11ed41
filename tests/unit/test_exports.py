"""``history export``: every format read back by the tool that reads it (pandas, Bencher's JSON Schema,
prometheus_client's OpenMetrics parser, the CSV module Otava uses), hostile tags included."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from property_examples import examples
from typer.testing import CliRunner

from ycsb_runner.cli import app
from ycsb_runner.nightly import export
from ycsb_runner.runs.history import RunRecord, SqliteHistory

SCHEMA = Path(__file__).parents[1] / "data" / "bencher" / "bmf.schema.json"
HOSTILE = {"esc": "a\x1b[31mred", "quote": 'say "hi" \\ back', "newline": "two\nlines", "brace": "{x}=1,y"}


def _metric(run_id: str, rep: int, op: str, metric: str, value: float) -> dict:
    keys = {"phase": "run", "mix": "a", "threads": 4, "audit": "none"}
    return {"run_id": run_id, "step": "02-run-a", "repetition": rep, **keys, "operation": op} | {
        "metric": metric,
        "value": value,
    }


def _run(i: int, tags: dict[str, str], level: float = 1000.0) -> RunRecord:
    rid = f"night-{i:02d}"
    run = {
        "run_id": rid,
        "suite": "quick",
        "fingerprint": "f",
        "status": "completed",
        "started_at": f"2026-11-{i + 1:02d}T02:00:00.000Z",
        "ended_at": f"2026-11-{i + 1:02d}T02:10:00.000Z",
        "server_kind": "mongod",
        "server_version": "7.0",
        "client_host": "h",
        "tags": tags,
        "folder": f"/r/{rid}",
        "error": "",
    }
    metrics = [_metric(rid, rep, "OVERALL", "throughput_ops_s", level + 10 * rep + i) for rep in (1, 2)] + [
        _metric(rid, rep, "READ", "p99_us", 5000.0 - 100 * rep + i) for rep in (1, 2)
    ]
    return RunRecord(run, metrics)


def _history(tmp_path: Path, tags: dict[str, str], nights: int = 3) -> Path:
    results = tmp_path / "results"
    h = SqliteHistory(results / "history.sqlite")
    for i in range(nights):
        h.index(_run(i, {**tags, "night": str(i)}))
    return results


def _rows(results: Path) -> pd.DataFrame:
    return export.history_export_rows("quick", results=results)


def test_ndjson_reads_back_to_the_history_rows_with_every_tag(tmp_path: Path) -> None:
    results = _history(tmp_path, HOSTILE)
    text = export.export_history("ndjson", "quick", results=results)
    got = pd.read_json(io.StringIO(text), lines=True, dtype=False)
    assert len(got) == 3 * 4  # 3 runs x (2 repetitions x 2 metrics)
    assert all(t == {**HOSTILE, "night": str(i // 4)} for i, t in enumerate(got["tags"]))
    assert got.groupby("metric")["value"].sum().to_dict() == pytest.approx(
        {"throughput_ops_s": 3 * (1010 + 1020) + 2 * 3, "p99_us": 3 * (4900 + 4800) + 2 * 3}
    )
    assert "\x1b" not in text  # JSON escapes control characters: no terminal sequence in the file


def test_csv_has_a_column_per_tag_and_guards_formulas(tmp_path: Path) -> None:
    results = _history(tmp_path, {**HOSTILE, "formula": "=HYPERLINK(1)"})
    text = export.export_history("csv", "quick", results=results)
    got = pd.read_csv(io.StringIO(text), keep_default_na=False)
    assert len(got) == 12 and {f"tag.{k}" for k in HOSTILE} <= set(got.columns)
    assert set(got["tag.newline"]) == {HOSTILE["newline"]} and set(got["tag.brace"]) == {HOSTILE["brace"]}
    assert set(got["tag.formula"]) == {"'=HYPERLINK(1)"}


def test_bmf_documents_are_valid_against_benchers_schema(tmp_path: Path) -> None:
    import jsonschema

    results = _history(tmp_path, HOSTILE)
    lines = export.export_history("bmf", "quick", results=results).splitlines()
    schema = json.loads(SCHEMA.read_text())
    assert len(lines) == 3
    for i, line in enumerate(lines):
        doc = json.loads(line)
        jsonschema.validate(doc, schema)
        tp = doc["quick/run/a/t4/none/OVERALL"]["throughput_ops_s"]
        assert tp == {"value": 1015.0 + i, "lower_value": 1010.0 + i, "upper_value": 1020.0 + i}
    with pytest.raises(jsonschema.ValidationError):  # the schema does check: a measure without value
        jsonschema.validate({"b": {"m": {"lower_value": 1}}}, schema)


def _parse_openmetrics(text: str) -> list:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    return list(text_string_to_metric_families(text))


def test_openmetrics_parses_back_to_the_same_values_labels_and_times(tmp_path: Path) -> None:
    results = _history(tmp_path, HOSTILE)
    rows = _rows(results)
    families = _parse_openmetrics(export.export_rows(rows, "openmetrics"))
    assert {f.name for f in families} == {"ycsb_throughput_ops_s", "ycsb_p99_us"}
    samples = [s for f in families for s in f.samples]
    assert len(samples) == len(rows)
    for s in samples:
        assert {s.labels[f"tag_{k}"] for k in HOSTILE} == set() or all(
            s.labels[f"tag_{k}"] == v for k, v in HOSTILE.items()
        )
        row = rows[
            (rows["run_id"] == s.labels["run_id"]) & (rows["repetition"] == int(s.labels["repetition"]))
        ]
        row = row[row["metric"] == s.name.removeprefix("ycsb_")]
        assert s.value == row["value"].iloc[0]
        assert float(s.timestamp) == pd.Timestamp(row["started_at"].iloc[0]).timestamp()
    bare = export.to_openmetrics(rows, timestamps=False)
    assert all(s.timestamp is None for f in _parse_openmetrics(bare) for s in f.samples)


def test_otava_csv_and_config_read_as_otava_reads_them(tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml")
    results = _history(tmp_path, HOSTILE)
    rows = _rows(results)
    config = yaml.safe_load(export.otava_config(rows, "x.csv", "quick"))["tests"]["quick"]
    table = list(csv.reader(io.StringIO(export.export_rows(rows, "otava")), delimiter=",", quotechar='"'))
    header, body = table[0], table[1:]
    assert len(body) == 3 and config["time_column"] == header[0] == "time"
    for name, m in config["metrics"].items():
        col = header.index(m["column"])
        assert [float(r[col]) for r in body] == [
            float(
                rows[(rows["run_id"] == r[1]) & (rows["metric"] == name.rsplit(".", 1)[1])]["value"].median()
            )
            for r in body
        ]
        assert m["direction"] == (-1 if name.endswith("_us") else 1)
    assert {a: body[0][header.index(a)] for a in HOSTILE} == HOSTILE
    assert set(config["attributes"]) == {"run_id", "night", *HOSTILE}


def test_history_export_command_writes_the_file_and_prints_otavas_config(tmp_path: Path) -> None:
    results = _history(tmp_path, {"v": "1"})
    out = tmp_path / "h.csv"
    r = CliRunner().invoke(
        app,
        [
            "history",
            "export",
            "--suite",
            "quick",
            "-f",
            "otava",
            "--out",
            str(out),
            "--results",
            str(results),
        ],
    )
    assert r.exit_code == 0, r.output
    assert out.read_text().startswith("time,run_id,") and "type: csv" in r.stdout and str(out) in r.stdout
    bad = CliRunner().invoke(
        app, ["history", "export", "--suite", "nope", "-f", "csv", "--results", str(results)]
    )
    assert "no runs of suite 'nope'" in str(bad.exception)


# --- hostile tags survive every export (property) ----------------------------------------------------------

_TEXT = st.text(
    alphabet=st.sampled_from(['"', "\\", "\n", "\x1b", "{", "}", "=", ",", "a", "é", " ", "'", "#", "\t"]),
    max_size=12,
)


@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=_TEXT, key=st.sampled_from(["k", "key-1", "a b"]))
def test_any_tag_text_survives_every_export(
    tmp_path_factory: pytest.TempPathFactory, value: str, key: str
) -> None:
    import jsonschema

    tags = {key: value, "night": "0"}
    h = SqliteHistory(tmp_path_factory.mktemp("h") / "history.sqlite")
    h.index(_run(0, tags))
    rows = export.history_rows(h.runs(), h.metrics(["night-00"]))
    nd = [json.loads(line) for line in export.export_rows(rows, "ndjson").splitlines()]
    assert all(r["tags"] == tags for r in nd)
    flat = pd.read_csv(io.StringIO(export.export_rows(rows, "csv")), keep_default_na=False, dtype=str)
    guarded = "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value
    assert set(flat[f"tag.{key}"]) == {guarded}
    samples = [s for f in _parse_openmetrics(export.export_rows(rows, "openmetrics")) for s in f.samples]
    label = export.label_names(sorted(tags))[key]
    assert len(samples) == len(rows) and all(s.labels[label] == value for s in samples)
    otava = list(csv.reader(io.StringIO(export.export_rows(rows, "otava"))))
    assert otava[1][otava[0].index(key)] == value
    for line in export.export_rows(rows, "bmf").splitlines():
        jsonschema.validate(json.loads(line), json.loads(SCHEMA.read_text()))
    assert not math.isnan(samples[0].value)


def test_ndjson_read_by_pandas_gives_the_runs_table_of_runs_csv(tmp_path: Path) -> None:
    results = _history(tmp_path, {"v": "1"}, nights=4)
    runner = CliRunner()
    runs = pd.read_csv(
        io.StringIO(runner.invoke(app, ["runs", "-f", "csv", "--results", str(results)]).stdout)
    )
    out = runner.invoke(app, ["history", "export", "-f", "ndjson", "--results", str(results)])
    nd = pd.read_json(io.StringIO(out.stdout), lines=True, dtype=False)
    cols = ["run_id", "suite", "status", "started_at", "fingerprint", "server_kind", "server_version"]
    per_run = nd.drop_duplicates("run_id")[cols].reset_index(drop=True)
    assert per_run.astype(str).equals(runs[cols].astype(str))
    tags = nd.drop_duplicates("run_id")["tags"].map(
        lambda t: ",".join(f"{k}={v}" for k, v in sorted(t.items()))
    )
    assert tags.tolist() == runs["tags"].tolist()
