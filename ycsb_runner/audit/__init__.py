"""Audit-logging strategies: turn auditing of YCSB's operations on/off, verify it and restore it."""

from __future__ import annotations

from typing import Any

from ycsb_runner.audit.base import (
    OP_COMMANDS,
    YCSB_OPS,
    AuditError,
    AuditState,
    AuditStrategy,
    normalize_ops,
    ops_to_commands,
)
from ycsb_runner.audit.guard import audit_guard
from ycsb_runner.errors import UserError

STRATEGIES: tuple[str, ...] = ("mongodb-runtime", "restart", "command", "aliyun", "tencent")
#: Strategies whose switch ycsb-runner cannot read back as the server's (or service's) audit configuration:
#: what they flip may not be audit logging at all (the README's state file, the embedded FerretDB).
UNVERIFIED_STRATEGIES: dict[str, str] = {
    "command": "the `command` strategy ran your own on/off/status commands",
    "restart": "the `restart` strategy restarted the server with other arguments",
}


def unverified_audit(strategy: str | None) -> str:
    """The caveat every table, report and manifest of a run carries when its audit switch is not verified
    as auditing ("" for the strategies that read the audit configuration back, or no strategy)."""
    how = UNVERIFIED_STRATEGIES.get(strategy or "")
    if not how:
        return ""
    return (
        f"UNVERIFIED AUDIT: {how}; ycsb-runner did not verify that the server audited anything, so "
        "'off -> on' may not be audit logging (the embedded FerretDB has no auditing)"
    )


__all__ = [
    "OP_COMMANDS",
    "STRATEGIES",
    "UNVERIFIED_STRATEGIES",
    "YCSB_OPS",
    "AuditError",
    "AuditState",
    "AuditStrategy",
    "audit_guard",
    "make_strategy",
    "normalize_ops",
    "ops_to_commands",
    "unverified_audit",
]


def _pick(options: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: options[k] for k in keys if options.get(k) is not None}


def make_strategy(name: str, *, client: Any = None, options: dict[str, Any] | None = None) -> AuditStrategy:
    """Build the named strategy; UserError for unknown names, missing options or unusable servers.

    Options per strategy (all optional unless noted):
    * mongodb-runtime: ``client`` (required, a pymongo MongoClient), ``namespace`` ("db.coll": audit only
      it), ``url`` (reaches every node by direct connections; masked in restore hints), ``target_namespace``
      (where YCSB writes, to read ``param.ns`` clauses), ``verify_timeout_s`` (how long every node may take
      to report the new state; default: polling frequency + 30 s on sharded clusters), ``verify_poll_s``,
      ``allow_unlisted_members`` (go on, with a warning, when replSetGetConfig is refused and hidden or
      delayed members cannot be listed), ``log`` (progress lines; default stderr), ``direct`` /
      ``mongos_docs`` / ``clock`` / ``sleep`` (callables, for tests).
    * every strategy: ``upsert`` (the binding's mongodb.upsert: inserts are audited as updates).
    * command: ``on_cmd``, ``off_cmd``, ``status_cmd`` (required; argv lists, JSON lists or shlex strings),
      ``on_regex``, ``timeout_s``, ``cwd``.
    * restart: ``restart`` (callable(with_audit, ops)), ``status`` (callable) (both required), ``hint``.
    * aliyun: ``instance_id`` (required), ``region_id``, ``endpoint``, ``protocol``, ``role_type``,
      ``service_type``, ``storage_period``, ``set_filter``, ``wait_s``, ``poll_s``, ``sdk_client``.
    * tencent: ``instance_id`` (required), ``region``, ``endpoint``, ``scheme``, ``log_expire_day``,
      ``namespace``, ``wait_s``, ``poll_s``, ``sdk_client``.
    """
    opts = dict(options or {})
    if name == "mongodb-runtime":
        from ycsb_runner.audit.mongodb_runtime import MongoRuntimeStrategy

        if client is None:
            raise UserError("the mongodb-runtime strategy needs a MongoDB connection: pass --mongodb-url")
        extra = _pick(opts, "target_namespace", "verify_timeout_s", "log", "clock", "sleep")
        if opts.get("verify_poll_s") is not None:
            extra["poll_s"] = float(opts["verify_poll_s"])
        strategy: AuditStrategy = MongoRuntimeStrategy.connect(
            client,
            namespace=opts.get("namespace"),
            url=opts.get("url"),
            direct=opts.get("direct"),
            mongos_docs=opts.get("mongos_docs"),
            upsert=_truthy(opts.get("upsert")),
            allow_unlisted=_truthy(opts.get("allow_unlisted_members")),
            **extra,
        )
        return strategy
    strategy = _make_other(name, opts)
    strategy.upsert = _truthy(opts.get("upsert"))
    return strategy


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes", "on"}
    return bool(value)


def _make_other(name: str, opts: dict[str, Any]) -> AuditStrategy:
    if name == "command":
        from ycsb_runner.audit.command import CommandStrategy

        return CommandStrategy.from_options(opts)
    if name == "restart":
        from ycsb_runner.audit.restart import RestartStrategy

        if "restart" not in opts or "status" not in opts:
            raise UserError(
                "the restart strategy is driven by the suite runner (it restarts the server), "
                "not usable from the command line; use mongodb-runtime or command"
            )
        return RestartStrategy(opts["restart"], opts["status"], hint=opts.get("hint"))
    if name == "aliyun":
        from ycsb_runner.audit.aliyun import AliyunStrategy

        return AliyunStrategy(
            opts.get("instance_id") or "",
            client=opts.get("sdk_client"),
            **_pick(
                opts,
                "region_id",
                "endpoint",
                "protocol",
                "role_type",
                "service_type",
                "storage_period",
                "set_filter",
                "wait_s",
                "poll_s",
            ),
        )
    if name == "tencent":
        from ycsb_runner.audit.tencent import TencentStrategy

        return TencentStrategy(
            opts.get("instance_id") or "",
            client=opts.get("sdk_client"),
            **_pick(opts, "region", "endpoint", "scheme", "log_expire_day", "namespace", "wait_s", "poll_s"),
        )
    raise UserError(f"unknown audit strategy {name!r}: use one of {', '.join(STRATEGIES)}")
