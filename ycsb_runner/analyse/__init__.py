"""Analysis of benchmark results: statistics for A/B verdicts (``stats``) and friends.

Nothing is imported here: the CLI and the pre-flight read these constants without loading numpy or pandas."""

DEFAULT_ALPHA = 0.01  # significance level of compare and regress (``stats`` re-exports it)
#: Fewer status intervals after the warm-up and neither the trend test nor the CV means much (``steady``)
MIN_STEADY_INTERVALS = 10
#: the corrections of many p-values at once (``stats.adjust``): the family-wise error rate (Holm-Bonferroni)
#: or the false discovery rate (Benjamini-Hochberg)
HOLM = "holm"
BH = "bh"
