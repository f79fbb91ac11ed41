"""The status-group fast path (one bytes.translate + pandas' C reader) must give exactly what the general
regex path gives, on every capture and on any damage to the groups; where it cannot, it must step aside."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from property_examples import examples

from ycsb_runner.parse.lines import scan
from ycsb_runner.parse.status import _groups, _hdr_fast, find_status

DATA = Path(__file__).parents[1] / "data" / "ycsb"
CAPTURES = sorted(p.name for p in DATA.glob("*.stderr"))


def rests_of(text: str) -> list[str]:
    return find_status(scan(text)).rests


def assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        if a[key].dtype == object:
            assert a[key].tolist() == b[key].tolist(), key
        else:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)


@pytest.mark.parametrize("name", CAPTURES)
def test_fast_path_equals_general_path_on_captures(name):
    rests = rests_of((DATA / name).read_text(encoding="utf-8"))
    assert_same(_groups(rests, fast=True), _groups(rests, fast=False))


def test_fast_path_is_taken_for_plain_hdr_status_lines():
    rests = rests_of((DATA / "hdr_op.stderr").read_text(encoding="utf-8"))
    fast = _hdr_fast(rests)
    assert fast is not None and len(fast["section"]) > 0
    assert set(fast["section"]) == {"READ", "UPDATE", "CLEANUP"} & set(fast["section"])


GOOD = "[READ: Count=50, Max=6571, Min=1, Avg=1594.54, 90=3151, 99=6571, 99.9=6571, 99.99=6571]"
TWO = GOOD + " [UPDATE: Count=0, Max=0, Min=9223372036854775807, Avg=NaN, 90=0, 99=0, 99.9=0, 99.99=0]"


@pytest.mark.parametrize(
    "rest",
    [
        GOOD.replace("Max=6571, Min=1", "Min=1, Max=6571"),  # keys swapped
        GOOD.replace("READ", "RE AD"),  # a space in the name
        GOOD.replace("Avg=1594.54", "Avg=1594,54"),  # decimal comma
        GOOD.replace(", 99.99", " 99.99"),  # a comma missing
        GOOD.replace("READ", "RE:AD"),
        GOOD + " tail",
        "Max=1" + GOOD,
        "abc " + GOOD,
        TWO.replace("] [", "] x ["),
        GOOD.replace("Count=50", "Count=50=1"),
        TWO.replace("] ", "]  "),
        GOOD.replace("6571]", "6571"),
        GOOD.replace("Count=50", "Count=5 0"),
        "[12: Count=1, Max=2, Min=3, Avg=4, 90=5, 99=6, 99.9=7, 99.99=8]",
    ],
)
def test_fast_path_steps_aside_for_other_layouts(rest):
    rests = [TWO, rest, GOOD]
    assert_same(_groups(rests, fast=True), _groups(rests, fast=False))
    if rest != "[12: Count=1, Max=2, Min=3, Avg=4, 90=5, 99=6, 99.9=7, 99.99=8]":
        assert _hdr_fast(rests) is None


PIECES = st.sampled_from(
    [
        GOOD,
        TWO,
        " ",
        "  ",
        "[",
        "]",
        ",",
        ", ",
        "=",
        ":",
        "Count=",
        "Max=1",
        "\t",
        "x",
        "1",
        "NaN",
        "",
        "\u221e",
    ]
)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(PIECES, max_size=6).map("".join), min_size=1, max_size=6))
def test_fast_path_equals_general_path_on_any_group_text(rests):
    assert_same(_groups(rests, fast=True), _groups(rests, fast=False))


@pytest.fixture(scope="module")
def whole_runs():
    """Every capture parsed with the default chunk size (once for the three chunk sizes below)."""
    from ycsb_runner.parse import parse_output

    names = sorted({p.stem for p in DATA.glob("*.stdout")})
    assert names
    return {
        n: parse_output((DATA / f"{n}.stdout").read_bytes(), (DATA / f"{n}.stderr").read_bytes())
        for n in names
    }


@pytest.mark.parametrize("chunk", [1, 300, 4096])
def test_chunked_reading_changes_nothing(monkeypatch, whole_runs, chunk):
    """Streams are read in chunks of lines; tiny chunks must give exactly the one-chunk result."""
    from ycsb_runner.parse import parse_output, stream

    whole = whole_runs
    monkeypatch.setattr(stream, "CHUNK_BYTES", chunk)
    for n in sorted(whole):
        run = parse_output((DATA / f"{n}.stdout").read_bytes(), (DATA / f"{n}.stderr").read_bytes())
        ref = whole[n]
        for attr in ("summary", "operations", "status", "histogram", "timeseries", "raw"):
            pd.testing.assert_frame_equal(getattr(run, attr), getattr(ref, attr), obj=f"{n}.{attr}")
        assert run.completion == ref.completion and run.notes == ref.notes, n
        assert run.measurement_type == ref.measurement_type


def test_combined_capture_duplicates_are_found_across_chunks(monkeypatch):
    """A 2>&1 capture of a timeseries run holds every status line twice, adjacent; the pair may straddle a
    chunk boundary."""
    from ycsb_runner.parse import parse_output, stream

    lines = (DATA / "timeseries.stderr").read_text().splitlines()
    status = [ln for ln in lines if " sec: " in ln]
    summary = [ln for ln in (DATA / "timeseries.stdout").read_text().splitlines() if ln.startswith("[")]
    both = "\n".join(lines[:5] + [x for ln in status for x in (ln, ln)] + summary)
    ref = parse_output(both)
    assert ref.status["status_index"].nunique() == len(status)
    for chunk in (50, 333):
        monkeypatch.setattr(stream, "CHUNK_BYTES", chunk)
        run = parse_output(both)
        pd.testing.assert_frame_equal(run.status, ref.status)
        assert run.notes == ref.notes and any("duplicate" in n for n in run.notes)
