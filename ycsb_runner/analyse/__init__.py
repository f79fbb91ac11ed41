"""Analysis of benchmark results: statistics for A/B verdicts (``stats``) and friends.

Nothing heavy is imported here: the CLI and the pre-flight read these constants without loading numpy or
pandas."""

import math

DEFAULT_ALPHA = 0.01  # significance level of compare and regress (``stats`` re-exports it)
#: Fewer status intervals after the warm-up and neither the trend test nor the CV means much (``steady``)
MIN_STEADY_INTERVALS = 10
#: the corrections of many p-values at once (``stats.adjust``): the family-wise error rate (Holm-Bonferroni)
#: or the false discovery rate (Benjamini-Hochberg)
HOLM = "holm"
BH = "bh"


def check_alpha(alpha: float) -> None:
    """``--alpha`` of regress and compare: a finite level between 0 and 1 (ValueError naming the option)."""
    if not (math.isfinite(alpha) and 0 < alpha < 1):
        raise ValueError(f"--alpha {alpha}: give a level between 0 and 1, e.g. 0.01")


def check_min_effect(pct: float) -> None:
    """``--min-effect`` of regress and compare: a finite percentage from 0 to 100 (ValueError naming it)."""
    if not (math.isfinite(pct) and 0 <= pct < 100):
        raise ValueError(f"--min-effect {pct}: give a percentage from 0 to 100, e.g. 5")
