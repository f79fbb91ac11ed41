"""command and restart strategies with real subprocesses (a tiny 'audit tool' that keeps a state file)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from ycsb_runner.audit import AuditError, AuditState, audit_guard, make_strategy
from ycsb_runner.audit.command import CommandStrategy, parse_argv, substitute
from ycsb_runner.audit.restart import RestartStrategy
from ycsb_runner.errors import UserError

TOOL = r"""
import sys, time
from pathlib import Path
state = Path(sys.argv[1])
action = sys.argv[2]
if Path(str(state) + ".broken").exists() and action != "status":
    print("audit service unavailable: connection refused (user admin)", file=sys.stderr)
    sys.exit(3)
if action == "on":
    state.write_text("audit=on ops=" + sys.argv[3] + "\n")
elif action == "off":
    state.write_text("audit=off\n")
elif action == "noop":
    pass
elif action == "slow":
    time.sleep(30)
elif action == "status":
    print(state.read_text().strip() if state.exists() else "audit=off")
"""


@pytest.fixture
def tool(tmp_path: Path) -> tuple[Path, Path]:
    script = tmp_path / "audit_tool.py"
    script.write_text(TOOL)
    return script, tmp_path / "audit.state"


def _strategy(tool: tuple[Path, Path], **kw: object) -> CommandStrategy:
    script, state = tool
    py = sys.executable
    options = {
        "on_cmd": [py, str(script), str(state), "on", "{ops}"],
        "off_cmd": [py, str(script), str(state), "off"],
        "status_cmd": [py, str(script), str(state), "status"],
        **kw,
    }
    strategy = make_strategy("command", options=options)
    assert isinstance(strategy, CommandStrategy)
    return strategy


def test_on_off_status_round_trip(tool: tuple[Path, Path]) -> None:
    strategy = _strategy(tool)
    assert strategy.status().enabled is False
    on = strategy.enable({"read", "insert"})
    assert on.enabled is True and on.ops == {"insert", "read"}
    assert tool[1].read_text() == "audit=on ops=insert,read\n"  # {ops} substituted, sorted
    assert strategy.status().enabled is True
    off = strategy.disable()
    assert off.enabled is False and tool[1].read_text() == "audit=off\n"


def test_default_regex_does_not_read_off_as_on(tool: tuple[Path, Path]) -> None:
    tool[1].write_text("audit=off (was enabled yesterday)\n")
    assert _strategy(tool).status().enabled is True  # 'enabled' matches the default regex
    assert _strategy(tool, on_regex=r"^audit=on").status().enabled is False
    tool[1].write_text("audit=on ops=read\n")
    assert _strategy(tool, on_regex=r"^audit=on").status().enabled is True


def test_failing_on_command_reports_masked_argv_and_stderr(tool: tuple[Path, Path]) -> None:
    script, state = tool
    Path(str(state) + ".broken").write_text("")
    strategy = make_strategy(
        "command",
        options={
            "on_cmd": [sys.executable, str(script), str(state), "on", "mongodb://root:hunter2@db:27017/"],
            "off_cmd": [sys.executable, str(script), str(state), "off"],
            "status_cmd": [sys.executable, str(script), str(state), "status"],
        },
    )
    with pytest.raises(AuditError) as caught:
        strategy.enable(["insert"])
    msg = str(caught.value)
    assert "exit 3" in msg and "connection refused" in msg
    assert "hunter2" not in msg and "root:***@db" in msg
    assert "\n" not in msg


def test_on_that_does_not_switch_fails_verification(tool: tuple[Path, Path]) -> None:
    script, state = tool
    strategy = _strategy(tool, on_cmd=[sys.executable, str(script), str(state), "noop"])
    with pytest.raises(AuditError, match="should be on but it is off"):
        strategy.enable(["update"])


def test_timeout_and_missing_program(tool: tuple[Path, Path]) -> None:
    script, state = tool
    slow = _strategy(tool, status_cmd=[sys.executable, str(script), str(state), "slow"], timeout_s=0.5)
    with pytest.raises(AuditError, match=r"timed out after 0.5s"):
        slow.status()
    missing = _strategy(tool, status_cmd=["/nonexistent/audit-ctl", "status"])
    with pytest.raises(AuditError, match="command not found: /nonexistent/audit-ctl status"):
        missing.status()


def test_guard_restores_on_keyboard_interrupt(tool: tuple[Path, Path]) -> None:
    strategy = _strategy(tool)
    strategy.disable()
    with pytest.raises(KeyboardInterrupt), audit_guard(strategy, stream=io.StringIO()) as entry:
        assert entry.enabled is False
        strategy.enable(["insert", "read", "update"])
        assert "audit=on" in tool[1].read_text()
        raise KeyboardInterrupt
    assert tool[1].read_text() == "audit=off\n"


def test_guard_restores_on_normal_exit_and_keeps_on_state(tool: tuple[Path, Path]) -> None:
    strategy = _strategy(tool)
    strategy.enable(["scan"])
    with audit_guard(strategy, stream=io.StringIO()):
        strategy.disable()
    assert tool[1].read_text() == "audit=on ops=scan\n"


def test_guard_failed_restore_prints_manual_command(tool: tuple[Path, Path]) -> None:
    strategy = _strategy(tool)
    strategy.disable()
    err = io.StringIO()
    with pytest.raises(AuditError, match="audit was not restored"), audit_guard(strategy, stream=err):
        strategy.enable(["insert"])
        Path(str(tool[1]) + ".broken").write_text("")  # the off command fails from now on
    text = err.getvalue()
    assert "AUDIT NOT RESTORED" in text and "exit 3" in text
    assert f"{tool[0]} {tool[1]} off" in text  # the exact command to run by hand


def test_parse_argv_forms() -> None:
    assert parse_argv('["ctl", "--set", "a b"]', "--on-cmd") == ["ctl", "--set", "a b"]
    assert parse_argv("ctl --set 'a b'", "--on-cmd") == ["ctl", "--set", "a b"]
    assert substitute(["x", "--ops={ops}"], {"update", "insert"}) == ["x", "--ops=insert,update"]
    with pytest.raises(UserError, match="--on-cmd: not a JSON list"):
        parse_argv("[ctl", "--on-cmd")
    with pytest.raises(UserError, match="non-empty list of strings"):
        parse_argv("[1, 2]", "--off-cmd")
    with pytest.raises(UserError, match="needs a status program: --status-cmd, or status_cmd"):
        CommandStrategy(["on"], ["off"], None)
    with pytest.raises(UserError, match="needs --on-cmd"):
        CommandStrategy(None, None, [sys.executable, "-c", "print('on')"]).enable(["read"])


# ---------------------------------------------------------------- restart strategy with real processes


def _restart_hooks(state: Path) -> tuple[object, object]:
    def restart(with_audit: bool, ops: frozenset[str]) -> None:
        code = "import sys, pathlib; pathlib.Path(sys.argv[1]).write_text(sys.argv[2])"
        text = ("on:" + ",".join(sorted(ops))) if with_audit else "off:"
        subprocess.run([sys.executable, "-c", code, str(state), text], check=True, timeout=30)

    def status() -> AuditState:
        code = (
            "import sys, pathlib; p = pathlib.Path(sys.argv[1]); "
            "print(p.read_text() if p.exists() else 'off:')"
        )
        out = subprocess.run(
            [sys.executable, "-c", code, str(state)], check=True, timeout=30, capture_output=True, text=True
        ).stdout.strip()
        word, _, ops = out.partition(":")
        return AuditState(word == "on", frozenset(o for o in ops.split(",") if o), f"state file says {out}")

    return restart, status


def test_restart_strategy_switches_and_restores(tmp_path: Path) -> None:
    state = tmp_path / "server.state"
    restart, status = _restart_hooks(state)
    strategy = make_strategy("restart", options={"restart": restart, "status": status})
    assert isinstance(strategy, RestartStrategy)
    with pytest.raises(RuntimeError), audit_guard(strategy, stream=io.StringIO()) as entry:
        assert entry.enabled is False
        assert strategy.enable(["update", "insert"]).ops == {"insert", "update"}
        assert state.read_text() == "on:insert,update"
        raise RuntimeError("ycsb died")
    assert state.read_text() == "off:"


def test_restart_strategy_reports_failed_restart(tmp_path: Path) -> None:
    def restart(with_audit: bool, ops: frozenset[str]) -> None:
        subprocess.run([sys.executable, "-c", "import sys; sys.exit(7)"], check=True, timeout=30)

    strategy = RestartStrategy(restart, lambda: False, hint="systemctl restart mongod")
    with pytest.raises(AuditError, match="restarting the server with audit on failed: CalledProcessError"):
        strategy.enable(["read"])
    assert strategy.manual_restore_hint(AuditState(False)) == "systemctl restart mongod"
    with pytest.raises(UserError, match="driven by the suite runner"):
        make_strategy("restart", options={})


def test_guard_with_unknown_entry_state_only_warns() -> None:
    calls: list[bool] = []
    strategy = RestartStrategy(lambda on, ops: calls.append(on), lambda: None, hint="start mongod as before")
    err = io.StringIO()
    with audit_guard(strategy, stream=err) as entry:
        assert entry.enabled is None
    assert calls == []
    assert "AUDIT STATE UNKNOWN" in err.getvalue() and "start mongod as before" in err.getvalue()


def test_guard_interrupted_restore_prints_hint(tmp_path: Path) -> None:
    state = {"on": False}

    def restart(with_audit: bool, ops: frozenset[str]) -> None:
        if not with_audit:
            raise KeyboardInterrupt  # a second Ctrl-C while the server restarts
        state["on"] = True

    strategy = RestartStrategy(restart, lambda: state["on"], hint="mongod --config /etc/mongod-plain.conf")
    err = io.StringIO()
    with (
        pytest.raises(AuditError, match="mongod --config /etc/mongod-plain.conf"),
        audit_guard(strategy, stream=err),
    ):
        strategy.enable(["read"])
    assert "AUDIT NOT RESTORED" in err.getvalue() and "interrupted" in err.getvalue()
