"""The options of ``regress`` and their defaults: one definition, read by the library and by the CLI's help.

Light on purpose (no numpy, no pandas): the CLI imports it at start-up for its defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

from ycsb_runner.analyse import BH, DEFAULT_ALPHA, HOLM, check_alpha, check_min_effect

CORRECTIONS = {HOLM: "Holm (family-wise error rate)", BH: "Benjamini-Hochberg (false discovery rate)"}
# findmax_ops_s: findmax runs; p999_us and max_us: the tails beyond p99 (runs recorded before them have none);
# latency_distribution: one test of each step and operation's latency quantiles (``nightly.distribution``)
DEFAULT_METRICS = (
    "throughput_ops_s",
    "avg_us",
    "p99_us",
    "p999_us",
    "max_us",
    "findmax_ops_s",
    "latency_distribution",
)
DEFAULT_PERMUTATIONS = 199
HOST_CHANGE = ("mark", "split")  # --on-host-change


@dataclass
class RegressOptions:
    min_effect_pct: float = 5.0
    alpha: float = DEFAULT_ALPHA  # 0.01: about one false alarm per 100 nights in a series (detection_bench)
    correction: str = HOLM
    window: int = 3  # the newest nights tested together
    confirm: int = 2  # nights a change must show on before it is flagged (1: tonight alone)
    metrics: tuple[str, ...] = DEFAULT_METRICS
    permutations: int = DEFAULT_PERMUTATIONS
    canaries: bool = True  # read the canary series (False: --ignore-canaries)
    on_host_change: str = "mark"  # the load generator or server changed in the runs: mark, or split (newest)

    def check(self) -> None:
        """Refuse values that would make the verdict meaningless (ValueError with the option's name)."""
        from ycsb_runner.runs.metrics import DISTRIBUTION_METRICS, OPERATION_METRICS, RUN_METRICS

        known = {"throughput_ops_s", *OPERATION_METRICS, *RUN_METRICS, *DISTRIBUTION_METRICS}
        if bad := [m for m in self.metrics if m not in known]:
            raise ValueError(f"--metric {bad[0]!r}: known metrics are {', '.join(sorted(known))}")
        if self.correction not in CORRECTIONS:
            raise ValueError(f"--correction {self.correction!r}: use holm or bh")
        check_alpha(self.alpha)
        check_min_effect(self.min_effect_pct)
        if self.on_host_change not in HOST_CHANGE:
            raise ValueError(f"--on-host-change {self.on_host_change!r}: use {' or '.join(HOST_CHANGE)}")
        if self.window < 1 or not 1 <= self.confirm <= self.window:
            raise ValueError("--window must be >= 1 and --confirm between 1 and --window")


DEFAULTS = RegressOptions()
