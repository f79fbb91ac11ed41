"""Audit-logging strategies: turn auditing of YCSB's operations on/off, verify it and restore it.

Each strategy's module registers itself (``registry.register_strategy``) when this package imports it:
a new strategy is its module, and its name in the import list below."""

from __future__ import annotations

from typing import Any

# The built-in strategies, imported for their registration, in the order the help texts list them.
# isort: off
from ycsb_runner.audit import mongodb_runtime, restart, command, aliyun, tencent  # noqa: F401

# isort: on
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
from ycsb_runner.audit.registry import (
    RestoreRequest,
    StrategySpec,
    register_strategy,
    strategy_names,
    strategy_spec,
)


def unverified_audit(strategy: str | None) -> str:
    """The caveat every table, report and manifest of a run carries when its audit switch is not verified
    as auditing ("" for the strategies that read the audit configuration back, or no strategy)."""
    how = strategy_spec(strategy).unverified if strategy in strategy_names() else ""
    if not how:
        return ""
    return (
        f"UNVERIFIED AUDIT: {how}; ycsb-runner did not verify that the server audited anything, so "
        "'off -> on' may not be audit logging (the embedded FerretDB has no auditing)"
    )


__all__ = [
    "OP_COMMANDS",
    "YCSB_OPS",
    "AuditError",
    "AuditState",
    "AuditStrategy",
    "RestoreRequest",
    "StrategySpec",
    "audit_guard",
    "make_strategy",
    "normalize_ops",
    "ops_to_commands",
    "register_strategy",
    "strategy_names",
    "run_strategy",
    "strategy_spec",
    "unverified_audit",
]


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
    return strategy_spec(name).build(options or {}, client)


def run_strategy(section: Any, url: str, namespace: str, holder: Any, given: dict[str, Any]) -> AuditStrategy:
    """A bench's audit strategy: the suite's ``[audit]`` *section* (its strategy named: bench checked it),
    its options with the ``--audit-option`` values *given* over them, against *url*. *namespace*: YCSB's
    collection ("db.coll"), where the strategy reads ``param.ns`` clauses (and all it audits with
    ``namespace_only``); *holder*: the embedded server as it is now (a restart replaces it)."""
    options = {**section.options, **given, "url": url}
    options.setdefault("target_namespace", namespace)
    if section.namespace_only:
        options.setdefault("namespace", namespace)
    spec = strategy_spec(section.strategy)
    client = None
    if spec.needs_client:
        from pymongo import MongoClient

        client = MongoClient(url, serverSelectionTimeoutMS=10000)
    if spec.with_server is not None:
        options = spec.with_server(holder, options)
    return spec.build(options, client)
