"""Masking touches credentials only: URL userinfo passwords and secret query options (issue 9, items 1-3)."""

from __future__ import annotations

import pytest

from ycsb_runner.errors import UserError
from ycsb_runner.safe.secrets import check_url, is_secret_option, mask_bytes, mask_url


@pytest.mark.parametrize("password", ["s", "99", "0", "ms", "OVERALL"])
def test_a_short_password_is_masked_only_inside_its_url(password: str) -> None:
    line = (
        f"mongo client connection created with mongodb://u:{password}@h:1/ycsb?w=1\n"
        "[OVERALL], RunTime(ms), 787\n[READ], 99thPercentileLatency(us), 8139\n"
    )
    masked = mask_url(line)
    assert masked == line.replace(f"u:{password}@", "u:***@")


def test_bytes_outside_urls_are_kept_exactly() -> None:
    raw = b"\xff\xfe latin \xe9 mongodb://u:p\xe9w@h/db \x00 99 s\n"
    assert mask_bytes(raw) == b"\xff\xfe latin \xe9 mongodb://u:***@h/db \x00 99 s\n"


def test_password_holding_reserved_characters_is_masked_whole() -> None:
    text = "error at mongodb://u:p@ss:w/rd%@127.0.0.1:27017/ycsb (timeout)"
    assert mask_url(text) == "error at mongodb://u:***@127.0.0.1:27017/ycsb (timeout)"


def test_secret_options_are_masked_and_others_kept() -> None:
    url = (
        "mongodb://h/db?authMechanismProperties=AWS_SESSION_TOKEN:abc&appName=me&"
        "tlsCertificateKeyFilePassword=kp&proxyUsername=pu&proxyPassword=pp&myApiToken=t&w=1"
    )
    assert mask_url(url) == (
        "mongodb://h/db?authMechanismProperties=***&appName=me&tlsCertificateKeyFilePassword=***&"
        "proxyUsername=***&proxyPassword=***&myApiToken=***&w=1"
    )
    assert mask_url("see ?password=x&token=y outside a URL") == "see ?password=x&token=y outside a URL"
    assert is_secret_option("clientSecret") and not is_secret_option("replicaSet")


@pytest.mark.parametrize(
    "url",
    [
        "mongodb://u:p@ss:w/rd%@127.0.0.1:1/ycsb",
        "mongodb://u:p?x@h/db",
        "mongodb://u:p/x@h/db",
        "mongodb://u:a:b@h/db",
        "mongodb://u:100%@h/db",
        "mongodb://u:p@ss@h/db",
    ],
)
def test_urls_the_drivers_would_misread_are_refused_without_the_password(url: str) -> None:
    with pytest.raises(UserError, match="percent-encode") as err:
        check_url(url)
    assert "p@ss" not in str(err.value) and "rd%" not in str(err.value)


@pytest.mark.parametrize(
    "url",
    [
        "mongodb://u:p%40ss%3Aw%2Frd%25@127.0.0.1:1/ycsb",
        "mongodb://h1:27017,h2:27018/db?replicaSet=rs0&appName=a@b",
        "mongodb://u:pw@h/db?appName=a@b",
        "mongodb://[::1]:27017/db",
        "mongodb+srv://u:pw@cluster.example.net/db",
    ],
)
def test_well_formed_urls_pass(url: str) -> None:
    check_url(url)
