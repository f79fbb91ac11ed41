"""What each file and column of a run folder holds: the documentation RESULTS.md is generated from
(``python -m ycsb_runner.runs.columns > RESULTS.md``; ``tests/unit/test_model.py`` checks they agree).
"""

from __future__ import annotations

import types
import typing
from typing import Any

from ycsb_runner.runs.model import (
    FORMAT_VERSION,
    KEY_COLUMNS,
    READABLE_FORMATS,
    SECTION_NAMES,
    BuildInfo,
    CanariesRecord,
    CanaryHost,
    CanaryLoadGenerator,
    DriverSettingsRecord,
    FindmaxBound,
    FindmaxRecord,
    HostRecord,
    JavaRecord,
    ManifestSection,
    ServerEngine,
    TargetRecord,
    ToolRecord,
    YcsbRecord,
)

KEY_DOCS = {
    "run_id": "the run folder's name (`<yyyymmdd-hhmmss>-<suite>`)",
    "step": "the step label, e.g. `02-run-a-read50-update50-t4-r1`; its raw logs are in `steps/<step>/`",
    "phase": "`load` or `run`; in steps.csv also `warmup` (a discarded run) and `audit` (an audit switch)",
    "mix": "the mix name; `load` for a load step",
    "workload": "the YCSB workload class (`site.ycsb.workloads.CoreWorkload` unless the suite sets another)",
    "threads": "YCSB client threads (int)",
    "audit": "`off` or `on` when the suite switches auditing, else `none`",
    "repetition": "1, 2, ... for measured runs; 0 for loads, warm-ups and audit switches (int)",
    "client": "the load generator: `local` for this machine; with several clients (`bench --client`), each"
    " client's name (as given: `host`, `user@host:port`, an ssh alias) on its own rows and `all` on the"
    " merged rows (summed counts, throughput over the common window, exact percentiles from the added HDR"
    " histograms); steps.csv and server_metrics.csv have `all` rows for such a step, client_metrics.csv one"
    " series per client",
}

COLUMNS: dict[str, dict[str, str]] = {
    "steps": {
        "index": "the step's position in the plan (1..)",
        "reason": "why the step is there (e.g. `initial load`, `reload: the previous run inserted`)",
        "started_at": "ISO-8601 UTC",
        "ended_at": "ISO-8601 UTC",
        "duration_s": "wall time of the step (s)",
        "exit_code": "YCSB's exit code (YCSB exits 0 on many failures: see `status`)",
        "status": "how the step ended, in ycsb-runner's words: `completed`, `failed`, `truncated`,"
        " `interrupted`, ... (named `verdict` before result format 4; read under this name)",
        "reasons": "why the status is not `completed` (`; `-separated)",
        "warnings": "things to know about the step (saturated client, short load, ...)",
        "audit_verified": "for audit steps: the state read back from the server (`on`/`off`)",
        "audit_detail": "for audit steps: what the audit strategy read back, in its words",
        "throughput_ops_s": "YCSB's `[OVERALL] Throughput(ops/sec)`; for several clients the rate over the"
        " common window (every client running, from the HDR logs); with `warmup_s`, after the warm-up",
        "runtime_ms": "YCSB's `[OVERALL] RunTime(ms)`",
        "documents": "documents in the collection after a load",
        "discarded": "true for warm-up runs (not measured)",
        "load_generators": "how many clients ran the step (each one's share and exit code: the manifest's"
        " `figures.clients`; its logs: `steps/<step>/clients/<client>/`)",
        "warmup_s": "run steps with `warmup_s`: seconds cut from each client's own start before the figures",
        "common_window_start": "several clients: start of the window where every client ran (epoch s, the"
        " runner's clock)",
        "common_window_s": "several clients: its length (s)",
        "common_window_operations": "several clients: operations in its intervals (from the HDR logs)",
        "throughput_common_window_ops_s": "several clients: operations / length of the common window (the"
        " step's `throughput_ops_s`)",
        "union_start": "several clients: first interval start of any client (epoch s)",
        "union_s": "several clients: first start to last end (s)",
        "union_operations": "several clients: every operation logged (after the warm-up)",
        "throughput_union_ops_s": "several clients: union_operations / union_s",
        "throughput_sum_over_max_runtime_ops_s": "several clients: sum of the clients' operations / the"
        " longest client's RunTime (the former figure, kept for comparison)",
        "throughput_ycsb_ops_s": "one client with `warmup_s`: YCSB's own whole-run throughput",
        "measured_window_start": "one client with `warmup_s`: first interval after the warm-up (epoch s)",
        "measured_window_s": "one client with `warmup_s`: from there to the last interval's end (s)",
        "measured_window_operations": "one client with `warmup_s`: operations in that window",
        "warmup_rule": "run steps with HDR interval logs: how the warm-up end was chosen: `warmup_s` (the"
        " suite's fixed figure, which wins) or `MSER` (the rule of `ycsb_runner.analyse.steady` on the"
        " throughput per status interval, each client on its own)",
        "warmup_end_s": "seconds cut from the start (the longest cut of any client)",
        "steady_start": "first interval after the warm-up (epoch s; several clients: the common window of"
        " the kept intervals)",
        "steady_s": "length of the steady-state window (s)",
        "steady_operations": "operations in it",
        "throughput_steady_ops_s": "steady_operations / steady_s: the steady-state throughput (beside"
        " `throughput_ops_s`, which stays YCSB's whole-run figure unless `warmup_s` is set)",
        "steady_intervals": "status intervals in the steady-state window",
        "steady_cv": "coefficient of variation of the window's throughput per interval",
        "steady_slope_pct_per_min": "least-squares slope of throughput over the window, % of its mean per"
        " minute",
        "steady_slope_low_pct_per_min": "its 95 % interval's lower end (standard error widened for the lag-1"
        " autocorrelation of the residuals)",
        "steady_slope_high_pct_per_min": "its upper end",
        "steady_stall_s": "the longest stall in the window: consecutive intervals below 10 % of the median"
        " throughput (s; 0: none)",
        "stationary": "false when the slope's interval excludes 0 and the fitted change over the window is"
        " at least 5 % of the mean (a drift), or when it stalled for 2 intervals or more; the step's"
        " `warnings` say which, as the change over the window (never per minute); empty when fewer than 10"
        " intervals after the warm-up showed no stall (too short to judge: no drift is judged)",
        "findmax_target_ops_s": "`findmax` probes: the step's `-target` (ops/s; split over the clients)",
        "findmax_passed": "`findmax` probes: whether the probe met the bound (manifest `findmax.probes`)",
        "findmax_latency_us": "`findmax` probes: the bound's statistic after the warm-up, worst operation"
        " (µs)",
        "server_*": "server figures over the step from serverStatus deltas (see server_metrics.csv)",
        "client_*": "client figures over the step (see client_metrics.csv)",
    },
    "summary": {
        "section": "YCSB's `[SECTION]`, e.g. `READ`, `OVERALL`, `TOTAL_GCS_G1_Young_Generation`",
        "operation": "the operation name (`READ`, `UPDATE`, ...) or the section",
        "kind": "`op`, `overall`, `gc`, ... (what the section is)",
        "intended": "true for YCSB's `Intended-` sections (latency from the intended start)",
        "outcome": "`FAILED` for `-FAILED` sections, else empty",
        "part": "the section's qualifier, when it has one",
        "metric": "YCSB's metric name as printed, e.g. `99thPercentileLatency(us)`",
        "percentile": "the percentile of a percentile metric",
        "value": "the value as a number (latencies in µs)",
        "value_str": "the value as printed",
    },
    "operations": {
        "section": "as in summary.csv",
        "operation": "as in summary.csv",
        "kind": "as in summary.csv",
        "intended": "as in summary.csv",
        "outcome": "as in summary.csv",
        "part": "as in summary.csv",
        "operations": "operations measured",
        "average_latency_us": "mean latency (µs)",
        "min_latency_us": "minimum latency (µs)",
        "max_latency_us": "maximum latency (µs)",
        "p<N>_us": "the N-th percentile latency (µs), for each percentile the suite asked for",
        "return_<STATUS>": "operations that returned STATUS (`OK`, `ERROR`, `NOT_FOUND`, ...)",
        "returns": "operations with a return code",
        "errors": "operations whose return code is not OK",
        "error_rate": "errors / returns",
        "steady_operations": "run steps with HDR interval logs: operations in the intervals after the"
        " warm-up cut (steps.csv `warmup_rule`; several clients: in the common window of those intervals)",
        "steady_average_latency_us": "mean latency over them (µs, from the added HDR histograms)",
        "steady_max_latency_us": "maximum latency over them (µs)",
        "steady_p<N>_us": "the N-th percentile over them (µs), exact from one histogram of the kept"
        " intervals; the columns without `steady_` are over the whole run (YCSB's, or after `warmup_s`)",
        "union_operations": "client=all rows of multi-client steps: operations in every interval logged"
        " (after the warm-up), beside the common window's percentiles",
        "union_p<N>_us": "client=all rows of multi-client steps: the N-th percentile over the union of the"
        " clients' intervals (the `p<N>_us` columns are over the common window)",
    },
    "timeseries": {
        "status_index": "the status line's position (0..)",
        "source": "where the line was read (`stderr`)",
        "label": "YCSB's status label, when set",
        "time": "ISO-8601 UTC of the status line",
        "elapsed_s": "seconds since the phase started, as YCSB printed",
        "total_ops": "operations so far",
        "current_ops_per_s": "throughput over the last interval (ops/s)",
        "eta_s": "YCSB's estimate of the time left (s)",
        "section": "the operation section of this row (empty on the line's head row)",
        "operation": "as in summary.csv",
        "kind": "as in summary.csv",
        "intended": "as in summary.csv",
        "outcome": "as in summary.csv",
        "part": "as in summary.csv",
        "count": "operations of this type in the interval",
        "max_us": "maximum latency in the interval (µs)",
        "min_us": "minimum latency in the interval (µs)",
        "avg_us": "mean latency in the interval (µs)",
        "p<N>_us": "percentile latencies in the interval (µs)",
    },
    "server_metrics": {
        "time": "ISO-8601 UTC at the end of the sampling interval",
        "elapsed_s": "seconds since the first sample of the step",
        "dt_s": "length of the interval (s)",
        "<op>_per_s": "opcounters deltas per second (insert, query, update, delete, getmore, command)",
        "ops_per_s": "sum of the CRUD opcounters per second",
        "reads_avg_rt_us": "opLatencies.reads delta latency / delta ops (µs)",
        "writes_avg_rt_us": "opLatencies.writes delta latency / delta ops (µs)",
        "commands_avg_rt_us": "opLatencies.commands delta latency / delta ops (µs)",
        "cpu_pct": "server process CPU as % of the cores available to it",
        "cpu_core_pct": "server process CPU as % of one core",
        "connections_current": "serverStatus connections.current",
        "wt_cache_*": "WiredTiger cache bytes (current, dirty, maximum)",
        "source": "which serverStatus fields the figures came from",
        "cpu_source": "`extra_info` (serverStatus) or `psutil` (local process)",
    },
    "client_metrics": {
        "time": "ISO-8601 UTC at the end of the sampling interval",
        "elapsed_s": "seconds since the first sample of the step",
        "dt_s": "length of the interval (s)",
        "host_cpu_pct": "load generator CPU, % of all cores",
        "host_core_pct_max": "busiest core, %",
        "ycsb_cpu_core_pct": "the YCSB JVM's CPU, % of one core",
        "ycsb_rss_bytes": "the YCSB JVM's resident memory (bytes)",
        "mem_used_bytes": "host memory in use (bytes)",
        "net_sent_per_s": "bytes sent per second",
        "net_recv_per_s": "bytes received per second",
    },
}


# manifest.json's sections: key -> meaning (a unit test checks that these are each section's fields)
MANIFEST_SECTIONS: dict[type[ManifestSection], dict[str, str]] = {
    TargetRecord: {
        "embedded": "the run measured ycsb-runner's embedded test server",
        "server_kind": "the embedded server's kind (`ferretdb`); null for a server given by URL",
        "server_version": "the embedded server's description, else the version `buildInfo` reported",
        "build_info": "what the server's `buildInfo` said (`target.build_info` below)",
        "url": "the connection URL, credentials masked",
        "engine": "what answered: "
        + ", ".join(f"`{e.value}`" for e in ServerEngine)
        + " (from format 3; for an older folder, worked out from `server_kind` and `build_info`)",
    },
    BuildInfo: {
        "version": "the MongoDB version the server reports",
        "ferretdb": "FerretDB's own version (`unknown` when it does not say); null for any other server",
        "modules": "`buildInfo.modules` (`enterprise`...)",
        "psmdb": "Percona Server for MongoDB's version; null for any other server",
    },
    YcsbRecord: {
        "core": "YCSB's core jar (`core-0.17.0.jar`)",
        "binding_class": "the binding's Java class (`ycsbrunner.binding.MongoDbClient`, or the stock one)",
        "binding_jar": "the binding's jar",
        "driver_jar": "the MongoDB Java driver's jar",
        "driver_version": "the MongoDB Java driver's version",
        "source": "where YCSB came from: `maven-build` or `tarball`",
        "home": "the YCSB folder",
        "tarball_sha256": "the release tarball's SHA-256 (a `tarball` YCSB)",
    },
    JavaRecord: {
        "path": "the `java` that ran YCSB",
        "version": "its version",
        "description": "the first line of `java -version`",
        "jvm_args": "the JVM options of `bench --jvm-arg`",
        "class_data_archive": "the class-data sharing archive the JVMs started with, or null",
    },
    HostRecord: {
        "hostname": "the load generator's host name",
        "platform": "its operating system",
        "python": "the Python that ran ycsb-runner",
        "cpus_logical": "logical CPUs",
        "cpus_physical": "physical cores",
        "memory_bytes": "memory",
        "load_avg": "load average over 1, 5 and 15 minutes when the manifest was written",
    },
    ToolRecord: {
        "name": "`ycsb-runner`",
        "version": "its version",
        "pid": "its process id (a folder still `running` whose process is gone is marked `killed`)",
    },
    DriverSettingsRecord: {
        "varies_by_step": "the settings whose values differ between steps (each step's own are in "
        "`steps[].driver_settings`)",
        "error": "a settings line the binding printed that could not be read",
        "settings": "not a key: every other key of the object is a driver setting every step shares, as the "
        "binding reports it (`driver_defaults`, `write_concern`, `retry_writes`, `max_pool_size`...)",
    },
    FindmaxRecord: {
        "mix": "the mix searched",
        "bound": "the latency bound (`findmax.bound` below)",
        "max_error_rate": "the highest error rate a passing probe may have",
        "threads": "the threads of every probe",
        "probe_s": "each probe's length (s)",
        "max_probes": "the most probes the search runs",
        "resolution_pct": "the search stops when the found and the lowest failing rate are this close (%)",
        "start_ops_s": "the first probe's target",
        "min_achieved": "the share of its target a passing probe must achieve",
        "probes": "per probe: `step`, `target`, `throughput_ops_s`, `latency_us`, `worst_operation`, "
        "`error_rate`, `passed`, `reasons`",
        "max_ops_s": "the highest passing target below every failing one (null when none passed)",
        "lowest_failing_ops_s": "the lowest failing target",
        "converged": "`max_ops_s` and `lowest_failing_ops_s` are within `resolution_pct`",
        "done": "the search ended (not cut off)",
    },
    FindmaxBound: {
        "statistic": "`p99`, `p95` or `avg`",
        "limit_us": "the limit (µs)",
        "label": "the bound as written (`p99 <= 10 ms`)",
    },
    CanariesRecord: {
        "load_generator": "per load generator (`canaries.load_generator[]` below)",
        "rtt_us": "`before`, `after`: the median round trip of `pings` back-to-back `ping` commands (µs)",
        "pings": "the pings per round-trip canary",
        "host": "this host's CPU over the run (`canaries.host` below)",
        "errors": "a canary that could not be measured (a canary never fails the run)",
    },
    CanaryLoadGenerator: {
        "client": "the load generator",
        "threads": "BasicDB's threads",
        "seconds": "each BasicDB run's length",
        "ops_s": "`before`, `after`: YCSB's no-op BasicDB ops/s before the first step and after the last",
    },
    CanaryHost: {
        "name": "this host's name",
        "cpus": "its CPUs",
        "seconds": "the time between the two canaries",
        "steal_pct": "the CPU the hypervisor stole, % of every core's time",
        "others_cpu_pct": "the CPU processes other than ycsb-runner, its JVMs and the embedded server used, "
        "% of every core's time",
        "why_not": "why a figure is missing",
    },
}


def _json_type(hint: Any) -> str:
    """A field's type as its JSON (``text or null``, ``list of text``, ``object``)."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return " or ".join(_json_type(a) for a in args)
    origin = typing.get_origin(hint) or hint
    if origin is list:
        return f"list of {_json_type(args[0])}" if args else "list"
    if origin is dict or (isinstance(origin, type) and issubclass(origin, ManifestSection)):
        return "object"
    return {str: "text", int: "integer", float: "number", bool: "true/false", type(None): "null"}.get(
        origin, "text" if isinstance(origin, type) and issubclass(origin, str) else "any"
    )


def _formats(versions: tuple[int, ...]) -> str:
    """``format 2`` or ``formats 2 and 3`` (or ``formats 2, 3 and 4``)."""
    said = [str(v) for v in versions]
    if len(said) == 1:
        return f"format {said[0]}"
    return f"formats {', '.join(said[:-1])} and {said[-1]}"


def manifest_markdown() -> list[str]:
    """RESULTS.md's part on manifest.json's sections: one table per section, from the model's fields."""
    lines = [
        "## manifest.json",
        "",
        f"Result format {FORMAT_VERSION}; this version also reads"
        f" {_formats(tuple(v for v in READABLE_FORMATS if v != FORMAT_VERSION))}"
        " (upgraded as it is read,"
        " the file left as it is; it is written in the new format only when the manifest is saved again)."
        " Each section below is a typed object of `ycsb_runner.runs.model`; a key it does not know (written"
        " by"
        " a newer ycsb-runner) is kept and written back, as is one of `suite`, of a step in `steps` or at"
        " the top level; a known key of the wrong type is a damaged folder."
        " `driver_settings`, `findmax` and `canaries` are null or absent when the run has none.",
        "",
    ]
    for section, docs in MANIFEST_SECTIONS.items():
        hints = typing.get_type_hints(section)
        lines += [f"### {SECTION_NAMES[section]}", "", "| key | type | meaning |", "|---|---|---|"]
        lines += [f"| `{k}` | {_json_type(hints[k])} | {doc} |" for k, doc in docs.items()]
        lines.append("")
    return lines


def results_markdown() -> str:
    """RESULTS.md: the files of a run folder and their columns.

    Long because it is the document's text: one list entry per line of RESULTS.md's fixed part.
    """
    lines = [
        "# Result folders",
        "",
        "<!-- generated by `python -m ycsb_runner.runs.columns > RESULTS.md`; a unit test checks it -->",
        "",
        f"`results/<run-id>/` (result format {FORMAT_VERSION}) holds `manifest.json` (the suite as run,"
        " every command with credentials masked, versions, host, times, statuses, the `bench --tag` tags and"
        " the parameter `fingerprint` that groups runs into one series of the history; read it with"
        " `ycsb_runner.runs.model.RunResult.load`), one CSV per kind of figure, `steps/<step>/` with YCSB's"
        " raw"
        " `stdout.txt`, `stderr.txt`, `workload.properties` and `command.txt`, and"
        " `report.html`/`report.md` with `report-figures/` (the report's images as PNG files for"
        " `report.md`: `<figure>.png`, or `<figure>-1.png`, `<figure>-2.png` ... with one image per step,"
        " mix, operation or metric; `report.html` carries the same images inline). A step run by several"
        " clients keeps each client's logs and `.hdr` interval logs in `steps/<step>/clients/<client>/`.",
        "",
        "Also in a run folder, when they apply: `study_table.csv` (`ycsb-runner table RUN --save`, and"
        " written when a bench of a study ends: the study's table, one row per mix, every column, a number"
        " or empty in each cell; see below), `compare-<reference or contender>.csv` (`compare"
        " --save`), and `audit-restore.json` (written before the first audit switch: the audit state the run"
        " found and the commands that put it back, passwords masked; read by `ycsb-runner audit restore"
        " RUN`). The manifest's `audit_strategy` names how audit logging was switched and"
        " `audit_unverified` is the caveat when that strategy's effect is not verified as auditing"
        " (`command`, `restart`), else `null`.",
        "",
        "`study_table.csv` of the audit study (`alibaba-audit`, layout `off-on`): `mix`, `scenario` (the"
        " study's wording, `insert:read:update=0:50:50`), `threads`, `n_off` and `n_on` (the completed runs"
        " per audit state), then the study's own columns, each figure in four columns: `CpuUsage`,"
        " `MongoDB_RT writes_avg_rt`, `MongoDB_RT reads_avg_rt`, `MongoDB_Opcounters query`,"
        " `MongoDB_Opcounters insert`, `MongoDB_Opcounters update` and `YCSB throughput`, as"
        " `<figure> off (<unit>)` and `<figure> on (<unit>)` (the means over the runs; µs, ops/s, or % of"
        " the server's cores), `<figure> change (%)` (on - off in % of off; `CpuUsage change (pp)` in"
        " percentage points) and `<figure> p` (the test of off vs on: Mann-Whitney U, or Welch's t-test"
        " when there are too few runs for it; empty with fewer than 2 runs per audit state: not tested)."
        " A cell is empty where the figure does not concern the mix's operations or the server did not"
        " report it; where the server reports no operation latencies (FerretDB) the `MongoDB_RT` columns"
        " hold YCSB's client-side latencies. The printed table says each of these once under it (JSON:"
        " `notes`); the terminal shows the change columns (`--wide`: every column). A study of per-mix"
        " means (`tencent-*`, layout `means`): `mix`, `phase`, `threads`, `n`, then the mean of"
        " `throughput (ops/sec)`, `RAL (µs)`, `WAL (µs)` and `CPU (%)` (`not sampled` or `unavailable`"
        " when the server was not sampled or does not report it), each with its `stdev`, `min` and `max`"
        " columns. Either has a `not stationary` column (`yes` on a mix with a step still moving) when a"
        " run step is not stationary.",
        "",
        "A `ycsb-runner findmax` run folder is a bench folder whose run steps are the search's probes (one"
        " step per probe, each at its own `-target`; `steps.csv` has the `findmax_*` columns) and whose"
        " manifest has a `findmax` object: the search's parameters (`mix`, `threads`, `bound` with"
        " `statistic`, `limit_us` and `label`, `max_error_rate`, `probe_s`, `max_probes`, `resolution_pct`,"
        " `start_ops_s`, `min_achieved`), `probes` (per probe: `step`, `target`, `throughput_ops_s`,"
        " `latency_us`, `worst_operation`, `error_rate`, `passed`, `reasons`), and what it found:"
        " `max_ops_s` (the highest passing target below every failing one, null when none passed),"
        " `lowest_failing_ops_s`, `converged` (the two within `resolution_pct`) and `done`. The search's"
        " parameters are part of the `fingerprint`; the history records `max_ops_s` as the series"
        " `phase=findmax`, `metric=findmax_ops_s` (higher is better) instead of the probes' figures. The"
        " report's curve is `report-figures/findmax.png`.",
        "",
        "A bench (and a findmax search) also measures its canaries, what the database cannot change "
        "(`--no-canaries`: none), into the manifest's `canaries` object: `load_generator` (per load "
        "generator: `client`, `threads`, `seconds` and `ops_s` with `before` and `after`, the ops/s of "
        "YCSB's no-op BasicDB before the first step and after the last), `rtt_us` (`before`, `after`: the"
        " median round trip of `pings` back-to-back `ping` commands, µs), `host` (this host's `name`, "
        "`cpus`, the `seconds` between the two canaries and over them `steal_pct`, the CPU stolen by the "
        "hypervisor, and `others_cpu_pct`, the CPU used by processes other than ycsb-runner, its JVMs and"
        " the embedded server, both in % of every core's time; `why_not` says why one is missing) and "
        "`errors` (a canary that could not be measured; a canary never fails the run). The history "
        "records them as the series `phase=canary` (`canary_ops_s`, `canary_rtt_us`, `canary_steal_pct`, "
        "`canary_others_cpu_pct`), which `regress` reads to tell a slower machine from a slower database.",
        "",
        "Every CSV starts with the same key columns, with the same values for the same step, so files"
        " and runs join without cleaning:",
        "",
        "| column | meaning |",
        "|---|---|",
        *[f"| `{k}` | {KEY_DOCS[k]} |" for k in KEY_COLUMNS],
        "",
        "Times are ISO-8601 UTC (`2026-12-01T05:47:05.327Z`); latency columns end in `_us` (microseconds),"
        " rates in `_ops_s` or `_per_s`.",
        "",
        "**CSVs and spreadsheets.** The run folder's CSVs are written raw, so that pandas reads back exactly"
        " what was measured. The names in them cannot start a spreadsheet formula: run ids, suite and mix"
        " names (and so step labels) must match `[A-Za-z0-9][A-Za-z0-9_.-]{0,99}` (they are folder names"
        " too), client names are host names, and the workload is a Java class name; anything else is"
        " refused before a run starts. What a command prints with `--format csv` (meant for"
        " spreadsheets, and holding tags and captures from elsewhere) follows OWASP's rule for CSV"
        " injection: a text cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return, and is not"
        " a plain number, is written with a leading `'`.",
        "",
        "```python",
        "import pandas as pd",
        "",
        "from ycsb_runner.runs.model import KEY_COLUMNS, RunResult",
        "",
        'runs = [RunResult.load(p) for p in ("results/A", "results/B")]',
        "ops = pd.concat([r.operations for r in runs])",
        "steps = pd.concat([r.steps for r in runs])",
        'joined = ops.merge(steps, on=list(KEY_COLUMNS), suffixes=("", "_step"))',
        "```",
        "",
    ]
    lines += manifest_markdown()
    for name, cols in COLUMNS.items():
        lines += [f"## {name}.csv", "", "| column | meaning |", "|---|---|"]
        lines += [f"| `{c}` | {doc} |" for c, doc in cols.items()]
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(results_markdown(), end="")
