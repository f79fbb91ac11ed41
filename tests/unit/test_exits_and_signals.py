"""Issue 52: every way out of the command is a documented exit code with at most one line.

A stop signal once ``main``'s handlers are in place, and one raised inside a callback that drops it
(importlib's module locks), ends the command with one ``interrupted`` line and 128 + the signal; an exception
no command expected is one ``internal error`` line and exit 70; a closed stdout is 141; and no error the
history, the options or the files can raise makes ``regress`` or ``regress accept`` exit 1, which means
"regression". (The sweep of signals over the whole start-up is bench/signal_bench.py, and
tests/integration/test_faults_hostile.py's test_ctrl_c_while_the_cli_loads_is_one_line.)"""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_hostile_round3 import SUITE, _hold_lock
from test_regress import NOISE, _nightly_folders
from typer.testing import CliRunner

from ycsb_runner import cli, config, errors
from ycsb_runner.runs.history import METRIC_COLUMNS, canary_rows
from ycsb_runner.runs.model import CanariesRecord

ROOT = Path(__file__).parents[2]
Main = Callable[..., tuple[int, str, str]]


@pytest.fixture
def main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Iterator[Main]:
    """``ycsb-runner ARGS`` through ``cli.main`` in this process: (exit code, stdout, stderr). The signal
    handlers and the unraisable hook main puts in place are put back after the test."""
    saved = {s: signal.getsignal(s) for s in (*cli.STOP_SIGNALS, signal.SIGALRM)}
    hook = sys.unraisablehook

    def call(*argv: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["ycsb-runner", *argv])
        monkeypatch.setattr(cli._Stop, "dropped", None)
        for name, value in (("signum", None), ("leaving", False)):
            monkeypatch.setattr(errors.Stop, name, value)
        with pytest.raises(SystemExit) as stop:
            cli.main()
        out = capsys.readouterr()
        assert isinstance(stop.value.code, int)
        return stop.value.code, out.out, out.err

    try:
        yield call
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        sys.unraisablehook = hook


def _lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


# --- signals -------------------------------------------------------------------------------------------

_DROP_THEN_READ = """
import sys, weakref, _signal
from ycsb_runner import cli
from ycsb_runner.parse import files as parse

read = parse._read

class Lock:
    pass

def drop_then_read(path):
    # the Ctrl-C lands inside a weak-reference callback, as in importlib's _get_module_lock: the handler's
    # KeyboardInterrupt is dropped there ("Exception ignored in ..."), then the command reads stdin for ever
    lock = Lock()
    ref = weakref.ref(lock, lambda _ref: _signal.raise_signal(_signal.SIGINT))
    del lock
    print("dropped", file=sys.stderr, flush=True)
    return read(path)

parse._read = drop_then_read
sys.argv = ["ycsb-runner", "parse", "/dev/stdin"]
cli.main()
"""


_ANOTHER_THREAD_THEN_READ = """
import signal, sys, threading, time
from ycsb_runner import cli
from ycsb_runner.parse import files as parse

read = parse._read

def poke():
    time.sleep(0.5)  # the main thread is in its read by now
    print("sent", file=sys.stderr, flush=True)
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # as the kernel may: to this thread

def read_while_poked(path):
    threading.Thread(target=poke, daemon=True).start()
    return read(path)

parse._read = read_while_poked
sys.argv = ["ycsb-runner", "parse", "/dev/stdin"]
cli.main()
"""


_SWALLOW_THEN_READ = """
import signal, sys
from ycsb_runner import cli
from ycsb_runner.parse import files as parse

read = parse._read

def swallow_then_read(path):
    try:
        signal.raise_signal(signal.SIGINT)
    except BaseException:  # a library's bare except
        pass
    print("swallowed", file=sys.stderr, flush=True)
    return read(path)

parse._read = swallow_then_read
sys.argv = ["ycsb-runner", "parse", "/dev/stdin"]
cli.main()
"""


def _as_from_a_terminal() -> None:
    """In the command's process before it starts: the stop signals as a command typed at a terminal gets
    them. A test run started in the background (``cmd &``: SIGINT ignored) or under ``nohup`` (SIGHUP
    ignored) passes those on, and the command rightly leaves an ignored signal ignored (cli's
    ``_catch_stop_signals``): the signal these tests send would be lost (a fresh-clone check run under
    nohup: four tests waited their 60 s)."""
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


@pytest.mark.parametrize(
    "script",
    [_DROP_THEN_READ, _ANOTHER_THREAD_THEN_READ, _SWALLOW_THEN_READ],
    ids=["dropped", "thread", "swallowed"],
)
def test_a_lost_looking_ctrl_c_still_ends_a_read_of_stdin(script: str) -> None:
    """The ways a Ctrl-C was lost in `parse /dev/stdin`: dropped by a callback (raised again), given by the
    kernel to another thread than the main one, blocked in its read (the read wakes), or its
    KeyboardInterrupt swallowed by a bare except (the waking read raises it)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,  # never written: without the interrupt, the read never returns
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_from_a_terminal,
    )
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("the Ctrl-C was lost: the command still read stdin after 60 s")
    finally:
        _out, err = proc.communicate()
    assert _lines(err)[1:] == ["interrupted: stopped; finished work is kept"], err
    assert proc.returncode == 130


def _caught(pid: int, sig: int) -> bool:
    """Whether process *pid* has a handler of its own for *sig* (SigCgt of /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = int(next(ln.split()[1] for ln in status.splitlines() if ln.startswith("SigCgt:")), 16)
    return bool(mask >> (sig - 1) & 1)


def stop_once_ready(sig: int, delay: float, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    """``ycsb-runner parse /dev/stdin`` (waits for input that never comes) sent *sig* *delay* seconds after
    main's handlers are in place (its SIGTERM caught: Python alone catches only SIGINT); the process as it
    ended (a TimeoutExpired when the signal was lost)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ycsb_runner", "parse", "/dev/stdin"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_from_a_terminal,
    )
    try:
        deadline = time.monotonic() + timeout
        while not _caught(proc.pid, signal.SIGTERM) and proc.poll() is None:
            assert time.monotonic() < deadline, "main's handlers never came"
            time.sleep(0.002)
        time.sleep(delay)
        proc.send_signal(sig)
        proc.wait(timeout=timeout)  # before communicate() closes stdin: the signal, not an empty input
    finally:
        if proc.poll() is None:
            proc.kill()
        out, err = proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize(
    ("sig", "code", "line"),
    [
        (signal.SIGTERM, 143, "interrupted by SIGTERM: stopped; finished work is kept"),
        (signal.SIGHUP, 129, "interrupted by SIGHUP: stopped; finished work is kept"),
    ],
)
def test_sigterm_and_sighup_are_one_line_and_their_code(sig: int, code: int, line: str) -> None:
    proc = stop_once_ready(sig, 0.0)  # as it loads the commands (Python itself would end silently)
    assert (proc.returncode, _lines(proc.stderr)) == (code, [line]), proc.stderr


def test_an_ignored_sigint_stays_ignored() -> None:
    """``nohup`` and a shell's background jobs ignore SIGINT: the command keeps it ignored."""
    code = (
        "import signal, sys\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nfrom ycsb_runner import cli\n"
        "cli._catch_stop_signals()\nprint(signal.getsignal(signal.SIGINT) == signal.SIG_IGN, "
        "signal.getsignal(signal.SIGTERM) is cli._on_stop)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "True"]


def test_typers_silent_exit_130_is_read_as_the_interrupt(main: Main, monkeypatch: pytest.MonkeyPatch) -> None:
    """Typer turns a KeyboardInterrupt into ``exit 130`` and prints nothing: main says it, once, with the
    signal's own code (143 for SIGTERM, where Typer says 130 for any)."""
    from ycsb_runner.errors import Interrupted
    from ycsb_runner.nightly import regress_service

    def stopped(*_a: object, **_k: object) -> None:
        raise Interrupted(signal.SIGTERM)

    monkeypatch.setattr(regress_service, "run_regress", stopped)
    code, out, err = main("regress", SUITE)
    assert (code, out, _lines(err)) == (143, "", ["interrupted by SIGTERM: stopped; finished work is kept"])


# --- exceptions no command expected --------------------------------------------------------------------


def test_an_unexpected_exception_is_one_line_and_exit_70(main: Main, monkeypatch: pytest.MonkeyPatch) -> None:
    from ycsb_runner.nightly import regress_service

    def broken(*_a: object, **_k: object) -> None:
        raise ValueError("window shape cannot be larger\nthan input array shape")

    monkeypatch.setattr(regress_service, "run_regress", broken)
    code, out, err = main("regress", SUITE)
    assert code == cli.EX_SOFTWARE == 70 and out == ""
    (line,) = _lines(err)
    assert line.startswith("internal error: ValueError: window shape cannot be larger than input array shape")
    assert "a bug in ycsb-runner" in line and f"{config.TRACEBACK}=1" in line
    monkeypatch.setenv(config.TRACEBACK, "1")
    code, _, err = main("regress", SUITE)
    assert code == 70 and "Traceback" in err and "in broken" in err


def test_a_closed_stdout_is_141_not_1(tmp_path: Path) -> None:
    """``regress ... | head -1``: 1 would say "regression" to a cron job; 141 is what SIGPIPE says."""
    results = tmp_path / "results"
    _nightly_folders(results, NOISE)
    assert CliRunner().invoke(cli.app, ["history", "rebuild", "--results", str(results)]).exit_code == 0
    read, write = os.pipe()
    os.close(read)  # nobody reads: the first write fails with EPIPE
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "ycsb_runner", "regress", SUITE, "--results", str(results), "--all"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        os.close(write)
    assert proc.returncode == cli.EXIT_BROKEN_PIPE == 141, proc.stderr
    assert "Traceback" not in proc.stderr


# --- regress and regress accept: exit 1 means a regression, nothing else ---------------------------------


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A history of nine normal nights (no regression: regress exits 0 or 2 on it), with canary rows."""
    results = tmp_path_factory.mktemp("sound") / "results"
    _nightly_folders(results, [*NOISE, 1.0, 0.99])
    assert CliRunner().invoke(cli.app, ["history", "rebuild", "--results", str(results)]).exit_code == 0
    con = sqlite3.connect(results / "history.sqlite")
    section = {
        "load_generator": [{"client": "local", "threads": 1, "ops_s": {"before": 1.0e6, "after": 1.01e6}}],
        "rtt_us": {"before": 180.0, "after": 181.0},
        "host": {"steal_pct": 0.1, "others_cpu_pct": 3.0},
    }
    rows = [r for i in range(9) for r in canary_rows(f"night-{i:02d}", CanariesRecord.from_json(section))]
    marks = ", ".join("?" * len(METRIC_COLUMNS))
    con.executemany(
        f"INSERT INTO metrics ({', '.join(METRIC_COLUMNS)}) VALUES ({marks})",
        [[r[c] for c in METRIC_COLUMNS] for r in rows],
    )
    con.commit()
    con.close()
    return results


def _sql(db: Path, *statements: str) -> None:
    con = sqlite3.connect(db)
    for s in statements:
        con.execute(s)
    con.commit()
    con.close()


def _new_db(db: Path, *statements: str) -> None:
    db.unlink()
    _sql(db, *statements)


# what each case does to a copy of the sound results folder (its history is results/history.sqlite)
DAMAGE: dict[str, Callable[[Path], None]] = {
    "0-byte": lambda db: db.write_bytes(b""),
    "random bytes": lambda db: db.write_bytes(random.Random(52).randbytes(8192)),
    "SQLite header, then garbage": lambda db: db.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 64),
    "another program's database": lambda db: _new_db(db, "CREATE TABLE notes (text TEXT)"),
    "runs without its columns": lambda db: _new_db(db, "CREATE TABLE runs (x)", "CREATE TABLE metrics (y)"),
    "a newer schema": lambda db: _sql(db, "PRAGMA user_version = 99"),
    "text values": lambda db: _sql(db, "UPDATE metrics SET value = 'abc' WHERE rowid % 5 = 0"),
    "text canary values": lambda db: _sql(db, "UPDATE metrics SET value = 'abc' WHERE phase = 'canary'"),
    "negative values": lambda db: _sql(db, "UPDATE metrics SET value = -value WHERE rowid % 3 = 0"),
    "a negative canary": lambda db: _sql(
        db, "UPDATE metrics SET value = -1 WHERE phase = 'canary' AND run_id = 'night-08'"
    ),
    "inf and NULL": lambda db: _sql(
        db,
        "UPDATE metrics SET value = 9e999 WHERE rowid % 4 = 0",
        "UPDATE metrics SET value = NULL WHERE rowid % 4 = 1",
    ),
    "blob values": lambda db: _sql(db, "UPDATE metrics SET value = x'00ff' WHERE rowid % 2 = 0"),
    "no metrics at all": lambda db: _sql(db, "DELETE FROM metrics"),
    "the newest night negative": lambda db: _sql(
        db, "UPDATE metrics SET value = -1 WHERE run_id = 'night-08'"
    ),
    "the newest night's canaries gone": lambda db: _sql(
        db, "DELETE FROM metrics WHERE phase = 'canary' AND run_id = 'night-08'"
    ),
    "no history file": lambda db: db.unlink(),
}
OPTIONS = {
    "--window above the nights": ["--window", "50"],
    "--window = the nights": ["--window", "9"],
    "--window 0": ["--window", "0"],
    "--confirm above --window": ["--confirm", "4"],
    "--alpha 2": ["--alpha", "2"],
    "--alpha nan": ["--alpha", "nan"],
    "--min-effect -5": ["--min-effect", "-5"],
    "--metric nope": ["--metric", "nope"],
    "--correction bonferroni": ["--correction", "bonferroni"],
    "--since not a date": ["--since", "yesterday-ish"],
    "--format nope": ["-f", "nope"],
    "--history-url ftp://x": ["--history-url", "ftp://x/h.sqlite"],
    "--history-url in a file": ["--history-url", "/etc/hostname/h.sqlite"],
}
COMMANDS = {"regress": ["regress", SUITE], "regress accept": ["regress", "accept", SUITE, "--why", "w"]}


def _judged_or_one_line(code: int, err: str) -> None:
    """Exit 0, 2 or 3, never 1; no traceback; either a judgement (its closing line names its exit code) or
    exactly one error line."""
    assert code in (0, 2, 3), err
    assert "Traceback" not in err and "internal error" not in err and "Exception ignored" not in err, err
    lines = _lines(err)
    if not (lines and f"; exit {code}" in lines[-1]):
        assert len(lines) == 1 and lines[0].startswith("error: "), err


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", DAMAGE)
def test_a_damaged_history_is_never_exit_1(
    case: str, command: str, sound: Path, tmp_path: Path, main: Main
) -> None:
    results = Path(shutil.copytree(sound, tmp_path / "results"))
    DAMAGE[case](results / "history.sqlite")
    code, _out, err = main(*COMMANDS[command], "--results", str(results))
    _judged_or_one_line(code, err)


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", OPTIONS)
def test_a_bad_option_is_never_exit_1(
    case: str, command: str, sound: Path, tmp_path: Path, main: Main
) -> None:
    results = Path(shutil.copytree(sound, tmp_path / "results"))
    code, _out, err = main(*COMMANDS[command], "--results", str(results), *OPTIONS[case])
    if case.startswith("--format") or case.startswith("--correction"):  # Click's own usage error: 2
        assert code == 2 and "Traceback" not in err, err
        return
    _judged_or_one_line(code, err)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_missing_or_odd_results_folder_is_never_exit_1(
    command: str, tmp_path: Path, main: Main, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("YCSB_RUNNER_HISTORY_URL", raising=False)
    (tmp_path / "a-file").write_text("x")
    for results in (tmp_path / "missing", tmp_path / "a-file", Path("/proc/self")):
        code, _out, err = main(*COMMANDS[command], "--results", str(results))
        _judged_or_one_line(code, err)


def test_a_history_locked_too_long_is_never_exit_1(
    sound: Path, tmp_path: Path, main: Main, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ycsb_runner.runs import history

    results = Path(shutil.copytree(sound, tmp_path / "results"))
    monkeypatch.setattr(history, "BUSY_WAIT_S", 0.3)  # (60 s in use)
    holder = _hold_lock(results / "history.sqlite", 60.0)
    try:
        for command in COMMANDS.values():
            code, _out, err = main(*command, "--results", str(results))
            _judged_or_one_line(code, err)
            assert code == 2 and "locked by another process" in err
    finally:
        holder.kill()
        holder.wait()


def test_the_window_above_the_nights_is_judged_with_a_note(sound: Path, main: Main) -> None:
    for command in COMMANDS.values():
        code, _out, err = main(*command, "--results", str(sound), "--window", "50", "--confirm", "1")
        _judged_or_one_line(code, err)
        assert "--window 50 is more than the 9 nights: windows up to 9 tested" in " ".join(err.split()), err


# --- the history's values as hostile input (pure, over frames) ------------------------------------------


def test_text_and_negative_values_are_left_out_of_their_series() -> None:
    from test_canaries import _history

    from ycsb_runner.nightly.regress import EXIT_REGRESSION, RegressOptions, regress

    runs, metrics = _history(12, server_slow=(10, 11))  # two nights of a slower server: a regression
    metrics["value"] = metrics["value"].astype(object)
    tp = metrics.index[
        (metrics["metric"] == "throughput_ops_s") & metrics["run_id"].isin(["night-03", "night-05"])
    ]
    metrics.loc[tp, "value"] = ["abc", -1000.0]
    out = regress(runs, metrics, "quick", RegressOptions())
    assert out.exit_code == EXIT_REGRESSION
    row = out.table[out.table["metric"] == "throughput_ops_s"].iloc[0]
    assert row["verdict"] == "regression" and row["nights"] == 10
    assert "2 night(s) left out: value not a number >= 0 (night-03, night-05)" in row["note"]
    assert "2 night value(s) left out of 1 series (not a number >= 0)" in out.reason


def test_canary_notes_never_say_none_moved_for_a_night_without_one() -> None:
    from test_canaries import _history

    from ycsb_runner.nightly.regress import RegressOptions, regress
    from ycsb_runner.runs.history import CANARY

    runs, metrics = _history(12)
    newest = metrics["run_id"] == "night-11"
    gone = regress(runs, metrics[~(newest & (metrics["phase"] == CANARY))], "quick", RegressOptions())
    assert gone.canary_lines == [
        "3 canary series: none moved on 2 of the newest 3 nights",
        "no canary on night-11: whether the environment moved that night is not known",
    ]
    metrics["value"] = metrics["value"].astype(object)
    for metric, bad in (("canary_ops_s", -1.0e6), ("canary_rtt_us", "abc"), ("canary_steal_pct", 101.0)):
        metrics.loc[newest & (metrics["metric"] == metric), "value"] = bad
    hostile = regress(runs, metrics, "quick", RegressOptions())
    assert hostile.canary_lines == [
        *gone.canary_lines,
        "3 canary value(s) left out, not a measurement: canary_ops_s on night-11, canary_rtt_us on night-11, "
        "canary_steal_pct on night-11",
    ]


def test_a_0_byte_history_says_what_leaves_one_and_what_to_do(
    sound: Path, tmp_path: Path, main: Main
) -> None:
    results = Path(shutil.copytree(sound, tmp_path / "results"))
    (results / "history.sqlite").write_bytes(b"")
    for command in (["runs"], *COMMANDS.values()):
        code, out, err = main(*command, "--results", str(results))
        assert (code, out) == (2, ""), err
        (line,) = _lines(err)
        assert "is empty (0 bytes: what an interrupted copy or a full disk leaves)" in line
        assert "restore it from a copy" in line and "history rebuild" in line
    assert (results / "history.sqlite").stat().st_size == 0  # read, never made a new empty history
