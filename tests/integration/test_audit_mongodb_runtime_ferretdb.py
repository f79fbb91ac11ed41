"""mongodb-runtime against the real embedded FerretDB: refused by detection, before anything runs."""

from __future__ import annotations

from typing import Any

import pytest

from ycsb_runner.audit import AuditError, make_strategy
from ycsb_runner.errors import UserError

# ---------------------------------------------------------------- FerretDB over the wire


@pytest.fixture(scope="module")
def ferretdb_url(server: Any) -> Any:
    """The session's embedded server (tests/conftest.py), when it is FerretDB."""
    if server.kind != "ferretdb":
        pytest.skip("the embedded server is a real mongod here")
    return server.url


def test_ferretdb_refused_before_anything_runs(ferretdb_url: str) -> None:
    from pymongo import MongoClient

    with MongoClient(ferretdb_url, serverSelectionTimeoutMS=5000) as client:
        with pytest.raises(UserError, match=r"FerretDB .*7\.0\.42.*no audit log at all") as caught:
            make_strategy("mongodb-runtime", client=client, options={})
        assert not isinstance(caught.value, AuditError)  # refused by detection, not by a failed command
        assert client.admin.command("ping")["ok"] == 1.0


def test_cli_refuses_ferretdb(ferretdb_url: str) -> None:
    from typer.testing import CliRunner

    from ycsb_runner.cli.audit import app

    result = CliRunner().invoke(
        app,
        ["on", "--strategy", "mongodb-runtime", "--ops", "insert,read"],
        env={"MONGODB_URL": ferretdb_url},
    )
    assert result.exit_code != 0
    assert isinstance(result.exception, UserError) and "FerretDB" in str(result.exception)


def test_cli_connect_error_is_one_masked_line(ferretdb_url: str) -> None:
    from typer.testing import CliRunner

    from ycsb_runner.cli.audit import app

    url = ferretdb_url.replace("mongodb://", "mongodb://bench:S3cretPw@") + "?authSource=admin"
    result = CliRunner().invoke(app, ["status", "--mongodb-url", url, "--timeout", "5"])
    message = str(result.exception)
    assert isinstance(result.exception, UserError) and message.startswith("cannot reach MongoDB at")
    assert "S3cretPw" not in message and "bench:***@" in message and "\n" not in message
