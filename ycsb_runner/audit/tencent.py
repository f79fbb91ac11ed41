"""``tencent``: TencentDB for MongoDB audit through the mongodb 2019-07-25 API (optional extra).

Credentials come from the SDK's default provider chain (``TENCENTCLOUD_SECRET_ID`` /
``TENCENTCLOUD_SECRET_KEY``, the profile file, a CVM role ...), never from the suite file. Rule-based
audit filters on SqlType (query/insert/update/delete/command); DescribeAuditConfig does not return the
rules, so the ops of a rule-based audit are known only when this process set them.
"""

from __future__ import annotations

import json
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
    normalize_ops,
    one_line,
    ops_to_categories,
    settle,
)
from ycsb_runner.audit.registry import cloud_spec, pick, register_strategy
from ycsb_runner.errors import UserError

INSTALL_HINT = "pip install 'ycsb-runner[tencent]'"
NOT_OPEN_CODES = frozenset({"FailedOperation.AuditConfigNotExist"})


def _sdk() -> Any:
    try:
        from tencentcloud.mongodb.v20190725 import models
    except ImportError:
        raise UserError(f"the tencent strategy needs the Tencent Cloud SDK: {INSTALL_HINT}") from None
    return models


def rule_filters(
    ops: Iterable[str], namespace: str | None = None, *, upsert: bool = False
) -> list[dict[str, Any]]:
    """RuleFilters (as dicts) for the YCSB ops, optionally limited to ``db.collection``; with the binding's
    ``upsert``, inserts arrive as updates (SqlType ``update``). Pure."""
    cats = ops_to_categories(ops, upsert=upsert)
    if not cats:
        raise UserError("no YCSB operation to audit: pass --ops, e.g. insert,read,update")
    rules: list[dict[str, Any]] = [{"Type": "SqlType", "Compare": "EQ", "Value": list(cats)}]
    if namespace:
        db, _, coll = namespace.partition(".")
        if not db or not coll:
            raise UserError(f"namespace {namespace!r} must be <database>.<collection>, e.g. ycsb.usertable")
        rules += [
            {"Type": "DB", "Compare": "EQ", "Value": [db]},
            {"Type": "Collection", "Compare": "EQ", "Value": [coll]},
        ]
    return rules


def _log_filters(rules: list[dict[str, Any]]) -> list[Any]:
    models = _sdk()
    out = []
    for rule in rules:
        item = models.LogFilter()
        item.Type, item.Compare, item.Value = rule["Type"], rule["Compare"], list(rule["Value"])
        out.append(item)
    return out


def build_open_request(
    instance_id: str,
    ops: Iterable[str] | None,
    *,
    log_expire_day: int = 7,
    namespace: str | None = None,
    modify: bool = False,
    upsert: bool = False,
) -> Any:
    """OpenAuditServiceRequest (or ModifyAuditServiceRequest); ``ops`` None means AuditAll. Pure."""
    models = _sdk()
    request = models.ModifyAuditServiceRequest() if modify else models.OpenAuditServiceRequest()
    request.InstanceId = instance_id
    request.LogExpireDay = int(log_expire_day)
    request.AuditAll = ops is None
    if ops is not None:
        request.RuleFilters = _log_filters(rule_filters(ops, namespace, upsert=upsert))
    return request


def build_close_request(instance_id: str) -> Any:
    request = _sdk().CloseAuditServiceRequest()
    request.InstanceId = instance_id
    return request


def build_describe_request(instance_id: str) -> Any:
    request = _sdk().DescribeAuditConfigRequest()
    request.InstanceId = instance_id
    return request


def make_client(
    *, region: str | None = None, endpoint: str | None = None, scheme: str | None = None, timeout_s: int = 30
) -> Any:
    """A mongodb client with the default credential chain (no keys pass through ycsb-runner)."""
    _sdk()
    from tencentcloud.common.credential import DefaultCredentialProvider
    from tencentcloud.common.exception.tencent_cloud_sdk_exception import TencentCloudSDKException
    from tencentcloud.common.profile.client_profile import ClientProfile
    from tencentcloud.common.profile.http_profile import HttpProfile
    from tencentcloud.mongodb.v20190725 import mongodb_client

    try:
        credential = DefaultCredentialProvider().get_credential()
    except TencentCloudSDKException:
        credential = None
    if credential is None:
        raise UserError(
            "no Tencent Cloud credentials: set TENCENTCLOUD_SECRET_ID and "
            "TENCENTCLOUD_SECRET_KEY (or configure ~/.tencentcloud/credentials)"
        )
    http = HttpProfile(endpoint=endpoint, protocol=scheme, reqTimeout=int(timeout_s))
    return mongodb_client.MongodbClient(
        credential,
        region or os.environ.get("TENCENTCLOUD_REGION") or "ap-guangzhou",
        ClientProfile(httpProfile=http),
    )


class TencentStrategy(AuditStrategy):
    """OpenAuditService / ModifyAuditService / CloseAuditService, verified with DescribeAuditConfig."""

    name = "tencent"
    baseline = BASELINE_CLOUD.format(how="CloseAuditService")

    def __init__(
        self,
        instance_id: str,
        *,
        client: Any = None,
        region: str | None = None,
        endpoint: str | None = None,
        scheme: str | None = None,
        log_expire_day: int = 7,
        namespace: str | None = None,
        wait_s: float = 600.0,
        poll_s: float = 10.0,
    ) -> None:
        if not instance_id:
            raise UserError("the tencent strategy needs --instance-id (e.g. cmgo-xxxxxxxx)")
        _sdk()
        self.instance_id = instance_id
        self.client = client or make_client(region=region, endpoint=endpoint, scheme=scheme)
        self.log_expire_day = log_expire_day
        self.namespace = namespace
        self.wait_s, self.poll_s = wait_s, poll_s
        self._ops: frozenset[str] | None = None  # rules set by this process (None: not set here)

    def _call(self, action: str, request: Any) -> Any:
        from tencentcloud.common.exception.tencent_cloud_sdk_exception import TencentCloudSDKException

        try:
            return getattr(self.client, action)(request)
        except TencentCloudSDKException as exc:
            if action == "DescribeAuditConfig" and exc.get_code() in NOT_OPEN_CODES:
                return None
            raise AuditError(
                f"tencent {action} on {self.instance_id} failed: {exc.get_code()}: "
                f"{one_line(str(exc.get_message()))}"
            ) from None

    def status(self) -> AuditState:
        resp = self._call("DescribeAuditConfig", build_describe_request(self.instance_id))
        if resp is None:
            return AuditState(False, frozenset(), f"{self.instance_id}: audit not opened", {"open": False})
        raw = {
            "open": True,
            "AuditAll": resp.AuditAll,
            "LogExpireDay": resp.LogExpireDay,
            "IsOpening": resp.IsOpening,
            "IsClosing": resp.IsClosing,
        }
        detail = (
            f"{self.instance_id}: AuditAll={resp.AuditAll}, LogExpireDay={resp.LogExpireDay}, "
            f"IsOpening={resp.IsOpening}, IsClosing={resp.IsClosing}"
        )
        if str(resp.IsOpening).lower() == "true" or str(resp.IsClosing).lower() == "true":
            return AuditState(None, frozenset(), detail + " (switching)", raw)
        if resp.AuditAll is None:  # the API may leave it out: neither "all" nor known rules
            return AuditState(
                None, frozenset(), detail + " (AuditAll not reported: audit scope unknown)", raw
            )
        if resp.AuditAll:
            ops = frozenset(YCSB_OPS)
        else:
            ops = self._ops or frozenset()
            detail += ", rule filters " + ("as set by this run" if self._ops else "not readable via the API")
        raw["ops"] = sorted(ops)
        return AuditState(True, ops, detail, raw)

    def check_restorable(self, entry: AuditState) -> None:
        """Refuse before anything changes when the starting audit cannot be put back by this tool."""
        if entry.enabled is None:
            raise AuditError(
                f"tencent: refusing to switch audit on {self.instance_id}: its current state cannot be "
                f"read ({entry.detail}), so it could not be restored; check it in the console first"
            )
        if entry.enabled and not entry.raw.get("AuditAll") and not entry.ops:
            raise AuditError(
                f"tencent: refusing to switch audit on {self.instance_id}: it runs a rule-based audit "
                "whose rules DescribeAuditConfig does not return, so closing it could not be undone; "
                "switch the instance to full audit (AuditAll) or close the audit in the console, then rerun"
            )

    def _settle(self, expected_on: bool, ops: Iterable[str]) -> AuditState:
        return settle(self.status, self.name, expected_on, ops, timeout_s=self.wait_s, interval_s=self.poll_s)

    def _open(self, ops: frozenset[str] | None, log_expire_day: int) -> None:
        current = self.status()
        request = build_open_request(
            self.instance_id,
            ops,
            log_expire_day=log_expire_day,
            namespace=self.namespace,
            modify=bool(current.enabled),
            upsert=self.upsert,
        )
        self._call("ModifyAuditService" if current.enabled else "OpenAuditService", request)
        self._ops = frozenset(YCSB_OPS) if ops is None else ops

    def enable(self, ops: Iterable[str]) -> AuditState:
        wanted = normalize_ops(ops)
        self._open(wanted, self.log_expire_day)
        return self._settle(True, wanted)

    def disable(self) -> AuditState:
        if self.status().enabled is not False:
            self._call("CloseAuditService", build_close_request(self.instance_id))
        return self._settle(False, ())

    def verify(self, expected_on: bool, ops: Iterable[str] = ()) -> AuditState:
        return self._settle(expected_on, normalize_ops(ops))

    def restore(self, state: AuditState) -> AuditState:
        if state.enabled is None:
            raise AuditError(f"tencent: the state to restore is unknown ({state.detail})")
        if not state.enabled:
            return self.disable()
        current = self.status()
        if current.enabled and self._ops is None:
            return current  # never changed by this process
        days = int(state.raw.get("LogExpireDay") or self.log_expire_day)
        if state.raw.get("AuditAll"):
            self._open(None, days)
            return self._settle(True, YCSB_OPS)
        if not state.ops:
            raise AuditError(
                f"tencent: {self.instance_id} had rule-based audit whose rules the API does not "
                "return; re-create them in the console"
            )
        self._open(state.ops, days)
        return self._settle(True, state.ops)

    def persistence_note(self) -> str:
        return f"Open/Modify/CloseAuditService change instance {self.instance_id} until changed back"

    def restore_options(self) -> dict[str, Any]:
        return {
            "instance_id": self.instance_id,
            "namespace": self.namespace,
            "log_expire_day": self.log_expire_day,
        }

    def manual_restore_hint(self, state: AuditState) -> str:
        if not state.enabled:
            return shlex.join(["tccli", "mongodb", "CloseAuditService", "--InstanceId", self.instance_id])
        days = str(state.raw.get("LogExpireDay") or self.log_expire_day)
        argv = [
            "tccli",
            "mongodb",
            "ModifyAuditService",
            "--InstanceId",
            self.instance_id,
            "--LogExpireDay",
            days,
        ]
        if state.raw.get("AuditAll") or not state.ops:
            argv += (
                ["--AuditAll", "true"]
                if state.raw.get("AuditAll")
                else ["--AuditAll", "false", "--RuleFilters", "<your rules>"]
            )
        else:
            argv += [
                "--AuditAll",
                "false",
                "--RuleFilters",
                json.dumps(
                    rule_filters(state.ops, self.namespace, upsert=self.upsert), separators=(",", ":")
                ),
            ]
        return shlex.join(argv)


def _make(opts: dict[str, Any], client: Any) -> AuditStrategy:
    return TencentStrategy(
        opts.get("instance_id") or "",
        client=opts.get("sdk_client"),
        **pick(opts, "region", "endpoint", "scheme", "log_expire_day", "namespace", "wait_s", "poll_s"),
    )


register_strategy(
    cloud_spec(
        "tencent",
        "TencentDB for MongoDB's audit service (--instance-id cmgo-...).",
        _make,
        region_key="region",
        namespace=True,
    )
)
