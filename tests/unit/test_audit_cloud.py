"""aliyun / tencent strategies: request objects (no network), then the real SDK clients talking to a fake
API server on 127.0.0.1 (no traffic leaves the machine), and a refused endpoint."""

from __future__ import annotations

import builtins
import io
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from ycsb_runner.audit import AuditError, audit_guard, make_strategy
from ycsb_runner.errors import UserError

pytest.importorskip("alibabacloud_dds20151201")
pytest.importorskip("tencentcloud.mongodb.v20190725")

from ycsb_runner.audit import aliyun, tencent  # noqa: E402


@pytest.fixture(autouse=True)
def fake_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDKs' default chains read these first; nothing real, nothing leaves 127.0.0.1."""
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", "LTAI-test-id")
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", "test-secret")
    monkeypatch.setenv("TENCENTCLOUD_SECRET_ID", "AKID-test-id")
    monkeypatch.setenv("TENCENTCLOUD_SECRET_KEY", "test-secret")


# ---------------------------------------------------------------- pure request building


def test_aliyun_requests() -> None:
    assert aliyun.aliyun_filter(["update", "read", "insert"]) == "insert,query,update"
    assert aliyun.build_policy_request("dds-bp1", True).to_map() == {
        "AuditStatus": "enable",
        "DBInstanceId": "dds-bp1",
        "ServiceType": "Standard",
    }
    assert aliyun.build_policy_request("dds-bp1", True, storage_period=7).to_map()["StoragePeriod"] == 7
    assert aliyun.build_policy_request("dds-bp1", False).to_map() == {
        "AuditStatus": "disabled",
        "DBInstanceId": "dds-bp1",
    }
    assert aliyun.build_filter_request("dds-bp1", "insert,query").to_map() == {
        "DBInstanceId": "dds-bp1",
        "Filter": "insert,query",
    }
    mongos = aliyun.build_filter_request("dds-bp1", "query", role_type="mongos")
    assert mongos.to_map()["RoleType"] == "mongos"
    assert aliyun.build_describe_policy_request("dds-bp1").to_map() == {"DBInstanceId": "dds-bp1"}


def test_tencent_requests() -> None:
    req = tencent.build_open_request("cmgo-1", ["insert", "read"], log_expire_day=30)
    assert type(req).__name__ == "OpenAuditServiceRequest"
    assert req._serialize() == {
        "InstanceId": "cmgo-1",
        "LogExpireDay": 30,
        "AuditAll": False,
        "RuleFilters": [{"Type": "SqlType", "Compare": "EQ", "Value": ["insert", "query"]}],
    }
    mod = tencent.build_open_request("cmgo-1", ["update"], namespace="ycsb.usertable", modify=True)
    assert type(mod).__name__ == "ModifyAuditServiceRequest"
    assert mod._serialize()["RuleFilters"][1:] == [
        {"Type": "DB", "Compare": "EQ", "Value": ["ycsb"]},
        {"Type": "Collection", "Compare": "EQ", "Value": ["usertable"]},
    ]
    assert tencent.build_open_request("cmgo-1", None)._serialize() == {
        "InstanceId": "cmgo-1",
        "LogExpireDay": 7,
        "AuditAll": True,
    }
    assert tencent.build_close_request("cmgo-1")._serialize() == {"InstanceId": "cmgo-1"}


def test_missing_sdk_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_cloud(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith(("alibabacloud_dds20151201", "tencentcloud")):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cloud)
    with pytest.raises(UserError, match=r"pip install 'ycsb-runner\[aliyun\]'"):
        make_strategy("aliyun", options={"instance_id": "dds-1"})
    with pytest.raises(UserError, match=r"pip install 'ycsb-runner\[tencent\]'"):
        make_strategy("tencent", options={"instance_id": "cmgo-1"})


def test_instance_id_required() -> None:
    with pytest.raises(UserError, match="--instance-id"):
        make_strategy("aliyun", options={})
    with pytest.raises(UserError, match="--instance-id"):
        make_strategy("tencent", options={})


# ---------------------------------------------------------------- a fake cloud API on 127.0.0.1


class FakeCloud:
    """Keeps one instance's audit state for both APIs and records every call."""

    def __init__(self) -> None:
        self.ali = {"LogAuditStatus": "Disabled", "Filter": "admin,slow"}
        self.tc: dict[str, Any] = {"open": False, "AuditAll": False, "LogExpireDay": 7}
        self.opening_polls = 0  # DescribeAuditConfig answers IsOpening=true this many times
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.fail: set[str] = set()

    def aliyun(self, action: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.calls.append((action, params))
        if action in self.fail:
            return 403, {"Code": "Forbidden.RAM", "Message": "user not authorized", "RequestId": "r"}
        if action == "DescribeAuditPolicy":
            return 200, {"LogAuditStatus": self.ali["LogAuditStatus"], "RequestId": "r"}
        if action == "DescribeAuditLogFilter":
            return 200, {"Filter": self.ali["Filter"], "RoleType": "primary", "RequestId": "r"}
        if action == "ModifyAuditPolicy":
            self.ali["LogAuditStatus"] = "Enable" if params["AuditStatus"] == "enable" else "Disabled"
        elif action == "ModifyAuditLogFilter":
            self.ali["Filter"] = params["Filter"]
        return 200, {"RequestId": "r"}

    def tencent(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((action, params))

        def error(code: str) -> dict[str, Any]:
            err = {"Code": code, "Message": f"{code} for {action}"}
            return {"Response": {"Error": err, "RequestId": "r"}}

        if action in self.fail:
            return error("AuthFailure.SignatureFailure")
        if action == "DescribeAuditConfig":
            if not self.tc["open"]:
                return error("FailedOperation.AuditConfigNotExist")
            opening = "true" if self.opening_polls > 0 else "false"
            self.opening_polls = max(0, self.opening_polls - 1)
            return {
                "Response": {
                    "InstanceId": params["InstanceId"],
                    "AuditAll": self.tc["AuditAll"],
                    "LogExpireDay": self.tc["LogExpireDay"],
                    "LogType": "storage",
                    "IsOpening": opening,
                    "IsClosing": "false",
                    "RequestId": "r",
                }
            }
        if action == "OpenAuditService":
            if self.tc["open"]:
                return error("OperationDenied.AuditStatusError")
            self.tc.update(open=True, AuditAll=params["AuditAll"], LogExpireDay=params["LogExpireDay"])
        elif action == "ModifyAuditService":
            self.tc.update(AuditAll=params["AuditAll"], LogExpireDay=params["LogExpireDay"])
        elif action == "CloseAuditService":
            self.tc["open"] = False
        return {"Response": {"RequestId": "r"}}


@pytest.fixture
def cloud() -> Iterator[tuple[FakeCloud, str]]:
    fake = FakeCloud()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.headers.get("X-TC-Action"):
                status, out = 200, fake.tencent(self.headers["X-TC-Action"], json.loads(body or b"{}"))
            else:
                params = dict(parse_qsl(urlsplit(self.path).query))
                params.update(parse_qsl(body.decode()))
                action = self.headers.get("x-acs-action") or params.get("Action", "")
                status, out = fake.aliyun(action, params)
            data = json.dumps(out).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _answer

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield fake, f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _fast(name: str, options: dict[str, Any], kw: dict[str, Any]) -> Any:
    """The strategy *name* with *options*, waiting 2 s at the most and polling every 50 ms (*kw* last)."""
    return make_strategy(name, options={**options, "wait_s": 2, "poll_s": 0.05, **kw})


def _ali(endpoint: str, **kw: Any) -> aliyun.AliyunStrategy:
    s = _fast("aliyun", {"instance_id": "dds-bp1test", "endpoint": endpoint, "protocol": "http"}, kw)
    assert isinstance(s, aliyun.AliyunStrategy)
    return s


def _tc(endpoint: str, **kw: Any) -> tencent.TencentStrategy:
    s = _fast("tencent", {"instance_id": "cmgo-test", "endpoint": endpoint, "scheme": "http"}, kw)
    assert isinstance(s, tencent.TencentStrategy)
    return s


def test_aliyun_enable_disable_over_http(cloud: tuple[FakeCloud, str]) -> None:
    fake, endpoint = cloud
    strat = _ali(endpoint)
    assert strat.status().enabled is False
    on = strat.enable(["insert", "read", "update"])
    assert on.enabled is True and {"insert", "read", "update", "scan"} <= on.ops
    assert fake.ali == {"LogAuditStatus": "Enable", "Filter": "insert,query,update"}
    modify = [(a, p) for a, p in fake.calls if a.startswith("Modify")]
    assert modify == [
        (
            "ModifyAuditPolicy",
            {"AuditStatus": "enable", "DBInstanceId": "dds-bp1test", "ServiceType": "Standard"},
        ),
        ("ModifyAuditLogFilter", {"DBInstanceId": "dds-bp1test", "Filter": "insert,query,update"}),
    ]
    assert strat.disable().enabled is False and fake.ali["LogAuditStatus"] == "Disabled"


def test_aliyun_guard_restores_filter_and_policy(cloud: tuple[FakeCloud, str]) -> None:
    fake, endpoint = cloud
    strat = _ali(endpoint)
    with pytest.raises(KeyboardInterrupt), audit_guard(strat, stream=io.StringIO()):
        strat.enable(["update"])
        assert fake.ali["Filter"] == "update"
        raise KeyboardInterrupt
    assert fake.ali == {"LogAuditStatus": "Disabled", "Filter": "admin,slow"}
    assert [a for a, _ in fake.calls if a.startswith("Modify")][-2:] == [
        "ModifyAuditLogFilter",
        "ModifyAuditPolicy",
    ]  # filter put back while audit was still on


def test_aliyun_api_error_is_one_line(cloud: tuple[FakeCloud, str]) -> None:
    fake, endpoint = cloud
    fake.fail.add("ModifyAuditPolicy")
    strat = _ali(endpoint)
    with pytest.raises(AuditError, match=r"ModifyAuditPolicy on dds-bp1test failed: Forbidden.RAM") as e:
        strat.enable(["read"])
    assert "\n" not in str(e.value) and "test-secret" not in str(e.value)
    assert (
        strat.manual_restore_hint(strat.status())
        == "aliyun dds ModifyAuditPolicy --DBInstanceId dds-bp1test --AuditStatus disabled"
    )


def test_tencent_open_waits_for_opening_then_closes(cloud: tuple[FakeCloud, str]) -> None:
    fake, endpoint = cloud
    strat = _tc(endpoint)
    assert strat.status().enabled is False
    fake.opening_polls = 3
    on = strat.enable(["insert", "read"])
    assert on.enabled is True and on.ops == {"insert", "read"}
    sent = dict(fake.calls)["OpenAuditService"]
    assert sent["RuleFilters"] == [{"Type": "SqlType", "Compare": "EQ", "Value": ["insert", "query"]}]
    assert sum(a == "DescribeAuditConfig" for a, _ in fake.calls) >= 5  # polled through IsOpening
    strat.enable(["update"])  # already open: modify, not open again
    assert fake.calls[-2][0] == "ModifyAuditService"
    assert strat.disable().enabled is False and fake.tc["open"] is False


def test_tencent_restore_full_audit_and_timeout(cloud: tuple[FakeCloud, str]) -> None:
    fake, endpoint = cloud
    fake.tc.update(open=True, AuditAll=True, LogExpireDay=30)
    strat = _tc(endpoint)
    with audit_guard(strat, stream=io.StringIO()) as entry:
        assert entry.enabled is True and len(entry.ops) == 6
        strat.disable()
    assert fake.tc == {"open": True, "AuditAll": True, "LogExpireDay": 30}
    fake.opening_polls = 10_000
    slow = _tc(endpoint, wait_s=0.3)
    slow.disable()
    with pytest.raises(AuditError, match=r"should be on after 0.3s but its state cannot be read"):
        slow.enable(["read"])


def test_refused_endpoint_is_an_audit_error() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    endpoint = f"127.0.0.1:{port}"
    with pytest.raises(AuditError, match="aliyun DescribeAuditPolicy on dds-x failed"):
        make_strategy(
            "aliyun", options={"instance_id": "dds-x", "endpoint": endpoint, "protocol": "http"}
        ).status()
    with pytest.raises(AuditError, match="tencent DescribeAuditConfig on cmgo-x failed: ClientNetworkError"):
        make_strategy(
            "tencent", options={"instance_id": "cmgo-x", "endpoint": endpoint, "scheme": "http"}
        ).status()


def test_tencent_rule_based_start_is_refused_before_any_change(cloud: tuple[FakeCloud, str]) -> None:
    """DescribeAuditConfig does not return RuleFilters (API doc 240/128358): a rule-based audit found at
    the start could not be re-created after closing it, so nothing may be switched."""
    fake, endpoint = cloud
    fake.tc.update(open=True, AuditAll=False, LogExpireDay=30)
    strat = _tc(endpoint)
    refused = "rule-based audit whose rules DescribeAuditConfig does not return"
    with pytest.raises(AuditError, match=refused), audit_guard(strat, stream=io.StringIO()):
        strat.disable()
    assert not [a for a, _ in fake.calls if a != "DescribeAuditConfig"]  # nothing closed or modified
    assert fake.tc == {"open": True, "AuditAll": False, "LogExpireDay": 30}


def test_tencent_auditall_null_is_unknown_not_rule_based_on(cloud: tuple[FakeCloud, str]) -> None:
    fake, endpoint = cloud
    fake.tc.update(open=True, AuditAll=None, LogExpireDay=7)  # the API may answer "AuditAll": null
    strat = _tc(endpoint)
    state = strat.status()
    assert state.enabled is None and "AuditAll not reported" in state.detail
    refused = "refusing to switch audit on cmgo-test: its current state cannot"
    with pytest.raises(AuditError, match=refused), audit_guard(strat, stream=io.StringIO()):
        strat.enable(["read"])
    assert not [a for a, _ in fake.calls if a != "DescribeAuditConfig"]


def test_upsert_inserts_are_audited_as_updates_in_cloud_categories(cloud: tuple[FakeCloud, str]) -> None:
    """The binding's mongodb.upsert=true sends replaceOne(upsert) -> an update command, which the cloud
    services classify as "update" (Alibaba ModifyAuditLogFilter / Tencent SqlType)."""
    fake, endpoint = cloud
    _tc(endpoint, upsert=True).enable(["insert"])
    assert dict(fake.calls)["OpenAuditService"]["RuleFilters"][0]["Value"] == ["update"]
    ali = _ali(endpoint, upsert=True)
    on = ali.enable(["insert", "read"])
    assert fake.ali["Filter"] == "query,update" and {"insert", "read"} <= on.ops
    assert _ali(endpoint).status().ops >= {"read", "update"} and "insert" not in _ali(endpoint).status().ops
