"""One YCSB step on several load generators: split, aligned start, one time bound, collect, merge.

1. The step is split (:mod:`ycsb_runner.execute.split`): key slices for a load, threads, ``-target`` and
   ``operationcount`` for a run; every client runs the same mix over the whole key space.
2. Each client gets a private folder (``mktemp -d``, 0700) holding its ``workload.properties`` and the
   ``connection.properties`` with the password (0600), sent on ssh's stdin, never on a command line.
3. Aligned start: every client's shell is started and reports ready (connected, files in place), then all get
   one common "go" on stdin and start YCSB. One time bound for all (the step's hard timeout from the go).
4. A client that exits non-zero fails the step with its name; the others are stopped (closing their stdin
   makes their shell stop YCSB: the same happens if ycsb-runner dies). Everything written is kept.
5. Each client's stdout, stderr and ``.hdr`` logs are copied to ``steps/<step>/clients/<client>/``; the
   password file goes with the client's folder as soon as YCSB ends, the folder afterwards.
6. Results: per-client rows (``client=<name>``) and merged rows (``client=all``) with exact percentiles for
   every operation from the added HDR histograms (:mod:`ycsb_runner.parse.merge`). Each host's clock offset
   is measured before the go and applied to its logs' timestamps; each client's warm-up (``warmup_s``) is
   cut from its own start; the step's throughput and the merged percentiles are those of the common window
   (every client running), with the union's (first start to last end) kept beside them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ycsb_runner.analyse.steady import steady_state
from ycsb_runner.errors import UserError
from ycsb_runner.execute.clients import Client
from ycsb_runner.execute.common import StepContext, status_line, status_times, store_monitor
from ycsb_runner.execute.split import ClientShare, split_step
from ycsb_runner.execute.telemetry import ClientTelemetry, series_with_time
from ycsb_runner.parse import ParseError, parse_output
from ycsb_runner.parse.merge import (
    ALL_CLIENTS,
    align_logs,
    client_histograms,
    common_window,
    drop_warmup,
    merge_operations,
    merge_overall,
    merged_latencies,
    read_client_logs,
    union_window,
    window_logs,
    with_steady,
)
from ycsb_runner.prepare.commandline import property_lines, render_step
from ycsb_runner.prepare.plan import Step
from ycsb_runner.runs.model import (
    CLIENTS_DIR,
    COMMAND,
    HDR_DIR,
    STDERR,
    STDOUT,
    WORKLOAD_PROPERTIES,
    StepRecord,
)

READY = "ycsb-runner-client-ready"
READY_TIMEOUT_S = 60.0
STOP_GRACE_S = 15.0


def client_script(workdir: str, argv: list[str]) -> str:
    """The shell script a client runs: report ready, wait for the go, run YCSB; stop YCSB when stdin closes.

    Its exit code is YCSB's (128+N when a signal N ended it). It holds no secret: YCSB reads the URL from
    ``connection.properties`` in *workdir*, removed when YCSB ends.
    """
    q = shlex.quote
    cmd = " ".join(q(a) for a in argv)
    return "\n".join(
        [
            f"cd {q(workdir)} || exit 97",
            "exec 3<&0",
            f"echo {READY} >&2",
            "read go || { rm -f connection.properties; exit 98; }",
            f"{cmd} </dev/null &",
            "j=$!",
            "echo $j > pid",
            "( while read x; do :; done; kill -TERM $j 2>/dev/null; sleep 10; kill -KILL $j 2>/dev/null ) "
            "<&3 >/dev/null 2>&1 &",
            "w=$!",
            "wait $j",
            "rc=$?",
            "rm -f connection.properties",
            "kill $w 2>/dev/null",
            "exit $rc",
        ]
    )


@dataclass
class _Session:
    client: Client
    share: ClientShare
    folder: Path
    workdir: str = ""
    argv: list[str] = field(default_factory=list)  # holds no secret (the URL is in a file)
    argv_masked: list[str] = field(default_factory=list)
    timeout_s: float = 600.0
    proc: subprocess.Popen | None = None
    stdout: Any = None
    ready: threading.Event = field(default_factory=threading.Event)
    pump: threading.Thread | None = None
    stderr_tail: list[str] = field(default_factory=list)
    stopped: bool = False
    exit_code: int | None = None
    last_ops: int = 0
    last_cur: float = 0.0
    clock: tuple[float, float] | None = None  # (offset, round trip) s: this host's clock minus ours

    @property
    def name(self) -> str:
        return self.client.name


def _suite_for(suite: Any, share: ClientShare) -> Any:
    """The suite as one client runs it: its -target, and HDR interval logs always on (for exact merging)."""
    measurement = dataclasses.replace(suite.measurement, hdr_fileoutput=True)
    if not measurement.type.startswith("hdrhistogram"):
        raise UserError(
            f"several clients need measurement.type = hdrhistogram (to merge percentiles exactly), "
            f"not {measurement.type}"
        )
    return dataclasses.replace(
        suite,
        measurement=measurement,
        run=dataclasses.replace(suite.run, target=share.target),
        dataset=dataclasses.replace(suite.dataset, load_target=share.target),
    )


def split_for(step: Step, suite: Any, names: list[str]) -> list[ClientShare]:
    ds = suite.dataset
    load = step.kind == "load"
    count = ds.properties.get("insertcount")
    return split_step(
        names,
        load=load,
        threads=int(step.threads),
        target=int(ds.load_target if load else suite.run.target),
        recordcount=int(ds.recordcount),
        insertstart=int(ds.properties.get("insertstart", 0)),
        insertcount=int(count) if count is not None else None,
        operationcount=suite.run.operationcount,
    )


def _pump(session: _Session, masker: Any, on_line: Any) -> None:
    assert session.proc is not None and session.proc.stderr is not None
    with open(session.folder / STDERR, "w", encoding="utf-8") as out:
        for raw in session.proc.stderr:
            line = masker(raw.decode("utf-8", errors="replace"))
            if not session.ready.is_set() and line.strip() == READY:
                session.ready.set()
                continue
            out.write(line)
            out.flush()
            session.stderr_tail = (session.stderr_tail + [line.rstrip()])[-5:]
            with contextlib.suppress(Exception):
                on_line(session, line.rstrip("\n"))


def _stop(session: _Session) -> None:
    """Stop a client's YCSB: close its stdin (its shell sends SIGTERM), then SIGKILL after a grace period."""
    proc = session.proc
    if proc is None or proc.poll() is not None:
        return
    session.stopped = True
    with contextlib.suppress(OSError):
        assert proc.stdin is not None
        proc.stdin.close()
    try:
        proc.wait(STOP_GRACE_S)
        return
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(UserError):
        session.client.run(
            f"kill -KILL $(cat {shlex.quote(session.workdir)}/pid) 2>/dev/null; true", timeout=30
        )
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, 9)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(10)


def run_multi_client_step(ctx: StepContext, step: Step, record: StepRecord, private: Path) -> None:
    """Run *step* on ``ctx.clients`` and fill *record* and ``ctx.frames`` (see the module doc)."""
    record.keys = dataclasses.replace(record.keys, client=ALL_CLIENTS)
    if step.kind == "run" and step.mix is not None and step.mix.inserts:
        record.warnings.append(
            "several clients insert keys from the same sequence (YCSB's run phase starts every client's "
            "inserts at recordcount): expect duplicate-key errors"
        )
    clients = _Clients(ctx, step, record, private)
    telemetry = ClientTelemetry() if step.kind == "run" else None
    monitor = ctx.monitor_for(step)
    try:
        clients.prepare()
        if step.kind == "load":
            ctx.drop_collection()
        clients.start()
        if telemetry is not None:
            for s in clients.sessions:
                telemetry.start(s.client, s.workdir, s.proc.pid if s.proc is not None else None)
        if monitor is not None:  # the server's side (serverStatus); the clients' is the telemetry above
            with contextlib.suppress(Exception):
                monitor.start(os.getpid())
        clients.watch()
    finally:
        clients.stop()  # also on an error or Ctrl-C: no YCSB left running on any client
        if telemetry is not None:
            telemetry.stop()
        if monitor is not None:
            with contextlib.suppress(Exception):
                monitor.stop()
        clients.bring_back()
    _collect(ctx, step, record, clients.sessions, clients.failed, clients.timed_out_after)
    if telemetry is not None:
        _store_telemetry(ctx, record, telemetry)
    if monitor is not None:  # the server's figures (the clients' part is replaced by the telemetry)
        store_monitor(record, monitor, ctx.frames, server_only=True)


class _Clients:
    """One step's client sessions, from their files to their logs back here; each stage a method."""

    def __init__(self, ctx: StepContext, step: Step, record: StepRecord, private: Path) -> None:
        self.ctx, self.step, self.record, self.private = ctx, step, record, private
        out_dir = ctx.result.step_dir(step.label)
        shares = split_for(step, ctx.suite, [c.name for c in ctx.clients])
        self.sessions = [
            _Session(c, s, out_dir / CLIENTS_DIR / c.spec.folder)
            for c, s in zip(ctx.clients, shares, strict=True)
        ]
        for s in self.sessions:
            s.folder.mkdir(parents=True, exist_ok=True)
        self.failed: list[tuple[str, str]] = []
        self.bound_s = 0.0  # one time bound for all, from the go (set by start)
        self.deadline = 0.0
        self.timed_out_after: float | None = None  # the common time bound, when it killed the step

    def prepare(self) -> None:
        """Every client's private folder and files, in parallel."""
        with ThreadPoolExecutor(max_workers=len(self.sessions)) as pool:
            errors = [f.exception() for f in [pool.submit(self._prepare, s) for s in self.sessions]]
        for err in errors:
            if err is not None:
                raise err

    def _prepare(self, s: _Session) -> None:
        ctx, step, record = self.ctx, self.step, self.record
        s.clock = s.client.clock_offset()
        s.workdir = s.client.make_workdir()
        wd = Path(s.workdir)
        rendered = render_step(
            dataclasses.replace(step, threads=s.share.threads),
            _suite_for(ctx.suite, s.share),
            url=ctx.url,
            java=ctx.java.path,
            classpath=[str(Path(c).absolute()) for c in ctx.install.classpath],
            binding_class=ctx.install.binding_class,
            workload_file=wd / WORKLOAD_PROPERTIES,
            connection_file=wd / "connection.properties",
            jvm_args=ctx.jvm_args,
            hdr_dir=wd / HDR_DIR,
            env=ctx.env,
        )
        workload = rendered.workload_properties + property_lines(s.share.properties())
        s.argv_masked = rendered.masked_argv()
        (s.folder / WORKLOAD_PROPERTIES).write_text(workload)
        (s.folder / COMMAND).write_text(f"# on {s.name}\n" + " ".join(s.argv_masked) + "\n")
        s.client.put_files(
            s.workdir,
            {WORKLOAD_PROPERTIES: workload, "connection.properties": rendered.connection_properties},
        )
        s.argv = rendered.argv
        s.timeout_s = rendered.timeout_s
        if not record.properties:  # the first client's, as an example (each client's are in its folder)
            record.properties = dict(rendered.properties)
            record.ycsb_cli = rendered.ycsb_cli
            record.argv = s.argv_masked

    def start(self) -> None:
        """Start every client's shell, wait until all report ready, then send the common go."""
        for s in self.sessions:
            s.stdout = open(self._raw_stdout(s), "wb")  # noqa: SIM115 - closed in bring_back
            s.proc = s.client.start(
                client_script(s.workdir, s.argv),
                stdin=subprocess.PIPE,
                stdout=s.stdout,
                stderr=subprocess.PIPE,
            )
            s.pump = threading.Thread(
                target=_pump, args=(s, self.ctx.masker, self._on_line), name=f"ycsb-{s.name}", daemon=True
            )
            s.pump.start()
        wait_until = time.time() + READY_TIMEOUT_S
        for s in self.sessions:
            assert s.proc is not None
            while not s.ready.wait(0.2):
                if s.proc.poll() is not None or time.time() > wait_until:
                    tail = s.stderr_tail[-1] if s.stderr_tail else f"exit code {s.proc.poll()}"
                    raise UserError(f"client {s.name} did not start: {tail}")
        self.bound_s = max(s.timeout_s for s in self.sessions)
        self.deadline = time.time() + self.bound_s
        for s in self.sessions:  # the common go
            assert s.proc is not None and s.proc.stdin is not None
            s.proc.stdin.write(b"go\n")
            s.proc.stdin.flush()

    def _on_line(self, s: _Session, line: str) -> None:
        status = status_line(line)
        if status is not None:
            s.last_ops, s.last_cur = status.ops, status.cur
            ops = sum(x.last_ops for x in self.sessions)
            cur = sum(x.last_cur for x in self.sessions)
            self.ctx.progress("status", {"step": self.step, "sec": status.sec, "ops": ops, "cur": cur})

    def watch(self) -> None:
        """Until every client has ended, one has failed, or the common time bound has passed."""
        while True:
            running = [s for s in self.sessions if s.proc is not None and s.proc.poll() is None]
            for s in self.sessions:
                assert s.proc is not None
                code = s.proc.poll()
                if code is not None and code != 0 and not s.stopped and s.name not in dict(self.failed):
                    self.failed.append((s.name, _exit_reason(code, s)))
            if self.failed or not running:
                return
            if time.time() > self.deadline:
                self.timed_out_after = self.bound_s
                return
            time.sleep(0.2)

    def stop(self) -> None:
        with ThreadPoolExecutor(max_workers=len(self.sessions)) as pool:
            list(pool.map(_stop, self.sessions))

    def bring_back(self) -> None:
        """Each client's stdout (masked), its HDR logs and its exit code; its private folder removed."""
        for s in self.sessions:
            if s.pump is not None:
                s.pump.join(10)
            s.exit_code = s.proc.returncode if s.proc is not None else None
            if s.stdout is not None:
                s.stdout.close()
            if self._raw_stdout(s).exists():
                _copy_masked(self._raw_stdout(s), s.folder / STDOUT, self.ctx.masker)
            if s.workdir:
                with contextlib.suppress(Exception):
                    s.client.fetch_dir(f"{s.workdir}/{HDR_DIR}", s.folder / HDR_DIR)
                s.client.remove(s.workdir)
        self.record.exit_code = next((s.exit_code for s in self.sessions if s.exit_code), 0)

    def _raw_stdout(self, s: _Session) -> Path:
        return self.private / f"{s.folder.name}.stdout"


def _exit_reason(code: int, s: _Session) -> str:
    if code == 255 and not s.client.spec.local:
        return f"ssh failed (exit code 255): {s.stderr_tail[-1] if s.stderr_tail else 'connection lost'}"
    if code > 128:
        return f"YCSB ended by signal {code - 128} (exit code {code})"
    return f"exit code {code}" + (f": {s.stderr_tail[-1]}" if s.stderr_tail else "")


def _copy_masked(src: Path, dst: Path, masker: Any) -> None:
    with open(src, "rb") as fin, open(dst, "w", encoding="utf-8") as fout:
        for raw in fin:
            fout.write(masker(raw.decode("utf-8", errors="replace")))
    src.unlink()


def _collect(
    ctx: StepContext,
    step: Step,
    record: StepRecord,
    sessions: list[_Session],
    failed: list[tuple[str, str]],
    timed_out_after: float | None,
) -> None:
    """Parse each client's output, judge the step, and merge the clients' HDR logs into ``client=all``."""
    failed_names = dict(failed)
    per_ops: dict[str, Any] = {}
    overall: dict[str, dict] = {}
    details: list[dict[str, Any]] = []
    reasons: list[str] = [f"client {n}: {why}" for n, why in failed]
    for s in sessions:
        detail, parsed, reason = _parse_client(ctx, step, s, stopped=s.stopped and s.name not in failed_names)
        details.append(detail)
        if reason and s.name not in failed_names:
            reasons.append(reason)
        if parsed is None:
            continue
        overall[s.name] = parsed.overall
        per_ops[s.name] = parsed.operations
        if step.kind != "warmup":
            keys = dataclasses.replace(record.keys, client=s.name)
            ctx.frames.add("summary", keys, parsed.summary)
            ctx.frames.add("timeseries", keys, status_times(parsed.status))
            ctx.frames.add("operations", keys, parsed.operations)
    stopped = [d["client"] for d in details if d.get("stopped")]
    if failed and stopped:
        reasons.append(f"stopped {', '.join(stopped)}")
    if timed_out_after is not None:
        reasons.insert(0, f"killed after the common time bound of {timed_out_after:.0f}s")
    record.figures["clients"] = details
    record.figures["load_generators"] = len(sessions)
    merged = merge_overall(overall) if overall else {}
    record.throughput_ops_s = merged.get("throughput")
    record.runtime_ms = merged.get("runtime_ms")
    record.status = "failed" if reasons else "completed"
    record.reasons = reasons
    _capacity_warning(record, [s.name for s in sessions], int(step.threads))
    if step.kind == "load":
        ctx.check_documents(record)
    if step.kind == "warmup":
        record.discarded = True
        return
    _merge_clients(ctx, step, record, sessions, per_ops, merged.get("throughput"))


def _parse_client(
    ctx: StepContext, step: Step, s: _Session, *, stopped: bool
) -> tuple[dict[str, Any], Any, str | None]:
    """One client's detail for the manifest, its parsed output (None when unreadable) and why it failed."""
    detail: dict[str, Any] = {
        "client": s.name,
        "threads": s.share.threads,
        "target": s.share.target,
        **s.share.properties(),
        "exit_code": s.exit_code,
        "stopped": stopped,
        "argv": s.argv_masked,
        "clock_offset_s": s.clock[0] if s.clock else None,
        "clock_rtt_s": s.clock[1] if s.clock else None,
    }
    try:
        parsed = parse_output(
            (s.folder / STDOUT).read_bytes() if (s.folder / STDOUT).exists() else b"",
            (s.folder / STDERR).read_bytes() if (s.folder / STDERR).exists() else b"",
            exit_code=s.exit_code,
            expected_ops=s.share.insertcount if step.kind == "load" else None,
            max_error_rate=ctx.max_error_rate,
        )
    except ParseError as err:
        detail.update(status="failed", reasons=[str(err)])
        return detail, None, None if stopped else f"client {s.name}: {err}; see {s.folder / STDERR}"
    detail.update(
        status="stopped" if stopped else parsed.completion.status,
        reasons=list(parsed.completion.reasons),
        throughput_ops_s=parsed.overall.get("throughput"),
        runtime_ms=parsed.overall.get("runtime_ms"),
        operations=parsed.overall.get("ops_done"),
    )
    reason = None
    if not stopped and parsed.completion.status != "completed":
        reason = f"client {s.name}: {'; '.join(parsed.completion.reasons) or parsed.completion.status}"
    return detail, parsed, reason


def _merge_clients(
    ctx: StepContext,
    step: Step,
    record: StepRecord,
    sessions: list[_Session],
    per_ops: dict[str, Any],
    sum_over_max: float | None,
) -> None:
    """The ``client=all`` operations rows: the clients' HDR logs aligned on one clock, the warm-up cut,
    exact percentiles of the common window (the union's beside them) and of the steady-state window."""
    suite = ctx.suite
    unknown = [s.name for s in sessions if s.clock is None]
    if unknown:
        record.warnings.append(
            f"the clock offset of {', '.join(unknown)} could not be measured (no GNU date +%N there?): "
            "its logs are merged on its own clock"
        )
    unreadable: list[str] = []
    logs = read_client_logs({s.name: s.folder / HDR_DIR for s in sessions if s.name in per_ops}, unreadable)
    if unreadable and record.status == "completed":
        # a client that finished must have written its latencies: the merge would silently miss them
        record.reasons.extend(unreadable)
        record.status = "failed"
    else:
        record.warnings.extend(unreadable)
    logs = align_logs(logs, {s.name: s.clock[0] for s in sessions if s.clock})
    warmup = suite.effective_warmup_s if step.kind == "run" else 0.0
    steady = steady_state(logs, warmup) if step.kind == "run" else None
    logs = drop_warmup(logs, warmup)
    percentiles = list(suite.measurement.percentiles)
    record.figures.update(window_figures(logs, warmup, sum_over_max))
    window = common_window(logs)
    if window is not None and window.throughput is not None:
        record.throughput_ops_s = window.throughput
        latencies = merged_latencies(
            client_histograms(window_logs(logs, window.start_s, window.end_s)), percentiles
        )
    else:
        latencies = merged_latencies(client_histograms(logs), percentiles)
        if len(logs) > 1:
            record.warnings.append(
                "the clients never ran at the same time (no common window): throughput and percentiles "
                "are those of the union"
            )
    union = merged_latencies(client_histograms(logs), percentiles)
    merged_ops = with_union(merge_operations(per_ops, latencies, percentiles), union, percentiles)
    if steady is not None:  # the rule's (or warmup_s's) cut per client, over the common window of the rest
        record.figures.update(steady.figures())
        kept_window = common_window(steady.kept)
        kept = steady.kept
        if kept_window is not None and kept_window.throughput is not None:
            kept = window_logs(kept, kept_window.start_s, kept_window.end_s)
            record.figures.update(kept_window.steady_figures())
        record.warnings.extend(steady.warnings())
        merged_ops = with_steady(merged_ops, kept, percentiles)
    ctx.frames.add("operations", record.keys, merged_ops)


def window_figures(logs: Any, warmup_s: float, sum_over_max: float | None) -> dict[str, Any]:
    """The step's figures of the common window and of the union (epoch seconds, lengths, rates), the
    warm-up cut, and the old sum(ops) / max(runtime) figure for comparison. Pure."""
    out: dict[str, Any] = {"warmup_s": warmup_s, "throughput_sum_over_max_runtime_ops_s": sum_over_max}
    for name, window in (("common_window", common_window(logs)), ("union", union_window(logs))):
        if window is None:
            continue
        out[f"{name}_start"] = window.start_s
        out[f"{name}_s"] = window.length_s
        out[f"{name}_operations"] = window.ops
        out[f"throughput_{name}_ops_s"] = window.throughput
    return out


def with_union(merged: pd.DataFrame, union: pd.DataFrame, percentiles: list[float]) -> pd.DataFrame:
    """The ``client=all`` operations rows with the union's percentiles beside the common window's
    (``union_p<N>_us``, ``union_operations``: every interval logged after the warm-up). Pure."""
    from ycsb_runner.parse.numbers import percentile_label

    if merged.empty or union.empty:
        return merged
    rows = union[union["client"] == ALL_CLIENTS].set_index("section")
    out = merged.copy()
    out["union_operations"] = out["section"].map(rows["operations"])
    for p in percentiles:
        col = f"{percentile_label(p)}_us"
        out[f"union_{col}"] = out["section"].map(rows[col])
    return out


def _store_telemetry(ctx: StepContext, record: StepRecord, telemetry: ClientTelemetry) -> None:
    """Each client's CPU/memory/network: client_metrics.csv rows by client, figures, saturation warnings."""
    results = telemetry.results()
    by_name = {d["client"]: d for d in record.figures.get("clients", [])}
    for name, res in results.items():
        summary = res["summary"]
        if name in by_name:
            by_name[name]["telemetry"] = {k: v for k, v in summary.items() if not pd.isna(v)}
        record.warnings.extend(res["warnings"])
        keys = dataclasses.replace(record.keys, client=name)
        ctx.frames.add("client_metrics", keys, series_with_time(res["series"]))
    busiest = [r["summary"].get("host_cpu_pct") for r in results.values()]
    busiest = [b for b in busiest if b is not None and not pd.isna(b)]
    if busiest:
        record.figures["client_host_cpu_pct_max"] = max(busiest)


def _capacity_warning(record: StepRecord, clients: list[str], threads: int) -> None:
    """Warn when the step's throughput is above the safe share of what its clients can generate."""
    from ycsb_runner.execute.probe import SAFE_SHARE, capacity

    cap = capacity(clients, threads)
    if cap and record.throughput_ops_s and record.throughput_ops_s > SAFE_SHARE * cap:
        record.warnings.append(
            f"measured {record.throughput_ops_s:.0f} ops/s, above {SAFE_SHARE:.0%} of what the clients can "
            f"generate ({cap:.0f} ops/s, probe-client): add clients"
        )
