"""``parse_file`` chooses the parse entry point from the file (a JSON export, a capture streamed, a pipe read
whole), on real YCSB 0.17.0 captures (tests/data/ycsb/), and gives what the whole-input parser gives."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pandas as pd
import pytest

from ycsb_runner import UserError, parse_file
from ycsb_runner.parse import parse_export, parse_output, run_output

YCSB = Path(__file__).parents[1] / "data" / "ycsb"


def _same(got, want) -> None:
    assert got.completion == want.completion and got.overall == want.overall
    for table in ("summary", "operations", "status"):
        pd.testing.assert_frame_equal(getattr(got, table), getattr(want, table))


def test_a_capture_is_streamed_with_its_stderr_beside_it(monkeypatch: pytest.MonkeyPatch) -> None:
    out, err = YCSB / "binding-workloada.stdout", YCSB / "binding-workloada.stderr"
    whole = parse_output(out.read_bytes(), err.read_bytes(), exit_code=0)
    _same(parse_file(out, exit_code=0), whole)
    _same(parse_file(out, err, exit_code=0), whole)

    def held_whole(*args, **kwargs):
        raise AssertionError("a capture file was read whole")

    monkeypatch.setattr(run_output, "parse_output", held_whole)
    assert parse_file(out).completion.status == whole.completion.status  # streamed: parse_capture alone


def test_a_json_export_by_name_or_content(tmp_path: Path) -> None:
    export = YCSB / "export_json.json"
    want = parse_export(export)
    _same(parse_file(export), want)
    renamed = tmp_path / "export.txt"  # no .json suffix: its first bytes say what it is
    renamed.write_bytes(export.read_bytes())
    _same(parse_file(renamed), want)


def test_a_pipe_is_read_whole(tmp_path: Path) -> None:
    out = YCSB / "binding-workloada.stdout"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(out.read_bytes()))
    writer.start()
    try:
        got = parse_file(fifo)
    finally:
        writer.join()
    _same(got, parse_output(out.read_bytes(), b""))


def test_what_is_not_a_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="is a directory: give the YCSB output file"):
        parse_file(tmp_path)
    with pytest.raises(UserError, match="file not found"):
        parse_file(tmp_path / "nope.stdout")
