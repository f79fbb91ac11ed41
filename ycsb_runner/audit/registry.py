"""The audit strategies by name: each strategy's module registers one ``StrategySpec`` (``register_strategy``)
and everything that names strategies reads them here: ``make_strategy``, the ``audit`` and ``bench``
commands (their options and help texts), the pre-flight checks and ``audit restore``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ycsb_runner.audit.base import AuditState, AuditStrategy
from ycsb_runner.errors import UserError


@dataclass(frozen=True)
class RestoreRequest:
    """What ``audit restore`` knows: the restore file (its path, the strategy's saved options, the state to
    put back) and the command line's values (``given``: the ``audit`` command's option names)."""

    path: Path
    saved: dict[str, Any]
    entry: AuditState
    given: dict[str, Any]


def _no_findings(options: dict[str, Any], embedded: bool) -> list[str]:
    return []


@dataclass(frozen=True)
class StrategySpec:
    """One audit strategy, as everything outside its module sees it.

    * ``make(options, client)``: the strategy from its options (``make_strategy`` documents them); UserError
      for missing ones. ``client``: a pymongo client to ``--mongodb-url`` when ``needs_client``, else None.
    * ``cli_options(given)``: ``audit on|off|status``'s values (``given``: ``mongodb_url``, ``namespace``,
      ``on_cmd``, ``off_cmd``, ``status_cmd``, ``on_regex``, ``timeout``, ``instance_id``, ``region``,
      ``endpoint``, ``allow_unlisted_members``) as the strategy's options.
    * ``preflight(options, embedded)``: one-line errors for a bench's ``--audit-option``/``[audit.options]``
      values, before the server starts.
    * ``restore(request)``: the options ``audit restore`` builds the strategy with; None: not restorable
      from a file (the manual hint is printed instead).
    * ``with_server(server, options)``: a bench adds what the strategy needs of the embedded server (its
      ``.info`` follows restarts; None with MONGODB_URL).
    * ``programs(options)``: the programs a run will execute, announced before it starts; ``program_keys``:
      the options that name them.
    * ``unverified``: how its switch may not be audit logging (the caveat of every table and report).
    """

    name: str
    help: str  # one line for the command help texts
    make: Callable[[dict[str, Any], Any], AuditStrategy]
    cli_options: Callable[[dict[str, Any]], dict[str, Any]] = lambda given: {}
    preflight: Callable[[dict[str, Any], bool], list[str]] = _no_findings
    restore: Callable[[RestoreRequest], dict[str, Any]] | None = None
    needs_client: bool = False
    with_server: Callable[[Any, dict[str, Any]], dict[str, Any]] | None = None
    programs: Callable[[dict[str, Any]], list[str]] | None = None
    program_keys: tuple[str, ...] = ()
    unverified: str = ""

    def build(self, options: dict[str, Any], client: Any = None) -> AuditStrategy:
        """The strategy from *options* (``make``), with ``upsert``: the binding's mongodb.upsert (inserts
        are audited as updates)."""
        opts = dict(options)
        strategy = self.make(opts, client)
        strategy.upsert = truthy(opts.get("upsert"))
        return strategy


_SPECS: dict[str, StrategySpec] = {}


def register_strategy(spec: StrategySpec) -> StrategySpec:
    """Add (or replace) the strategy *spec.name*; the listing order is the registration order."""
    _SPECS[spec.name] = spec
    return spec


def strategy_names() -> tuple[str, ...]:
    return tuple(_SPECS)


def strategy_spec(name: str) -> StrategySpec:
    """The registered strategy *name*; UserError naming the registered ones for any other."""
    try:
        return _SPECS[name]
    except KeyError:
        raise UserError(f"unknown audit strategy {name!r}: use one of {', '.join(_SPECS)}") from None


def truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes", "on"}
    return bool(value)


def pick(options: dict[str, Any], *keys: str) -> dict[str, Any]:
    """The given (not None) *keys* of *options*."""
    return {k: options[k] for k in keys if options.get(k) is not None}


def cloud_spec(
    name: str,
    help: str,
    make: Callable[[dict[str, Any], Any], AuditStrategy],
    *,
    region_key: str,
    namespace: bool = False,
) -> StrategySpec:
    """The spec of a cloud service's strategy: ``--instance-id``, ``--region`` (its option *region_key*),
    ``--endpoint``, ``--timeout`` (600 s) and with *namespace* ``--namespace`` from the command line; a
    bench needs ``instance_id``; ``audit restore`` takes the saved options with this command line's region
    and endpoint."""

    def cli_options(given: dict[str, Any]) -> dict[str, Any]:
        options = {
            "instance_id": given["instance_id"],
            region_key: given["region"],
            "endpoint": given["endpoint"],
            "wait_s": given["timeout"] or 600.0,
        }
        return {**options, "namespace": given["namespace"]} if namespace else options

    def preflight(options: dict[str, Any], embedded: bool) -> list[str]:
        if options.get("instance_id"):
            return []
        return [f"--audit-strategy {name} needs --audit-option instance_id=..."]

    def restore(request: RestoreRequest) -> dict[str, Any]:
        saved = {k: v for k, v in request.saved.items() if k not in ("region", "region_id")}
        return {**saved, region_key: request.given["region"], "endpoint": request.given["endpoint"]}

    return StrategySpec(name, help, make, cli_options, preflight, restore)
