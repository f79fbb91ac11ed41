"""The bench orchestrator behind ``ycsb-runner bench`` and ``ycsb-runner findmax``.

The options are checked once, in :func:`check_bench`, which then takes the front of the flow in order: the
suite and its audit strategy, a findmax search's shape, the plan (with what earlier runs measured), the
pre-flight's findings and the notice of the programs the run executes. :func:`run_bench` takes that check
and goes on down: the tools (YCSB, Java, the load generators), the target (server, lock, connection), the
run folder, the runner (audit, monitors, canaries) and its steps, then the folder read back once for the
history, the study table and the report (:func:`finish_run_folder`).

Usable without the CLI::

    from ycsb_runner.bench import BenchOptions, run_bench
    outcome = run_bench(BenchOptions(suite="quick", url=None))   # None: the embedded server
    print(outcome.run_dir)
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import signal
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ycsb_runner import config
from ycsb_runner.errors import (
    Interrupted,
    RunFailed,
    RunInterrupted,
    UserError,
    interrupted_exit_code,
    signal_name,
)
from ycsb_runner.paths import check_name, point_latest, results_dir
from ycsb_runner.prepare.plan import Plan, build_plan
from ycsb_runner.prepare.suite import Suite, load_suite
from ycsb_runner.safe.secrets import Masker, check_url, check_url_files

if TYPE_CHECKING:  # pandas, pymongo and psutil load only when a bench runs: render and --help need none
    from ycsb_runner.analyse.analysis import RunAnalysis
    from ycsb_runner.install.embedded import ServerInfo
    from ycsb_runner.runs.model import RunResult


@dataclass
class BenchOptions:
    suite: str
    url: str | None = None  # None: start the embedded server
    overrides: list[str] = field(default_factory=list)
    scale: float | None = None
    templates: Path | None = None
    results: Path | None = None
    audit_strategy: str | None = None
    audit_options: dict[str, Any] = field(default_factory=dict)
    jvm_args: list[str] = field(default_factory=list)
    max_error_rate: float = 0.01
    keep_going: bool = False
    monitors: bool = True
    canaries: bool = True  # measure the canaries (ycsb_runner.execute.canary) before and after the steps
    sample_interval_s: float = 2.0
    report: bool = True  # write report.html / report.md into the run folder
    run_id: str | None = None
    tags: dict[str, str] = field(default_factory=dict)  # recorded in the manifest and the history
    history_url: str | None = None  # None: $YCSB_RUNNER_HISTORY_URL or <results>/history.sqlite
    history: bool = True  # index the run in the history at its end
    lock: bool = True  # refuse to run while another bench holds the target's lock
    clients: list[str] = field(default_factory=list)  # load generators (--client); empty: the suite's
    # ``findmax``: load once, then probe -target rates for the highest that meets a latency bound
    findmax: Any = None  # ycsb_runner.findmax.FindmaxOptions
    # another YCSB binding class than the installed MongoDB one, recorded in the manifest's ycsb section:
    # ``site.ycsb.BasicDB`` (YCSB's no-op binding, with ``basicdb.verbose = "false"`` in the suite's
    # [properties]) makes YCSB client-bound, for bench/overhead_bench.py; nothing then reaches the server
    binding_class: str | None = None


@dataclass
class BenchOutcome:
    result: RunResult
    runner: Any
    report: Path | None = None  # report.html, when written
    analysis: RunAnalysis | None = None  # of the run folder as written (None: it could not be read back)

    @property
    def run_dir(self) -> Path:
        return self.result.root


def check_options(opts: BenchOptions) -> None:
    """One-line errors for options that cannot be right, before anything starts or is printed (the URL's,
    ``check_url``, last in ``check_bench``)."""
    rate = opts.max_error_rate
    if not (isinstance(rate, int | float) and math.isfinite(rate) and 0 <= rate <= 1):
        raise UserError(
            f"--max-error-rate {rate}: must be a number from 0 to 1 (a fraction of operations, e.g. 0.01)"
        )
    if opts.run_id is not None:
        check_name(opts.run_id, "--run-id")


@dataclass
class BenchCheck:
    """What a bench checks before it starts anything, as ``bench``, ``bench --dry-run``, ``render`` and
    ``findmax`` say it: the suite and its plan, the pre-flight *findings* (``ycsb_runner.prepare.preflight``),
    the *notice* of the programs the run will execute (an audit strategy's, from the suite file or the
    options) and, for a findmax search, its options with the mix and the thread count resolved."""

    suite: Suite
    plan: Plan
    findings: list[Any]  # preflight.Finding
    notice: list[str]
    results: Path  # where the run folder goes
    history_url: str | None  # the option over $YCSB_RUNNER_HISTORY_URL; None: <results>/history.sqlite
    findmax: Any = None  # ycsb_runner.findmax.search.FindmaxOptions, resolved; None: a bench

    @property
    def error(self) -> str | None:
        """Why a bench refuses to start (the first error found), or None."""
        return next((f.message for f in self.findings if f.level == "error"), None)

    def tell(self, log: Callable[[str], None]) -> None:
        """Each finding through *log* (but the error that stops, which the UserError carries); UserError
        (exit 2) when a bench would refuse to start."""
        error = next((f for f in self.findings if f.level == "error"), None)
        for f in self.findings:
            if f is not error:
                log(f"{f.level}: {f.message}")
        if error is not None:
            raise UserError(f"stopped before running: {error.message}")

    def told(self, log: Callable[[str], None]) -> BenchCheck:
        """What a bench says before it starts: the findings (``tell``), then the notice; itself."""
        self.tell(log)
        for line in self.notice:
            log(line)
        return self


def check_bench(opts: BenchOptions) -> BenchCheck:
    """The front of every bench, findmax search and dry run, and the one place its options are checked: the
    options, the suite (with ``--audit-strategy``), a findmax search's shape, the plan (timed by what earlier
    runs of the suite against the same target measured), what the suite's settings will measure badly
    (warnings) or cannot measure (errors), the programs it will run, and last how the target's URL is
    written (a bench then checks the files it names: ``_prepare``). A findmax search plans its load alone
    (the probes are chosen as they run) and has no pre-flight. Nothing is printed here."""
    from ycsb_runner.audit import strategy_names
    from ycsb_runner.prepare.estimate import earlier_rates
    from ycsb_runner.prepare.preflight import audit_preflight, preflight

    check_options(opts)
    suite = load_suite(opts.suite, opts.overrides, opts.scale)
    names = strategy_names()
    for given, where in ((opts.audit_strategy, "--audit-strategy"), (suite.audit.strategy, "audit.strategy")):
        if given and given not in names:
            raise UserError(f"{where} {given!r}: unknown audit strategy; use one of {', '.join(names)}")
    if opts.audit_strategy:
        audit = dataclasses.replace(suite.audit, strategy=opts.audit_strategy)
        suite = dataclasses.replace(suite, audit=audit)
    search = None
    if opts.findmax is not None:
        from ycsb_runner.findmax.plan import findmax_plan

        suite, search = findmax_plan(suite, opts.findmax)
    results = opts.results or results_dir()
    history_url = config.current().history(opts.history_url)  # read once, for the estimate and the run
    plan = build_plan(suite, earlier_rates(suite.name, opts.url, results, history_url))
    findings: list[Any] = []
    notice: list[str] = []
    if search is not None:
        plan = Plan(suite=suite, steps=plan.steps[:1])
    else:
        embedded = opts.url is None
        findings = preflight(plan.suite, embedded=embedded)
        audit_findings, notice = audit_preflight(plan.suite, opts.audit_options, embedded=embedded)
        findings += audit_findings
    if opts.url is not None:
        check_url(opts.url)
    return BenchCheck(suite, plan, findings, notice, results, history_url, findmax=search)


def dry_run(opts: BenchOptions, *, show_properties: bool = False) -> tuple[str, BenchCheck]:
    """``bench --dry-run`` and ``render``: the plan as text (every step and the exact command it runs,
    password masked; the notice first, as comments), and the pre-flight (``BenchCheck.tell`` says it).
    Needs no server; YCSB's paths are placeholders until ``setup`` installed it."""
    from ycsb_runner.install import locate_ycsb
    from ycsb_runner.install.ycsb import OWN_BINDING_CLASS
    from ycsb_runner.prepare.commandline import describe_plan, environment

    check = check_bench(opts)
    try:
        inst = locate_ycsb()
        classpath, binding = inst.classpath, inst.binding_class
    except UserError:
        classpath, binding = ["<YCSB>/lib/*"], OWN_BINDING_CLASS
    text = "".join(f"# {line}\n" for line in check.notice) + describe_plan(
        check.plan,
        url=opts.url or "mongodb://127.0.0.1:27017/ycsb",
        classpath=classpath,
        binding_class=binding,
        env=environment(opts.templates),
        show_properties=show_properties,
    )
    return text, check


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def signals_as_interrupt() -> Iterator[None]:
    """Ctrl-C, SIGTERM (systemd, CI timeouts, kill) and SIGHUP (a lost terminal or SSH session) take the same
    clean path: the first raises ``Interrupted`` (which remembers the signal); later ones are ignored
    until the clean-up (stop YCSB, restore audit, stop the server, save results) is done."""
    seen: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        if seen:
            return
        seen.append(signum)
        raise Interrupted(signum)

    with _stop_signals_to(handler):
        yield


@contextlib.contextmanager
def _stop_signals_to(handler: Callable[[int, Any], None]) -> Iterator[bool]:
    """*handler* for STOP_SIGNALS during the block, the previous handlers back after it; False (nothing
    installed) in another thread than the main one."""
    previous: dict[int, Any] = {}
    try:
        for sig in STOP_SIGNALS:
            previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread
        for sig, old in previous.items():
            signal.signal(sig, old)
        yield False
        return
    try:
        yield True
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _unlocked(run_id: str) -> None:
    """``--no-lock``: no lock records the run."""


class _ServerHolder:
    """The embedded server as it is now: the restart strategy replaces it (new pid)."""

    def __init__(self, info: ServerInfo | None) -> None:
        self.info = info


@dataclass
class _Prepared:
    """What a bench checks and finds before it starts a server: the pre-flight (the suite, its plan, a
    findmax search's options), YCSB, Java and the load generators."""

    check: BenchCheck
    install: Any  # ycsb_runner.install.ycsb.YcsbInstall
    java: Any  # ycsb_runner.install.java.JavaInfo
    clients: list[Any]

    @property
    def suite(self) -> Suite:
        return self.check.plan.suite

    @property
    def plan(self) -> Plan:
        return self.check.plan


def _prepare(opts: BenchOptions, checked: BenchCheck | None, log: Callable[[str], None]) -> _Prepared:
    """The pre-flight (``check_bench``, told through *log*, unless *checked*), then every check that needs no
    server, in the order a user fixes them: an audit strategy for a suite that switches audit logging, the
    URL's files, YCSB and Java, then the load generators (an unreachable one fails here, before a server
    starts); runs a killed ycsb-runner left "running" are marked on the way."""
    from ycsb_runner.execute.clients import load_generators
    from ycsb_runner.execute.probe import target_warning
    from ycsb_runner.install import ensure_ycsb, find_java
    from ycsb_runner.runs.model import mark_abandoned

    check = checked if checked is not None else check_bench(opts).told(log)
    suite = check.plan.suite
    if suite.audit.states and not suite.audit.strategy:
        from ycsb_runner.audit import strategy_names

        raise UserError(
            f"suite {suite.name} switches audit logging ({'/'.join(suite.audit.states)}): pass "
            f"--audit-strategy NAME ({', '.join(strategy_names())})"
        )
    if opts.url is not None:
        check_url_files(opts.url)
    for stale in mark_abandoned(check.results, socket.gethostname()):
        log(f"marked {stale} as killed: the ycsb-runner that ran it no longer runs")
    install = ensure_ycsb(log=log)
    if opts.binding_class:
        install = dataclasses.replace(install, binding_class=opts.binding_class)
    java = find_java()
    clients = load_generators(
        opts.clients or list(suite.clients.hosts), suite.clients.ssh_config, java.path, log
    )
    names = [c.name for c in clients] or ["local"]
    if warning := target_warning(suite.run.target, names, max(suite.run.threads)):
        log(f"warning: {warning}")
    return _Prepared(check=check, install=install, java=java, clients=clients)


def _target_facts(server: ServerInfo | None, build: dict[str, Any]) -> dict[str, Any]:
    """What the manifest records of the server a run measures: the embedded one (*server*) or the user's
    (its ``buildInfo``, *build*)."""
    from ycsb_runner.runs.model import server_engine

    kind = server.kind if server else None
    return {
        "embedded": server is not None,
        "server_kind": kind,
        "server_version": server.version if server else build.get("version"),
        "build_info": build,
        "engine": server_engine(kind, build).value,
    }


def run_bench(
    opts: BenchOptions,
    *,
    log: Callable[[str], None] = print,
    progress: Callable[[str, dict], None] | None = None,
    checked: BenchCheck | None = None,
) -> BenchOutcome:
    """``ycsb-runner bench``: *opts*' suite run into a run folder, after the pre-flight (``check_bench``,
    told through *log*) unless *checked*: made and told by the caller (the command, before its bar)."""
    from ycsb_runner.audit import audit_guard, run_strategy
    from ycsb_runner.audit.restore_file import restore_path
    from ycsb_runner.execute.runner import Runner, Target, check_connection
    from ycsb_runner.install.embedded import EmbeddedServer
    from ycsb_runner.prepare.commandline import database_name
    from ycsb_runner.runs.model import RunResult
    from ycsb_runner.safe.lock import check_not_the_target, run_lock

    ready = _prepare(opts, checked, log)
    suite, results = ready.suite, ready.check.results
    url = opts.url
    stage: dict[str, Any] = {}  # what exists so far: run_dir, completed
    with _stopping_after_the_run(stage), contextlib.ExitStack() as stack:
        stack.enter_context(signals_as_interrupt())
        # the per-target bench lock (ycsb_runner.safe.lock), held until the run ends; none with --no-lock
        note_lock = _unlocked
        if url is None and opts.lock:
            note_lock = stack.enter_context(run_lock(None, suite=suite.name, run_id=opts.run_id))
        server: ServerInfo | None = None
        # the embedded server as it is now (its .info follows restarts, so the right process is stopped)
        holder: EmbeddedServer | _ServerHolder = _ServerHolder(None)
        if url is None:
            holder = EmbeddedServer(log=log)
            server = stack.enter_context(holder)
            url = server.url
            log(f"embedded server: {server.version} at {server.url} (pid {server.pid})")
        if opts.history:
            check_not_the_target(ready.check.history_url, url)
        build = check_connection(url, Masker())
        if opts.url is not None and opts.lock:  # a server of yours: its addresses and members are known now
            note_lock = stack.enter_context(run_lock(url, suite=suite.name, run_id=opts.run_id))
        target = _target_facts(server, build)
        audit = None  # the suite's audit strategy; _prepare has checked that it names one
        if suite.audit.states:
            namespace = f"{database_name(url)}.{suite.mongodb.table}"
            audit = run_strategy(suite.audit, url, namespace, holder, opts.audit_options)
        result = RunResult.create(results, Runner.suite_info(suite, opts.templates), run_id=opts.run_id)
        result.manifest.tags = dict(opts.tags)
        note_lock(result.run_id)
        if isinstance(holder, EmbeddedServer):
            holder.owned_by_run(result.run_id)
        point_latest(results, result.root)
        if (
            audit is not None
        ):  # the restore file goes into the run folder before the first switch (crash-safe)
            stack.enter_context(audit_guard(audit, restore_file=restore_path(result.root)))
        stage["run_dir"] = result.root
        history = (results, ready.check.history_url) if opts.history else None
        return _run_and_finish(
            _make_runner(opts, ready, result, Target(url, target), audit, holder, progress),
            result,
            opts,
            history,
            log,
            stage,
        )


def _make_runner(
    opts: BenchOptions,
    ready: _Prepared,
    result: RunResult,
    target: Any,
    audit: Any,
    holder: Any,
    progress: Callable[[str, dict], None] | None,
) -> Any:
    """The runner of the plan against *target* (``execute.runner.Target``): a findmax search's (whose probes'
    errors are judged against the search's bound, not failed), else the plain one; its hooks: the audit
    strategy, progress events and, unless turned off, its monitor factory and its canaries (the load
    generators' BasicDB capacity, the round trip to the server, this host's CPU steal and the CPU other
    processes use, the embedded server's own CPU left out)."""
    from ycsb_runner.execute.canary import Canaries
    from ycsb_runner.execute.monitoring import monitor_factory
    from ycsb_runner.execute.runner import Hooks, Runner, RunnerSettings, Tools

    def server_pid() -> int | None:  # the embedded server's, as it is now (None: a server of yours)
        return holder.info.pid if holder.info else None

    embedded = holder.info is not None
    hooks = Hooks(audit=audit, progress=progress)
    if opts.monitors:
        hooks.monitors = monitor_factory(
            server_pid=server_pid, interval_s=opts.sample_interval_s, target=ready.suite.run.target
        )
    if opts.canaries:  # a server of yours: the canaries find whether it runs here, and its process
        hooks.canaries = Canaries(
            target.url,
            ready.suite,
            java=ready.java.path,
            classpath=ready.install.classpath,
            clients=list(ready.clients),
            server_pid=server_pid if embedded else None,
            server_here=embedded,
        )

    search = ready.check.findmax
    runner_class: Any = Runner
    extra: dict[str, Any] = {}
    if search is not None:
        from ycsb_runner.findmax.runner import FindmaxRunner

        runner_class, extra = FindmaxRunner, {"findmax": search}
    settings = RunnerSettings(
        templates=opts.templates,
        jvm_args=tuple(opts.jvm_args),
        max_error_rate=1.0 if search is not None else opts.max_error_rate,
        keep_going=opts.keep_going,
    )
    tools = Tools(install=ready.install, java=ready.java, clients=tuple(ready.clients))
    return runner_class(
        ready.plan, result=result, target=target, tools=tools, settings=settings, hooks=hooks, **extra
    )


def _run_and_finish(
    runner: Any,
    result: RunResult,
    opts: BenchOptions,
    history: tuple[Path, str | None] | None,
    log: Callable[[str], None],
    stage: dict[str, Any],
) -> BenchOutcome:
    """Run the steps, then read the folder back, index it and write the report: what a stop, a failed step
    or a history that cannot be written leaves, and says, at each point."""
    try:
        runner.run()
    except KeyboardInterrupt as exc:
        finished = Finished()
        with contextlib.suppress(OSError):  # a terminal that hung up (SIGHUP)
            finished = finish_run_folder(result, report=False, log=log, history=history)
        what = (
            f"every step had completed and is saved in {result.root} (and in the history); the report "
            f"was not written: ycsb-runner report {result.root}"
            if runner.status == "completed"
            else "stopped YCSB (and the embedded server); finished steps are kept"
        )
        raise RunInterrupted(
            f"{signal_name(exc)}: {what}",
            run_dir=result.root,
            exit_code=interrupted_exit_code(exc),
            analysis=finished.analysis,
        ) from None
    except UserError as err:
        finished = finish_run_folder(result, report=opts.report, log=log, history=history)
        raise RunFailed(
            str(err), run_dir=result.root, exit_code=err.exit_code, analysis=finished.analysis
        ) from None
    stage["completed"] = True
    try:
        finished = finish_run_folder(result, report=opts.report, log=log, history=history)
    except KeyboardInterrupt as exc:
        # the history record is written whole once begun (signals wait for it), but a signal may come before
        # it begins: index the run now (re-indexing replaces the record; later signals are ignored)
        with contextlib.suppress(OSError):  # a terminal that hung up (SIGHUP)
            finish_run_folder(result, report=False, log=log, history=history)
        raise RunInterrupted(
            f"{signal_name(exc)}: every step had completed and is saved in {result.root} (and in the "
            f"history); the report was not written: ycsb-runner report {result.root}",
            run_dir=result.root,
            exit_code=interrupted_exit_code(exc),
        ) from None
    if finished.history_error is not None:
        raise RunFailed(
            f"the run completed but is not in the history ({finished.history_error}): a nightly check "
            f"would judge the nights before it; fix the history, then `ycsb-runner history rebuild`",
            run_dir=result.root,
            exit_code=NOT_RECORDED,
            analysis=finished.analysis,
        )
    return BenchOutcome(result=result, runner=runner, report=finished.report, analysis=finished.analysis)


def run_findmax(
    opts: BenchOptions,
    findmax: Any,
    *,
    log: Callable[[str], None] = print,
    progress: Callable[[str, dict], None] | None = None,
    checked: BenchCheck | None = None,
) -> BenchOutcome:
    """``ycsb-runner findmax``: *opts* as for :func:`run_bench`, *findmax* a
    :class:`ycsb_runner.findmax.FindmaxOptions`; the run folder's manifest holds the search (``findmax``).
    *checked*: ``check_bench`` of the same options with *findmax*, made by the caller."""
    return run_bench(dataclasses.replace(opts, findmax=findmax), log=log, progress=progress, checked=checked)


@contextlib.contextmanager
def _stopping_after_the_run(stage: dict[str, Any]) -> Iterator[None]:
    """A signal that comes while the run is being closed (audit restored, server stopped, lock released)
    after its folder exists: say what is kept rather than "stopped before the run started"."""
    try:
        yield
    except KeyboardInterrupt as exc:
        if "run_dir" not in stage:
            raise
        done = "every step had completed; " if stage.get("completed") else ""
        raise RunInterrupted(
            f"{signal_name(exc)}: stopped while closing the run; {done}the results are kept in "
            f"{stage['run_dir']}",
            run_dir=stage["run_dir"],
            exit_code=interrupted_exit_code(exc),
        ) from None


# bench's exit status when the run completed but could not be added to the history (README: exit codes)
NOT_RECORDED = 3


@dataclass
class Finished:
    analysis: RunAnalysis | None = None  # of the folder as written (None: it could not be read back)
    report: Path | None = None  # report.html, when written
    history_error: str | None = None  # why the run is not in the history (None: indexed, or not asked)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP wait until the block is done (a history record is written whole), then
    reach the handler that was in place. In another thread than the main one: no change."""
    seen: list[int] = []
    with _stop_signals_to(lambda signum, frame: seen.append(signum)) as installed:
        yield
    if seen and installed:  # delivered again to the handler in place (signals_as_interrupt's, in a bench)
        signal.raise_signal(seen[0])


def finish_run_folder(
    result: RunResult,
    *,
    report: bool,
    log: Callable[[str], None],
    history: tuple[Path, str | None] | None = None,
) -> Finished:
    """What every run folder gets at the end, finished or not: its record in the history (*history* =
    (results folder, history URL); None: not indexed), the study table and the report, all from one
    analysis of the folder read back once as written (what ``report`` and ``history rebuild`` read later).
    """
    from ycsb_runner.analyse.analysis import RunAnalysis
    from ycsb_runner.runs.model import RunResult
    from ycsb_runner.safe.files import atomic_write_csv

    out = Finished()
    # a signal waits until the history record is written, reading the folder back included: a SIGTERM
    # while it was read once left a completed run out of the history
    with signals_deferred() if history is not None else contextlib.nullcontext():
        try:
            run = RunResult.load(result.root)
        except UserError as err:  # damaged while it was written (a full disk, say)
            if history is not None:
                out.history_error = str(err)
                log(f"warning: the run was not added to the history: {err}")
            log(f"warning: could not finish {result.root}: {err}")
            return out
        if history is not None:
            from ycsb_runner.runs.history import index_run

            try:
                index_run(run, *history)
            except (UserError, OSError) as err:  # the folder is complete: `history rebuild` indexes it
                out.history_error = (
                    str(err) if isinstance(err, UserError) else f"{err.strerror}: {err.filename}"
                )
                log(f"warning: the run was not added to the history: {err}")
    try:
        analysis = out.analysis = RunAnalysis(run)
        df = analysis.table.frame
        if analysis.layout.own_table and not df.empty:
            atomic_write_csv(result.study_table_path, df, within=result.root)
        if report:
            from ycsb_runner.report.run_report import write_report

            out.report = write_report(analysis)[0]
    except UserError as err:  # a full disk, say: the run's own error matters more
        log(f"warning: could not finish {result.root}: {err}")
    return out


def default_url() -> str | None:
    return os.environ.get("MONGODB_URL") or None
