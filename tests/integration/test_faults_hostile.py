"""The fault suite, round two (issue 21): hostile and unlucky inputs, as real ``ycsb-runner`` processes.

Run it with the rest of the fault suite: ``pytest -m faults``. Each test names the issue's item it plays:
no path outside ``results/``, no injected YCSB property, no program from a data file, a lock that holds
across spellings of one server and across checkouts, a run missing from the history that is not a pass,
signals at the edges of a run, a full TMPDIR, damaged files, cut captures, bad values and wording.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from test_faults import (  # the fault suite's helpers (same folder)
    CLI,
    assert_one_line_error,
    bench_quietly,
    cli_env,
    every_file,
    fill_when_the_run_starts,
    finished_run,
    run_cli,
    run_folders,
    run_to_damage,
    small_disk,
    write_suite,
)
from test_multi_clients import SSHD, ssh_hosts  # real sshd on loopback (same folder)

from ycsb_runner.install.embedded import ServerInfo

pytestmark = [pytest.mark.integration, pytest.mark.faults]
# fixtures shared with the other fault files
__all__ = ["finished_run", "run_to_damage", "small_disk", "ssh_hosts"]

UNREACHABLE = "mongodb://127.0.0.1:1/ycsb"


# --- item 1: --run-id escapes results/ ---


@pytest.mark.parametrize("kind", ["relative", "absolute"])
def test_run_id_cannot_leave_the_results_folder(kind: str, tmp_path: Path, server: ServerInfo) -> None:
    results = tmp_path / "R" / "a" / "b"
    run_id = "../../evil" if kind == "relative" else str(tmp_path / "abs" / "evil")
    proc = bench_quietly(
        write_suite(tmp_path), results, "--run-id", run_id, env=cli_env(MONGODB_URL=server.url)
    )
    assert_one_line_error(proc, "--run-id", "it names a folder")
    assert proc.returncode == 2
    assert not (tmp_path / "R" / "evil").exists() and not (tmp_path / "abs").exists()
    assert [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "faults.toml"] == []


# --- item 2: a mix name is a path ---


@pytest.mark.parametrize("name", ["../../../../../../../../some/dir/TRAVERSED", "a</script>b", "=1+2"])
def test_mix_name_that_is_a_path_is_refused(name: str, tmp_path: Path) -> None:
    suite = write_suite(tmp_path)
    suite.write_text(suite.read_text().replace('name = "read50_update50"', f"name = {json.dumps(name)}"))
    for command in (["render", str(suite)], ["bench", str(suite), "--results", str(tmp_path / "r")]):
        proc = run_cli(*command, env=cli_env(MONGODB_URL=UNREACHABLE))
        assert_one_line_error(proc, "mix.name", "letters, digits")
    assert not (tmp_path / "r").exists()


# --- item 3: a value adds lines to YCSB's properties ---


def test_carriage_return_in_a_value_adds_no_property(tmp_path: Path, server: ServerInfo) -> None:
    results = tmp_path / "results"
    injected = "properties.baz=x\roperationcount=7"
    proc = bench_quietly(
        write_suite(tmp_path, operationcount=300),
        results,
        "--set",
        injected,
        env=cli_env(MONGODB_URL=server.url),
    )
    assert proc.returncode == 0, proc.stderr
    (run,) = run_folders(results)
    ops = pd.read_csv(run / "operations.csv")
    measured = ops[(ops["phase"] == "run") & ops["operation"].isin(["READ", "UPDATE"])]
    assert measured["operations"].sum() == 300  # YCSB ran the suite's operationcount, not 7
    text = (run / "steps" / "02-run-read50_update50-t2-r1" / "workload.properties").read_text()
    assert "baz=x\\roperationcount=7\n" in text and "\r" not in text
    assert [ln for ln in text.splitlines() if ln.startswith("operationcount=")] == ["operationcount=300"]


@pytest.mark.parametrize("name", ["faults\nexportfile=/tmp/x", "faults\rexportfile=/tmp/x"])
def test_line_break_in_the_suite_name_is_refused(name: str, tmp_path: Path) -> None:
    suite = write_suite(tmp_path)
    suite.write_text(suite.read_text().replace('name = "faults"', f"name = {json.dumps(name)}"))
    proc = run_cli("render", str(suite), "--show-properties")
    assert_one_line_error(proc, "name", "letters, digits")
    assert "exportfile" not in proc.stdout


# --- items 4, 5: programs from a data file, and a suite that runs programs ---


def _restore_file(run: Path, marker: Path) -> None:
    run.mkdir(parents=True)
    argv = ["sh", "-c", f"touch {marker}; echo off"]
    (run / "audit-restore.json").write_text(
        json.dumps(
            {
                "format": "ycsb-runner-audit-restore/1",
                "status": "pending",
                "strategy": "command",
                "entry_state": {"enabled": False, "ops": [], "detail": "", "raw": {}, "nodes": []},
                "options": {"on_cmd": argv, "off_cmd": argv, "status_cmd": argv, "cwd": None},
            }
        )
    )


def test_audit_restore_runs_no_program_found_in_a_run_folder(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    _restore_file(tmp_path / "run", marker)
    proc = run_cli("audit", "restore", str(tmp_path / "run"))
    assert_one_line_error(proc, "never runs programs found in a run folder", "--status-cmd", "--off-cmd")
    assert not marker.exists()
    # the user's own programs, given on the command line, do run
    state = tmp_path / "state"
    state.write_text("on")
    flip = json.dumps(["sh", "-c", f"echo off > {state}"])
    done = run_cli(
        "audit",
        "restore",
        str(tmp_path / "run"),
        "--status-cmd",
        json.dumps(["cat", str(state)]),
        "--off-cmd",
        flip,
    )
    assert done.returncode == 0, done.stderr
    assert state.read_text().strip() == "off" and not marker.exists()


AUDIT_SUITE = """
[audit]
states = ["off", "on"]
strategy = "command"
options = {{ on_cmd = ["sh", "-c", "touch {marker}"], off_cmd = ["true"], status_cmd = ["echo", "off"] }}
"""


def test_a_suite_that_runs_programs_says_so_before_it_starts(tmp_path: Path) -> None:
    marker = tmp_path / "RAN"
    suite = write_suite(tmp_path)
    text = suite.read_text().replace("[[mix]]", AUDIT_SUITE.format(marker=marker) + "\n[[mix]]", 1)
    suite.write_text(text)
    dry = run_cli("bench", str(suite), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "executes programs (audit strategy command, from the suite file" in dry.stdout
    assert f"on_cmd: sh -c 'touch {marker}'" in dry.stdout
    assert "status_cmd: echo off" in dry.stdout
    proc = run_cli(
        "bench", str(suite), "--results", str(tmp_path / "r"), env=cli_env(MONGODB_URL=UNREACHABLE)
    )
    lines = proc.stderr.splitlines()
    notice = next(i for i, ln in enumerate(lines) if "executes programs" in ln)
    assert f"on_cmd: sh -c 'touch {marker}'" in lines[notice + 1]
    assert notice < next(i for i, ln in enumerate(lines) if ln.startswith("suite faults:"))
    assert not marker.exists()


# --- item 6: secrets given with --set ---


def test_secret_set_option_is_stored_masked(tmp_path: Path, server: ServerInfo) -> None:
    results = tmp_path / "results"
    secret = "tokSEKRET6x"
    proc = run_cli(
        "bench",
        str(write_suite(tmp_path)),
        "--results",
        str(results),
        "--no-monitors",
        "--no-canaries",  # (two JVMs: test_query_string_secrets_appear_nowhere follows secrets through them)
        "--set",
        f"mongodb.url_options.myApiToken={secret}",
        env=cli_env(MONGODB_URL=server.url),
    )
    assert proc.returncode == 0, proc.stderr
    (run,) = run_folders(results)
    assert (run / "report.md").is_file() and (run / "report.html").is_file()
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["suite"]["scaling"]["overrides"] == ["mongodb.url_options.myApiToken=***"]
    for path in every_file(results):
        assert secret.encode() not in path.read_bytes(), path
    assert secret not in proc.stdout + proc.stderr


@pytest.mark.parametrize("where", ["set", "url"])
def test_bad_percent_escape_in_a_secret_is_refused_unquoted(where: str, tmp_path: Path) -> None:
    value = "SEKRET%ZZ11"
    if where == "set":
        proc = run_cli("render", "quick", "--set", f"mongodb.url_options.myApiToken={value}")
    else:
        proc = run_cli("render", "quick", env=cli_env(MONGODB_URL=f"mongodb://127.0.0.1:1/y?myToken={value}"))
    assert_one_line_error(proc, "not a percent-escape", "%25")
    for part in ("SEKRET", "ZZ11", "ZZ"):
        assert part not in proc.stdout + proc.stderr


# --- item 7: CSV formula injection ---


def test_csv_output_neutralises_formulas(tmp_path: Path) -> None:
    capture = tmp_path / "hostile.stdout"
    capture.write_text(
        "[OVERALL], RunTime(ms), 1000\n[OVERALL], Throughput(ops/sec), 10\n"
        '[=HYPERLINK("http://x")], Operations, 10\n[=HYPERLINK("http://x")], AverageLatency(us), 5\n'
        '[=HYPERLINK("http://x")], Return=OK, 10\n'
    )
    proc = run_cli("parse", str(capture), "-f", "csv")
    assert proc.returncode == 0, proc.stderr
    cells = [c for line in proc.stdout.splitlines() for c in line.split(",")]
    assert not [c for c in cells if c.lstrip('"').startswith(("=", "+", "@"))], proc.stdout
    frame = pd.read_csv(__import__("io").StringIO(proc.stdout))
    assert set(frame["section"]) == {'\'=HYPERLINK("http://x")'}
    assert frame["operations"].tolist() == [10.0]  # numbers unchanged


# --- item 8: the bench lock ---


def test_lock_holds_for_another_spelling_of_the_same_server(tmp_path: Path, server: ServerInfo) -> None:
    from ycsb_runner.safe.lock import target_lock

    # this session's lock folder (conftest): what a bench against 127.0.0.1:PORT holds
    with target_lock(f"127.0.0.1:{server.port}", suite="faults", run_id="holder"):
        proc = bench_quietly(
            write_suite(tmp_path),
            tmp_path / "r",
            env=cli_env(MONGODB_URL=f"mongodb://localhost:{server.port}/ycsb"),
        )
    assert_one_line_error(proc, "another bench is running against", "holder", alone=False)
    assert proc.returncode == 2
    assert run_folders(tmp_path / "r") == []


# --- item 9: a run not recorded in the history ---


@pytest.mark.parametrize("history", ["garbage", "unwritable"])
def test_run_missing_from_the_history_is_not_a_pass(history: str, tmp_path: Path, server: ServerInfo) -> None:
    results = tmp_path / "results"
    results.mkdir()
    if history == "garbage":
        (results / "history.sqlite").write_bytes(b"this is not an SQLite database\n" * 100)
        extra: list[str] = []
    else:
        (tmp_path / "a-file").write_text("")
        extra = ["--history-url", str(tmp_path / "a-file" / "h.sqlite")]  # a folder that cannot exist
    proc = bench_quietly(write_suite(tmp_path), results, *extra, env=cli_env(MONGODB_URL=server.url))
    assert_one_line_error(proc, "the run completed but is not in the history", "history rebuild", alone=False)
    assert proc.returncode == 3
    (run,) = run_folders(results)
    assert json.loads((run / "manifest.json").read_text())["status"] == "completed"


# --- item 10: signals at the edges ---


def test_sigterm_after_the_last_step_says_the_run_completed(tmp_path: Path) -> None:
    results = tmp_path / "results"
    suite = write_suite(tmp_path, operationcount=200)
    proc = subprocess.Popen(
        [CLI, "bench", str(suite), "--results", str(results), "--no-monitors"],  # with its report
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=cli_env(),
        text=True,
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        manifests = [p / "manifest.json" for p in run_folders(results)]
        try:
            steps = json.loads(manifests[0].read_text())["steps"] if manifests else []
        except (OSError, ValueError):
            steps = []
        if len(steps) == 2 and steps[-1].get("status") == "completed":
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "Traceback" not in err
    last = [ln for ln in err.splitlines() if ln.strip()][-1]
    assert "before the run started" not in last
    assert last.startswith("interrupted by SIGTERM") and "every step had completed" in last, last
    (run,) = run_folders(results)
    assert json.loads((run / "manifest.json").read_text())["status"] == "completed"
    listed = run_cli("runs", "--results", str(results), "-f", "json")
    assert [r["run_id"] for r in json.loads(listed.stdout)["rows"]] == [run.name]


def _caught(pid: int, sig: int) -> bool:
    """Whether process *pid* has a handler of its own for *sig* (SigCgt of /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = int(next(ln.split()[1] for ln in status.splitlines() if ln.startswith("SigCgt:")), 16)
    return bool(mask >> (sig - 1) & 1)


# seconds after main's handlers are in place: while Typer, the commands, then pandas load, and in the read
DELAYS = [0.0, 0.01, 0.03, 0.06, 0.1, 0.15, 0.25, 0.35, 0.5, 0.8]


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_while_the_cli_loads_is_one_line(sig: int, code: int) -> None:
    """Issue 52: from main's first line (its handlers' moment: SIGTERM caught, where Python alone catches
    only SIGINT) one signal ends the command with one line and 128 + the signal, at every delay: a
    KeyboardInterrupt importlib's lock callback dropped is raised again, Typer's silent exit 130 is said.
    (Before main, Python starts and loads its site: a signal there ends the process as Python does;
    bench/signal_bench.py sweeps the whole start-up.) `parse /dev/stdin` waits for input that never comes:
    only the signal ends it."""
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN  # a test run started in the background
    name = "" if sig == signal.SIGINT else " by SIGTERM"
    for delay in DELAYS:
        proc = subprocess.Popen(
            [CLI, "parse", "/dev/stdin"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.PIPE,
            text=True,
            # an ignored SIGINT would pass on to the CLI, which then keeps it ignored (as under nohup)
            preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)) if ignored else None,
        )
        try:
            deadline = time.monotonic() + 60
            while not _caught(proc.pid, signal.SIGTERM) and proc.poll() is None:
                assert time.monotonic() < deadline, "main's handlers never came"
                time.sleep(0.001)
            time.sleep(delay)
            proc.send_signal(sig)
            proc.wait(timeout=30)  # before communicate() closes stdin: the signal, not an empty input
        finally:
            if proc.poll() is None:  # lost: the command still waits for its input
                proc.kill()
            out, err = proc.communicate()
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert (proc.returncode, lines) == (code, [f"interrupted{name}: stopped; finished work is kept"]), (
            delay,
            err,
        )


# --- item 11: a full TMPDIR ---


def test_full_tmpdir_is_named(tmp_path: Path, small_disk: Path, server: ServerInfo) -> None:
    results = tmp_path / "results"

    filler = fill_when_the_run_starts(results, small_disk, poll_s=0.02)
    proc = bench_quietly(
        write_suite(tmp_path, operationcount=100000, maxexecutiontime=4, target=100),
        results,
        env=cli_env(MONGODB_URL=server.url, TMPDIR=str(small_disk)),
    )
    filler.join()
    line = assert_one_line_error(proc, "TMPDIR is full", alone=False)
    assert "no [OVERALL]" not in line
    (run,) = run_folders(results)
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["steps"][0]["status"] == "completed" and manifest["status"] == "failed"
    assert [p.name for p in small_disk.iterdir()] == ["filler"]  # the private folder is gone


# --- item 12: damaged inputs ---


@pytest.mark.parametrize("column", ["operation", "step", "kind", "operations"])
@pytest.mark.parametrize("command", ["table", "report", "compare"])
def test_operations_csv_without_a_column_is_a_one_line_error(
    command: str, column: str, finished_run: Path, run_to_damage: Path
) -> None:
    run = run_to_damage
    ops = pd.read_csv(run / "operations.csv")
    ops.drop(columns=[column]).to_csv(run / "operations.csv", index=False)
    extra = [str(finished_run)] if command == "compare" else []  # the damaged run against a sound one
    proc = run_cli(command, str(run), *extra)
    assert_one_line_error(proc, "operations.csv is damaged", f"no {column} column")


def test_history_rebuild_skips_a_damaged_folder(finished_run: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    good, bad = results / "20990101-000000-good", results / "20990101-000001-bad"
    shutil.copytree(finished_run, good)
    shutil.copytree(finished_run, bad)
    manifest = json.loads((bad / "manifest.json").read_text())
    manifest["run_id"] = bad.name
    (bad / "manifest.json").write_text(json.dumps(manifest))
    ops = pd.read_csv(bad / "operations.csv")
    ops.drop(columns=["operations"]).to_csv(bad / "operations.csv", index=False)
    proc = run_cli("history", "rebuild", "--results", str(results))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"warning: skipped {bad.name}" in proc.stderr
    listed = run_cli("runs", "--results", str(results), "-f", "json")
    assert [r["run_id"] for r in json.loads(listed.stdout)["rows"]] == [finished_run.name]


@pytest.mark.parametrize(
    "document",
    [
        [1, 2],
        {"format": "ycsb-runner-audit-restore/1", "strategy": "command", "entry_state": [1], "options": {}},
        {"format": "ycsb-runner-audit-restore/1", "strategy": "command", "options": [1]},
        {"format": "ycsb-runner-audit-restore/1", "strategy": "command", "entry_state": {"ops": 5}},
    ],
)
def test_audit_restore_file_of_the_wrong_shape_is_a_one_line_error(document: object, tmp_path: Path) -> None:
    (tmp_path / "audit-restore.json").write_text(json.dumps(document))
    proc = run_cli("audit", "restore", str(tmp_path), "--status-cmd", '["true"]', "--off-cmd", '["true"]')
    assert_one_line_error(proc, "audit-restore.json is damaged")


# --- item 14: values ---


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--set", "recordcount=1000000000000"], "at most 2147483647"),
        (["--set", "threads=3000000000"], "at most 2147483647"),
        (["--set", "repetitions=1000000"], "at most 10,000"),
        (["--set", "estimated_throughput=nan"], "estimated_throughput: must be a positive number"),
        (["--set", "estimated_throughput=inf"], "estimated_throughput: must be a positive number"),
        (["--set", "measurement.percentiles=[]"], "measurement.percentiles: empty"),
        (["--audit-strategy", "bogus", "--dry-run"], "--audit-strategy 'bogus': unknown audit strategy"),
    ],
)
def test_bad_values_are_refused_before_anything_starts(args: list[str], needle: str, tmp_path: Path) -> None:
    started = time.monotonic()
    proc = run_cli("bench", "quick", "--results", str(tmp_path), *args, env=cli_env(MONGODB_URL=UNREACHABLE))
    assert time.monotonic() - started < 30
    assert_one_line_error(proc, needle)
    assert list(tmp_path.iterdir()) == []


def test_unknown_audit_strategy_is_refused_before_the_server_starts(tmp_path: Path) -> None:
    proc = run_cli("bench", "alibaba-audit", "--results", str(tmp_path), "--audit-strategy", "bogus")
    assert_one_line_error(proc, "--audit-strategy 'bogus'")
    assert "embedded server" not in proc.stderr and list(tmp_path.iterdir()) == []


# --- item 15: wording ---


def test_parse_a_directory_or_a_fifo(tmp_path: Path) -> None:
    assert_one_line_error(run_cli("parse", str(tmp_path)), "is a directory")
    fifo = tmp_path / "capture.fifo"
    os.mkfifo(fifo)
    capture = (Path(__file__).parent.parent / "data" / "ycsb" / "binding-load.stdout").read_bytes()

    def feed() -> None:
        with open(fifo, "wb") as f:
            f.write(capture)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    proc = run_cli("parse", str(fifo), "-f", "json")
    writer.join(10)
    assert proc.returncode == 0, proc.stderr
    (parsed,) = json.loads(proc.stdout)
    assert parsed["completion"]["status"] == "completed" and parsed["overall"]["ops_done"] == 2000


def test_library_warnings_are_one_plain_line(tmp_path: Path) -> None:
    url = "mongodb://127.0.0.1:1/ycsb?myUnknownOption=1"
    proc = run_cli(
        "bench", str(write_suite(tmp_path)), "--results", str(tmp_path / "r"), env=cli_env(MONGODB_URL=url)
    )
    assert_one_line_error(proc, "cannot reach MongoDB", alone=False)
    assert "site-packages" not in proc.stderr and "UserWarning" not in proc.stderr, proc.stderr
    assert any(ln.startswith("warning: Unknown option") for ln in proc.stderr.splitlines()), proc.stderr


def test_unreachable_client_hint_is_an_ssh_command(tmp_path: Path) -> None:
    proc = run_cli(
        "bench", str(write_suite(tmp_path)), "--results", str(tmp_path / "r"), "--client", "root@127.0.0.1:1"
    )
    line = assert_one_line_error(proc, "client root@127.0.0.1:1 is unreachable", alone=False)
    assert "`ssh -p 1 root@127.0.0.1 true`" in line, line
    assert "ssh root@127.0.0.1:1" not in line


def test_error_messages_with_brackets_print_as_written(tmp_path: Path) -> None:
    # console markup would read "[bold]" as a style and "[/y]" as a closing tag (a MarkupError traceback)
    missing = tmp_path / "[bold]x[/y].toml"
    assert_one_line_error(run_cli("render", str(missing)), "not found", "[bold]x[/y].toml")


if sys.platform != "linux":  # pragma: no cover - the fault suite runs on Linux (mount, /proc)
    pytest.skip("Linux only", allow_module_level=True)


def _left_folder(name: str, *, minutes_ago: float, pid: int | None) -> Path:
    folder = Path("/tmp") / f"ycsb-runner-client-{name}"  # where the client's sh puts them (no TMPDIR)
    (folder / "hdr").mkdir(parents=True)
    (folder / "connection.properties").write_text("mongodb.url=mongodb://u:pw@h/\n")
    if pid is not None:
        (folder / "pid").write_text(f"{pid}\n")
    then = time.time() - minutes_ago * 60
    for p in [*folder.rglob("*"), folder]:
        os.utime(p, (then, then))
    return folder


@pytest.mark.skipif(not Path(SSHD).exists(), reason="needs OpenSSH's sshd (apt-get install openssh-server)")
def test_work_folders_a_dead_client_left_are_removed_by_the_next_bench(
    ssh_hosts: Path, java_path: str, tmp_path: Path
) -> None:
    from ycsb_runner.execute.clients import Client, check_clients, parse_client

    dead = subprocess.Popen(["true"])
    dead.wait()
    token = f"t{os.getpid()}{time.monotonic_ns() % 10**6}"
    left = _left_folder(f"{token}dead", minutes_ago=60, pid=dead.pid)
    no_pid = _left_folder(f"{token}nopid", minutes_ago=60, pid=None)
    live = subprocess.Popen(["sleep", "60"])
    running = _left_folder(f"{token}live", minutes_ago=60, pid=live.pid)  # a long run on another bench
    fresh = _left_folder(f"{token}fresh", minutes_ago=0, pid=None)  # another bench setting up
    try:
        notes = check_clients([Client(parse_client("h1"), str(ssh_hosts))], java_path)
        assert not left.exists() and not no_pid.exists()
        assert running.exists() and fresh.exists()
        assert sorted(n for n in notes if token in n) == sorted(
            f"client h1: removed {p}, left by an earlier bench" for p in (left, no_pid)
        )
    finally:
        live.kill()
        live.wait()
        for p in (left, no_pid, running, fresh):
            shutil.rmtree(p, ignore_errors=True)
