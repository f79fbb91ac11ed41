"""The cron line of examples/nightly/ runs a real night on the embedded server."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from ycsb_runner.runs.history import SqliteHistory

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "nightly"
CHECKOUT = "/opt/ycsb-runner"  # where the examples say the checkout is
# a paced night without canaries (the cron line's plumbing is checked here; the nightly tests, marked
# `alone`, judge nights with their canaries)
TINY_NIGHT = (
    "--set maxexecutiontime=2 --set recordcount=200 --set mixes=a-read50-update50 --set target=200 "
    "--no-monitors --no-report --no-canaries"
)


def _cron_command(command: str, results: Path, env_file: Path) -> str:
    """The crontab's command in this checkout, with the night's files under *results*."""
    command = command.replace(CHECKOUT, str(ROOT)).replace("=results/", f"={results}/")
    return command.replace("NIGHTLY_ENV_FILE=/etc/ycsb-runner/nightly.env", f"NIGHTLY_ENV_FILE={env_file}")


def test_cron_command_runs_a_night(tmp_path: Path, mongo_url: str, cron_entry: tuple[str, str]) -> None:
    """The cron line's command, in this checkout: a real night on the embedded server, indexed in the
    history; with one night of history regress cannot decide, so the night exits 2 (never 0), and prints
    the one line cron mails; MONGODB_URL comes from the environment file."""
    _, command = cron_entry
    results = tmp_path / "results"
    env_file = tmp_path / "nightly.env"
    env_file.write_text(f"# the target\nMONGODB_URL={mongo_url}\n")
    env = {k: v for k, v in os.environ.items() if k != "MONGODB_URL"}
    env.update(
        YCSB_RUNNER_RESULTS=str(results),
        NIGHTLY_ARGS=TINY_NIGHT,
        NIGHTLY_TAGS="--tag sha=abc123",
        REGRESS_ARGS="--confirm 1 --min-effect 10",
        YCSB_RUNNER_LOCK_DIR=str(tmp_path / "locks"),
    )
    run = _cron_command(command, results, env_file)
    proc = subprocess.run(["sh", "-c", run], env=env, capture_output=True, text=True, timeout=300)
    log = (results / "nightly.log").read_text()
    assert proc.returncode == 2, log
    assert "need at least" in log and "Traceback" not in log
    assert "min effect 10 %" in log  # REGRESS_ARGS reached regress
    (alert,) = proc.stdout.splitlines()  # what cron mails to MAILTO: one line
    assert alert.startswith("ycsb-runner nightly quick: exit 2 (could not decide") and "nightly.log" in alert
    summary = json.loads((results / "nightly-last.json").read_text())
    assert summary["status"] == "completed" and summary["tags"]["sha"] == "abc123"
    # status's old name, still written in this release (docs/reference/commands.md: Renamed in this release)
    assert summary["verdict"] == "completed" and summary["steps"]
    assert all(s["verdict"] == s["status"] == "completed" for s in summary["steps"].values())
    assert re.fullmatch(r".+", summary["tags"]["host"])
    assert summary["run_dir"].startswith(str(results))  # the env file's target, not a default
    runs = SqliteHistory(results / "history.sqlite").runs()
    assert runs["run_id"].tolist() == [summary["run_id"]]
    assert (results / "latest").resolve() == Path(summary["run_dir"]).resolve()
    # the next night rotates the log (before its bench starts: a night whose bench refuses its settings at
    # once rotates it as a whole night does, without running the suite again)
    refused = {**env, "NIGHTLY_ARGS": "--set recordcount=-1"}
    nxt = subprocess.run(["sh", "-c", run], env=refused, capture_output=True, text=True, timeout=300)
    assert nxt.returncode == 2 and "recordcount=-1" in (results / "nightly.log").read_text()
    assert (results / "nightly.log.1").read_text() == log


def test_a_night_against_an_unreachable_target_says_what_happened(
    tmp_path: Path, cron_entry: tuple[str, str]
) -> None:
    """Issue 22, item 7: exit 2, a nightly-last.json that says the bench did not run and why, a regress
    report that does not claim "no regression", one alert line; the env file is read as data."""
    _, command = cron_entry
    results = tmp_path / "results"
    (results / "regress-report").mkdir(parents=True)
    (results / "regress-report" / "regress.md").write_text("no regression (exit 0)\n")  # last night's
    env_file = tmp_path / "nightly.env"
    marker = tmp_path / "executed"
    env_file.write_text(
        "MONGODB_URL=mongodb://127.0.0.1:9/ycsb?serverSelectionTimeoutMS=1000\n"
        f"NIGHTLY_NOTE=$(touch {marker})\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("MONGODB_URL", "NIGHTLY_ARGS")}
    env.update(YCSB_RUNNER_RESULTS=str(results), YCSB_RUNNER_LOCK_DIR=str(tmp_path / "locks"))
    proc = subprocess.run(
        ["sh", "-c", _cron_command(command, results, env_file)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2
    assert not marker.exists()  # "$(...)" in the environment file is a value, never run
    summary = json.loads((results / "nightly-last.json").read_text())
    assert summary["status"] == summary["verdict"] == "not run" and summary["exit_code"] == 2
    assert summary["suite"] == "quick"
    assert summary["error"].startswith("cannot reach MongoDB at mongodb://127.0.0.1:9/ycsb")
    report = (results / "regress-report" / "regress.md").read_text()
    assert "could not decide (exit 2)" in report and "no regression" not in report
    assert (results / "regress-report" / "regress.html").exists()
    (alert,) = proc.stdout.splitlines()
    assert alert.startswith(
        "ycsb-runner nightly quick: exit 2 (could not decide; bench: cannot reach MongoDB"
    )
