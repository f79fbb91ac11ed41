"""Round trip of ``history export -f otava``: Apache Otava 0.8.0 (the reference virtualenv of
``reference_venvs.py``) analyses the exported CSV with the printed configuration, and its change points are
compared with the change runs ``regress`` flags on the same history.

The history: 12 synthetic nights of one step (throughput, average and p99 latency), the last 4 "throttled"
(throughput x 0.6, average latency / 0.6, p99 flat); ``python bench/otava_export_check.py`` prints one JSON
object: per flagged series, regress's change run and Otava's, and whether they are within one night.
``python bench/otava_export_check.py RESULTS [SUITE]`` does the same on a real history (default suite quick).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "unit"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

FACTORS = [1.0, 1.03, 0.98, 1.01, 0.97, 1.02, 0.99, 1.0, 0.6, 0.62, 0.59, 0.61]


def main() -> int:
    from reference_venvs import OTAVA, ensure
    from test_ci_outputs import history

    from ycsb_runner import RegressOptions, run_regress
    from ycsb_runner.nightly import export
    from ycsb_runner.nightly.regress import flagged

    py, why = ensure(OTAVA)
    if py is None:
        print(json.dumps({"otava": f"not available: {why}"}))
        return 3
    suite = sys.argv[2] if len(sys.argv) > 2 else "quick"
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        results = Path(sys.argv[1]) if len(sys.argv) > 1 else history(d / "results", FACTORS, {"sha": "abc"})
        rows = export.history_export_rows(suite, results=results)
        (d / "quick.csv").write_text(export.export_rows(rows, "otava"))
        (d / "otava.yaml").write_text(export.otava_config(rows, str(d / "quick.csv"), "quick"))
        otava = subprocess.run(
            [str(py.parent / "otava"), "analyze", "quick", "--config-file", str(d / "otava.yaml")]
            + ["--output", "json"],
            capture_output=True,
            text=True,
            check=True,
            cwd=d,
        )
        found = {
            c["metric"]: point["attributes"]["run_id"]
            for point in json.loads(otava.stdout)["quick"]
            for c in point["changes"]
        }
        out = run_regress(suite, RegressOptions(), results=results)
    night = {str(r): i for i, r in enumerate(rows.drop_duplicates("run_id")["run_id"])}
    series = {}
    for r in flagged(out.result.table).to_dict("records"):
        name = export.series_name(r)
        otava_run = found.get(name)
        close = otava_run is not None and abs(night[otava_run] - night[str(r["change_run"])]) <= 1
        series[name] = {"regress": r["change_run"], "otava": otava_run, "within_one_night": close}
    extra = sorted(set(found) - set(series))
    print(json.dumps({"regress_exit": out.exit_code, "series": series, "otava_only": extra}, indent=2))
    return 0 if series and all(s["within_one_night"] for s in series.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
