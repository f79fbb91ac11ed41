"""The cron line of examples/nightly/ runs a real night on the embedded server."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from ycsb_runner.history import SqliteHistory

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "nightly"
CHECKOUT = "/opt/ycsb-runner"  # where the examples say the checkout is
TINY_NIGHT = (
    "--set maxexecutiontime=2 --set recordcount=200 --set mixes=a-read50-update50 --no-monitors --no-report"
)


def test_cron_command_runs_a_night(tmp_path: Path, mongo_url: str, cron_entry: tuple[str, str]) -> None:
    """The cron line's command, in this checkout: a real night on the embedded server, indexed in the
    history; with one night of history regress cannot decide, so the night exits 2 (never 0)."""
    _, command = cron_entry
    results = tmp_path / "results"
    command = command.replace(CHECKOUT, str(ROOT)).replace(">> results/", f">> {results}/")
    command = command.replace("mkdir -p results", f"mkdir -p {results}")
    env = dict(
        os.environ,
        YCSB_RUNNER_RESULTS=str(results),
        MONGODB_URL=mongo_url,
        NIGHTLY_ARGS=TINY_NIGHT,
        NIGHTLY_TAGS="--tag sha=abc123",
        REGRESS_ARGS="--confirm 1 --min-effect 10",
        YCSB_RUNNER_LOCK_DIR=str(tmp_path / "locks"),
    )
    proc = subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True, timeout=300)
    log = (results / "nightly.log").read_text()
    assert proc.returncode == 2, log
    assert "need at least" in log and "Traceback" not in log
    assert "min effect 10 %" in log  # REGRESS_ARGS reached regress
    summary = json.loads((results / "nightly-last.json").read_text())
    assert summary["verdict"] == "completed" and summary["tags"]["sha"] == "abc123"
    assert re.fullmatch(r".+", summary["tags"]["host"])
    runs = SqliteHistory(results / "history.sqlite").runs()
    assert runs["run_id"].tolist() == [summary["run_id"]]
    assert (results / "latest").resolve() == Path(summary["run_dir"]).resolve()
