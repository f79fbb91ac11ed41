"""The nightly check of the run history (``ycsb_runner.runs.history``): the judgement of its series (regress,
change points, the baseline window) and the canaries."""
