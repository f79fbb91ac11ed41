"""``aliyun``: ApsaraDB for MongoDB audit log through the Dds 2015-12-01 API (optional extra).

Credentials come from the SDK's default credential chain (``ALIBABA_CLOUD_ACCESS_KEY_ID`` /
``ALIBABA_CLOUD_ACCESS_KEY_SECRET``, ``~/.alibabacloud/credentials``, an ECS RAM role ...), never from the
suite file. Request objects are built by pure functions so they can be checked without network.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from typing import Any

from ycsb_runner.audit.base import (
    BASELINE_CLOUD,
    YCSB_OPS,
    AuditError,
    AuditState,
    AuditStrategy,
    categories_to_ops,
    normalize_ops,
    one_line,
    ops_to_categories,
    settle,
)
from ycsb_runner.audit.registry import cloud_spec, pick, register_strategy
from ycsb_runner.errors import UserError

INSTALL_HINT = "pip install 'ycsb-runner[aliyun]'"


def _sdk() -> Any:
    try:
        from alibabacloud_dds20151201 import models
    except ImportError:
        raise UserError(f"the aliyun strategy needs the Alibaba Cloud SDK: {INSTALL_HINT}") from None
    return models


def aliyun_filter(ops: Iterable[str], *, upsert: bool = False) -> str:
    """YCSB ops -> ModifyAuditLogFilter's ``Filter``, e.g. ``"insert,query,update"``; with the binding's
    ``upsert``, inserts arrive as updates (category ``update``). Pure."""
    cats = ops_to_categories(ops, upsert=upsert)
    if not cats:
        raise UserError("no YCSB operation to audit: pass --ops, e.g. insert,read,update")
    return ",".join(cats)


def build_policy_request(
    instance_id: str, enabled: bool, *, service_type: str = "Standard", storage_period: int | None = None
) -> Any:
    """ModifyAuditPolicyRequest: AuditStatus enable/disabled (ServiceType only when enabling). Pure."""
    models = _sdk()
    if enabled:
        return models.ModifyAuditPolicyRequest(
            dbinstance_id=instance_id,
            audit_status="enable",
            service_type=service_type,
            storage_period=storage_period,
        )
    return models.ModifyAuditPolicyRequest(dbinstance_id=instance_id, audit_status="disabled")


def build_filter_request(instance_id: str, filter_text: str, *, role_type: str | None = None) -> Any:
    """ModifyAuditLogFilterRequest for a Filter string. Pure."""
    return _sdk().ModifyAuditLogFilterRequest(
        dbinstance_id=instance_id, filter=filter_text, role_type=role_type
    )


def build_describe_policy_request(instance_id: str) -> Any:
    return _sdk().DescribeAuditPolicyRequest(dbinstance_id=instance_id)


def build_describe_filter_request(instance_id: str, *, role_type: str | None = None) -> Any:
    return _sdk().DescribeAuditLogFilterRequest(dbinstance_id=instance_id, role_type=role_type)


def make_client(
    *,
    region_id: str | None = None,
    endpoint: str | None = None,
    protocol: str | None = None,
    timeout_s: float = 30.0,
) -> Any:
    """A Dds client using the default credential chain (no keys pass through ycsb-runner)."""
    _sdk()
    from alibabacloud_credentials.client import Client as CredentialClient
    from alibabacloud_dds20151201.client import Client
    from alibabacloud_tea_openapi.utils_models import Config

    config = Config(
        credential=CredentialClient(),
        region_id=region_id or os.environ.get("ALIBABA_CLOUD_REGION_ID") or "cn-hangzhou",
        endpoint=endpoint,
        protocol=protocol,
        connect_timeout=int(timeout_s * 1000),
        read_timeout=int(timeout_s * 1000),
    )
    return Client(config)


def _error_text(exc: Exception) -> str:
    inner = getattr(exc, "inner_exception", None) or exc
    code = getattr(inner, "code", None)
    message = getattr(inner, "message", None) or str(inner)
    return one_line(f"{code}: {message}" if code else f"{type(inner).__name__}: {message}")


class AliyunStrategy(AuditStrategy):
    """ModifyAuditPolicy + ModifyAuditLogFilter, read back with DescribeAuditPolicy / -AuditLogFilter."""

    name = "aliyun"
    baseline = BASELINE_CLOUD.format(how="ModifyAuditPolicy AuditStatus=disabled")

    def __init__(
        self,
        instance_id: str,
        *,
        client: Any = None,
        region_id: str | None = None,
        endpoint: str | None = None,
        protocol: str | None = None,
        role_type: str | None = None,
        service_type: str = "Standard",
        storage_period: int | None = None,
        set_filter: bool = True,
        wait_s: float = 600.0,
        poll_s: float = 10.0,
    ) -> None:
        if not instance_id:
            raise UserError("the aliyun strategy needs --instance-id (e.g. dds-bp1xxxx)")
        _sdk()
        self.instance_id = instance_id
        self.client = client or make_client(region_id=region_id, endpoint=endpoint, protocol=protocol)
        self.role_type = role_type
        self.service_type = service_type
        self.storage_period = storage_period
        self.set_filter = set_filter
        self.wait_s, self.poll_s = wait_s, poll_s

    def _call(self, method: str, request: Any) -> Any:
        try:
            return getattr(self.client, method)(request).body
        except UserError:
            raise
        except Exception as exc:  # the SDK raises many unrelated types
            action = "".join(part.title() for part in method.split("_"))
            raise AuditError(f"aliyun {action} on {self.instance_id} failed: {_error_text(exc)}") from None

    def status(self) -> AuditState:
        policy = self._call("describe_audit_policy", build_describe_policy_request(self.instance_id))
        audit = str(policy.log_audit_status or "")
        enabled = audit.lower() in {"enable", "enabled"}
        filter_text: str | None = None
        note = ""
        try:
            filt = self._call(
                "describe_audit_log_filter",
                build_describe_filter_request(self.instance_id, role_type=self.role_type),
            )
            filter_text = str(filt.filter or "")
        except AuditError as exc:
            note = f", filter not readable ({exc})"
        raw = {"LogAuditStatus": audit, "Filter": filter_text}
        if filter_text is None:
            ops = frozenset(YCSB_OPS) if enabled else frozenset()  # unknown filter: cannot say less
        else:
            ops = categories_to_ops(filter_text.split(","), upsert=self.upsert) if enabled else frozenset()
        detail = f"{self.instance_id}: LogAuditStatus={audit or '?'}, Filter={filter_text!s}{note}"
        return AuditState(enabled, ops, detail, raw)

    def _settle(self, expected_on: bool, ops: Iterable[str]) -> AuditState:
        return settle(self.status, self.name, expected_on, ops, timeout_s=self.wait_s, interval_s=self.poll_s)

    def _switch(self, enabled: bool, filter_text: str | None) -> None:
        """Policy first when enabling, filter first when disabling (the filter is set on a live audit)."""
        current = self.status()
        steps = []
        if current.enabled != enabled:
            policy = build_policy_request(
                self.instance_id, enabled, service_type=self.service_type, storage_period=self.storage_period
            )
            steps.append(("modify_audit_policy", policy))
        if filter_text is not None and current.raw.get("Filter") != filter_text:
            filter_step = (
                "modify_audit_log_filter",
                build_filter_request(self.instance_id, filter_text, role_type=self.role_type),
            )
            steps.insert(len(steps) if enabled else 0, filter_step)
        for method, request in steps:
            self._call(method, request)

    def enable(self, ops: Iterable[str]) -> AuditState:
        wanted = normalize_ops(ops)
        self._switch(True, aliyun_filter(wanted, upsert=self.upsert) if self.set_filter else None)
        return self._settle(True, wanted)

    def disable(self) -> AuditState:
        self._switch(False, None)
        return self._settle(False, ())

    def verify(self, expected_on: bool, ops: Iterable[str] = ()) -> AuditState:
        return self._settle(expected_on, normalize_ops(ops))

    def restore(self, state: AuditState) -> AuditState:
        if state.enabled is None:
            raise AuditError(f"aliyun: the state to restore is unknown ({state.detail})")
        filter_text = state.raw.get("Filter") or None
        self._switch(state.enabled, filter_text)
        return self._settle(state.enabled, state.ops)

    def persistence_note(self) -> str:
        return f"ModifyAuditPolicy/ModifyAuditLogFilter change instance {self.instance_id} until changed back"

    def restore_options(self) -> dict[str, Any]:
        return {
            "instance_id": self.instance_id,
            "role_type": self.role_type,
            "service_type": self.service_type,
            "storage_period": self.storage_period,
            "set_filter": self.set_filter,
        }

    def manual_restore_hint(self, state: AuditState) -> str:
        base = ["aliyun", "dds", "ModifyAuditPolicy", "--DBInstanceId", self.instance_id]
        if not state.enabled:
            return shlex.join([*base, "--AuditStatus", "disabled"])
        line = shlex.join([*base, "--AuditStatus", "enable", "--ServiceType", self.service_type])
        filter_text = state.raw.get("Filter")
        if filter_text:
            line += " && " + shlex.join(
                [
                    "aliyun",
                    "dds",
                    "ModifyAuditLogFilter",
                    "--DBInstanceId",
                    self.instance_id,
                    "--Filter",
                    filter_text,
                ]
            )
        return line


def _make(opts: dict[str, Any], client: Any) -> AuditStrategy:
    return AliyunStrategy(
        opts.get("instance_id") or "",
        client=opts.get("sdk_client"),
        **pick(
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


register_strategy(
    cloud_spec(
        "aliyun",
        "Alibaba Cloud ApsaraDB for MongoDB's audit log service (--instance-id dds-...).",
        _make,
        region_key="region_id",
    )
)
