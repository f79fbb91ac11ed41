"""The tool's settings from the environment: every ``YCSB_RUNNER_*`` variable it reads, read here and nowhere
else (docs/reference/environment.md lists the same names; tests/unit/test_config.py holds them equal).

``current()`` is a ``Config`` built from the environment as it is at the call (so a caller's or a test's
change of the environment is seen); where a command takes an option for the same setting, the option wins
(``Config.history``). Light on purpose: the command imports it at start-up.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields

RESULTS = "YCSB_RUNNER_RESULTS"
CACHE = "YCSB_RUNNER_CACHE"
HISTORY_URL = "YCSB_RUNNER_HISTORY_URL"
NOTIFY = "YCSB_RUNNER_NOTIFY"
LOCK_DIR = "YCSB_RUNNER_LOCK_DIR"
FERRETDB = "YCSB_RUNNER_FERRETDB"
PROBE_FILE = "YCSB_RUNNER_PROBE_FILE"
SSH_CONFIG = "YCSB_RUNNER_SSH_CONFIG"
JAVA_TIMEOUT = "YCSB_RUNNER_JAVA_TIMEOUT"
TRACEBACK = "YCSB_RUNNER_TRACEBACK"


@dataclass(frozen=True)
class Config:
    """One field per variable (its value, "" when unset or empty), named as the variable without its
    ``YCSB_RUNNER_`` prefix, in lower case."""

    results: str = ""  # where run folders go
    cache: str = ""  # where YCSB, the binding and FerretDB are built
    history_url: str = ""  # the run history (an SQLite path or a mongodb:// URL)
    notify: str = ""  # webhook URLs, separated by spaces or commas
    lock_dir: str = ""  # the bench lock folder
    ferretdb: str = ""  # another FerretDB binary for the embedded server
    probe_file: str = ""  # where probe-client keeps its results
    ssh_config: str = ""  # an ssh config file for the load generators
    java_timeout: str = ""  # seconds `java -version` may take
    traceback: str = ""  # set: an internal error also prints its traceback

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Config:
        """The settings of *env* (``os.environ`` or a mapping a caller gives)."""
        return cls(**{f.name: env.get(variable(f.name), "") for f in fields(cls)})

    def history(self, given: str | None = None) -> str | None:
        """The history URL: *given* (``--history-url``) over ``$YCSB_RUNNER_HISTORY_URL``; None for neither
        (``<results>/history.sqlite``)."""
        return given or self.history_url or None


def variable(name: str) -> str:
    """The environment variable of a ``Config`` field."""
    return f"YCSB_RUNNER_{name.upper()}"


def variables() -> list[str]:
    """Every environment variable ``Config`` reads."""
    return [variable(f.name) for f in fields(Config)]


def current() -> Config:
    """The settings of the environment as it is now."""
    return Config.from_env(os.environ)
