"""Client names, ssh command lines, the client shell script and private files (no sshd, no JVM)."""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from ycsb_runner.errors import UserError
from ycsb_runner.execute.clients import Client, ClientSpec, parse_client, parse_clients, ssh_config_path
from ycsb_runner.execute.multi import READY, client_script
from ycsb_runner.prepare.suite import SuiteError, load_suite

SUITE = str(Path(__file__).parents[1] / "suites" / "multi.toml")


@pytest.mark.parametrize(
    ("text", "host", "user", "port"),
    [
        ("bench1", "bench1", None, None),
        ("ycsb@10.0.0.7", "10.0.0.7", "ycsb", None),
        ("ycsb@10.0.0.7:2222", "10.0.0.7", "ycsb", 2222),
        ("[::1]:2200", "::1", None, 2200),
        ("gen-2.example.com", "gen-2.example.com", None, None),
    ],
)
def test_client_names(text: str, host: str, user: str | None, port: int | None) -> None:
    spec = parse_client(text)
    assert (spec.name, spec.host, spec.user, spec.port) == (text, host, user, port)
    assert not spec.local
    assert "/" not in spec.folder and ":" not in spec.folder


def test_local_is_this_machine() -> None:
    assert parse_client("local") == ClientSpec("local")
    assert parse_client("local").local


@pytest.mark.parametrize("text", ["-oProxyCommand=x", "a b", "user@", "host:99999", "h;rm"])
def test_bad_client_names_are_one_line_errors(text: str) -> None:
    with pytest.raises(UserError) as err:
        parse_client(text)
    assert "\n" not in str(err.value)


def test_a_client_given_twice_is_refused() -> None:
    with pytest.raises(UserError, match="given twice"):
        parse_clients(["h1", "h2", "h1"])


def test_ssh_argv_uses_batch_mode_the_users_config_and_the_port() -> None:
    argv = Client(parse_client("ycsb@10.0.0.7:2222"), ssh_config="/etc/my_ssh_config").argv("true")
    assert argv[0] == "ssh"
    assert argv[argv.index("-F") + 1] == "/etc/my_ssh_config"
    assert "BatchMode=yes" in argv
    assert argv[argv.index("-p") + 1] == "2222"
    assert argv[-2:] == ["ycsb@10.0.0.7", "true"]
    assert "-F" not in Client(parse_client("bench1")).argv("true")  # ~/.ssh/config by default
    assert Client(parse_client("local")).argv("true") == ["sh", "-c", "true"]


def test_ssh_config_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("YCSB_RUNNER_SSH_CONFIG", raising=False)
    assert ssh_config_path("") is None
    cfg = tmp_path / "cfg"
    cfg.write_text("Host x\n")
    monkeypatch.setenv("YCSB_RUNNER_SSH_CONFIG", str(cfg))
    assert ssh_config_path("") == str(cfg)
    monkeypatch.setenv("YCSB_RUNNER_SSH_CONFIG", str(tmp_path / "missing"))
    with pytest.raises(UserError, match="does not exist"):
        ssh_config_path("")


def test_private_files_are_0600_in_a_0700_folder_and_removed() -> None:
    client = Client(parse_client("local"))
    wd = client.make_workdir()
    try:
        assert stat.S_IMODE(os.stat(wd).st_mode) == 0o700
        client.put_files(
            wd, {"connection.properties": "mongodb.url=mongodb://u:pw@h/\n", "w.properties": "a=1\n"}
        )
        f = Path(wd) / "connection.properties"
        assert f.read_text() == "mongodb.url=mongodb://u:pw@h/\n"
        assert stat.S_IMODE(f.stat().st_mode) == 0o600
        assert stat.S_IMODE((Path(wd) / "w.properties").stat().st_mode) == 0o600
    finally:
        client.remove(wd)
    assert not Path(wd).exists()


def _start(script: str) -> subprocess.Popen:
    return subprocess.Popen(
        ["sh", "-c", script], stdin=subprocess.PIPE, stderr=subprocess.PIPE, stdout=subprocess.PIPE
    )


def test_script_waits_for_the_go_and_returns_the_commands_exit_code(tmp_path: Path) -> None:
    (tmp_path / "connection.properties").write_text("secret")
    proc = _start(client_script(str(tmp_path), ["sh", "-c", "echo ran; exit 3"]))
    assert proc.stderr is not None and proc.stdin is not None
    assert proc.stderr.readline().decode().strip() == READY
    time.sleep(0.5)
    assert proc.poll() is None  # nothing runs before the go
    assert not (tmp_path / "pid").exists()
    proc.stdin.write(b"go\n")
    proc.stdin.flush()
    assert proc.stdout is not None
    assert proc.stdout.read().decode().strip() == "ran"  # stdin stays open, as the runner keeps it
    assert proc.wait(20) == 3
    assert not (tmp_path / "connection.properties").exists()  # the password file goes when the command ends


def test_closing_stdin_stops_the_command(tmp_path: Path) -> None:
    """What happens when the runner stops a client, or dies: the client's YCSB does not run on."""
    proc = _start(client_script(str(tmp_path), ["sleep", "60"]))
    assert proc.stderr is not None and proc.stdin is not None
    proc.stderr.readline()
    proc.stdin.write(b"go\n")
    proc.stdin.flush()
    for _ in range(50):
        if (tmp_path / "pid").exists() and (tmp_path / "pid").read_text().strip():
            break
        time.sleep(0.1)
    pid = int((tmp_path / "pid").read_text())
    started = time.time()
    proc.stdin.close()
    proc.wait(20)
    assert time.time() - started < 10
    assert proc.returncode == 128 + 15  # SIGTERM
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_script_holds_no_secret_and_quotes_its_arguments(tmp_path: Path) -> None:
    script = client_script(str(tmp_path / "dir with space"), ["java", "-cp", "/opt/ycsb/lib/*", "x;y"])
    assert "'/opt/ycsb/lib/*'" in script and "'x;y'" in script
    assert "mongodb://" not in script


def test_suite_clients_section(tmp_path: Path) -> None:
    suite = load_suite(SUITE, overrides=['clients.hosts=["local", "ycsb@gen1:2222"]'])
    assert suite.clients.hosts == ("local", "ycsb@gen1:2222")
    assert load_suite(SUITE).clients.hosts == ()
    bad = tmp_path / "bad.toml"
    bad.write_text(Path(SUITE).read_text() + '\n[clients]\nhost = ["a"]\n')
    with pytest.raises(SuiteError, match=r"clients\.host.*unknown key"):
        load_suite(str(bad))


def test_target_warning_uses_the_probed_capacity_of_every_client() -> None:
    from ycsb_runner.execute.probe import capacity, target_warning

    probes = {
        "h1|t4": {"client": "h1", "threads": 4, "ops_s": 10_000.0},
        "h1|t16": {"client": "h1", "threads": 16, "ops_s": 30_000.0},
        "h2|t8": {"client": "h2", "threads": 8, "ops_s": 20_000.0},
    }
    assert capacity(["h1", "h2"], 8, probes) == 10_000 + 20_000  # h1's probe closest to its 4 threads
    assert capacity(["h1", "h3"], 8, probes) is None  # h3 never probed: no claim
    assert target_warning(15_000, ["h1", "h2"], 8, probes) is None  # exactly the safe half
    warning = target_warning(15_001, ["h1", "h2"], 8, probes)
    assert warning is not None and "above 50% of what h1, h2 can generate (30000 ops/s" in warning
    assert target_warning(0, ["h1", "h2"], 8, probes) is None  # unthrottled: nothing to compare
