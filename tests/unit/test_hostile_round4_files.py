"""Issue 52, hostile and unlucky inputs round four, the files: every write through ``store`` fails in one line
naming the path (read-only folder, a file in the way, a folder in the way, no permission, full disk), the
standard output to a full disk, reads bounded by size, ``suites show``, failed runs in ``compare``/``table``,
a run folder without its steps, duplicate run ids in ``history rebuild`` and the smaller cases of item 10.
Numbered as in the issue. The property test is tests/unit/test_hostile_properties.py."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_process import run_module

from ycsb_runner import store
from ycsb_runner.errors import UserError


def _one_line_error(proc: subprocess.CompletedProcess[str], *needles: str, code: int = 2) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert all(n in lines[0] for n in needles), lines[0]
    return lines[0]


@contextlib.contextmanager
def _read_only(folder: Path) -> Iterator[None]:
    """*folder* bound read-only onto itself (root ignores chmod, a read-only mount it does not)."""
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root (CI runs as root)")
    made = subprocess.run(["mount", "--bind", "-o", "ro", str(folder), str(folder)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"mount --bind -o ro failed: {made.stderr.decode(errors='replace').strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=True)


# --- 5. filesystem errors on write -------------------------------------------------------------------------


def test_5_report_on_a_read_only_run_folder_is_one_line(audit: Path) -> None:
    with _read_only(audit):
        proc = run_module("report", str(audit))
    _one_line_error(proc, "cannot write", str(audit), "read-only file system", "elsewhere")


def test_5_table_save_on_a_read_only_run_folder_is_one_line(audit: Path) -> None:
    with _read_only(audit):
        proc = run_module("table", str(audit), "--save")
    _one_line_error(proc, "cannot write", "study_table.csv", "read-only file system")


def test_5_report_out_an_existing_file_names_the_file(audit: Path, tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("mine\n")
    proc = run_module("report", str(audit), "--out", str(afile))
    _one_line_error(proc, "cannot write", f"{afile} is a file, not a folder")
    assert afile.read_text() == "mine\n"


def test_5_a_folder_where_the_file_goes_is_one_line(audit: Path) -> None:
    (audit / "study_table.csv").unlink()
    (audit / "study_table.csv").mkdir()
    proc = run_module("table", str(audit), "--save")
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
        proc = run_module("report", str(audit), "--out", str(small))
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
