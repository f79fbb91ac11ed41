"""The throughput earlier runs measured, for the plan's duration estimate (``plan.MeasuredRates``).

Earlier runs come from the run store (``runs.history.earlier_runs``: the suite's runs that the history lists,
else the run folders under the results folder, newest first); a run counts when it ran against the same
target: the embedded server on this host, or a URL with the same hosts (``lock.target_id``). Its completed
load and run steps (the merged ``client=all`` record of a multi-client step) give one throughput per step key
(``plan.rate_key``); the estimate takes the median over the newest ``MAX_RUNS`` runs that measured any.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from ycsb_runner.paths import HISTORY_FILE
from ycsb_runner.prepare.plan import MeasuredRates, RateKey, rate_key
from ycsb_runner.runs.model import ALL_CLIENTS, MANIFEST, Manifest, StepRecord

MAX_RUNS = 5  # the newest runs that measured a step of the suite
MAX_FOLDERS = 50  # run folders read at most (the newest), for a results folder of years of nights


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
        if s.keys.phase in ("load", "run") and not s.discarded and s.status == "completed"
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


def rates_from(manifests: Iterable[Manifest], embedded: bool) -> MeasuredRates:
    """Pure: the median rate per step key over the newest MAX_RUNS of *manifests* (newest first) that measured
    a step."""
    per_key: dict[RateKey, list[float]] = defaultdict(list)
    runs = 0
    for m in manifests:
        if runs >= MAX_RUNS:
            break
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


def earlier_rates(
    suite: str, url: str | None, results: Path, history_url: str | None = None
) -> MeasuredRates:
    """What earlier runs of *suite* against the target of *url* (None: the embedded server here) measured.
    *history_url* as resolved (``config.Config.history``; None: ``<results>/history.sqlite``)."""
    if not _any_run(results) and not history_url:  # nothing measured yet: no history (and pandas) loaded
        return MeasuredRates(embedded=url is None)
    from ycsb_runner.runs.history import earlier_runs

    return rates_from(earlier_runs(results, history_url, suite, url, MAX_FOLDERS), embedded=url is None)
