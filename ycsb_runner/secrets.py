"""Keep passwords out of everything printed or written."""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit

MASK = "***"
# scheme://user:password@ (any scheme: MongoDB URLs, and proxies or APIs in user-given commands)
# The password runs to the last "@" before the path, so a password holding "@" is masked whole.
_URL_PASSWORD = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^:/@\s]+:)([^/\s]*)(@)")


def mask_url(text: str) -> str:
    """Replace the password of every ``scheme://user:pass@`` URL in *text* with ``***``."""
    return _URL_PASSWORD.sub(lambda m: m.group(1) + MASK + m.group(3), text)


def url_password(url: str) -> str | None:
    """The password of a MongoDB URL, decoded, or None."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.password:
        return unquote(parts.password)
    return None


class Masker:
    """Masks known secrets (and any URL password) in text before it is shown or stored."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._secrets: list[str] = []
        for s in secrets:
            self.add(s)

    def add(self, secret: str | None) -> None:
        if not secret or len(secret) < 2 or secret in self._secrets:
            return
        self._secrets.append(secret)
        # The raw (percent-encoded) form may appear too.
        from urllib.parse import quote

        encoded = quote(secret, safe="")
        if encoded != secret:
            self._secrets.append(encoded)
        self._secrets.sort(key=len, reverse=True)

    def add_url(self, url: str | None) -> None:
        if url:
            self.add(url_password(url))

    def __call__(self, text: str) -> str:
        text = mask_url(text)
        for s in self._secrets:
            text = text.replace(s, MASK)
        return text
