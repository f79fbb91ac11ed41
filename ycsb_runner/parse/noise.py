"""The lines of a capture that are neither summary nor status lines, reduced as they are read: exceptions,
usage errors, the binding's failed operations, 'Still waiting', the YCSB version and command line.

A ``NoiseDigest`` keeps counts and the first few lines of each kind only, so a capture of any size (1 GB
of a crashed JVM's output, or of random bytes) costs the parser the same few kilobytes here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from ycsb_runner.safe.secrets import mask_url

EXCEPTION_RE = re.compile(
    r"^(?:Exception in thread |Error initializing|ERROR: |Exception\b"
    r"|(?:[A-Za-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error)(?::|$))"
)
# One failed operation, as the project's binding reports it (the operation is counted in its section's
# Return=ERROR line too): judged by the error rate, not as an exception.
OPERATION_FAILURE_RE = re.compile(r"^ERROR: MongoDB (?:read|scan|update|insert|delete) key .* failed: ")
USAGE_RE = re.compile(
    r"^(?:Unknown option |Missing property: |Unable to open the properties file|"
    r"Usage: java (?:site|com\.yahoo)\.ycsb\.Client)"
)
MAX_QUOTED = 5  # lines of each kind kept (and quoted in the completion's reasons)


@dataclass
class NoiseDigest:
    """What the completion needs of the other lines, in reading order: the first ``MAX_QUOTED`` exception and
    usage lines (the usage banner apart: the specific message is the better reason), the counts, the first
    version and command line. ``add`` a chunk's lines; ``then`` another stream's digest after this one."""

    exceptions: list[str] = field(default_factory=list)
    exception_count: int = 0
    operation_failures: int = 0
    usage: list[str] = field(default_factory=list)
    banners: list[str] = field(default_factory=list)
    waiting: int = 0
    version: str | None = None
    cmd: str | None = None

    def add(self, lines: Sequence[str]) -> None:
        if not lines:
            return
        series = pd.Series(lines, dtype=object)
        exc = series[series.str.match(EXCEPTION_RE, na=False)]
        failures = exc.str.match(OPERATION_FAILURE_RE, na=False)
        exc = exc[~failures]
        self.operation_failures += int(failures.sum())
        self.exception_count += len(exc)
        self.exceptions += exc.head(MAX_QUOTED - len(self.exceptions)).tolist()
        usage = series[series.str.match(USAGE_RE, na=False)]
        banner = usage.str.startswith("Usage: ")
        self.usage += usage[~banner].head(MAX_QUOTED - len(self.usage)).tolist()
        self.banners += usage[banner].head(MAX_QUOTED - len(self.banners)).tolist()
        self.waiting += int(series.str.startswith("Still waiting for thread", na=False).sum())
        if self.version is None:
            version = series[series.str.startswith("YCSB Client ", na=False)]
            self.version = version.iloc[0][len("YCSB Client ") :].strip() if not version.empty else None
        if self.cmd is None:
            cmd = series[series.str.startswith("Command line: ", na=False)]
            self.cmd = cmd.iloc[0][len("Command line: ") :] if not cmd.empty else None

    def then(self, other: NoiseDigest) -> NoiseDigest:
        """This stream's lines followed by *other*'s (stderr, then stdout)."""
        return NoiseDigest(
            (self.exceptions + other.exceptions)[:MAX_QUOTED],
            self.exception_count + other.exception_count,
            self.operation_failures + other.operation_failures,
            (self.usage + other.usage)[:MAX_QUOTED],
            (self.banners + other.banners)[:MAX_QUOTED],
            self.waiting + other.waiting,
            self.version if self.version is not None else other.version,
            self.cmd if self.cmd is not None else other.cmd,
        )

    def result(self) -> dict[str, object]:
        """The completion's evidence, secrets in the quoted lines masked."""
        return {
            "exceptions": [mask_url(s) for s in self.exceptions],
            "exception_count": self.exception_count,
            "operation_failures": self.operation_failures,
            "usage": [mask_url(s) for s in (self.usage or self.banners)],
            "waiting": self.waiting,
            "version": self.version,
            "cmd": mask_url(self.cmd) if self.cmd is not None else None,
        }
