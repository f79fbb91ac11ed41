"""``ycsb-runner audit on|off|status|restore``: switch, inspect and restore audit logging by hand."""

from __future__ import annotations

import enum
import functools
import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from ycsb_runner.audit import (
    AuditState,
    AuditStrategy,
    RestoreRequest,
    make_strategy,
    normalize_ops,
    strategy_names,
    strategy_spec,
)
from ycsb_runner.audit.base import one_line
from ycsb_runner.cli.options import UrlOpt, complete_run
from ycsb_runner.errors import UserError
from ycsb_runner.safe.secrets import mask_url

STRATEGIES = strategy_names()  # the registered strategies (``ycsb_runner.audit.registry``)
StrategyName = enum.StrEnum("StrategyName", {n.replace("-", "_"): n for n in STRATEGIES})

app = typer.Typer(
    name="audit",
    help=(
        "Turn audit logging of YCSB's operations on or off, or show it. Strategies: "
        + ", ".join(STRATEGIES)
        + ".\n\n\b\n"
        + "\n".join(f"{n}: {strategy_spec(n).help}" for n in STRATEGIES)
    ),
    no_args_is_help=True,
    add_completion=False,
)

DEFAULT_OPS = "insert,read,update"

StrategyOpt = Annotated[
    StrategyName,
    typer.Option(
        "--strategy",
        metavar="NAME",
        case_sensitive=False,
        help="How to switch auditing: " + ", ".join(STRATEGIES) + ".",
    ),
]
NamespaceOpt = Annotated[
    str | None,
    typer.Option(
        "--namespace",
        metavar="DB.COLL",
        help="Only audit this <db>.<collection>, e.g. ycsb.usertable (mongodb-runtime, tencent).",
    ),
]
OnCmdOpt = Annotated[
    str | None,
    typer.Option(
        "--on-cmd",
        metavar="ARGV",
        help='command strategy: argv as a JSON list or a shlex string; "{ops}" is replaced.',
    ),
]
OffCmdOpt = Annotated[
    str | None, typer.Option("--off-cmd", metavar="ARGV", help="command strategy: the 'off' program.")
]
StatusCmdOpt = Annotated[
    str | None,
    typer.Option(
        "--status-cmd",
        metavar="ARGV",
        help="command strategy: prints the state; stdout matching --on-regex means on.",
    ),
]
OnRegexOpt = Annotated[
    str | None,
    typer.Option(
        "--on-regex",
        metavar="REGEX",
        help=r"command strategy: regex for 'on' in the status output (default \bon\b|enabled|true)",
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        min=0.1,
        help="Seconds: MongoDB connect (default 10), each command (120), cloud switch wait (600).",
    ),
]
AllowUnlistedOpt = Annotated[
    bool,
    typer.Option(
        "--allow-unlisted-members",
        help=(
            "mongodb-runtime: when replSetGetConfig is refused (it lists hidden and delayed members), go "
            "on with the members hello lists, with a warning naming them; default: refuse."
        ),
    ),
]
InstanceOpt = Annotated[
    str | None,
    typer.Option(
        "--instance-id", metavar="ID", help="Cloud instance id (aliyun: dds-..., tencent: cmgo-...)."
    ),
]
RegionOpt = Annotated[
    str | None, typer.Option("--region", metavar="REGION", help="Cloud region (aliyun, tencent).")
]
EndpointOpt = Annotated[
    str | None, typer.Option("--endpoint", metavar="HOST", help="Cloud API endpoint override.")
]


@dataclass(frozen=True)
class StrategyArgs:
    """The options ``audit on|off|status`` share: which strategy, and how to reach what it switches."""

    strategy: StrategyName
    mongodb_url: str | None
    namespace: str | None
    on_cmd: str | None
    off_cmd: str | None
    status_cmd: str | None
    on_regex: str | None
    timeout: float | None
    instance_id: str | None
    region: str | None
    endpoint: str | None
    allow_unlisted_members: bool = False

    def options(self) -> dict[str, Any]:
        """The make_strategy options for the chosen strategy (its ``cli_options``). Pure."""
        return strategy_spec(str(self.strategy.value)).cli_options(asdict(self))


_SHARED = {
    "strategy": (StrategyOpt, StrategyName.mongodb_runtime),
    "mongodb_url": (UrlOpt, None),
    "namespace": (NamespaceOpt, None),
    "on_cmd": (OnCmdOpt, None),
    "off_cmd": (OffCmdOpt, None),
    "status_cmd": (StatusCmdOpt, None),
    "on_regex": (OnRegexOpt, None),
    "timeout": (TimeoutOpt, None),
    "instance_id": (InstanceOpt, None),
    "region": (RegionOpt, None),
    "endpoint": (EndpointOpt, None),
    "allow_unlisted_members": (AllowUnlistedOpt, False),
}


def strategy_command(func: Callable[..., None]) -> Callable[..., None]:
    """Give a command the shared strategy options (defined once, above); it receives them as ``args``."""
    own = [p for p in inspect.signature(func, eval_str=True).parameters.values() if p.name != "args"]
    shared = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
        for name, (annotation, default) in _SHARED.items()
    ]

    @functools.wraps(func)
    def command(**kwargs: Any) -> None:
        args = StrategyArgs(**{name: kwargs.pop(name) for name in _SHARED})
        func(args=args, **kwargs)

    command.__signature__ = inspect.Signature([*own, *shared])  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in [*own, *shared]}
    return command


@contextmanager
def _strategy(
    strategy: StrategyName, url: str | None, options: dict[str, Any], timeout: float | None
) -> Iterator[AuditStrategy]:
    client = None
    if strategy_spec(strategy.value).needs_client:
        if not url:
            raise UserError(f"{strategy.value} needs --mongodb-url (or MONGODB_URL)")
        from pymongo import MongoClient
        from pymongo.errors import PyMongoError

        ms = int((timeout or 10.0) * 1000)
        try:
            client = MongoClient(url, serverSelectionTimeoutMS=ms, connectTimeoutMS=ms, appname="ycsb-runner")
        except (PyMongoError, ValueError, TypeError) as exc:
            raise UserError(f"bad --mongodb-url {mask_url(url)}: {one_line(str(exc))}") from None
    try:
        yield make_strategy(str(strategy.value), client=client, options=options)
    finally:
        if client is not None:
            client.close()


def _show(prefix: str, state: AuditState) -> None:
    typer.echo(f"{prefix}: {state.describe()}")
    for node in state.nodes:  # every node of a replica set / sharded cluster
        checked = {True: ", verified", False: ", NOT verified"}.get(node.get("verified"), "")
        typer.echo(f"  {node.get('role')} {node.get('node')}: {node.get('state')}{checked}")


@app.command("on")
@strategy_command
def audit_on(
    args: StrategyArgs,
    ops: Annotated[
        str, typer.Option("--ops", metavar="OPS", help="YCSB ops to audit, comma separated.")
    ] = DEFAULT_OPS,
    upsert: Annotated[
        bool,
        typer.Option(
            "--upsert", help="The binding runs with mongodb.upsert=true: inserts reach the server as updates."
        ),
    ] = False,
) -> None:
    """Audit the given YCSB operations, then read the state back."""
    wanted = normalize_ops(ops)
    opts = {**args.options(), "upsert": upsert}
    with _strategy(args.strategy, args.mongodb_url, opts, args.timeout) as strat:
        _show(f"audit on ({strat.name})", strat.enable(wanted))


@app.command("restore")
def audit_restore(
    run_dir: Annotated[
        Path,
        typer.Argument(help="The run folder (or its audit-restore.json).", autocompletion=complete_run),
    ],
    mongodb_url: UrlOpt = None,
    on_cmd: OnCmdOpt = None,
    off_cmd: OffCmdOpt = None,
    status_cmd: StatusCmdOpt = None,
    timeout: TimeoutOpt = None,
    region: RegionOpt = None,
    endpoint: EndpointOpt = None,
    allow_unlisted_members: AllowUnlistedOpt = False,
) -> None:
    """Put auditing back to the state saved in RUN_DIR before the first switch (after a crash or kill)."""
    from ycsb_runner.audit.restore_file import load_restore_file, mark

    path, document, entry = load_restore_file(run_dir)
    name = str(document.get("strategy") or "")
    saved = dict(document.get("options") or {})
    restore = strategy_spec(name).restore if name in strategy_names() else None
    if restore is None or not document.get("options"):
        raise UserError(
            f"{path}: the {name or 'unknown'} strategy cannot be restored from a file; "
            f"restore by hand: {document.get('manual_restore') or 'see the file'}"
        )
    if document.get("status") == "restored":
        typer.echo(f"{path}: already restored at {document.get('restored_at', '?')}; checking again")
    given = {
        "mongodb_url": mongodb_url,
        "on_cmd": on_cmd,
        "off_cmd": off_cmd,
        "status_cmd": status_cmd,
        "timeout": timeout,
        "region": region,
        "endpoint": endpoint,
        "allow_unlisted_members": allow_unlisted_members,
    }
    options: dict[str, Any] = {"upsert": bool(document.get("upsert"))}
    options.update(restore(RestoreRequest(path=path, saved=saved, entry=entry, given=given)))
    url = options.get("url") if strategy_spec(name).needs_client else None
    strategy_name = StrategyName(name)
    with _strategy(strategy_name, url, options, timeout) as strat:
        try:
            state = strat.restore(entry)
        except UserError as exc:
            mark(path, "not-restored", str(exc))
            raise
    mark(path, "restored")
    _show(f"audit restored ({strat.name}) from {path}", state)


@app.command("off")
@strategy_command
def audit_off(args: StrategyArgs) -> None:
    """Stop auditing YCSB's operations, then read the state back."""
    with _strategy(args.strategy, args.mongodb_url, args.options(), args.timeout) as strat:
        _show(f"audit off ({strat.name})", strat.disable())


@app.command("status")
@strategy_command
def audit_status(args: StrategyArgs) -> None:
    """Show whether YCSB's operations are audited (no change)."""
    with _strategy(args.strategy, args.mongodb_url, args.options(), args.timeout) as strat:
        _show(f"audit ({strat.name})", strat.status())
