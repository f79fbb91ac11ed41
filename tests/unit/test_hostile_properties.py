"""Issue 52: random values and byte strings written into a copy of real run folders and their history
(manifest fields, CSV cells, metric values, whole files), then ``history rebuild``, ``runs``, ``table``,
``report``, ``compare`` and ``regress`` asked about them: every outcome is exit 0, 2 or 3 with at most one
error line and never a traceback, and ``regress`` never says "regression" (exit 1) of nights that have
none. The nights are copies of the checked-in tencent-analyse run (tests/data/runs) with seven normal
nights' noise (``test_regress._nightly_folders``); one cell of one night is changed per example, so no
series can show a change on two nights (``--confirm 2``, the default).

Commands run in-process (``CliRunner``); a ``UserError`` is what ``main`` turns into its one line and code.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from property_examples import examples
from test_regress import NOISE, _nightly_folders
from typer.testing import CliRunner

from ycsb_runner.cli import app
from ycsb_runner.errors import UserError

SUITE = "tencent-analyse-tiny"
NIGHTS = len(NOISE)
EXAMPLES = 30  # each example copies seven folders and runs up to eight commands: about 1-2 s apiece (idle)

# what a shell may see: 0 (done), 2 (bad input, refused), 3 (could not tell, the environment)
ALLOWED = {0, 2, 3}

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40) | st.sampled_from(
    ["\x1b]0;x\x07", "\r", "\n", "", "nan", "-inf", "1e308", "=1+1"]
)
NUMBER = st.floats(allow_nan=True, allow_infinity=True) | st.integers(min_value=-(2**70), max_value=2**70)
JSON = st.recursive(
    st.none() | st.booleans() | NUMBER | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
MANIFEST_FIELDS = [
    ("run_id",),
    ("status",),
    ("error",),
    ("started_at",),
    ("ended_at",),
    ("format_version",),
    ("tags",),
    ("suite",),
    ("suite", "name"),
    ("suite", "study"),
    ("suite", "description"),
    ("target",),
    ("host",),
    ("steps",),
    ("steps", 0),
    ("steps", 0, "verdict"),  # the step's status as the checked-in folders (result format 2) name it
    ("steps", 0, "status"),
    ("steps", 1, "label"),
    ("steps", 1, "throughput_ops_s"),
    ("steps", 1, "reasons"),
]
CSV_FILES = ["steps.csv", "operations.csv", "summary.csv", "timeseries.csv", "server_metrics.csv"]


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seven normal nights' folders and their history, made once; each example works on a copy."""
    results = tmp_path_factory.mktemp("property") / "results"
    _nightly_folders(results, NOISE)
    res = CliRunner().invoke(app, ["history", "rebuild", "--results", str(results)])
    assert res.exit_code == 0, res.output
    return results


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    """*value* at *path* in *doc* when the path is there (a list index past its end: left as it is)."""
    for key in path[:-1]:
        try:
            doc = doc[key]
        except (KeyError, IndexError, TypeError):
            return
    try:
        doc[path[-1]] = value
    except (IndexError, TypeError):
        pass


def _cell(value: Any) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)


MUTATION = st.one_of(
    st.tuples(st.just("manifest"), st.integers(0, NIGHTS - 1), st.sampled_from(MANIFEST_FIELDS), JSON),
    st.tuples(
        st.just("csv"),
        st.integers(0, NIGHTS - 1),
        st.sampled_from(CSV_FILES),
        st.tuples(st.integers(0, 40), st.integers(0, 80)),
        NUMBER | TEXT | st.binary(max_size=20),
    ),
    st.tuples(st.just("metric"), st.integers(0, 400), NUMBER | TEXT | st.binary(max_size=12) | st.none()),
    st.tuples(
        st.just("bytes"),
        st.integers(0, NIGHTS - 1),
        st.sampled_from(["manifest.json", *CSV_FILES]),
        st.binary(max_size=64),
    ),
)


def _mutate(results: Path, mutation: tuple[Any, ...]) -> bool:
    """Apply *mutation*; True when it changed a folder (the history is rebuilt from the folders)."""
    kind = mutation[0]
    if kind == "manifest":
        _, night, path, value = mutation
        file = results / f"night-{night:02d}" / "manifest.json"
        doc = json.loads(file.read_text())
        _set(doc, path, value)
        file.write_text(json.dumps(doc, allow_nan=True))
        return True
    if kind == "csv":
        _, night, name, (row, col), value = mutation
        file = results / f"night-{night:02d}" / name
        df = pd.read_csv(file, dtype=str, keep_default_na=False)
        if len(df) and len(df.columns):
            df = df.astype(object)
            df.iat[row % len(df), col % len(df.columns)] = _cell(value)
            df.to_csv(file, index=False)
        return True
    if kind == "metric":
        _, row, value = mutation
        con = sqlite3.connect(results / "history.sqlite")
        try:
            n = con.execute("SELECT count(*) FROM metrics").fetchone()[0]
            if isinstance(value, int) and not -(2**63) <= value < 2**63:
                value = str(value)  # SQLite's integers are 64-bit: a larger one is stored as its text
            con.execute(
                "UPDATE metrics SET value = ? WHERE rowid = (SELECT rowid FROM metrics LIMIT 1 OFFSET ?)",
                (value, row % n),
            )
            con.commit()
        finally:
            con.close()
        return False
    _, night, name, data = mutation
    (results / f"night-{night:02d}" / name).write_bytes(data)
    return True


def _outcome(argv: list[str]) -> tuple[int, str]:
    """(exit code, stderr) as a shell would see them; an exception other than UserError fails the test."""
    res = CliRunner(env={"COLUMNS": "200"}).invoke(app, argv)
    err = res.stderr
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        if not isinstance(res.exception, UserError):
            raise AssertionError(f"{argv}: a traceback ({type(res.exception).__name__}: {res.exception})")
        return res.exception.exit_code, err + f"error: {res.exception}\n"
    return res.exit_code, err


def _check(argv: list[str], mutation: tuple[Any, ...], allowed: set[int] = ALLOWED) -> int:
    code, err = _outcome(argv)
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert "Traceback" not in err, (argv, mutation, err)
    assert len(errors) <= 1, (argv, mutation, err)
    assert code in allowed, (argv, mutation, code, err)
    return code


@settings(
    max_examples=examples(EXAMPLES),
    deadline=None,
    phases=(Phase.explicit, Phase.generate),  # (no shrinking: an example runs eight commands)
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
@given(mutation=MUTATION)
@example(mutation=("csv", 6, "operations.csv", (4, 21), b"\xbd"))  # a latency cell as text: table's TypeError
@example(mutation=("csv", 2, "steps.csv", (19, 55), "\r"))  # a step's status missing: failures()'s TypeError
@example(mutation=("manifest", 2, ("audit_unverified",), 1.5))  # a number for a text field
@example(mutation=("csv", 0, "timeseries.csv", (31, 28), "\x1b]0;x\x07"))  # a p99 cell as text: plot's max
@example(mutation=("metric", 62, 5.552420895759948e172))  # the baseline far above: a -100 % change's log1p
def test_a_damaged_run_or_history_is_one_line_never_a_traceback(nights: Path, mutation: tuple) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(shutil.copytree(nights, Path(tmp) / "results"))
        if _mutate(results, mutation):
            _check(["history", "rebuild", "--results", str(results)], mutation)
        night = results / f"night-{mutation[1]:02d}" if mutation[0] != "metric" else results / "night-06"
        _check(["runs", "--results", str(results)], mutation)
        _check(["runs", "--results", str(results), "-f", "json"], mutation)
        _check(["table", str(night)], mutation)
        _check(["report", str(night), "-f", "json"], mutation)
        _check(["compare", str(results / "night-00"), str(night)], mutation)
        _check(["compare", str(results / "night-00"), str(night), "--force", "-f", "csv"], mutation)
        # a number changed in the newest nights may be a regression by the data (regress: 1); damage must
        # never be a traceback or more than one error line (test_the_nights_are_normal: unchanged, never 1)
        _check(["regress", SUITE, "--results", str(results)], mutation, allowed=ALLOWED | {1})


def test_the_nights_are_normal(nights: Path) -> None:
    """The premise: unchanged, the nights show no regression (regress: 0, or 2 "cannot tell yet" on seven
    nights) and every other command works."""
    for argv in (
        ["runs", "--results", str(nights)],
        ["table", str(nights / "night-06")],
        ["compare", str(nights / "night-00"), str(nights / "night-06")],
    ):
        assert _outcome(argv)[0] == 0, argv
    assert _outcome(["regress", SUITE, "--results", str(nights)])[0] in (0, 2)
