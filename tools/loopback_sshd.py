"""Load-generator hosts on this machine: one OpenSSH sshd per name on a loopback port, for the multi-client
integration tests (tests/integration/test_multi_clients.py) and the docs figure of a two-client run
(tools/multi_client_pictures.py). Keys are made in the given folder; ``YCSB_RUNNER_SSH_CONFIG`` names the
hosts while they run (set back after). Every sshd is this process's child, stopped at the end."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


class SshdError(RuntimeError):
    """No sshd here, or one did not come up (the message says which, with its log's end)."""


@dataclass(frozen=True)
class LoopbackHosts:
    ssh_config: Path
    sshd: dict[str, subprocess.Popen]  # host name -> its sshd


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _user() -> str:
    import getpass

    return os.environ.get("USER") or getpass.getuser()


@contextmanager
def loopback_sshd(names: Sequence[str], folder: Path, closed: Sequence[str] = ()) -> Iterator[LoopbackHosts]:
    """An sshd on 127.0.0.1 for each of *names* (keys, configs and logs in *folder*), reached as that host
    name through the ssh config it yields; each of *closed* names a closed port (an unreachable host)."""
    if not Path(SSHD).exists():
        raise SshdError("no sshd: install it (apt-get install -y openssh-server openssh-client)")
    for key in ("id", "hostkey"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / key)], check=True)
    (folder / "authorized_keys").write_text((folder / "id.pub").read_text())
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation folder
    ssh_config = folder / "ssh_config"
    procs: dict[str, subprocess.Popen] = {}
    old = os.environ.get("YCSB_RUNNER_SSH_CONFIG")
    try:
        config, known = [], []
        for name in names:
            port = free_port()
            cfg = folder / f"sshd-{name}.conf"
            cfg.write_text(
                f"Port {port}\nListenAddress 127.0.0.1\nHostKey {folder / 'hostkey'}\n"
                f"AuthorizedKeysFile {folder / 'authorized_keys'}\nPasswordAuthentication no\n"
                "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
                "PermitRootLogin prohibit-password\n"
                f"StrictModes no\nUsePAM no\nPidFile {folder / f'sshd-{name}.pid'}\n"
            )
            with open(folder / f"{name}.log", "wb") as log:
                procs[name] = subprocess.Popen([SSHD, "-D", "-e", "-f", str(cfg)], stderr=log)
            config.append(
                f"Host {name}\n  HostName 127.0.0.1\n  Port {port}\n  User {_user()}\n"
                f"  IdentityFile {folder / 'id'}\n  IdentitiesOnly yes\n"
                f"  UserKnownHostsFile {folder / 'known_hosts'}\n  StrictHostKeyChecking yes\n"
            )
            known.append(f"[127.0.0.1]:{port} {(folder / 'hostkey.pub').read_text().strip()}")
        for name in closed:
            config.append(
                f"Host {name}\n  HostName 127.0.0.1\n  Port {free_port()}\n  IdentityFile {folder / 'id'}\n"
                f"  UserKnownHostsFile {folder / 'known_hosts'}\n"
            )
        (folder / "known_hosts").write_text("\n".join(known) + "\n")
        ssh_config.write_text("\n".join(config))
        os.environ["YCSB_RUNNER_SSH_CONFIG"] = str(ssh_config)
        for name in names:  # until every sshd answers
            ssh = ["ssh", "-F", str(ssh_config), "-o", "BatchMode=yes", name, "true"]
            for _ in range(50):
                if subprocess.run(ssh, capture_output=True, check=False).returncode == 0:
                    break
                time.sleep(0.2)
            else:
                log_end = (folder / f"{name}.log").read_text(errors="replace")[-500:]
                raise SshdError(f"sshd {name} did not come up: {log_end}")
        yield LoopbackHosts(ssh_config, procs)
    finally:
        if old is None:
            os.environ.pop("YCSB_RUNNER_SSH_CONFIG", None)
        else:
            os.environ["YCSB_RUNNER_SSH_CONFIG"] = old
        for p in procs.values():
            p.terminate()
            p.wait(10)
