"""Keep credentials out of everything printed or written, without altering any other text.

Only text that *is* a credential is masked, and only inside a URL (``scheme://...``):

* the password of the URL's userinfo (``scheme://user:PASSWORD@host``), read the way the MongoDB drivers read
  it: up to the last ``@`` before the host;
* the value of a secret query option (``?authMechanismProperties=...``, ``&proxyPassword=...``): the options
  the MongoDB URI options specification and pymongo treat as sensitive, plus any option whose name contains
  ``password``, ``passphrase``, ``secret`` or ``token``.

Everything else, a short password's digits elsewhere in YCSB's output included, is left byte-for-byte as it
was. ``check_url`` refuses, before anything is printed, a MongoDB URL whose userinfo the drivers would read
differently (reserved characters not percent-encoded).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from ycsb_runner.errors import UserError

MASK = "***"

# Option names (lower-cased) whose value is a credential: the URI options spec's sensitive options
# (proxyUsername, proxyPassword, tlsCertificateKeyFilePassword), authMechanismProperties (it may hold
# AWS_SESSION_TOKEN), and the legacy aliases of the key-file password.
SECRET_OPTIONS = frozenset(
    {
        "authmechanismproperties",
        "tlscertificatekeyfilepassword",
        "proxyusername",
        "proxypassword",
        "sslpemkeypassword",
        "ssl_pem_passphrase",
        "sslclientcertificatekeypassword",
    }
)
_SECRET_WORDS = ("password", "passphrase", "secret", "token")
# Options that name a file the driver opens (a missing one is a one-line error, not a traceback).
FILE_OPTIONS = ("tlsCAFile", "tlsCertificateKeyFile", "tlsCRLFile")

# A URL in free text: a scheme, then anything up to whitespace, a quote or an angle bracket.
_URL = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>`]+")
# The password of a URL (matched at the URL's start): user, ":", then up to the LAST "@" before the query
# string, as the drivers read it (so an unencoded "@" or "/" in the password is masked whole).
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^:/@?#]*:)([^?]*)(@)")
_OPTION = re.compile(r"([?&;])([^=&;#]+)=([^&;#]*)")


def is_secret_option(name: str) -> bool:
    """Whether the value of URL option *name* is a credential."""
    low = unquote(name).strip().lower()
    return low in SECRET_OPTIONS or any(w in low for w in _SECRET_WORDS)


def _mask_one(url: str) -> str:
    m = _USERINFO.match(url)  # anchored: the URL starts with its scheme
    if m:
        url = m.group(1) + MASK + url[m.end(2) :]
    q = url.find("?")
    if q < 0:
        return url
    head, query = url[:q], url[q:]
    return head + _OPTION.sub(
        lambda m: m.group(1) + m.group(2) + "=" + (MASK if is_secret_option(m.group(2)) else m.group(3)),
        query,
    )


def mask_url(text: str) -> str:
    """*text* with the credentials of every URL in it masked (``***``); all other text unchanged."""
    if "://" not in text:
        return text
    return _URL.sub(lambda m: _mask_one(m.group(0)), text)


def mask_bytes(data: bytes) -> bytes:
    """``mask_url`` on raw bytes (any encoding): bytes outside a URL's credentials are kept exactly."""
    if b"://" not in data:
        return data
    return mask_url(data.decode("latin-1")).encode("latin-1")


def url_password(url: str) -> str | None:
    """The password of a MongoDB URL, decoded, or None."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.password:
        return unquote(parts.password)
    return None


_PERCENT_OK = re.compile(r"%[0-9A-Fa-f]{2}")
_HOST = r"(?:\[[0-9A-Fa-f:.]+\]|[^:@,\[\]/?#]+)(?::\d*)?"
_HOSTS = re.compile(rf"^{_HOST}(?:,{_HOST})*$")


def check_url(url: str) -> None:
    """Refuse a MongoDB URL the drivers would misread, without printing any credential: reserved characters
    in the user name or password must be percent-encoded."""
    _check_query(url)
    _, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority = rest[:cut]
    if "@" in authority:
        userinfo = authority.rsplit("@", 1)[0]
        bad = any(c in userinfo for c in "@[]") or userinfo.count(":") > 1
        bad = bad or "%" in _PERCENT_OK.sub("", userinfo)
        bad = bad or "@" in rest[cut:].split("?", 1)[0]  # "u:p@ss:w/rd@host": the password holds "/"
    else:  # an "@" only after "/", "?" or "#": a password holding one of them, unless that is a host list
        bad = not _HOSTS.match(authority)
    if bad:
        raise UserError(
            "the user name or password in the MongoDB URL holds a reserved character (@ : / ? # [ ] %): "
            "percent-encode it, e.g. python3 -c 'import urllib.parse,sys; "
            "print(urllib.parse.quote_plus(sys.argv[1]))' 'PASSWORD'"
        )


def check_option_escapes(name: str, value: str, where: str) -> None:
    """Refuse a URL option value with a ``%`` that is not a percent-escape (``%ZZ``): the drivers' error
    would quote the characters after it, a secret's included."""
    if "%" in _PERCENT_OK.sub("", value):
        shown = MASK if is_secret_option(name) else repr(value)
        raise UserError(
            f"{where} option {name}={shown}: a '%' that is not a percent-escape (%XX, hex): "
            "write a literal % as %25"
        )


def _check_query(url: str) -> None:
    query = url.split("?", 1)[1].split("#", 1)[0] if "?" in url else ""
    for item in (q for q in query.replace(";", "&").split("&") if q):
        name, _, value = item.partition("=")
        check_option_escapes(name, value, "the MongoDB URL's")


def mask_override(item: str) -> str:
    """A ``--set KEY=VALUE`` as it may be shown or stored: the value of a secret option (the key's last part
    named like one, e.g. mongodb.url_options.myApiToken) masked, URL credentials in any value masked."""
    key, sep, value = item.partition("=")
    if not sep:
        return mask_url(item)
    if is_secret_option(key.strip().rsplit(".", 1)[-1]):
        return f"{key}={MASK}"
    return f"{key}={mask_url(value)}"


def check_url_files(url: str) -> None:
    """Refuse a MongoDB URL whose TLS options name a file that does not exist (before the driver opens it)."""
    query = url.split("?", 1)[1] if "?" in url else ""
    try:
        options = parse_qsl(query, keep_blank_values=True)
    except ValueError:
        return
    for name, value in options:
        for option in FILE_OPTIONS:
            if name.lower() == option.lower() and value and not Path(value).expanduser().is_file():
                raise UserError(
                    f"{option}={value} in the MongoDB URL: no such file; give the path of an existing file"
                )


class Masker:
    """Masks credentials in text before it is shown or stored (see ``mask_url``: URL credentials only)."""

    def __call__(self, text: str) -> str:
        return mask_url(text)


def mask_webhook(url: str) -> str:
    """A webhook URL as it may be shown: its scheme, host and first path segment kept, the rest masked (a
    Slack, Teams or Discord webhook carries its secret in the path: ``https://hooks.slack.com/services/***``),
    the user information and every query value masked (``?token=***``)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    if not parts.scheme or not parts.hostname:
        return MASK
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    auth = f"{MASK}@" if "@" in parts.netloc else ""
    segments = [s for s in parts.path.split("/") if s]
    path = "/" + segments[0] + ("/" + MASK if len(segments) > 1 else "") if segments else ""
    query = "&".join(f"{k}={MASK}" for k, _ in parse_qsl(parts.query, keep_blank_values=True))
    return f"{parts.scheme}://{auth}{host}{port}{path}" + (f"?{query}" if query else "")
