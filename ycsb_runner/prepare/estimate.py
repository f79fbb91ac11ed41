"""The throughput earlier runs measured, for the plan's duration estimate (``plan.MeasuredRates``).

Earlier runs are found through the history (``History.runs()``: the suite's runs, newest first) and, when the
history lists none, the run folders under the results folder; each is read with ``RunResult.load``. A run
counts when it ran against the same target: the embedded server on this host, or a URL with the same hosts
(``lock.target_key``). Its completed load and run steps (the merged ``client=all`` record of a multi-client
step) give one throughput per step key (``plan.rate_key``); the estimate takes the median over the newest
``MAX_RUNS`` runs that measured any.
"""

from __future__ import annotations

import socket
import statistics
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from ycsb_runner import config
from ycsb_runner.errors import UserError
from ycsb_runner.paths import HISTORY_FILE
from ycsb_runner.prepare.plan import MeasuredRates, RateKey, rate_key
from ycsb_runner.runs.model import ALL_CLIENTS, MANIFEST, Manifest, RunResult, StepRecord

MAX_RUNS = 5  # the newest runs that measured a step of the suite
MAX_FOLDERS = 50  # run folders read at most (the newest), for a results folder of years of nights


def target_id(url: str | None, host: str) -> str:
    """The target a run measured: ``embedded@HOST`` (the embedded server of that host) or the URL's hosts."""
    from ycsb_runner.safe.lock import target_key

    return f"embedded@{host}" if url is None else target_key(url)


def _manifest_target(m: Manifest) -> str:
    return target_id(None if m.target.embedded else m.target.url, m.host.hostname)


def _argv_target(argv: list[str]) -> int:
    """YCSB's ``-target N`` in a step's command (0: none)."""
    for flag, value in zip(argv, argv[1:], strict=False):
        if flag == "-target":
            try:
                return int(float(value))
            except ValueError:
                return 0
    return 0


def _step_key(s: StepRecord) -> RateKey | None:
    try:
        records = int(s.properties.get("recordcount", ""))
    except ValueError:
        return None
    return rate_key(s.keys.phase, s.keys.mix, s.keys.threads, records, _argv_target(s.argv))


def step_rates(m: Manifest) -> dict[RateKey, list[float]]:
    """The measured throughput of each completed load/run step of one run, by step key."""
    steps = [
        s
        for s in m.steps
        if s.keys.phase in ("load", "run") and not s.discarded and s.verdict == "completed"
        if s.throughput_ops_s and s.throughput_ops_s > 0
    ]
    merged = {s.keys.step for s in steps if s.keys.client == ALL_CLIENTS}
    out: dict[RateKey, list[float]] = defaultdict(list)
    for s in steps:
        if s.keys.step in merged and s.keys.client != ALL_CLIENTS:
            continue  # one client's share of a multi-client step
        key = _step_key(s)
        if key is not None:
            out[key].append(float(s.throughput_ops_s))  # type: ignore[arg-type]
    return dict(out)


def rates_from(manifests: Iterable[Manifest], suite: str, target: str, embedded: bool) -> MeasuredRates:
    """Pure: the median rate per step key over the newest MAX_RUNS of *manifests* (newest first) of *suite*
    that ran against *target* and measured a step."""
    per_key: dict[RateKey, list[float]] = defaultdict(list)
    runs = 0
    for m in manifests:
        if runs >= MAX_RUNS:
            break
        if m.suite.name != suite or _manifest_target(m) != target:
            continue
        found = step_rates(m)
        if not found:
            continue
        runs += 1
        for key, values in found.items():
            per_key[key].extend(values)
    return MeasuredRates(
        rates={k: statistics.median(v) for k, v in per_key.items()}, runs=runs, embedded=embedded
    )


def _any_run(results: Path) -> bool:
    """Whether *results* holds a history file or a run folder."""
    if (results / HISTORY_FILE).exists():
        return True
    try:
        return any((p / MANIFEST).is_file() for p in results.iterdir())
    except OSError:
        return False


def _candidates(results: Path, history_url: str | None, suite: str) -> list[Path]:
    """The suite's run folders, newest first: from the history, else the folders under *results*."""
    if not _any_run(results) and not config.current().history(history_url):
        return []  # nothing measured yet: no need to load the history (and pandas, for `render`)
    from ycsb_runner.runs.history import open_history, run_folders

    try:
        runs = open_history(results, history_url).runs()
    except UserError:
        runs = None
    if runs is not None and not runs.empty:
        mine = runs[runs["suite"] == suite].sort_values(["started_at", "run_id"], ascending=False)
        folders = [Path(f) for f in mine["folder"] if isinstance(f, str) and f]
        if folders:
            return folders[:MAX_FOLDERS]
    return list(reversed(run_folders(results)))[:MAX_FOLDERS]


def earlier_rates(
    suite: str, url: str | None, results: Path, history_url: str | None = None
) -> MeasuredRates:
    """What earlier runs of *suite* against the target of *url* (None: the embedded server here) measured."""

    def manifests() -> Iterable[Manifest]:
        for folder in _candidates(results, history_url, suite):
            try:
                m = RunResult.load(folder).manifest
            except (UserError, OSError):
                continue
            if m.suite.name == suite:
                yield m

    ordered = sorted(manifests(), key=lambda m: m.started_at, reverse=True)
    return rates_from(ordered, suite, target_id(url, socket.gethostname()), embedded=url is None)
