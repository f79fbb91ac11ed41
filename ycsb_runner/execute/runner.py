"""Drive a plan: check the server, load, switch audit, run, sample, parse, store; results after every step.

The runner is the only place that ties the pieces together. Everything measured so far is on disk after
each step (manifest, CSVs, raw logs), so a failure, Ctrl-C or SIGTERM in step 7 keeps steps 1-6.
"""

from __future__ import annotations

import errno
import os
import platform
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from pymongo import MongoClient
from pymongo.errors import ConfigurationError, OperationFailure, PyMongoError

from ycsb_runner._version import __version__
from ycsb_runner.audit import unverified_audit
from ycsb_runner.errors import RunFailed, UserError, signal_name
from ycsb_runner.execute.common import Frames, StepContext
from ycsb_runner.execute.driver_settings import common_settings
from ycsb_runner.execute.local import run_local_step
from ycsb_runner.execute.multi import run_multi_client_step
from ycsb_runner.execute.phase import private_full
from ycsb_runner.install import JavaInfo, YcsbInstall
from ycsb_runner.install.cds import usable_archive
from ycsb_runner.prepare.commandline import CORE_WORKLOAD, environment
from ycsb_runner.prepare.plan import Plan, Step
from ycsb_runner.runs.model import (
    LOAD_MIX,
    MANIFEST,
    NO_AUDIT,
    CanariesRecord,
    DriverSettingsRecord,
    HostRecord,
    JavaRecord,
    Manifest,
    RunResult,
    StepKeys,
    StepRecord,
    SuiteInfo,
    TargetRecord,
    ToolRecord,
    YcsbRecord,
)
from ycsb_runner.safe.files import disk_error
from ycsb_runner.safe.lifetime import PRIVATE_PREFIX, clear_stale_private
from ycsb_runner.safe.secrets import Masker


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
    """Optional collaborators: audit switching, metric sampling and progress events (None = not used)."""

    audit: Any = None  # an ycsb_runner.audit strategy
    monitors: Any = None  # factory: (step, url) -> monitor with start(pid)/stop()/results()
    progress: Callable[[str, dict], None] | None = None  # (event, data): step-start, step-end
    canaries: Any = None  # execute.canary.Canaries: measured before the first step and after the last


@dataclass(frozen=True)
class Target:
    """The server a run measures: its URL (with the credentials; masked in the manifest) and what is known
    of it (the manifest's ``target`` section: embedded, server kind and version, buildInfo)."""

    url: str
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Tools:
    """What runs the steps: YCSB, the Java that runs it and the load generators
    (``ycsb_runner.execute.clients.Client``; none, or ``local`` alone: this machine, as ever)."""

    install: YcsbInstall
    java: JavaInfo
    clients: tuple[Any, ...] = ()


@dataclass(frozen=True)
class RunnerSettings:
    """How the steps run: the bench options of the same names (``ycsb_runner.bench.BenchOptions``)."""

    templates: Path | None = None
    jvm_args: tuple[str, ...] = ()
    max_error_rate: float = 0.01
    keep_going: bool = False  # go on with the next step after a failed one


class Runner:
    def __init__(
        self,
        plan: Plan,
        *,
        result: RunResult,
        target: Target,
        tools: Tools,
        settings: RunnerSettings | None = None,
        hooks: Hooks | None = None,
    ) -> None:
        settings = settings or RunnerSettings()
        self.plan = plan
        self.clients = list(tools.clients)
        self.suite = plan.suite
        self.url = target.url
        self.install = tools.install
        self.java = tools.java
        self.result = result
        self.target = target.facts
        self.hooks = hooks or Hooks()
        self.env = environment(settings.templates)
        self.templates = settings.templates
        self.jvm_args = list(settings.jvm_args)
        # local YCSB JVMs start from set-up's class-data archive when there is one (ycsb_runner.install.cds)
        self.class_archive = usable_archive(self.java, self.install)
        self.max_error_rate = settings.max_error_rate
        self.keep_going = settings.keep_going
        self.progress = self.hooks.progress or (lambda event, data: None)
        self.masker = Masker()
        self.records: list[StepRecord] = []
        self.frames = Frames()
        self.status = "running"
        self.started_at = time.time()
        self.host = host_facts()
        result.manifest.suite = self.suite_info(self.suite, self.templates)
        self.error: str | None = None
        # what the step executors (execute.local and execute.multi) read: one context for the whole run
        self.context = StepContext(
            suite=self.suite,
            url=self.url,
            java=self.java,
            install=self.install,
            result=result,
            env=self.env,
            masker=self.masker,
            frames=self.frames,
            jvm_args=self.jvm_args,
            max_error_rate=self.max_error_rate,
            progress=self.progress,
            monitors=self.hooks.monitors,
            clients=self.clients,
            class_archive=self.class_archive,
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
        m = self.result.manifest
        m.tool = ToolRecord(name="ycsb-runner", version=__version__, pid=os.getpid())
        m.status, m.error = self.status, self.error
        m.started_at, m.ended_at = self.started_at, time.time()
        m.target = TargetRecord.from_json({**self.target, "url": self.masker(self.url)})
        m.ycsb = YcsbRecord(
            core=self.install.core_jar,
            binding_class=self.install.binding_class,
            binding_jar=self.install.binding_jar,
            driver_jar=self.install.driver_jar,
            driver_version=self.install.driver_version,
            source=self.install.source,
            home=self.install.home,
            tarball_sha256=self.install.tarball_sha256,
        )
        m.java = JavaRecord(
            path=self.java.path,
            version=self.java.version,
            description=self.java.description,
            jvm_args=list(self.jvm_args),
            class_data_archive=str(self.class_archive) if self.class_archive else None,
        )
        m.host = HostRecord.from_json(self.host)
        m.audit_strategy = getattr(self.hooks.audit, "name", None)
        m.audit_unverified = unverified_audit(m.audit_strategy) or None
        m.audit_baseline = getattr(self.hooks.audit, "baseline", None) or None
        m.plan_estimate_s = self.plan.est_seconds
        shared = common_settings([r.driver_settings for r in self.records if r.driver_settings])
        m.driver_settings = DriverSettingsRecord.from_json(shared) if shared is not None else None
        m.steps = self.records
        if self.hooks.canaries is not None:
            m.canaries = CanariesRecord.from_json(self.hooks.canaries.figures())
        return m

    def flush(self) -> None:
        self._fill_manifest()
        self.result.save(self.frames.tables())

    # --- steps ----------------------------------------------------------------------------------------------

    def run(self) -> None:
        """Execute every step; raises RunFailed/UserError/KeyboardInterrupt after saving what it has.

        The private folder (it holds the connection URL) is removed on every way out, a full disk included."""
        clear_stale_private()
        private = Path(tempfile.mkdtemp(prefix=f"{PRIVATE_PREFIX}{os.getpid()}-"))
        try:
            private.chmod(0o700)
            if self.hooks.canaries is not None:  # the first canaries, before any step (the manifest first)
                self.flush()
                self.hooks.canaries.before()
            self._run_steps(private)
            if self.hooks.canaries is not None and self.status == "completed":
                self.hooks.canaries.after()
        except OSError as err:  # a write failed (disk full, folder removed...)
            # a write without a file name may have gone to the private folder (TMPDIR): name it when it is
            # the full one (a fresh clone's fault test: "disk full while writing <run folder>" instead)
            unnamed_full = private_full(private) if err.errno == errno.ENOSPC and not err.filename else None
            disk = unnamed_full or disk_error(Path(err.filename) if err.filename else self.result.root, err)
            self.status, self.error = "failed", str(disk)
            problem = self._close(private)
            raise UserError(f"{disk}{problem}") from None
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt) and self.status == "running":  # between or after steps
                self.status = "completed" if self.all_steps_completed() else "interrupted"
                if self.status == "interrupted":
                    self.error = f"interrupted by {signal_name(exc)}"
            problem = self._close_surely(private)
            if problem and isinstance(exc, UserError):
                raise type(exc)(f"{exc}{problem}", exit_code=exc.exit_code) from None
            raise
        problem = self._close_surely(private)
        if problem:
            raise UserError(f"the run finished, but saving its results failed{problem}")

    def all_steps_completed(self) -> bool:
        """Every step of the plan ran and completed (a signal after the last one loses nothing)."""
        return len(self.records) == len(self.plan.steps) and all(
            r.status == "completed" for r in self.records
        )

    def _close_surely(self, private: Path) -> str:
        """``_close``, done again when a signal (Ctrl-C, SIGTERM, SIGHUP) cut it short: the run folder then
        says how the run ended, not "running" (``bench`` ignores the signals after the first)."""
        try:
            return self._close(private)
        except KeyboardInterrupt:
            self._close(private)
            raise

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
        if self.result.save_status(self.status, self.error):
            return f" ({MANIFEST} says {self.status}; CSVs may be incomplete)"
        if not self.result.manifest_path.exists():
            return f" ({MANIFEST} could not be written)"
        return f" ({MANIFEST} could not be updated: it still says running)"

    def _run_steps(self, private: Path) -> None:
        self.flush()
        try:
            for step in self.plan.steps:
                self._run_step(step, private)
            failed = [r for r in self.records if r.status not in ("completed", "pending")]
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
        self, record: StepRecord, status: str, reason: str, *, run_error: str | None = None
    ) -> None:
        """A step an exception ended: its *status* and *reason*; with *run_error*, the run's status (the
        same) and error too."""
        record.status = status
        record.reasons.append(reason)
        record.ended_at = time.time()
        if run_error is not None:
            self.status = status
            self.error = run_error

    def _run_step(self, step: Step, private: Path) -> StepRecord:
        """Run one step, record it and save the folder; RunFailed when it failed (unless keep_going)."""
        keys = step_keys(self.result.run_id, step, self.suite)
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
            self._step_ended(record, "failed", str(disk_error(self.result.step_path(step.label), err)))
            raise
        record.ended_at = time.time()
        self.progress("step-end", {"step": step, "record": record})
        self.flush()
        if record.status not in ("completed", "pending") and not self.keep_going:
            self.status = "failed"
            self.error = f"{step.label}: {'; '.join(record.reasons)}"
            raise RunFailed(
                f"step {step.label} failed: {'; '.join(record.reasons)} "
                f"(logs in {self.result.step_path(step.label)})"
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
        record.status = "completed"

    @property
    def multi_client(self) -> bool:
        return bool(self.clients) and [c.name for c in self.clients] != ["local"]

    def _ycsb_step(self, step: Step, record: StepRecord, private: Path) -> None:
        # several load generators, or a remote one: split, run together, merge; else YCSB here
        execute = run_multi_client_step if self.multi_client else run_local_step
        execute(self.context, step, record, private)


def binding_upserts(step: Step, suite: Any) -> bool:
    """Whether the binding writes inserts as upserts (``mongodb.upsert``) for this step's mix."""
    from ycsb_runner.prepare.commandline import step_properties

    return step_properties(step, suite).get("mongodb.upsert", "false").strip().lower() == "true"
