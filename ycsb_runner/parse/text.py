"""Turning captured streams into text and lines; masking secrets in text we quote back."""

from __future__ import annotations

from os import PathLike

Stream = str | bytes | bytearray | memoryview | None

# Userinfo before '@'; '/', '?', '#', '[', ']' must be percent-encoded in it, which also keeps this linear.


def to_bytes(data: Stream) -> bytes:
    """Return ``data`` as bytes (UTF-8 for text; lone surrogates become '?')."""
    if data is None:
        return b""
    if isinstance(data, bytes):
        return data
    if isinstance(data, bytearray | memoryview):
        return bytes(data)
    if isinstance(data, str):
        return data.encode("utf-8", errors="replace")
    raise TypeError(f"expected str or bytes, got {type(data).__name__}")


def to_text(data: Stream) -> str:
    """Decode leniently (invalid UTF-8 -> U+FFFD) and remove NULs, which the parser uses as a separator."""
    if data is None:
        return ""
    if isinstance(data, str):
        text = data
    elif isinstance(data, bytes | bytearray | memoryview):
        text = bytes(data).decode("utf-8", errors="replace")
    else:
        raise TypeError(f"expected str or bytes, got {type(data).__name__}")
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    return text


def read_path_bytes(path: str | PathLike[str]) -> bytes:
    """Read a file for the parser; a missing/unreadable file is a ParseError (a UserError)."""
    from .errors import ParseError

    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as err:
        raise ParseError(f"cannot read {path}: {err.strerror or err}") from err
