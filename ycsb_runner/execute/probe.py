"""How many ops/s can a load generator produce at all? YCSB's own no-op binding (``site.ycsb.BasicDB`` in YCSB
core, ``basicdb.verbose=false``) run at the suite's threads, mix and field sizes for a few seconds: the ops/s
it reaches is the most that client can generate, whatever the server. ``bench`` warns when the suite's target,
or the throughput a run measured, is above :data:`SAFE_SHARE` of what its clients can generate together.

Figures are kept per client and thread count in ``<cache>/client-probes.json`` (written by ``probe-client``;
``$YCSB_RUNNER_PROBE_FILE`` names another file).
"""

from __future__ import annotations

import json
import shlex
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ycsb_runner import config
from ycsb_runner.errors import UserError
from ycsb_runner.execute.clients import Client
from ycsb_runner.parse import ParseError, parse_output
from ycsb_runner.paths import cache_dir
from ycsb_runner.prepare.commandline import step_properties
from ycsb_runner.prepare.plan import Step
from ycsb_runner.prepare.suite import INT_MAX, Suite

BASIC_DB = "site.ycsb.BasicDB"
SAFE_SHARE = 0.5  # above half of what the clients can generate, the client side shapes the result
PROBE_FILE = "client-probes.json"


@dataclass
class ProbeResult:
    client: str
    threads: int
    mix: str
    seconds: float
    ops_s: float
    operations: float
    measured_at: float

    def key(self) -> str:
        return f"{self.client}|t{self.threads}"


def probe_properties(suite: Suite, threads: int, seconds: int) -> dict[str, str]:
    """The suite's first mix and field sizes against BasicDB, for *seconds*."""
    mix = suite.mixes[0]
    step = Step(index=0, kind="run", threads=threads, mix=mix)
    props = step_properties(step, suite)
    props.update(
        {
            "operationcount": str(INT_MAX),
            "maxexecutiontime": str(seconds),
            "basicdb.verbose": "false",
            "basicdb.simulatedelay": "0",
            "status.interval": "1",
        }
    )
    for k in ("hdrhistogram.fileoutput", "hdrhistogram.output.path"):
        props.pop(k, None)
    return props


def probe_client(
    client: Client,
    suite: Suite,
    *,
    java: str,
    classpath: list[str],
    threads: int,
    seconds: int = 10,
    jvm_args: tuple[str, ...] = (),
) -> ProbeResult:
    """Run the no-op probe on *client* and return the ops/s it generated (*jvm_args* before the class)."""
    props = probe_properties(suite, threads, seconds)
    workdir = client.make_workdir()
    try:
        client.put_files(workdir, {"probe.properties": "".join(f"{k}={v}\n" for k, v in props.items())})
        argv = [
            java,
            *jvm_args,
            "-Duser.language=en",
            "-Duser.country=US",
            "-cp",
            ":".join(str(Path(c).absolute()) for c in classpath),
            "site.ycsb.Client",
            "-t",
            "-db",
            BASIC_DB,
            "-P",
            f"{workdir}/probe.properties",
            "-threads",
            str(threads),
            "-s",
        ]
        script = f"cd {shlex.quote(workdir)} && " + " ".join(shlex.quote(a) for a in argv) + " 2>probe.err"
        out = client.run(script, timeout=seconds + 120)
        err = client.run(f"cat {shlex.quote(workdir)}/probe.err", timeout=60)
    finally:
        client.remove(workdir)
    try:
        parsed = parse_output(out.encode(), err.encode(), exit_code=0)
    except ParseError as e:
        raise UserError(f"client {client.name}: the BasicDB probe printed no result ({e})") from None
    ops_s = parsed.overall.get("throughput")
    if not ops_s:
        raise UserError(f"client {client.name}: the BasicDB probe measured no throughput")
    return ProbeResult(
        client=client.name,
        threads=threads,
        mix=suite.mixes[0].name,
        seconds=float(parsed.overall.get("runtime_ms") or seconds * 1000) / 1000.0,
        ops_s=float(ops_s),
        operations=float(parsed.overall.get("ops_done") or 0.0),
        measured_at=time.time(),
    )


def _probe_path() -> Path:
    """``$YCSB_RUNNER_PROBE_FILE`` or ``<cache>/client-probes.json``."""
    env = config.current().probe_file
    return Path(env).expanduser() if env else cache_dir() / PROBE_FILE


def save_probes(results: list[ProbeResult]) -> Path:
    path = _probe_path()
    known = load_probes()
    known.update({r.key(): asdict(r) for r in results})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(known, indent=2, sort_keys=True))
    return path


def load_probes() -> dict[str, Any]:
    try:
        return json.loads(_probe_path().read_text())
    except (OSError, ValueError):
        return {}


def capacity(clients: list[str], threads: int, probes: dict[str, Any] | None = None) -> float | None:
    """What *clients* can generate together at *threads* in all (each client's share of the threads), from
    the stored probes; None when a client was never probed. A client probed at another thread count counts
    with its closest probe."""
    probes = load_probes() if probes is None else probes
    total = 0.0
    for name in clients:
        mine = [p for p in probes.values() if p.get("client") == name]
        if not mine:
            return None
        share = max(1, threads // max(1, len(clients)))
        best = min(mine, key=lambda p: abs(int(p["threads"]) - share))
        total += float(best["ops_s"])
    return total


def target_warning(target: float, clients: list[str], threads: int, probes: dict | None = None) -> str | None:
    """A warning when *target* ops/s is above the safe share of what the clients can generate."""
    cap = capacity(clients, threads, probes)
    if not target or cap is None or target <= SAFE_SHARE * cap:
        return None
    return (
        f"the target {target:.0f} ops/s is above {SAFE_SHARE:.0%} of what {', '.join(clients)} can generate "
        f"({cap:.0f} ops/s with BasicDB at {threads} threads): the client side may limit the result; "
        "add clients (--client)"
    )
