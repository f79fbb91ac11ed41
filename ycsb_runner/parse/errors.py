"""The parser's one documented exception."""

from __future__ import annotations

from ycsb_runner.errors import UserError


class ParseError(UserError):
    """The input is not YCSB output at all (nothing YCSB prints was found), or a file cannot be read.

    Anything that is recognisably YCSB output, however damaged, yields a result instead.
    """
