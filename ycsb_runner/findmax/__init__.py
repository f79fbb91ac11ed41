"""``ycsb-runner findmax``: the highest ``-target`` rate that meets a latency bound, in one place.

``search``: the search itself, pure (bounds, probe verdicts, the next target, the manifest's summary and
its table); ``plan``: the suite shaped for it (one mix, one thread count, probes of ``probe_s`` seconds);
``runner``: the runner whose run steps are the probes the search chooses. ``ycsb_runner.bench.run_findmax``
runs a search as a bench (its front, target and run folder); ``ycsb_runner.cli.findmax`` is the command.
"""

from ycsb_runner.findmax.search import Bound, FindmaxOptions, make_bound

__all__ = ["Bound", "FindmaxOptions", "make_bound"]
