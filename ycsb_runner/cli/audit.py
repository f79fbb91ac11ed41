"""``ycsb-runner audit on|off|status``: switch and inspect audit logging by hand."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from ycsb_runner.audit import STRATEGIES, AuditState, AuditStrategy, make_strategy, normalize_ops
from ycsb_runner.audit.base import mask_secrets, one_line
from ycsb_runner.errors import UserError

StrategyName = enum.StrEnum("StrategyName", {n.replace("-", "_"): n for n in STRATEGIES})

app = typer.Typer(
    name="audit",
    help=(
        "Turn audit logging of YCSB's operations on or off, or show it. Strategies: "
        + ", ".join(STRATEGIES)
        + "."
    ),
    no_args_is_help=True,
    add_completion=False,
)

DEFAULT_OPS = "insert,read,update"

StrategyOpt = Annotated[
    StrategyName,
    typer.Option(
        "--strategy",
        case_sensitive=False,
        help="How to switch auditing: " + ", ".join(STRATEGIES) + " (restart is driven by the suite runner).",
    ),
]
UrlOpt = Annotated[
    str | None,
    typer.Option("--mongodb-url", envvar="MONGODB_URL", help="MongoDB connection string (mongodb-runtime)."),
]
NamespaceOpt = Annotated[
    str | None,
    typer.Option(
        "--namespace",
        help="Only audit this <db>.<collection>, e.g. ycsb.usertable (mongodb-runtime, tencent).",
    ),
]
OnCmdOpt = Annotated[
    str | None,
    typer.Option(
        "--on-cmd", help='command strategy: argv as a JSON list or a shlex string; "{ops}" is replaced.'
    ),
]
OffCmdOpt = Annotated[str | None, typer.Option("--off-cmd", help="command strategy: the 'off' program.")]
StatusCmdOpt = Annotated[
    str | None,
    typer.Option(
        "--status-cmd", help="command strategy: prints the state; stdout matching --on-regex means on."
    ),
]
OnRegexOpt = Annotated[
    str | None,
    typer.Option(
        "--on-regex",
        help=r"command strategy: regex for 'on' in the status output (default \bon\b|enabled|true)",
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.1,
        help="Seconds: MongoDB connect (default 10), each command (120), cloud switch wait (600).",
    ),
]
InstanceOpt = Annotated[
    str | None, typer.Option("--instance-id", help="Cloud instance id (aliyun: dds-..., tencent: cmgo-...).")
]
RegionOpt = Annotated[str | None, typer.Option("--region", help="Cloud region (aliyun, tencent).")]
EndpointOpt = Annotated[str | None, typer.Option("--endpoint", help="Cloud API endpoint override.")]


def _options(
    strategy: StrategyName,
    *,
    url: str | None,
    namespace: str | None,
    on_cmd: str | None,
    off_cmd: str | None,
    status_cmd: str | None,
    on_regex: str | None,
    timeout: float | None,
    instance_id: str | None,
    region: str | None,
    endpoint: str | None,
) -> dict[str, Any]:
    """The make_strategy options for the chosen strategy. Pure."""
    name = str(strategy.value)
    if name == "mongodb-runtime":
        return {"namespace": namespace, "url": url}
    if name == "command":
        return {
            "on_cmd": on_cmd,
            "off_cmd": off_cmd,
            "status_cmd": status_cmd,
            "on_regex": on_regex,
            "timeout_s": timeout or 120.0,
        }
    if name == "aliyun":
        return {
            "instance_id": instance_id,
            "region_id": region,
            "endpoint": endpoint,
            "wait_s": timeout or 600.0,
        }
    if name == "tencent":
        return {
            "instance_id": instance_id,
            "region": region,
            "endpoint": endpoint,
            "namespace": namespace,
            "wait_s": timeout or 600.0,
        }
    return {}


@contextmanager
def _strategy(
    strategy: StrategyName, url: str | None, options: dict[str, Any], timeout: float | None
) -> Iterator[AuditStrategy]:
    client = None
    if strategy.value == "mongodb-runtime":
        if not url:
            raise UserError("mongodb-runtime needs --mongodb-url (or MONGODB_URL)")
        from pymongo import MongoClient
        from pymongo.errors import PyMongoError

        ms = int((timeout or 10.0) * 1000)
        try:
            client = MongoClient(url, serverSelectionTimeoutMS=ms, connectTimeoutMS=ms, appname="ycsb-runner")
        except (PyMongoError, ValueError, TypeError) as exc:
            raise UserError(f"bad --mongodb-url {mask_secrets(url)}: {one_line(str(exc))}") from None
    try:
        yield make_strategy(str(strategy.value), client=client, options=options)
    finally:
        if client is not None:
            client.close()


def _show(prefix: str, state: AuditState) -> None:
    typer.echo(f"{prefix}: {state.describe()}")


@app.command("on")
def audit_on(
    strategy: StrategyOpt = StrategyName.mongodb_runtime,
    mongodb_url: UrlOpt = None,
    ops: Annotated[str, typer.Option("--ops", help="YCSB ops to audit, comma separated.")] = DEFAULT_OPS,
    namespace: NamespaceOpt = None,
    on_cmd: OnCmdOpt = None,
    off_cmd: OffCmdOpt = None,
    status_cmd: StatusCmdOpt = None,
    on_regex: OnRegexOpt = None,
    timeout: TimeoutOpt = None,
    instance_id: InstanceOpt = None,
    region: RegionOpt = None,
    endpoint: EndpointOpt = None,
) -> None:
    """Audit the given YCSB operations, then read the state back."""
    wanted = normalize_ops(ops)
    opts = _options(
        strategy,
        url=mongodb_url,
        namespace=namespace,
        on_cmd=on_cmd,
        off_cmd=off_cmd,
        status_cmd=status_cmd,
        on_regex=on_regex,
        timeout=timeout,
        instance_id=instance_id,
        region=region,
        endpoint=endpoint,
    )
    with _strategy(strategy, mongodb_url, opts, timeout) as strat:
        _show(f"audit on ({strat.name})", strat.enable(wanted))


@app.command("off")
def audit_off(
    strategy: StrategyOpt = StrategyName.mongodb_runtime,
    mongodb_url: UrlOpt = None,
    namespace: NamespaceOpt = None,
    on_cmd: OnCmdOpt = None,
    off_cmd: OffCmdOpt = None,
    status_cmd: StatusCmdOpt = None,
    on_regex: OnRegexOpt = None,
    timeout: TimeoutOpt = None,
    instance_id: InstanceOpt = None,
    region: RegionOpt = None,
    endpoint: EndpointOpt = None,
) -> None:
    """Stop auditing YCSB's operations, then read the state back."""
    opts = _options(
        strategy,
        url=mongodb_url,
        namespace=namespace,
        on_cmd=on_cmd,
        off_cmd=off_cmd,
        status_cmd=status_cmd,
        on_regex=on_regex,
        timeout=timeout,
        instance_id=instance_id,
        region=region,
        endpoint=endpoint,
    )
    with _strategy(strategy, mongodb_url, opts, timeout) as strat:
        _show(f"audit off ({strat.name})", strat.disable())


@app.command("status")
def audit_status(
    strategy: StrategyOpt = StrategyName.mongodb_runtime,
    mongodb_url: UrlOpt = None,
    namespace: NamespaceOpt = None,
    on_cmd: OnCmdOpt = None,
    off_cmd: OffCmdOpt = None,
    status_cmd: StatusCmdOpt = None,
    on_regex: OnRegexOpt = None,
    timeout: TimeoutOpt = None,
    instance_id: InstanceOpt = None,
    region: RegionOpt = None,
    endpoint: EndpointOpt = None,
) -> None:
    """Show whether YCSB's operations are audited (no change)."""
    opts = _options(
        strategy,
        url=mongodb_url,
        namespace=namespace,
        on_cmd=on_cmd,
        off_cmd=off_cmd,
        status_cmd=status_cmd,
        on_regex=on_regex,
        timeout=timeout,
        instance_id=instance_id,
        region=region,
        endpoint=endpoint,
    )
    with _strategy(strategy, mongodb_url, opts, timeout) as strat:
        _show(f"audit ({strat.name})", strat.status())
