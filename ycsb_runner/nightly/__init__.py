"""The nightly check: the run history, the judgement of its series (regress, change points, the
baseline window) and the canaries."""
