"""ycsb-runner: run YCSB 0.17.0 studies against MongoDB and make sense of the numbers.

The library behind the ``ycsb-runner`` command, as the README shows it::

    from ycsb_runner import BenchOptions, RunResult, run_bench

    outcome = run_bench(BenchOptions(suite="quick"))
    run = RunResult.load(outcome.run_dir)

``run_bench`` writes the run folder the command writes; ``RunResult`` reads one back (RESULTS.md documents
it); ``RunAnalysis`` is its analysis (the study table, comparisons with a published table); ``run_findmax``
with ``FindmaxOptions`` is ``ycsb-runner findmax``; ``write_report`` writes a run's HTML and Markdown report;
``compare_runs`` (``CompareOutcome``) is ``compare``; ``parse_file`` is ``parse``; ``run_regress``
(``RegressOptions``, ``RegressOutcome``) and ``accept_regressions`` are ``regress`` and ``regress accept``;
``build_site`` is ``ycsb-runner site``; ``export_history`` is ``history export``, ``notify`` is
``regress --notify``.
The names are loaded when first used, so importing the package (and starting the command) stays cheap.
"""

from __future__ import annotations

from ycsb_runner._version import __version__

# typing.TYPE_CHECKING without importing typing (~10 ms): the console script imports this package before
# ``cli.main`` can catch a Ctrl-C, so what it loads is a window in which a Ctrl-C is a traceback
TYPE_CHECKING = False

# public name -> the module that defines it
_EXPORTS = {
    "BenchOptions": "ycsb_runner.bench",
    "BenchOutcome": "ycsb_runner.bench",
    "run_bench": "ycsb_runner.bench",
    "run_findmax": "ycsb_runner.bench",
    "FindmaxOptions": "ycsb_runner.findmax.search",
    "RunResult": "ycsb_runner.runs.model",
    "RunAnalysis": "ycsb_runner.analyse.analysis",
    "CompareOutcome": "ycsb_runner.analyse.compare_service",
    "compare_runs": "ycsb_runner.analyse.compare_service",
    "parse_file": "ycsb_runner.parse.files",
    "write_report": "ycsb_runner.report.run_report",
    "UserError": "ycsb_runner.errors",
    "RegressOptions": "ycsb_runner.nightly.regress_options",
    "RegressOutcome": "ycsb_runner.nightly.regress_service",
    "run_regress": "ycsb_runner.nightly.regress_service",
    "accept_regressions": "ycsb_runner.nightly.regress_service",
    "build_site": "ycsb_runner.site.build",
    "export_history": "ycsb_runner.nightly.export",
    "notify": "ycsb_runner.nightly.notify",
}

__all__ = [
    "BenchOptions",
    "BenchOutcome",
    "CompareOutcome",
    "FindmaxOptions",
    "RegressOptions",
    "RegressOutcome",
    "RunAnalysis",
    "RunResult",
    "UserError",
    "__version__",
    "accept_regressions",
    "build_site",
    "compare_runs",
    "export_history",
    "notify",
    "parse_file",
    "run_bench",
    "run_findmax",
    "run_regress",
    "write_report",
]

if TYPE_CHECKING:
    from typing import Any

    from ycsb_runner.analyse.analysis import RunAnalysis
    from ycsb_runner.analyse.compare_service import CompareOutcome, compare_runs
    from ycsb_runner.bench import BenchOptions, BenchOutcome, run_bench, run_findmax
    from ycsb_runner.errors import UserError
    from ycsb_runner.findmax.search import FindmaxOptions
    from ycsb_runner.nightly.export import export_history
    from ycsb_runner.nightly.notify import notify
    from ycsb_runner.nightly.regress_options import RegressOptions
    from ycsb_runner.nightly.regress_service import RegressOutcome, accept_regressions, run_regress
    from ycsb_runner.parse.files import parse_file
    from ycsb_runner.report.run_report import write_report
    from ycsb_runner.runs.model import RunResult
    from ycsb_runner.site.build import build_site


def __getattr__(name: str) -> Any:
    """PEP 562: a public name is imported from its module the first time it is read."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'ycsb_runner' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
