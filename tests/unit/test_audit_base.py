"""The shared audit helpers: op mapping, state comparison, secret masking, the factory."""

from __future__ import annotations

import pytest

from ycsb_runner.audit import AuditState, make_strategy, strategy_names
from ycsb_runner.audit.base import (
    YCSB_OPS,
    categories_to_ops,
    commands_to_ops,
    mask_argv,
    mismatch,
    normalize_ops,
    ops_to_categories,
    ops_to_commands,
)
from ycsb_runner.errors import UserError
from ycsb_runner.safe.secrets import mask_url


def test_ops_to_commands_follows_the_binding() -> None:
    assert ops_to_commands(["read"]) == ("find",)
    assert ops_to_commands(["scan"]) == ("find", "getMore")
    assert ops_to_commands(["readmodifywrite"]) == ("find", "update")
    assert ops_to_commands(YCSB_OPS) == ("delete", "find", "getMore", "insert", "update")
    assert commands_to_ops(["find", "update"]) == {"read", "update", "readmodifywrite"}
    assert commands_to_ops(None) == set(YCSB_OPS)
    assert commands_to_ops([]) == frozenset()


def test_cloud_categories_match_the_alibaba_study() -> None:
    assert ",".join(ops_to_categories(["insert", "read", "update"])) == "insert,query,update"
    assert ops_to_categories(["scan", "readmodifywrite"]) == ("query", "update")
    assert categories_to_ops(["query", "insert"]) == {"read", "scan", "insert"}


def test_normalize_ops() -> None:
    assert normalize_ops(" Insert, read ,,") == {"insert", "read"}
    with pytest.raises(UserError, match="unknown YCSB operation.*query"):
        normalize_ops("query")


def test_mismatch() -> None:
    on = AuditState(True, frozenset({"insert", "read"}), "d")
    assert mismatch(on, True, ["insert"]) == ""
    assert "does not audit update" in mismatch(on, True, ["insert", "update"])
    assert "it is on" in mismatch(on, False)
    assert "cannot be read" in mismatch(AuditState(None), True)
    assert on.describe() == "on (ops: insert,read) - d"
    assert AuditState(False).describe() == "off"


def test_masking() -> None:
    assert mask_url("x mongodb://root:p@ss@h:1/a y") == "x mongodb://root:***@h:1/a y"
    assert mask_url("a mongodb://u:x@h/ b mongodb://v:y@g/") == "a mongodb://u:***@h/ b mongodb://v:***@g/"
    assert mask_url("mongodb+srv://u:hunter2@c.example/") == "mongodb+srv://u:***@c.example/"
    assert mask_url("mongodb://h:27017/") == "mongodb://h:27017/"
    assert mask_argv(["ctl", "--password", "pw1", "--token=tk", "-p", "pw2", "mongodb://a:b@h/"]) == [
        "ctl",
        "--password",
        "***",
        "--token=***",
        "-p",
        "***",
        "mongodb://a:***@h/",
    ]


def test_factory_names() -> None:
    assert strategy_names() == ("mongodb-runtime", "restart", "command", "aliyun", "tencent")
    with pytest.raises(UserError, match="unknown audit strategy 'atlas'.*mongodb-runtime, restart"):
        make_strategy("atlas", options={})
    with pytest.raises(UserError, match="needs a MongoDB connection"):
        make_strategy("mongodb-runtime", options={})


def test_one_line() -> None:
    from ycsb_runner.audit.base import one_line

    flat = one_line("auth failed\n  for mongodb://u:pw@h/\tdetails")
    assert flat == "auth failed for mongodb://u:***@h/ details"
    assert len(one_line("x" * 1000, limit=50)) == 50
