"""Analysis of benchmark results: statistics for A/B verdicts (``stats``) and friends."""
