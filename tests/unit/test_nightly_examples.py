"""The scheduling examples under examples/nightly/ work as written: the systemd units verify, the CI
workflow parses and runs the nightly script, and the cron line's command runs a real night."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "nightly"
CHECKOUT = "/opt/ycsb-runner"  # where the examples say the checkout is
TINY_NIGHT = (
    "--set maxexecutiontime=2 --set recordcount=200 --set mixes=a-read50-update50 --no-monitors --no-report"
)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_units_verify(tmp_path: Path) -> None:
    units = [EXAMPLES / "ycsb-runner-nightly.service", EXAMPLES / "ycsb-runner-nightly.timer"]
    proc = subprocess.run(["systemd-analyze", "verify", *map(str, units)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    # the check is real: a unit whose program does not exist fails it
    broken = tmp_path / "ycsb-runner-nightly.service"
    broken.write_text(units[0].read_text().replace("ExecStart=/bin/bash", "ExecStart=/nonexistent/bash"))
    proc = subprocess.run(["systemd-analyze", "verify", str(broken)], capture_output=True, text=True)
    assert proc.returncode != 0
    service = units[0].read_text()
    assert f"WorkingDirectory={CHECKOUT}" in service and "examples/nightly/nightly.sh" in service
    assert "Unit=ycsb-runner-nightly.service" in units[1].read_text()


def test_workflow_parses_and_runs_the_nightly_script(cron_entry: tuple[str, str]) -> None:
    doc = yaml.safe_load((EXAMPLES / "nightly-workflow.yml").read_text())
    triggers = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` as true
    schedule, _ = cron_entry
    assert triggers["schedule"][0]["cron"] == schedule
    steps = doc["jobs"]["nightly"]["steps"]
    assert any("examples/nightly/nightly.sh" in s.get("run", "") for s in steps)
    assert any(s.get("if") == "always()" and "upload-artifact" in s.get("uses", "") for s in steps)
    env = doc["jobs"]["nightly"]["env"]
    assert {"MONGODB_URL", "YCSB_RUNNER_RESULTS", "YCSB_RUNNER_HISTORY_URL"} <= set(env)


def test_cron_schedule_is_valid(cron_entry: tuple[str, str]) -> None:
    schedule, command = cron_entry
    minute, hour, dom, month, dow = schedule.split()
    assert 0 <= int(minute) < 60 and 0 <= int(hour) < 24 and (dom, month, dow) == ("*", "*", "*")
    assert command.startswith(f"cd {CHECKOUT} && ")


def test_cron_alerts_on_exit_1_and_2_and_loads_an_environment_file(cron_entry: tuple[str, str]) -> None:
    """Issue 22, item 7: output to cron (which mails MAILTO), not a file that nobody reads; the target from
    an environment file; a rotated log (run for real in tests/integration/test_nightly_cron.py)."""
    _, command = cron_entry
    crontab = (EXAMPLES / "crontab").read_text()
    assert re.search(r"^MAILTO=\S+@\S+$", crontab, re.M)
    assert ">" not in command and "NIGHTLY_LOG=" in command and "NIGHTLY_ENV_FILE=" in command
    script = (EXAMPLES / "nightly.sh").read_text()
    assert '"status": "not run"' in script and "$NIGHTLY_LOG.$((i + 1))" in script
    assert "source " not in script and not re.search(r"^\s*\. ", script, re.M)  # the env file is not run
    assert (
        "EnvironmentFile=-/etc/ycsb-runner/nightly.env"
        in (EXAMPLES / "ycsb-runner-nightly.service").read_text()
    )
