"""``ycsb-runner audit on|off|status`` through typer's CliRunner (command strategy with real processes)."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ycsb_runner.audit import AuditError, strategy_names
from ycsb_runner.cli.audit import app
from ycsb_runner.errors import UserError

TOOL = r"""
import sys
from pathlib import Path
state = Path(sys.argv[1])
if sys.argv[2] == "on":
    state.write_text("enabled for " + sys.argv[3])
elif sys.argv[2] == "off":
    state.write_text("disabled")
else:
    print(state.read_text() if state.exists() else "disabled")
"""

runner = CliRunner()


def _cmd_args(tmp_path: Path) -> tuple[list[str], Path]:
    script = tmp_path / "tool.py"
    script.write_text(TOOL)
    state = tmp_path / "state"
    py, s, st = sys.executable, str(script), str(state)
    return [
        "--strategy",
        "command",
        "--on-cmd",
        json.dumps([py, s, st, "on", "{ops}"]),
        "--off-cmd",
        f"{py} {s} {st} off",
        "--status-cmd",
        json.dumps([py, s, st, "status"]),
        "--on-regex",
        r"^enabled",
    ], state


def test_help_lists_strategies() -> None:
    for args in (["--help"], ["on", "--help"], ["status", "--help"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0
        flat = " ".join(result.output.split())
        for name in strategy_names():
            assert name in flat, (args, name)


def test_command_strategy_on_status_off(tmp_path: Path) -> None:
    args, state = _cmd_args(tmp_path)
    result = runner.invoke(app, ["on", *args, "--ops", "update,insert"])
    assert result.exit_code == 0, result.output
    assert state.read_text() == "enabled for insert,update"
    assert result.output.startswith("audit on (command): on (ops: insert,update)")
    result = runner.invoke(app, ["status", *args])
    assert result.exit_code == 0 and result.output.startswith("audit (command): on")
    result = runner.invoke(app, ["off", *args])
    assert result.exit_code == 0 and result.output.startswith("audit off (command): off")
    assert state.read_text() == "disabled"


def test_errors_are_user_errors(tmp_path: Path) -> None:
    args, _ = _cmd_args(tmp_path)
    result = runner.invoke(app, ["on", *args, "--ops", "insert,select"])
    assert isinstance(result.exception, UserError) and "select" in str(result.exception)
    result = runner.invoke(app, ["status", "--strategy", "restart"])
    assert isinstance(result.exception, UserError) and "suite runner" in str(result.exception)
    result = runner.invoke(app, ["status", "--strategy", "mongodb-runtime"], env={"MONGODB_URL": ""})
    assert isinstance(result.exception, UserError) and "--mongodb-url" in str(result.exception)
    result = runner.invoke(app, ["status", "--mongodb-url", "mongodb://root:hunter2@"])
    assert isinstance(result.exception, UserError)
    assert "hunter2" not in str(result.exception) and "root:***@" in str(result.exception)
    result = runner.invoke(app, ["status", "--strategy", "nope"])
    assert result.exit_code == 2 and "mongodb-runtime" in result.output


def test_cloud_endpoint_refused_is_one_line() -> None:
    pytest.importorskip("tencentcloud.mongodb.v20190725")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = runner.invoke(
        app,
        ["status", "--strategy", "tencent", "--instance-id", "cmgo-x", "--endpoint", f"127.0.0.1:{port}"],
        env={"TENCENTCLOUD_SECRET_ID": "id", "TENCENTCLOUD_SECRET_KEY": "key"},
    )
    assert isinstance(result.exception, AuditError)
    assert "DescribeAuditConfig on cmgo-x failed" in str(result.exception)
    assert "\n" not in str(result.exception)
