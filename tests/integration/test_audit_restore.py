"""Crash-safe audit restore: the restore file written before the first switch, and ``audit restore``.

The acceptance test kills a real ``ycsb-runner bench`` with SIGKILL (no ``finally`` can run) while its
"on" run is going, against the embedded server with the command strategy, whose on/off/status programs
are small scripts writing a state file this test controls. The restore file must be in the run folder and
``ycsb-runner audit restore RUN_DIR`` must put the state back.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from bson.regex import Regex
from bson.timestamp import Timestamp
from test_audit_suite_integration import bench_argv, only_run_folder  # the audit-small bench (same folder)

from ycsb_runner.audit import AuditState, audit_guard, make_strategy
from ycsb_runner.audit.restore_file import FILE_NAME, load_restore_file, restore_document, write_restore_file

ROOT = Path(__file__).resolve().parents[2]
# on/off write the word into the state file, status prints it
SWITCH = (
    "import pathlib, sys; a, s = sys.argv[1], pathlib.Path(sys.argv[2]); "
    "print(s.read_text().strip()) if a == 'status' else s.write_text(a)"
)


def _argv(action: str, state: Path) -> list[str]:
    return [sys.executable, "-c", SWITCH, action, str(state)]


def _switch_args(state: Path) -> list[str]:
    opts = {
        "on_cmd": _argv("on", state),
        "off_cmd": _argv("off", state),
        "status_cmd": _argv("status", state),
    }
    return [a for k, v in opts.items() for a in ("--audit-option", f"{k}={json.dumps(v)}")]


@pytest.mark.integration
def test_sigkill_after_switching_leaves_a_restore_file_that_restores(
    mongo_url: str, tmp_path: Path, wait_for_on_run: Callable[[Path, subprocess.Popen], Path]
) -> None:
    state = tmp_path / "audit-state.txt"
    state.write_text("off")
    results = tmp_path / "results"
    sets = [
        "mixes=read50_update50",
        "repetitions=1",
        "recordcount=100",
        # the "off" run comes first and runs all of its maxexecutiontime; the "on" run is killed after
        # its first status line, so 5 s leaves it seconds of margin, as in test_audit_suite_integration's
        # signal tests (10 s, and 30 s before, only made the test wait)
        "maxexecutiontime=5",
        "operationcount=1000000",
    ]
    argv = bench_argv(results, "command", *_switch_args(state), sets=sets)
    env = dict(os.environ, MONGODB_URL=mongo_url)
    with open(tmp_path / "err.txt", "wb") as err:
        proc = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL, cwd=ROOT, env=env
        )
    children: list[psutil.Process] = []
    try:
        wait_for_on_run(results, proc)
        children = psutil.Process(proc.pid).children(recursive=True)
        assert state.read_text() == "on"
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
        for child in children:  # the YCSB JVM the killed runner could not stop
            try:
                child.kill()
            except psutil.NoSuchProcess:
                pass
    assert proc.returncode == -signal.SIGKILL
    assert state.read_text() == "on"  # nothing ran after the kill: production would be left switched
    run_dir = only_run_folder(results)
    stderr = (tmp_path / "err.txt").read_text(errors="replace")
    assert f"restore file: {run_dir / FILE_NAME}" in stderr
    assert f"ycsb-runner audit restore {run_dir}" in stderr
    document = json.loads((run_dir / FILE_NAME).read_text())
    assert document["status"] == "pending" and document["strategy"] == "command"
    assert document["entry_state"]["enabled"] is False

    # the programs are given again (a run folder's are never run: it may come from anywhere)
    again = ["--status-cmd", json.dumps(_argv("status", state)), "--off-cmd", json.dumps(_argv("off", state))]
    done = subprocess.run(
        [sys.executable, "-m", "ycsb_runner", "audit", "restore", str(run_dir), *again],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "audit restored (command)" in done.stdout and "off" in done.stdout
    assert state.read_text() == "off"
    assert json.loads((run_dir / FILE_NAME).read_text())["status"] == "restored"


def test_guard_writes_the_file_before_the_first_switch_and_marks_it(tmp_path: Path) -> None:
    state = tmp_path / "s.txt"
    state.write_text("off")
    strategy = make_strategy(
        "command",
        options={
            "on_cmd": _argv("on", state),
            "off_cmd": _argv("off", state),
            "status_cmd": _argv("status", state),
        },
    )
    path = tmp_path / "run" / FILE_NAME
    err = io.StringIO()
    with audit_guard(strategy, stream=err, restore_file=path) as entry:
        assert entry.enabled is False
        on_disk = json.loads(path.read_text())  # already there before anything is switched
        assert on_disk["status"] == "pending" and state.read_text() == "off"
        strategy.enable(["read"])
    assert state.read_text() == "off"
    assert json.loads(path.read_text())["status"] == "restored"
    assert f"restore file: {path}" in err.getvalue()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ycsb_runner", *args], capture_output=True, text=True, timeout=120, cwd=ROOT
    )


def test_cli_restore_errors_are_one_line(tmp_path: Path) -> None:
    missing = _cli("audit", "restore", str(tmp_path))
    assert missing.returncode != 0 and "no audit restore file" in missing.stderr
    assert "Traceback" not in missing.stderr and len(missing.stderr.strip().splitlines()) == 1
    (tmp_path / FILE_NAME).write_text(
        '{"format": "ycsb-runner-audit-restore/1", "strategy": '
        '"mongodb-runtime", "options": {"url": "mongodb://u:***@h:1/"}}'
    )
    masked = _cli("audit", "restore", str(tmp_path))
    assert masked.returncode != 0 and "without its password: pass --mongodb-url" in masked.stderr
    assert "Traceback" not in masked.stderr


def test_restore_file_keeps_bson_types_exactly(tmp_path: Path) -> None:
    """A filter with a regex and a clusterParameterTime Timestamp (getClusterParameter's reply shape,
    MongoDB manual: getClusterParameter) must come back as the same BSON types."""

    class Fixed:
        name = "mongodb-runtime"
        upsert = False

        def persistence_note(self) -> str:
            return "cluster-wide"

        def restore_options(self) -> dict:
            return {"url": "mongodb://h:1/"}

        def manual_restore_hint(self, state: AuditState) -> str:
            return "mongosh ..."

        def restore_commands(self, state: AuditState) -> list:
            return [("mongodb://u:pw@h:1/", {"setClusterParameter": {"auditConfig": state.raw["filter"]}})]

    raw = {
        "filter": {"atype": "authCheck", "param.command": Regex("^(find|insert)$", "i")},
        "auditAuthorizationSuccess": True,
        "clusterParameterTime": Timestamp(1700000000, 3),
    }
    entry = AuditState(True, frozenset({"read"}), "on", raw)
    doc = restore_document(Fixed(), entry)  # type: ignore[arg-type]
    write_restore_file(tmp_path / FILE_NAME, doc)
    _, loaded, state = load_restore_file(tmp_path)
    assert state.raw == raw and isinstance(state.raw["clusterParameterTime"], Timestamp)
    assert "pw" not in (tmp_path / FILE_NAME).read_text()
    assert "EJSON.parse(" in loaded["commands"][0]["mongosh"]
