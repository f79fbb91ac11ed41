"""Issue 52, hostile and unlucky inputs round four, the files: every write through ``store`` fails in one line
naming the path (read-only folder, a file in the way, a folder in the way, no permission, full disk), the
standard output to a full disk, reads bounded by size, ``suites show``, failed runs in ``compare``/``table``,
a run folder without its steps, duplicate run ids in ``history rebuild`` and the smaller cases of item 10.
Numbered as in the issue. The property test is tests/unit/test_hostile_properties.py."""

from __future__ import annotations

import errno
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pandas as pd
import pytest
from cli_process import run_main
from read_only import read_only

from ycsb_runner.errors import UserError
from ycsb_runner.paths import suites_dir
from ycsb_runner.runs.model import RunResult
from ycsb_runner.safe import files as store


def _one_line_error(proc: subprocess.CompletedProcess[str], *needles: str, code: int = 2) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert all(n in lines[0] for n in needles), lines[0]
    return lines[0]


def _one_line(text: str, *needles: str) -> None:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in text, text
    assert all(n in lines[0] for n in needles), lines[0]


# --- 5. filesystem errors on write -------------------------------------------------------------------------


def test_5_report_on_a_read_only_run_folder_is_one_line(audit: Path) -> None:
    with read_only(audit):
        proc = run_main("report", str(audit))
    _one_line_error(proc, "cannot write", str(audit), "read-only file system", "elsewhere")


def test_5_table_save_on_a_read_only_run_folder_is_one_line(audit: Path) -> None:
    with read_only(audit):
        proc = run_main("table", str(audit), "--save")
    _one_line_error(proc, "cannot write", "study_table.csv", "read-only file system")


def test_5_report_out_an_existing_file_names_the_file(audit: Path, tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("mine\n")
    proc = run_main("report", str(audit), "--out", str(afile))
    _one_line_error(proc, "cannot write", f"{afile} is a file, not a folder")
    assert afile.read_text() == "mine\n"


def test_5_a_folder_where_the_file_goes_is_one_line(audit: Path) -> None:
    (audit / "study_table.csv").unlink()
    (audit / "study_table.csv").mkdir()
    proc = run_main("table", str(audit), "--save")
    _one_line_error(proc, "cannot write", "study_table.csv", "a folder is in the way")


@pytest.mark.parametrize(
    "args", [["parse", "PARSE", "-f", "csv"], ["table", "RUN"], ["runs", "--results", "DIR"]]
)
def test_5_standard_output_to_a_full_disk_is_one_line(args: list[str], audit: Path) -> None:
    capture = Path(__file__).parents[1] / "data" / "ycsb" / "binding-load.stdout"
    subst = {"PARSE": str(capture), "RUN": str(audit), "DIR": str(audit.parent)}
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "ycsb_runner", *(subst.get(a, a) for a in args)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
        )
    _one_line_error(proc, "cannot write the output", "No space left on device", "send it elsewhere")


def test_5_a_file_on_a_full_disk_is_one_line(tmp_path: Path, audit: Path) -> None:
    """A real full disk: a 64 KiB tmpfs (root), the report's figures do not fit."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    small = tmp_path / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(small)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        proc = run_main("report", str(audit), "--out", str(small))
    finally:
        subprocess.run(["umount", str(small)], check=True)
    _one_line_error(proc, "disk full while writing", str(small), "free some space")


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (errno.EACCES, "no permission to write there"),
        (errno.EPERM, "no permission to write there"),
        (errno.EROFS, "read-only file system"),
        (errno.ENOSPC, "disk full"),
        (errno.EIO, "Input/output error"),
    ],
)
def test_5_every_os_error_of_a_write_is_one_user_error(
    code: int, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EACCES cannot be made for root by a real file system: the temporary file's creation is made to fail
    as the kernel would, at the one place every write goes through."""

    def refuse(*_a: object, **_k: object) -> None:
        raise OSError(code, os.strerror(code), str(tmp_path))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(UserError) as caught:
        store.atomic_write_text(tmp_path / "x.csv", "a\n")
    assert str(tmp_path / "x.csv") in str(caught.value) and said in str(caught.value)
    assert "\n" not in str(caught.value)


# --- reads bounded by size (item 10's 200 MB manifest) ------------------------------------------------------


def _sparse(path: Path, size: int, head: bytes = b'{"x": "') -> None:
    """*path* of *size* bytes that takes no disk (a hole after *head*)."""
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)


def test_10_a_200_mb_manifest_is_refused_before_it_is_read(
    audit: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _sparse(audit / "manifest.json", 200 << 20)
    read: list[int] = []
    real = os.read

    def counting(fd: int, n: int) -> bytes:
        read.append(n)
        return real(fd, n)

    monkeypatch.setattr(os, "read", counting)
    with pytest.raises(UserError, match=r"manifest.json is 200.0 MiB: a run's manifest is at most 32 MiB"):
        RunResult.load(audit)
    assert sum(read) == 0  # not a byte of it read


def test_10_a_manifest_that_grows_past_the_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The size is checked on the open file and the read is capped: no more than the limit + 1 is read."""
    path = tmp_path / "m.json"
    path.write_bytes(b"x" * 100)
    monkeypatch.setattr(os, "fstat", lambda fd: os.stat_result((0,) * 6 + (10,) + (0,) * 3))
    with pytest.raises(UserError, match="is at most"):
        store.read_bounded(path, 50, "a run's manifest")
    assert store.read_bounded(path, 100, "x") == b"x" * 100


def test_10_the_cli_says_the_manifest_is_too_large_in_one_line(audit: Path) -> None:
    _sparse(audit / "manifest.json", 200 << 20)
    _one_line_error(run_main("table", str(audit)), "200.0 MiB", "at most 32 MiB")


# --- 6. suites show -----------------------------------------------------------------------------------------


def test_6_suites_show_refuses_a_file_that_is_not_a_suite(tmp_path: Path) -> None:
    proc = run_main("suites", "show", "/etc/passwd")
    _one_line_error(proc, "suite passwd", "invalid TOML")
    assert "root:" not in proc.stdout
    other = tmp_path / "pyproject.toml"
    other.write_text('[project]\nname = "x"\n')
    proc = run_main("suites", "show", str(other))
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr


def test_6_suites_show_refuses_a_file_over_the_size_limit(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    _sparse(big, 288 << 20, b"# ")
    proc = run_main("suites", "show", str(big))
    _one_line_error(proc, "288.0 MiB", "a suite file is at most 1 MiB")
    assert proc.stdout == ""


def test_6_suites_show_prints_a_built_in_suite_as_it_is() -> None:
    proc = run_main("suites", "show", "quick")
    assert proc.returncode == 0
    assert proc.stdout == (suites_dir() / "quick.toml").read_text()


def test_6_suites_show_escapes_what_a_suite_file_holds(tmp_path: Path) -> None:
    """TOML refuses a raw ESC; a bidi override or a line separator in a description it accepts: shown as
    escapes, never obeyed."""
    text = (suites_dir() / "quick.toml").read_text()
    hostile = re.sub(r'(?m)^description = "', 'description = "\u202eevil\u2028', text, count=1)
    assert hostile != text
    path = tmp_path / "hostile.toml"
    path.write_text(hostile, encoding="utf-8")
    proc = run_main("suites", "show", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "\u202e" not in proc.stdout and "\u2028" not in proc.stdout
    assert "evil" in proc.stdout and "\\u202e" in proc.stdout.lower()


# --- 7. compare and table of a failed run -------------------------------------------------------------------


def _failed(run: Path, tmp_path: Path, *, status: str = "failed", step: bool = True) -> Path:
    """A copy of *run* whose manifest says *status* and (*step*) whose last step failed."""
    out = Path(shutil.copytree(run, tmp_path / "failed-run"))
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["status"] = status
    (out / "manifest.json").write_text(json.dumps(manifest))
    if step:
        steps = pd.read_csv(out / "steps.csv")
        steps.loc[steps.index[-1], "verdict"] = "failed"  # the status, as format 2 names it
        steps.to_csv(out / "steps.csv", index=False)
    return out


def test_7_compare_refuses_a_failed_contender_unless_forced(tencent: Path, tmp_path: Path) -> None:
    failed = _failed(tencent, tmp_path)
    res = run_main("compare", str(tencent), str(failed))
    assert res.returncode == 2 and res.stdout == ""
    _one_line(res.stderr, "cannot compare", "failed-run is failed", "1 of", "steps failed", "--force")
    forced = run_main("compare", str(tencent), str(failed), "--force", "-f", "json")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    doc = json.loads(forced.stdout)
    assert "[FAILED RUN]" in doc["title"] and "failed-run is failed" in doc["settings_differ"]
    assert "FAILED RUN (--force)" in forced.stderr


def test_7_compare_refuses_failed_steps_of_a_completed_run(tencent: Path, tmp_path: Path) -> None:
    failed = _failed(tencent, tmp_path, status="completed")
    res = run_main("compare", str(failed), str(tencent))
    assert res.returncode == 2
    _one_line(res.stderr, "cannot compare", "failed-run: 1 of", "steps failed")


def test_7_table_marks_a_failed_run_and_its_steps(tencent: Path, tmp_path: Path) -> None:
    failed = _failed(tencent, tmp_path)
    res = run_main("table", str(failed), env={"COLUMNS": "200"})
    assert res.returncode == 0, res.stdout + res.stderr
    assert "[FAILED RUN]" in res.stdout and "did not complete: failed-run is failed" in res.stdout
    assert "1 of" in res.stdout and "steps failed" in res.stdout
    doc = json.loads(run_main("table", str(failed), "-f", "json").stdout)
    assert doc["failed"].startswith("did not complete") and "[FAILED RUN]" in doc["title"]
    clean = run_main("table", str(tencent), env={"COLUMNS": "200"})
    assert "FAILED" not in clean.stdout and "did not complete" not in clean.stdout


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (["--alpha", "2"], "--alpha 2.0"),
        (["--alpha", "nan"], "--alpha nan"),
        (["--alpha", "0"], "--alpha 0.0"),
        (["--min-effect", "-5"], "--min-effect -5.0"),
        (["--min-effect", "inf"], "--min-effect inf"),
    ],
)
def test_10_compare_refuses_what_regress_refuses(option: list[str], said: str, tencent: Path) -> None:
    res = run_main("compare", str(tencent), str(tencent), *option)
    assert res.returncode == 2 and res.stdout == ""
    _one_line(res.stderr, said)
    regress = run_main("regress", "tencent-analyse-tiny", "--results", str(tencent.parent), *option)
    assert regress.returncode == 2 and said in regress.stderr  # the same words


# --- 8. a run folder without steps.csv ----------------------------------------------------------------------


@pytest.mark.parametrize("command", ["table", "report", "compare"])
def test_8_a_run_folder_without_steps_says_so(command: str, tencent: Path) -> None:
    (tencent / "steps.csv").unlink()
    argv = [command, str(tencent)] + ([str(tencent)] if command == "compare" else [])
    res = run_main(*argv)
    assert res.returncode == 2, res.stdout + res.stderr
    _one_line(res.stderr, "has no steps.csv", "re-run the suite")
    assert res.stdout == "" and not (tencent / "report.html").exists()


# --- 9. two folders with one run id; a run id that is not a name -------------------------------------------


def _results_with(tencent: Path, *copies: str) -> Path:
    results = tencent.parent
    for name in copies:
        shutil.copytree(tencent, results / name)
    return results


def test_9_history_rebuild_indexes_a_run_id_once_and_names_the_copy(tencent: Path) -> None:
    from ycsb_runner.runs.history import open_history

    results = _results_with(tencent, "tencent-analyse-copy", "a-copy-first")  # a-copy-first sorts first
    res = run_main("history", "rebuild", "--results", str(results))
    assert res.returncode == 0, res.stdout + res.stderr
    said = json.loads(res.stdout)
    runs = open_history(results, None).runs()
    assert said["runs"] == len(runs) == 1
    assert Path(runs["folder"].iloc[0]).name == "tencent-analyse"  # the folder named as the run id
    warnings = [ln for ln in res.stderr.replace("\n  ", " ").splitlines() if "two folders" in ln]
    assert len(warnings) == 2, res.stderr
    assert all("indexed from tencent-analyse;" in w for w in warnings), warnings
    assert any("remove or rename the copy a-copy-first" in w for w in warnings)
    assert any("remove or rename the copy tencent-analyse-copy" in w for w in warnings)


def test_10_a_manifest_run_id_that_is_not_a_name_is_not_indexed(tencent: Path) -> None:
    from ycsb_runner.runs.history import open_history

    results = _results_with(tencent, "evil")
    manifest = json.loads((results / "evil" / "manifest.json").read_text())
    manifest["run_id"] = "../../evil"
    (results / "evil" / "manifest.json").write_text(json.dumps(manifest))
    res = run_main("history", "rebuild", "--results", str(results))
    assert res.returncode == 0, res.stdout + res.stderr
    assert json.loads(res.stdout)["runs"] == 1
    assert set(open_history(results, None).runs()["run_id"]) == {"tencent-analyse"}
    assert "skipped evil: its manifest's run id '../../evil'" in res.stderr.replace("\n  ", " ")


# --- 10. the smaller cases ----------------------------------------------------------------------------------


def test_10_a_huge_round_trip_is_not_inf_percent() -> None:
    from ycsb_runner.nightly.canary import Move

    huge = Move("canary_rtt_us", "", "night-09", slowdown=800.0, noise=0.01)
    assert "inf" not in huge.text and "over 1,000,000 % longer on night-09" in huge.text
    assert "was 50 % longer" in Move("canary_rtt_us", "", "n", slowdown=math.log(1.5), noise=0.01).text


def test_10_results_env_pointing_at_a_file_is_one_line(tmp_path: Path) -> None:
    afile = tmp_path / "results"
    afile.write_text("")
    env = {**os.environ, "YCSB_RUNNER_RESULTS": str(afile)}
    for argv in (["runs"], ["history", "rebuild"]):
        _one_line_error(run_main(*argv, env=env), "YCSB_RUNNER_RESULTS=", "is a file, not a folder")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_10_a_utf16_capture_gets_the_encoding_hint(encoding: str, tmp_path: Path) -> None:
    capture = Path(__file__).parents[1] / "data" / "ycsb" / "binding-load.stdout"
    u16 = tmp_path / "capture.stdout"
    u16.write_bytes(capture.read_text().encode(encoding))
    res = run_main("parse", str(u16))
    assert res.returncode == 2
    _one_line(res.stderr, "does not look like YCSB output", "looks like UTF-16", "iconv -f UTF-16")


def test_10_binary_input_gets_no_encoding_hint(tmp_path: Path) -> None:
    noise = tmp_path / "noise.stdout"
    noise.write_bytes(bytes(range(256)) * 16)
    res = run_main("parse", str(noise))
    assert res.returncode == 2 and "does not look like YCSB output" in res.stderr
    assert "UTF-16" not in res.stderr


def test_10_regress_accept_by_nobody_is_refused(tencent: Path) -> None:
    argv = [
        "regress",
        "accept",
        "tencent-analyse-tiny",
        "--why",
        "x",
        "--by",
        " ",
        "--results",
        str(tencent.parent),
    ]
    res = run_main(*argv)
    assert res.returncode == 2
    _one_line(res.stderr, "--by ''", "name who accepts it")


def test_10_a_figure_of_1e308_shows_no_numpy_warning(tencent: Path, tmp_path: Path) -> None:
    huge = Path(shutil.copytree(tencent, tmp_path / "huge"))
    steps = pd.read_csv(huge / "steps.csv")
    steps["throughput_ops_s"] = steps["throughput_ops_s"].where(steps["throughput_ops_s"].isna(), 1e308)
    steps.to_csv(huge / "steps.csv", index=False)
    ops = pd.read_csv(huge / "operations.csv")
    ops[["average_latency_us", "p99"]] = 1e308
    ops.to_csv(huge / "operations.csv", index=False)
    for argv in (["table", str(huge)], ["compare", str(tencent), str(huge)], ["report", str(huge)]):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")  # every warning raised (a process would show each one once)
            proc = run_main(*argv)
        said = proc.stderr + "".join(f"{w.category.__name__}: {w.message}\n" for w in seen)
        assert proc.returncode == 0, said
        assert "overflow" not in said and "RuntimeWarning" not in said, said
