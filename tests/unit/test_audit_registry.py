"""A strategy registered from outside the package (here: from the test) is accepted by bench's validation and
the ``audit`` command, listed in the help texts, asked for its pre-flight checks and built by name. The CLI
reads the registry when its app is built, so the toy is registered first, in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROBE = r"""
import json
from typing import Any
from ycsb_runner.audit import AuditState, AuditStrategy, StrategySpec, register_strategy

class Toy(AuditStrategy):
    name = "toy"
    def __init__(self, colour: str) -> None:
        self.colour = colour
    def status(self) -> AuditState:
        return AuditState(enabled=False, detail=f"the {self.colour} toy")
    def enable(self, ops): return self.status()
    def disable(self): return self.status()
    def restore(self, state): return self.status()
    def manual_restore_hint(self, state): return "nothing to restore"

def preflight(options: dict[str, Any], embedded: bool) -> list[str]:
    return [] if options.get("colour") else ["--audit-strategy toy needs --audit-option colour=..."]

register_strategy(StrategySpec(
    name="toy",
    help="a toy strategy of the registry test.",
    make=lambda options, client: Toy(options["colour"]),
    cli_options=lambda given: {"colour": given["instance_id"]},
    preflight=preflight,
))

from typer.testing import CliRunner
from ycsb_runner.cli import app

dry = ["bench", "alibaba-audit", "--dry-run", "--scale", "0.001"]
calls = {
    "audit_help": ["audit", "--help"],
    "bench_help": ["bench", "--help"],
    "no_colour": [*dry, "--audit-strategy", "toy"],
    "colour": [*dry, "--audit-strategy", "toy", "--audit-option", "colour=blue"],
    "other": [*dry, "--audit-strategy", "toys"],
    "status": ["audit", "status", "--strategy", "toy", "--instance-id", "red"],
}
out = {}
for key, argv in calls.items():
    result = CliRunner().invoke(app, argv, env={"COLUMNS": "200"})
    error = result.exception if not isinstance(result.exception, SystemExit) else None
    # a UserError ends the command with its exit code (2) in ycsb_runner.cli.main
    text = result.output + (f"error: {error}" if error else "")
    out[key] = [getattr(error, "exit_code", result.exit_code), text]
print("RESULT=" + json.dumps(out))
"""


def test_a_registered_strategy_reaches_bench_audit_help_and_preflight(tmp_path: Path) -> None:
    env = {**os.environ, "YCSB_RUNNER_RESULTS": str(tmp_path)}
    env.pop("YCSB_RUNNER_HISTORY_URL", None)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT="))
    out = {k: (code, " ".join(text.split())) for k, (code, text) in json.loads(line[7:]).items()}

    assert out["audit_help"][0] == 0 and "toy: a toy strategy of the registry test." in out["audit_help"][1]
    assert out["bench_help"][0] == 0 and "aliyun, tencent, toy." in out["bench_help"][1]
    # accepted by name; its own pre-flight check stops the run until its option is given
    assert out["no_colour"][0] == 2
    assert (
        "stopped before running: --audit-strategy toy needs --audit-option colour=..." in out["no_colour"][1]
    )
    assert out["colour"][0] == 0 and "error" not in out["colour"][1]
    # an unregistered name is still refused, with the toy among the names offered
    assert out["other"][0] == 2 and "unknown audit strategy; use one of mongodb-runtime" in out["other"][1]
    assert out["other"][1].endswith("aliyun, tencent, toy")
    # the audit command builds it from its options (--instance-id, mapped by the toy's cli_options)
    assert out["status"] == (0, "audit (toy): off - the red toy")
