"""Drive a plan: check the server, load, switch audit, run, sample, parse, store; results after every step.

The runner is the only place that ties the pieces together. Everything measured so far is on disk after
each step (manifest, CSVs, raw logs), so a failure, Ctrl-C or SIGTERM in step 7 keeps steps 1-6.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import platform
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import psutil
from pymongo import MongoClient
from pymongo.errors import ConfigurationError, OperationFailure, PyMongoError

from ycsb_runner import __version__
from ycsb_runner.audit import unverified_audit
from ycsb_runner.errors import RunFailed, UserError, signal_name
from ycsb_runner.execute.common import Frames, StepContext, status_line, status_times, store_monitor
from ycsb_runner.execute.driver_settings import common_settings, parse_settings_line
from ycsb_runner.execute.multi import run_multi_client_step
from ycsb_runner.execute.phase import PhaseResult, private_full, run_phase
from ycsb_runner.install import JavaInfo, YcsbInstall
from ycsb_runner.install.cds import jvm_flags, usable_archive
from ycsb_runner.lifetime import PRIVATE_PREFIX, clear_stale_private
from ycsb_runner.model import (
    COMMAND,
    LOAD_MIX,
    MANIFEST,
    NO_AUDIT,
    WORKLOAD_PROPERTIES,
    Manifest,
    RunResult,
    StepKeys,
    StepRecord,
    SuiteInfo,
)
from ycsb_runner.parse import ParseError, parse_output
from ycsb_runner.plan import Plan, Step
from ycsb_runner.render import CORE_WORKLOAD, environment, render_step
from ycsb_runner.secrets import Masker
from ycsb_runner.store import _disk_error


def _short(err: Exception) -> str:
    """pymongo's message without its timeout and topology details."""
    text = str(err)
    for tail in (", Timeout:", ", Topology Description", " (configured timeouts"):
        text = text.split(tail)[0]
    return " ".join(text.split())[:200]


def check_connection(url: str, masker: Masker, timeout_ms: int = 8000) -> dict[str, Any]:
    """Ping the server with the run's credentials; a clear one-line error when it cannot be used."""
    where = masker(url.split("?")[0])
    try:
        with MongoClient(url, serverSelectionTimeoutMS=timeout_ms, connectTimeoutMS=timeout_ms) as client:
            client.admin.command("ping")
            info = client.admin.command("buildInfo")
            return {
                "version": info.get("version"),
                "ferretdb": info.get("ferretdbVersion"),
                "modules": info.get("modules", []),
                "psmdb": info.get("psmdbVersion"),
            }
    except OperationFailure as err:
        if err.code == 18 or "auth" in str(err).lower():
            raise UserError(
                f"authentication failed at {where}: check the user and password in MONGODB_URL"
            ) from None
        raise UserError(f"MongoDB at {where} refused the connection check: {masker(_short(err))}") from None
    except ConfigurationError as err:
        raise UserError(f"invalid MongoDB URL {where}: {masker(_short(err))}") from None
    except OSError as err:  # e.g. a TLS file the URL names cannot be read
        raise UserError(
            f"cannot use the MongoDB URL {where}: {masker(err.strerror or str(err))} "
            f"({masker(str(getattr(err, 'filename', '') or ''))})"
        ) from None
    except (PyMongoError, ValueError) as err:
        raise UserError(
            f"cannot reach MongoDB at {where} ({masker(_short(err))}); check MONGODB_URL and that "
            "the server is up"
        ) from None


def host_facts() -> dict[str, Any]:
    vm = psutil.virtual_memory()
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus_logical": psutil.cpu_count(),
        "cpus_physical": psutil.cpu_count(logical=False),
        "memory_bytes": vm.total,
        "load_avg": list(psutil.getloadavg()),
    }


def step_keys(run_id: str, step: Step, suite: Any) -> StepKeys:
    """The key columns of a plan step (the same in manifest.json and every CSV)."""
    phase = "run" if step.kind == "run" else step.kind
    return StepKeys(
        run_id=run_id,
        step=step.label,
        phase=phase,
        mix=step.mix.name if step.mix else LOAD_MIX,
        workload=str(suite.properties.get("workload", CORE_WORKLOAD)),
        threads=int(step.threads),
        audit=step.audit or NO_AUDIT,
        repetition=int(step.repetition or 0) if step.kind == "run" else 0,
    )


@dataclass
class Hooks:
    """Optional collaborators: audit switching and metric sampling (None = not used)."""

    audit: Any = None  # an ycsb_runner.audit strategy
    monitors: Any = None  # factory: (step, url) -> monitor with start(pid)/stop()/results()


class Runner:
    def __init__(
        self,
        plan: Plan,
        *,
        url: str,
        install: YcsbInstall,
        java: JavaInfo,
        run_dir: RunResult,
        target: dict[str, Any],
        hooks: Hooks | None = None,
        templates: Path | None = None,
        jvm_args: list[str] | None = None,
        max_error_rate: float = 0.01,
        keep_going: bool = False,
        progress: Callable[[str, dict], None] | None = None,
        clients: list[Any] | None = None,
    ) -> None:
        self.plan = plan
        # load generators (ycsb_runner.execute.clients.Client); none, or `local` alone: this machine, as ever
        self.clients = list(clients or [])
        self.suite = plan.suite
        self.url = url
        self.install = install
        self.java = java
        self.run_dir = run_dir
        self.target = target
        self.hooks = hooks or Hooks()
        self.env = environment(templates)
        self.templates = templates
        self.jvm_args = jvm_args or []
        # local YCSB JVMs start from set-up's class-data archive when there is one (ycsb_runner.install.cds)
        self.class_archive = usable_archive(java, install)
        self.max_error_rate = max_error_rate
        self.keep_going = keep_going
        self.progress = progress or (lambda event, data: None)
        self.masker = Masker()
        self.records: list[StepRecord] = []
        self.frames = Frames()
        self.status = "running"
        self.started_at = time.time()
        self.host = host_facts()
        run_dir.manifest.suite = self.suite_info(self.suite, templates)
        self.error: str | None = None
        # what the step executors (this one and execute.multi) read: one context for the whole run
        self.context = StepContext(
            suite=self.suite,
            url=url,
            java=java,
            install=install,
            run_dir=run_dir,
            env=self.env,
            masker=self.masker,
            frames=self.frames,
            jvm_args=self.jvm_args,
            max_error_rate=max_error_rate,
            progress=self.progress,
            monitors=self.hooks.monitors,
            clients=self.clients,
        )

    # --- manifest and CSVs ---------------------------------------------------------------------------------

    @staticmethod
    def suite_info(suite: Any, templates: Path | None) -> SuiteInfo:
        return SuiteInfo(
            name=suite.name,
            study=getattr(suite, "study", None),
            description=suite.description,
            source=suite.source,
            path=suite.path,
            tags=dict(suite.tags),
            notes=list(suite.notes),
            scaling=suite.describe_scaling(),
            repetitions=suite.repetitions,
            order=suite.order,
            warmup_runs=suite.warmup_runs,
            audit_states=list(suite.audit.states),
            mixes=[m.name for m in suite.mixes],
            threads=list(suite.run.threads),
            recordcount=suite.dataset.recordcount,
            templates=str(templates) if templates else "built-in",
        )

    def _fill_manifest(self) -> Manifest:
        m = self.run_dir.manifest
        m.tool = {"name": "ycsb-runner", "version": __version__, "pid": os.getpid()}
        m.status, m.error = self.status, self.error
        m.started_at, m.ended_at = self.started_at, time.time()
        m.target = {**self.target, "url": self.masker(self.url)}
        m.ycsb = {
            "core": self.install.core_jar,
            "binding_class": self.install.binding_class,
            "binding_jar": self.install.binding_jar,
            "driver_jar": self.install.driver_jar,
            "driver_version": self.install.driver_version,
            "source": self.install.source,
            "home": self.install.home,
            "tarball_sha256": self.install.tarball_sha256,
        }
        m.java = {
            "path": self.java.path,
            "version": self.java.version,
            "description": self.java.description,
            "jvm_args": self.jvm_args,
            "class_data_archive": str(self.class_archive) if self.class_archive else None,
        }
        m.host = self.host
        m.audit_strategy = getattr(self.hooks.audit, "name", None)
        m.audit_unverified = unverified_audit(m.audit_strategy) or None
        m.audit_baseline = getattr(self.hooks.audit, "baseline", None) or None
        m.plan_estimate_s = self.plan.est_seconds
        m.driver_settings = common_settings([r.driver_settings for r in self.records if r.driver_settings])
        m.steps = self.records
        return m

    def flush(self) -> None:
        self._fill_manifest()
        self.run_dir.save(self.frames.tables())

    def _add_frame(self, name: str, record: StepRecord, df: pd.DataFrame | None) -> None:
        self.frames.add(name, record.keys, df)

    # --- steps ----------------------------------------------------------------------------------------------

    def run(self) -> None:
        """Execute every step; raises RunFailed/UserError/KeyboardInterrupt after saving what it has.

        The private folder (it holds the connection URL) is removed on every way out, a full disk included."""
        clear_stale_private()
        private = Path(tempfile.mkdtemp(prefix=f"{PRIVATE_PREFIX}{os.getpid()}-"))
        try:
            private.chmod(0o700)
            self._run_steps(private)
        except OSError as err:  # a write failed (disk full, folder removed...)
            # a write without a file name may have gone to the private folder (TMPDIR): name it when it is
            # the full one (a fresh clone's fault test: "disk full while writing <run folder>" instead)
            unnamed_full = private_full(private) if err.errno == errno.ENOSPC and not err.filename else None
            disk = unnamed_full or _disk_error(Path(err.filename) if err.filename else self.run_dir.root, err)
            self.status, self.error = "failed", str(disk)
            problem = self._close(private)
            raise UserError(f"{disk}{problem}") from None
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt) and self.status == "running":  # between or after steps
                self.status = "completed" if self.all_steps_completed() else "interrupted"
                if self.status == "interrupted":
                    self.error = f"interrupted by {signal_name(exc)}"
            problem = self._close(private)
            if problem and isinstance(exc, UserError):
                raise type(exc)(f"{exc}{problem}", exit_code=exc.exit_code) from None
            raise
        problem = self._close(private)
        if problem:
            raise UserError(f"the run finished, but saving its results failed{problem}")

    def all_steps_completed(self) -> bool:
        """Every step of the plan ran and completed (a signal after the last one loses nothing)."""
        return len(self.records) == len(self.plan.steps) and all(
            r.verdict == "completed" for r in self.records
        )

    def _close(self, private: Path) -> str:
        """Remove the private folder, then save the final manifest and CSVs. On a full disk, save at least
        the manifest's status (in place); return what the user must be told ("" when all was saved)."""
        shutil.rmtree(private, ignore_errors=True)
        try:
            self.flush()
            return ""
        except UserError as err:
            first = err
        if self.status == "running":
            self.status = "failed"
        if not self.error:
            self.error = str(first)
        if self.run_dir.save_status(self.status, self.error):
            return f" ({MANIFEST} says {self.status}; CSVs may be incomplete)"
        if not self.run_dir.manifest_path.exists():
            return f" ({MANIFEST} could not be written)"
        return f" ({MANIFEST} could not be updated: it still says running)"

    def _run_steps(self, private: Path) -> None:
        self.flush()
        try:
            for step in self.plan.steps:
                self._run_step(step, private)
            failed = [r for r in self.records if r.verdict not in ("completed", "pending")]
            self.status = "failed" if failed else "completed"
            if failed:
                self.error = f"{len(failed)} step(s) failed"
                raise RunFailed(f"{len(failed)} step(s) failed: " + ", ".join(r.label for r in failed))
        except UserError as err:
            if self.status == "running":  # a disk error from flush() between steps
                self.status = "failed"
                self.error = str(err)
            raise

    def _step_ended(
        self, record: StepRecord, verdict: str, reason: str, *, run_error: str | None = None
    ) -> None:
        """A step an exception ended: its *verdict* and *reason*; with *run_error*, the run's status (the
        same verdict) and error too."""
        record.verdict = verdict
        record.reasons.append(reason)
        record.ended_at = time.time()
        if run_error is not None:
            self.status = verdict
            self.error = run_error

    def _run_step(self, step: Step, private: Path) -> StepRecord:
        """Run one step, record it and save the folder; RunFailed when it failed (unless keep_going)."""
        keys = step_keys(self.run_dir.run_id, step, self.suite)
        record = StepRecord(keys=keys, index=step.index, reason=step.reason)
        self.records.append(record)
        record.started_at = time.time()
        self.progress("step-start", {"step": step})
        try:
            if step.kind == "audit":
                self._audit_step(step, record)
            else:
                self._ycsb_step(step, record, private)
        except KeyboardInterrupt as exc:
            reason = f"interrupted by {signal_name(exc)}"
            self._step_ended(record, "interrupted", reason, run_error=reason)
            raise
        except UserError as err:
            self._step_ended(record, "failed", str(err), run_error=f"{step.label}: {err}")
            raise
        except OSError as err:
            self._step_ended(record, "failed", str(_disk_error(self.run_dir.step_path(step.label), err)))
            raise
        record.ended_at = time.time()
        self.progress("step-end", {"step": step, "record": record})
        self.flush()
        if record.verdict not in ("completed", "pending") and not self.keep_going:
            self.status = "failed"
            self.error = f"{step.label}: {'; '.join(record.reasons)}"
            raise RunFailed(
                f"step {step.label} failed: {'; '.join(record.reasons)} "
                f"(logs in {self.run_dir.step_path(step.label)})"
            )
        return record

    def _audit_step(self, step: Step, record: StepRecord) -> None:
        strategy = self.hooks.audit
        if strategy is None:
            raise UserError("this suite switches audit logging: pass --audit-strategy NAME")
        assert step.mix is not None
        ops = set(step.mix.audit_ops)
        strategy.upsert = binding_upserts(step, self.suite)  # upserted inserts are audited as updates
        if step.audit == "on":
            strategy.enable(ops)
        else:
            strategy.disable()
        state = strategy.verify(step.audit == "on", ops)
        record.audit_verified = "on" if state.enabled else "off"
        record.audit_detail = state.detail
        if state.nodes:  # what every node of the deployment reported
            record.audit_nodes = [dict(n) for n in state.nodes]
        record.verdict = "completed"

    @property
    def multi_client(self) -> bool:
        return bool(self.clients) and [c.name for c in self.clients] != ["local"]

    def _ycsb_step(self, step: Step, record: StepRecord, private: Path) -> None:
        if self.multi_client:  # several load generators, or a remote one: split, run together, merge
            return run_multi_client_step(self.context, step, record, private)
        out_dir = self.run_dir.step_dir(step.label)
        warmup = self.suite.effective_warmup_s if step.kind == "run" else 0.0
        suite = self.suite
        if step.kind == "run" and suite.measurement.type.startswith("hdrhistogram"):  # steady state: logs
            suite = dataclasses.replace(
                suite, measurement=dataclasses.replace(suite.measurement, hdr_fileoutput=True)
            )
        hdr_dir = self.run_dir.hdr_dir(step.label) if suite.measurement.hdr_fileoutput else None
        if hdr_dir:
            hdr_dir.mkdir(exist_ok=True)
        conn_file = private / "connection.properties"
        workload_file = out_dir / WORKLOAD_PROPERTIES
        rendered = render_step(
            step,
            suite,
            url=self.url,
            java=self.java.path,
            classpath=self.install.classpath,
            binding_class=self.install.binding_class,
            workload_file=workload_file,
            connection_file=conn_file,
            jvm_args=[*jvm_flags(self.class_archive), *self.jvm_args],
            hdr_dir=hdr_dir,
            env=self.env,
        )
        record.argv = rendered.masked_argv()
        record.ycsb_cli = rendered.ycsb_cli
        record.properties = rendered.properties
        workload_file.write_text(rendered.workload_properties)
        conn_file.touch(mode=0o600)
        conn_file.write_text(rendered.connection_properties)
        (out_dir / COMMAND).write_text(
            " ".join(record.argv) + "\n\n# as a release-tarball command:\n" + rendered.ycsb_cli + "\n"
        )
        if step.kind == "load":
            self.context.drop_collection()

        monitor = self.context.monitor_for(step)
        last: dict[str, Any] = {}

        def on_line(line: str) -> None:
            if (settings := parse_settings_line(line)) is not None:
                record.driver_settings = settings
            if (status := status_line(line)) is not None:
                last.update(sec=status.sec, ops=status.ops, cur=status.cur)
                self.progress("status", {"step": step, **last})

        def on_start(pid: int) -> None:
            if monitor is not None:
                monitor.start(pid)

        result: PhaseResult | None = None
        try:
            result = run_phase(
                rendered.argv,
                out_dir=out_dir,
                private_dir=private,
                timeout_s=rendered.timeout_s,
                on_stderr_line=on_line,
                on_start=on_start,
            )
        finally:
            conn_file.unlink(missing_ok=True)
            if monitor is not None:
                monitor.stop()
                store_monitor(record, monitor, self.frames)
        record.exit_code = result.exit_code
        expected = self.suite.dataset.recordcount if step.kind == "load" else None
        try:
            parsed = parse_output(
                result.stdout_path.read_bytes(),
                result.stderr_path.read_bytes(),
                exit_code=result.exit_code,
                expected_ops=expected,
                max_error_rate=self.max_error_rate,
            )
        except ParseError as err:  # YCSB printed nothing a parser can use (e.g. the JVM did not start)
            record.verdict = "failed"
            record.reasons = [f"{err}; exit code {result.exit_code}; see {result.stderr_path}"]
            return
        record.verdict = parsed.verdict.status
        record.reasons = list(parsed.verdict.reasons)
        if result.timed_out:
            record.verdict = "failed"
            record.reasons.insert(0, f"killed after the hard timeout of {rendered.timeout_s:.0f}s")
        record.throughput_ops_s = parsed.overall.get("throughput")
        record.runtime_ms = parsed.overall.get("runtime_ms")
        if step.kind == "load":
            self.context.check_documents(record)
        if step.kind == "warmup":
            record.discarded = True
            return
        self._add_frame("summary", record, parsed.summary)
        self._add_frame("timeseries", record, status_times(parsed.status))
        operations = parsed.operations
        if hdr_dir is not None and step.kind == "run":
            operations = self._steady_state(record, parsed.operations, hdr_dir, warmup)
        elif warmup > 0:
            record.warnings.append(
                f"warmup_s = {warmup:g} not applied: it needs measurement.type hdrhistogram (interval logs)"
            )
        self._add_frame("operations", record, operations)
        if monitor is not None and self.suite.run.target and record.throughput_ops_s:
            if record.throughput_ops_s < 0.8 * self.suite.run.target:
                record.warnings.append(
                    f"achieved {record.throughput_ops_s:.0f} ops/s, below 80% of the target "
                    f"{self.suite.run.target}: the client or the server is saturated"
                )

    def _steady_state(
        self, record: StepRecord, operations: pd.DataFrame, hdr_dir: Path, warmup: float
    ) -> pd.DataFrame:
        """A single client's steady state from its HDR interval logs (``ycsb_runner.analyse.steady``): the
        warm-up cut (a fixed *warmup* wins over the rule), the stationarity of the rest, and the
        ``steady_*`` columns beside YCSB's whole-run figures. With a fixed *warmup* the step's headline
        figures are those after it, as before; with the rule alone they stay YCSB's."""
        from ycsb_runner.analyse.steady import steady_state
        from ycsb_runner.parse.merge import read_client_logs, union_window, with_steady

        problems: list[str] = []
        logs = read_client_logs({record.keys.client: hdr_dir}, problems)
        record.warnings.extend(problems)
        steady = steady_state(logs, warmup)
        if warmup > 0:
            operations = self._after_warmup(record, operations, steady.kept, warmup)
        record.figures.update(steady.figures())
        window = union_window(steady.kept)
        if window is not None and window.throughput is not None:
            record.figures.update(window.steady_figures())
        record.warnings.extend(steady.warnings())
        return with_steady(operations, steady.kept, list(self.suite.measurement.percentiles))

    def _after_warmup(self, record: StepRecord, operations: pd.DataFrame, logs: Any, warmup: float) -> Any:
        """A single client's run without its first *warmup* seconds (*logs*: its HDR interval logs after
        the cut): the throughput over the rest and the percentiles of its intervals (YCSB's own figures
        stay in summary.csv and in ``figures.throughput_ycsb_ops_s``)."""
        from ycsb_runner.parse.merge import (
            client_histograms,
            merge_operations,
            merged_latencies,
            union_window,
        )

        window = union_window(logs)
        record.figures.update(warmup_s=warmup, throughput_ycsb_ops_s=record.throughput_ops_s)
        if window is None or window.throughput is None:
            record.warnings.append(
                f"warmup_s = {warmup:g} is not shorter than the run: nothing is left after the warm-up, "
                "YCSB's whole-run figures are kept"
            )
            return operations
        record.throughput_ops_s = window.throughput
        record.figures.update(
            measured_window_start=window.start_s,
            measured_window_s=window.length_s,
            measured_window_operations=window.ops,
        )
        percentiles = list(self.suite.measurement.percentiles)
        latencies = merged_latencies(client_histograms(logs), percentiles)
        return merge_operations({record.keys.client: operations}, latencies, percentiles)


def binding_upserts(step: Step, suite: Any) -> bool:
    """Whether the binding writes inserts as upserts (``mongodb.upsert``) for this step's mix."""
    from ycsb_runner.render import step_properties

    return step_properties(step, suite).get("mongodb.upsert", "false").strip().lower() == "true"
