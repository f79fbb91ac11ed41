"""A capture cut short must be called `truncated` with a reason, whatever byte it was cut at."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from property_examples import examples

from ycsb_runner.parse import parse_output

DATA = Path(__file__).parents[1] / "data" / "ycsb"
# Complete captures of every measurement type whose status is `completed`.
COMPLETE = [
    "hdr_op",
    "hdr_both",
    "hdr_histogram",
    "hdr_raw",
    "hdr_percentiles",
    "histogram",
    "histogram_both",
    "histogram_verbose",
    "timeseries",
    "raw_stdout",
    "workload_e",
    "workload_f",
    "trackjvm",
    "load",
]
CUT = settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def streams(name: str) -> tuple[bytes, bytes]:
    return (DATA / f"{name}.stdout").read_bytes(), (DATA / f"{name}.stderr").read_bytes()


def summary_start(stdout: bytes) -> int:
    return stdout.index(b"[OVERALL]")


@pytest.mark.parametrize("name", COMPLETE)
def test_complete_captures_stay_completed(name):
    run = parse_output(*streams(name))
    assert run.completion.status == "completed", run.completion.reasons


def test_the_first_700_bytes_are_not_a_complete_run():
    """The issue's case: a cut mid-number must not read as a smaller number in a completed run."""
    stdout, stderr = streams("hdr_op")
    run = parse_output(stdout[:700], stderr)
    assert run.completion.status == "truncated"
    assert any("middle of a line" in r for r in run.completion.reasons)


@CUT
@given(st.sampled_from(COMPLETE), st.data())
def test_a_cut_anywhere_in_the_summary_is_truncated(name, data):
    stdout, stderr = streams(name)
    cut = data.draw(st.integers(summary_start(stdout), len(stdout) - 1), label="cut")
    run = parse_output(stdout[:cut], stderr)
    assert run.completion.status == "truncated", (cut, stdout[cut - 80 : cut])
    assert run.completion.reasons


@pytest.mark.parametrize("name", COMPLETE)
def test_a_cut_at_any_line_break_in_the_summary_is_truncated(name):
    """Cut exactly after a line: no half line to see, so missing metrics/sections/operations must show it.
    Every line break of a short summary (up to 40 lines) is tried; of longer ones every section edge (its
    first line, the line before and after), the last lines, and every 3rd line (over 100 summary lines:
    histogram buckets, every 9th and the last 40; raw-data captures over 500 lines: every 25th and the last
    40)."""
    stdout, stderr = streams(name)
    lines = stdout.splitlines(keepends=True)
    first = next(i for i, ln in enumerate(lines) if ln.startswith(b"[OVERALL]"))
    cuts = range(first, len(lines))
    if len(lines) > 500:
        cuts = sorted(set(range(first, len(lines), 25)) | set(range(len(lines) - 40, len(lines))))
    elif len(cuts) > 40:
        section = [ln.split(b"]", 1)[0] if ln.startswith(b"[") else None for ln in lines]
        edges = {i for i in range(first + 1, len(lines)) if section[i] != section[i - 1]}
        near = {c for e in edges for c in (e - 1, e, e + 1)}
        step, tail = (9, 40) if len(cuts) > 100 else (3, 10)
        cuts = sorted((near | set(range(first, len(lines), step)) | set(cuts[-tail:])) & set(cuts))
    for keep in cuts:
        if not any(ln.startswith(b"[") for ln in lines[keep:]):
            continue  # only non-summary text was cut off
        if name.startswith("timeseries") and _only_last_points_cut(lines, keep):
            # A line-aligned cut of the last time-series point alone looks like an operation that stopped
            # one interval early (sparse operations do): not called truncated, by design.
            continue
        run = parse_output(b"".join(lines[:keep]), stderr)
        assert run.completion.status == "truncated", (keep, lines[keep - 1 : keep + 1])


def _only_last_points_cut(lines: list[bytes], keep: int) -> bool:
    import re

    point = re.compile(rb"^\[([^\]]+)\], \d+, ")
    section = point.match(lines[keep - 1])
    rest = [ln for ln in lines[keep:] if ln.startswith(b"[")]
    return (
        bool(section)
        and all((m := point.match(ln)) and m.group(1) == section.group(1) for ln in rest)
        and len(rest) <= 1
    )


@CUT
@given(st.sampled_from(COMPLETE), st.data())
def test_a_cut_mid_line_of_stderr_is_truncated(name, data):
    stdout, stderr = streams(name)
    ends = [i for i, b in enumerate(stderr) if b == 0x0A]
    cut = data.draw(st.integers(1, len(stderr) - 1).filter(lambda c: c - 1 not in ends), label="cut")
    run = parse_output(stdout, stderr[:cut])
    assert run.completion.status == "truncated"
    assert any("stderr ends in the middle of a line" in r for r in run.completion.reasons)


def test_reasons_name_what_is_missing():
    stdout, stderr = streams("hdr_op")
    text = stdout.decode()
    # Drop the last section's percentile lines: it lacks what its siblings have.
    lines = text.splitlines(keepends=True)
    last = lines[-1].split("]")[0] + "]"
    cut = "".join(ln for ln in lines if not (ln.startswith(last) and "Percentile" in ln))
    run = parse_output(cut, stderr)
    assert run.completion.status == "truncated"
    assert any("lacks" in r and "PercentileLatency" in r for r in run.completion.reasons)
    # Drop a whole section that the status lines report.
    sections = [ln.split("]")[0][1:] for ln in lines if ln.startswith("[")]
    victim = "UPDATE" if "UPDATE" in sections else "READ"
    without = "".join(ln for ln in lines if not ln.startswith(f"[{victim}]"))
    run = parse_output(without, stderr)
    assert run.completion.status == "truncated"
    assert any(f"report {victim}" in r or "count" in r for r in run.completion.reasons)
