"""Drive a plan: check the server, load, switch audit, run, sample, parse, store; results after every step.

The runner is the only place that ties the pieces together. Everything measured so far is on disk after
each step (manifest, CSVs, raw logs), so a failure, Ctrl-C or SIGTERM in step 7 keeps steps 1-6.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import psutil
from pymongo import MongoClient
from pymongo.errors import ConfigurationError, OperationFailure, PyMongoError

from ycsb_runner import __version__
from ycsb_runner.errors import RunFailed, UserError, signal_name
from ycsb_runner.execute.phase import PhaseResult, run_phase
from ycsb_runner.install import JavaInfo, YcsbInstall
from ycsb_runner.lifetime import PRIVATE_PREFIX, clear_stale_private
from ycsb_runner.parse import ParseError, parse_output
from ycsb_runner.plan import Plan, Step
from ycsb_runner.render import database_name, environment, render_step
from ycsb_runner.secrets import Masker
from ycsb_runner.store import RunDir, _disk_error

STATUS_RE = re.compile(r"(\d+) sec: (\d+) operations;(?: ([\d.,]+) current ops/sec;)?")


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


@dataclass
class StepRecord:
    step: Step
    started_at: float = 0.0
    ended_at: float = 0.0
    exit_code: int | None = None
    verdict: str = "pending"
    reasons: list[str] = field(default_factory=list)
    argv: list[str] = field(default_factory=list)
    ycsb_cli: str = ""
    properties: dict[str, str] = field(default_factory=dict)
    audit_verified: str | None = None
    throughput: float | None = None
    runtime_ms: float | None = None
    documents: int | None = None
    warnings: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        s = self.step
        return {
            "index": s.index,
            "label": s.label,
            "kind": s.kind,
            "mix": s.mix.name if s.mix else None,
            "threads": s.threads,
            "audit": s.audit,
            "audit_verified": self.audit_verified,
            "repetition": s.repetition,
            "reason": s.reason,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "exit_code": self.exit_code,
            "verdict": self.verdict,
            "reasons": self.reasons,
            "warnings": self.warnings,
            "argv": self.argv,
            "ycsb_cli": self.ycsb_cli,
            "properties": self.properties,
            "throughput_ops_s": self.throughput,
            "runtime_ms": self.runtime_ms,
            "documents": self.documents,
            **self.extra,
        }


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
        run_dir: RunDir,
        target: dict[str, Any],
        hooks: Hooks | None = None,
        templates: Path | None = None,
        jvm_args: list[str] | None = None,
        max_error_rate: float = 0.01,
        keep_going: bool = False,
        progress: Callable[[str, dict], None] | None = None,
    ) -> None:
        self.plan = plan
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
        self.max_error_rate = max_error_rate
        self.keep_going = keep_going
        self.progress = progress or (lambda event, data: None)
        self.masker = Masker()
        self.records: list[StepRecord] = []
        self.frames: dict[str, list[pd.DataFrame]] = {
            "summary": [],
            "timeseries": [],
            "operations": [],
            "server_metrics": [],
            "client_metrics": [],
        }
        self.status = "running"
        self.started_at = time.time()
        self.error: str | None = None

    # --- manifest and CSVs ---------------------------------------------------------------------------------

    def manifest(self) -> dict[str, Any]:
        s = self.suite
        return {
            "tool": {"name": "ycsb-runner", "version": __version__, "pid": os.getpid()},
            "run_id": self.run_dir.run_id,
            "status": self.status,
            "error": self.error,
            "started_at": self.started_at,
            "ended_at": time.time(),
            "suite": {
                "name": s.name,
                "description": s.description,
                "source": s.source,
                "path": s.path,
                "tags": s.tags,
                "notes": list(s.notes),
                "scaling": s.describe_scaling(),
                "repetitions": s.repetitions,
                "order": s.order,
                "warmup_runs": s.warmup_runs,
                "audit_states": list(s.audit.states),
                "mixes": [m.name for m in s.mixes],
                "threads": list(s.run.threads),
                "recordcount": s.dataset.recordcount,
                "templates": str(self.templates) if self.templates else "built-in",
            },
            "target": {**self.target, "url": self.masker(self.url)},
            "ycsb": {
                "core": self.install.core_jar,
                "binding_class": self.install.binding_class,
                "binding_jar": self.install.binding_jar,
                "driver_jar": self.install.driver_jar,
                "driver_version": self.install.driver_version,
                "source": self.install.source,
                "home": self.install.home,
                "tarball_sha256": self.install.tarball_sha256,
            },
            "java": {
                "path": self.java.path,
                "version": self.java.version,
                "description": self.java.description,
                "jvm_args": self.jvm_args,
            },
            "host": host_facts(),
            "audit_strategy": getattr(self.hooks.audit, "name", None),
            "plan_estimate_s": self.plan.est_seconds,
            "steps": [r.as_dict() for r in self.records],
        }

    def flush(self) -> None:
        rd = self.run_dir
        rd.write_manifest(self.manifest())
        steps = pd.DataFrame(
            [
                {k: v for k, v in r.as_dict().items() if k not in ("argv", "properties", "ycsb_cli")}
                for r in self.records
            ]
        )
        if not steps.empty:
            steps["reasons"] = steps["reasons"].map("; ".join)
            steps["warnings"] = steps["warnings"].map("; ".join)
        rd.write_csv("steps.csv", steps)
        for name, frames in self.frames.items():
            if frames or name in ("summary", "timeseries"):
                df = (
                    pd.concat(frames, ignore_index=True)
                    if frames
                    else pd.DataFrame(
                        columns=["run_id", "step", "kind", "mix", "threads", "audit", "repetition"]
                    )
                )
                rd.write_csv(f"{name}.csv", df)

    def _keys(self, step: Step) -> dict[str, Any]:
        return {
            "run_id": self.run_dir.run_id,
            "step": step.label,
            "phase": step.kind,
            "mix": step.mix.name if step.mix else "load",
            "threads": step.threads,
            "audit": step.audit or "none",
            "repetition": step.repetition or 0,
        }

    def _add_frame(self, name: str, step: Step, df: pd.DataFrame | None) -> None:
        if df is None or df.empty:
            return
        keys = self._keys(step)
        df = df.copy()
        for i, (k, v) in enumerate(keys.items()):
            df.insert(i, k, v)
        self.frames[name].append(df)

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
            disk = _disk_error(Path(err.filename) if err.filename else self.run_dir.root, err)
            self.status, self.error = "failed", str(disk)
            problem = self._close(private)
            raise UserError(f"{disk}{problem}") from None
        except BaseException as exc:
            problem = self._close(private)
            if problem and isinstance(exc, UserError):
                raise type(exc)(f"{exc}{problem}", exit_code=exc.exit_code) from None
            raise
        problem = self._close(private)
        if problem:
            raise UserError(f"the run finished, but saving its results failed{problem}")

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
        if self.run_dir.write_status(self.status, self.error):
            return f" (manifest.json says {self.status}; CSVs may be incomplete)"
        if not (self.run_dir.root / "manifest.json").exists():
            return " (manifest.json could not be written)"
        return " (manifest.json could not be updated: it still says running)"

    def _run_steps(self, private: Path) -> None:
        self.flush()
        try:
            for step in self.plan.steps:
                record = StepRecord(step=step)
                self.records.append(record)
                record.started_at = time.time()
                self.progress("step-start", {"step": step})
                try:
                    if step.kind == "audit":
                        self._audit_step(step, record)
                    else:
                        self._ycsb_step(step, record, private)
                except KeyboardInterrupt as exc:
                    record.verdict = "interrupted"
                    record.reasons.append(f"interrupted by {signal_name(exc)}")
                    record.ended_at = time.time()
                    self.status = "interrupted"
                    self.error = f"interrupted by {signal_name(exc)}"
                    raise
                except UserError as err:
                    record.verdict = "failed"
                    record.reasons.append(str(err))
                    record.ended_at = time.time()
                    self.status = "failed"
                    self.error = f"{step.label}: {err}"
                    raise
                except OSError as err:
                    record.verdict = "failed"
                    record.reasons.append(str(_disk_error(self.run_dir.root / "steps" / step.label, err)))
                    record.ended_at = time.time()
                    raise
                record.ended_at = time.time()
                self.progress("step-end", {"step": step, "record": record})
                self.flush()
                if record.verdict not in ("completed", "pending") and not self.keep_going:
                    self.status = "failed"
                    self.error = f"{step.label}: {'; '.join(record.reasons)}"
                    raise RunFailed(
                        f"step {step.label} failed: {'; '.join(record.reasons)} "
                        f"(logs in {self.run_dir.root / 'steps' / step.label})"
                    )
            failed = [r for r in self.records if r.verdict not in ("completed", "pending")]
            self.status = "failed" if failed else "completed"
            if failed:
                self.error = f"{len(failed)} step(s) failed"
                raise RunFailed(f"{len(failed)} step(s) failed: " + ", ".join(r.step.label for r in failed))
        except UserError as err:
            if self.status == "running":  # a disk error from flush() between steps
                self.status = "failed"
                self.error = str(err)
            raise

    def _audit_step(self, step: Step, record: StepRecord) -> None:
        strategy = self.hooks.audit
        if strategy is None:
            raise UserError("this suite switches audit logging: pass --audit-strategy NAME")
        assert step.mix is not None
        ops = set(step.mix.audit_ops)
        if step.audit == "on":
            strategy.enable(ops)
        else:
            strategy.disable()
        state = strategy.verify(step.audit == "on", ops)
        record.audit_verified = "on" if state.enabled else "off"
        record.extra["audit_detail"] = state.detail
        record.verdict = "completed"

    def _drop_collection(self) -> None:
        db = database_name(self.url)
        with MongoClient(self.url, serverSelectionTimeoutMS=10000) as client:
            client[db].drop_collection(self.suite.mongodb.table)

    def _count_documents(self) -> int | None:
        try:
            db = database_name(self.url)
            with MongoClient(self.url, serverSelectionTimeoutMS=10000) as client:
                return int(client[db][self.suite.mongodb.table].count_documents({}))
        except PyMongoError:
            return None

    def _ycsb_step(self, step: Step, record: StepRecord, private: Path) -> None:
        out_dir = self.run_dir.step_dir(step.label)
        hdr_dir = out_dir / "hdr" if self.suite.measurement.hdr_fileoutput else None
        if hdr_dir:
            hdr_dir.mkdir(exist_ok=True)
        conn_file = private / "connection.properties"
        workload_file = out_dir / "workload.properties"
        rendered = render_step(
            step,
            self.suite,
            url=self.url,
            java=self.java.path,
            classpath=self.install.classpath,
            binding_class=self.install.binding_class,
            workload_file=workload_file,
            connection_file=conn_file,
            jvm_args=self.jvm_args,
            hdr_dir=hdr_dir,
            env=self.env,
        )
        record.argv = rendered.masked_argv()
        record.ycsb_cli = rendered.ycsb_cli
        record.properties = rendered.properties
        workload_file.write_text(rendered.workload_properties)
        conn_file.touch(mode=0o600)
        conn_file.write_text(rendered.connection_properties)
        (out_dir / "command.txt").write_text(
            " ".join(record.argv) + "\n\n# as a release-tarball command:\n" + rendered.ycsb_cli + "\n"
        )
        if step.kind == "load":
            self._drop_collection()

        monitor = (
            self.hooks.monitors(step, self.url) if (self.hooks.monitors and step.kind == "run") else None
        )
        last: dict[str, Any] = {}

        def on_line(line: str) -> None:
            m = STATUS_RE.search(line)
            if m:
                last.update(
                    sec=int(m.group(1)), ops=int(m.group(2)), cur=float((m.group(3) or "0").replace(",", ""))
                )
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
                self._store_monitor(step, record, monitor)
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
            record.reasons = [f"{err}; exit code {result.exit_code}; see {out_dir / 'stderr.txt'}"]
            return
        record.verdict = parsed.verdict.status
        record.reasons = list(parsed.verdict.reasons)
        if result.timed_out:
            record.verdict = "failed"
            record.reasons.insert(0, f"killed after the hard timeout of {rendered.timeout_s:.0f}s")
        record.throughput = parsed.overall.get("throughput")
        record.runtime_ms = parsed.overall.get("runtime_ms")
        if step.kind == "load":
            record.documents = self._count_documents()
            if record.documents is not None and record.documents != self.suite.dataset.recordcount:
                record.warnings.append(
                    f"the collection holds {record.documents} documents after loading "
                    f"{self.suite.dataset.recordcount}"
                )
        if step.kind == "warmup":
            record.extra["discarded"] = True
            return
        self._add_frame("summary", step, parsed.summary)
        self._add_frame("timeseries", step, parsed.status)
        self._add_frame("operations", step, parsed.operations)
        if monitor is not None and self.suite.run.target and record.throughput:
            if record.throughput < 0.8 * self.suite.run.target:
                record.warnings.append(
                    f"achieved {record.throughput:.0f} ops/s, below 80% of the target "
                    f"{self.suite.run.target}: the client or the server is saturated"
                )

    def _store_monitor(self, step: Step, record: StepRecord, monitor: Any) -> None:
        try:
            res = monitor.results()
        except Exception as err:  # noqa: BLE001 - a sampler problem must not lose the run
            record.warnings.append(f"metric sampling failed: {err}")
            return
        record.extra.update(res.get("figures", {}))
        record.warnings.extend(res.get("warnings", []))
        self._add_frame("server_metrics", step, res.get("server_series"))
        self._add_frame("client_metrics", step, res.get("client_series"))
