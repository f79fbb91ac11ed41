"""The library entry point behind ``ycsb-runner bench``: suite -> plan -> (server) -> runner -> results.

Usable without the CLI::

    from ycsb_runner.api import BenchOptions, run_bench
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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ycsb_runner.errors import (
    Interrupted,
    RunFailed,
    RunInterrupted,
    UserError,
    interrupted_exit_code,
    signal_name,
)
from ycsb_runner.paths import check_name, point_latest, results_dir
from ycsb_runner.plan import Plan, build_plan
from ycsb_runner.secrets import Masker, check_url, check_url_files
from ycsb_runner.suite import Suite, load_suite

if TYPE_CHECKING:  # pandas, pymongo and psutil load only when a bench runs: render and --help need none
    from ycsb_runner.analyse.analysis import RunAnalysis
    from ycsb_runner.embedded import ServerInfo
    from ycsb_runner.model import RunResult


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
    """One-line errors for options that cannot be right, before anything starts or is printed."""
    rate = opts.max_error_rate
    if not (isinstance(rate, int | float) and math.isfinite(rate) and 0 <= rate <= 1):
        raise UserError(
            f"--max-error-rate {rate}: must be a number from 0 to 1 (a fraction of operations, e.g. 0.01)"
        )
    if opts.run_id is not None:
        check_name(opts.run_id, "--run-id")
    if opts.url is not None:
        check_url(opts.url)


def prepare(opts: BenchOptions) -> tuple[Suite, Plan]:
    check_options(opts)
    suite = load_suite(opts.suite, opts.overrides, opts.scale)
    from ycsb_runner.audit import strategy_names

    names = strategy_names()
    for given, where in ((opts.audit_strategy, "--audit-strategy"), (suite.audit.strategy, "audit.strategy")):
        if given and given not in names:
            raise UserError(f"{where} {given!r}: unknown audit strategy; use one of {', '.join(names)}")
    if opts.audit_strategy:
        from dataclasses import replace

        suite = replace(suite, audit=replace(suite.audit, strategy=opts.audit_strategy))
    from ycsb_runner.estimate import earlier_rates

    measured = earlier_rates(suite.name, opts.url, opts.results or results_dir(), opts.history_url)
    if opts.findmax is not None:  # the load alone: the probes are chosen as they run
        from ycsb_runner.execute.findmax_runner import findmax_plan

        suite, opts.findmax = findmax_plan(suite, opts.findmax)
        plan = build_plan(suite, measured)
        return suite, Plan(suite=suite, steps=plan.steps[:1])
    return suite, build_plan(suite, measured)


@dataclass
class BenchCheck:
    """What a bench checks before it starts anything, as ``bench``, ``bench --dry-run`` and ``render`` say it:
    the suite and its plan, the pre-flight *findings* (``ycsb_runner.preflight``) and the *notice* of the
    programs the run will execute (an audit strategy's, from the suite file or the options)."""

    suite: Suite
    plan: Plan
    findings: list[Any]  # preflight.Finding
    notice: list[str]

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


def check_bench(opts: BenchOptions) -> BenchCheck:
    """The pre-flight of a bench: the options, the suite and its plan (``prepare``), what the suite's
    settings will measure badly (warnings) or cannot measure (errors), and the programs it will run."""
    from ycsb_runner.preflight import audit_findings, preflight

    suite, plan = prepare(opts)
    findings = preflight(plan.suite, embedded=opts.url is None)
    audit = plan.suite.audit
    if audit.states:
        given = (opts.audit_strategy or audit.strategy, {**audit.options, **opts.audit_options})
        findings += audit_findings(*given, embedded=opts.url is None)
    notice = command_notice(plan.suite, opts.audit_strategy, opts.audit_options)
    return BenchCheck(suite=suite, plan=plan, findings=findings, notice=notice)


def command_notice(suite: Suite, strategy: str | None, options: Mapping[str, Any]) -> list[str]:
    """The lines that say which programs a run will execute (an audit strategy's ``programs``), and from
    where: a suite file someone handed you must not run programs unannounced. *options*: the strategy's
    options given beside the suite's (--audit-option)."""
    audit = suite.audit
    name = strategy or audit.strategy
    if not audit.states or not name:
        return []
    from ycsb_runner.audit import strategy_spec

    spec = strategy_spec(name)
    if spec.programs is None:
        return []
    lines = spec.programs({**audit.options, **options})
    from_suite = [k for k in spec.program_keys if k in audit.options and k not in options]
    where = f"suite file {suite.path}" if from_suite else "--audit-option"
    head = f"notice: this run executes programs (audit strategy {name}, from the {where}):"
    return [head, *(f"  {line}" for line in lines)] if lines else [head + " none given"]


def dry_run(opts: BenchOptions, *, show_properties: bool = False) -> tuple[str, BenchCheck]:
    """``bench --dry-run`` and ``render``: the plan as text (every step and the exact command it runs,
    password masked; the notice first, as comments), and the pre-flight (``BenchCheck.tell`` says it).
    Needs no server; YCSB's paths are placeholders until ``setup`` installed it."""
    from ycsb_runner.commandline import describe_plan, environment
    from ycsb_runner.install import locate_ycsb
    from ycsb_runner.install.ycsb import OWN_BINDING_CLASS

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


class _ServerHolder:
    """The embedded server as it is now: the restart strategy replaces it (new pid)."""

    def __init__(self, info: ServerInfo | None) -> None:
        self.info = info


def _require_audit_strategy(suite: Suite) -> None:
    """The one-line error of a suite that switches audit logging with no strategy to do it."""
    if suite.audit.states and not suite.audit.strategy:
        from ycsb_runner.audit import strategy_names

        raise UserError(
            f"suite {suite.name} switches audit logging ({'/'.join(suite.audit.states)}): pass "
            f"--audit-strategy NAME ({', '.join(strategy_names())})"
        )


def _make_audit(suite: Suite, url: str, holder: Any, opts: BenchOptions):
    """The suite's audit strategy (None when it does not switch audit logging); _before_anything has
    checked that it names one."""
    if not suite.audit.states:
        return None
    from ycsb_runner.audit import make_strategy, strategy_spec
    from ycsb_runner.commandline import database_name

    name = suite.audit.strategy
    options = {**suite.audit.options, **opts.audit_options, "url": url}
    options.setdefault("target_namespace", f"{database_name(url)}.{suite.mongodb.table}")
    if suite.audit.namespace_only:
        options.setdefault("namespace", f"{database_name(url)}.{suite.mongodb.table}")
    spec = strategy_spec(name)
    client = None
    if spec.needs_client:
        from pymongo import MongoClient

        client = MongoClient(url, serverSelectionTimeoutMS=10000)
    if spec.with_server is not None:
        options = spec.with_server(holder, options)
    return make_strategy(name, client=client, options=options)


@dataclass
class _Prepared:
    """What a bench checks and finds before it starts anything: the suite and its plan, YCSB, Java and the
    load generators."""

    suite: Suite
    plan: Plan
    install: Any  # ycsb_runner.install.ycsb.YcsbInstall
    java: Any  # ycsb_runner.install.java.JavaInfo
    clients: list[Any]


def _before_anything(opts: BenchOptions, log: Callable[[str], None], checked: BenchCheck | None) -> _Prepared:
    """Every check that needs no server, in the order a user fixes them: the pre-flight (a findmax search
    has none; *checked*: made and told already), the options and the suite, the URL's files, the audit
    strategy, YCSB and Java, then the load generators (an unreachable one fails here, before a server
    starts)."""
    from ycsb_runner.execute.probe import target_warning
    from ycsb_runner.install import ensure_ycsb, find_java
    from ycsb_runner.model import mark_abandoned

    if checked is None and opts.findmax is None:
        checked = check_bench(opts)
        checked.tell(log)
        for line in checked.notice:
            log(line)
    suite, plan = prepare(opts)
    if opts.url is not None:
        check_url_files(opts.url)
    for stale in mark_abandoned(opts.results or results_dir(), socket.gethostname()):
        log(f"marked {stale} as killed: the ycsb-runner that ran it no longer runs")
    _require_audit_strategy(suite)
    install = ensure_ycsb(log=log)
    if opts.binding_class:
        install = dataclasses.replace(install, binding_class=opts.binding_class)
    java = find_java()
    clients = _load_generators(suite, opts, java.path, log)
    names = [c.name for c in clients] or ["local"]
    if warning := target_warning(suite.run.target, names, max(suite.run.threads)):
        log(f"warning: {warning}")
    return _Prepared(suite=suite, plan=plan, install=install, java=java, clients=clients)


def _hooks(
    opts: BenchOptions, suite: Suite, audit: Any, holder: Any, progress: Callable[[str, dict], None] | None
) -> Any:
    """The runner's audit strategy, progress events and, unless turned off, its monitor factory."""
    from ycsb_runner.execute.runner import Hooks

    hooks = Hooks(audit=audit, progress=progress)
    if opts.monitors:
        from ycsb_runner.execute.monitoring import monitor_factory

        hooks.monitors = monitor_factory(
            server_pid=lambda: holder.info.pid if holder.info else None,
            interval_s=opts.sample_interval_s,
            target=suite.run.target,
        )
    return hooks


def _canaries(url: str, ready: _Prepared, holder: Any, *, embedded: bool) -> Any:
    """The run's canaries: the load generators' BasicDB capacity, the round trip to the server, this host's
    CPU steal and the CPU other processes use (the embedded server's own CPU left out)."""
    from ycsb_runner.execute.canary import Canaries, local_server

    here, pid = (True, None) if embedded else local_server(url)
    return Canaries(
        url,
        ready.suite,
        java=ready.java.path,
        classpath=ready.install.classpath,
        clients=list(ready.clients),
        server_pid=(lambda: holder.info.pid if holder.info else None) if embedded else (lambda: pid),
        server_here=here,
    )


def _target_facts(server: ServerInfo | None, build: dict[str, Any]) -> dict[str, Any]:
    """What the manifest records of the server a run measures: the embedded one (*server*) or the user's
    (its ``buildInfo``, *build*)."""
    from ycsb_runner.model import server_engine

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
    from ycsb_runner.embedded import EmbeddedServer
    from ycsb_runner.execute.runner import Runner, Target, check_connection
    from ycsb_runner.model import RunResult

    ready = _before_anything(opts, log, checked)
    suite = ready.suite
    url = opts.url
    results = opts.results or results_dir()
    stage: dict[str, Any] = {}  # what exists so far: run_dir, completed
    with _stopping_after_the_run(stage), contextlib.ExitStack() as stack:
        stack.enter_context(signals_as_interrupt())
        note_lock = _lock_target(stack, opts, suite.name) if url is None else None
        server: ServerInfo | None = None
        # the embedded server as it is now (its .info follows restarts, so the right process is stopped)
        holder: EmbeddedServer | _ServerHolder = _ServerHolder(None)
        if url is None:
            holder = EmbeddedServer(log=log)
            server = stack.enter_context(holder)
            url = server.url
            log(f"embedded server: {server.version} at {server.url} (pid {server.pid})")
        if opts.history:
            from ycsb_runner.nightly.history import check_not_the_target

            check_not_the_target(opts.history_url, url)
        build = check_connection(url, Masker())
        if note_lock is None:  # a server of yours: its addresses and replica-set members are known now
            note_lock = _lock_target(stack, opts, suite.name, url)
        target = _target_facts(server, build)
        audit = _make_audit(suite, url, holder, opts)
        result = RunResult.create(results, Runner.suite_info(suite, opts.templates), run_id=opts.run_id)
        result.manifest.tags = dict(opts.tags)
        note_lock(result.run_id)
        if isinstance(holder, EmbeddedServer):
            holder.owned_by_run(result.run_id)
        point_latest(results, result.root)
        if audit is not None:
            from ycsb_runner.audit import audit_guard
            from ycsb_runner.audit.restore_file import restore_path

            # the restore file goes into the run folder before the first switch (crash-safe restore)
            stack.enter_context(audit_guard(audit, restore_file=restore_path(result.root)))
        hooks = _hooks(opts, suite, audit, holder, progress)
        if opts.canaries:
            hooks.canaries = _canaries(url, ready, holder, embedded=server is not None)
        runner = _make_runner(opts, ready, result, Target(url, target), hooks)
        stage["run_dir"] = result.root
        return _run_and_finish(runner, result, opts, results, log, stage)


def _make_runner(opts: BenchOptions, ready: _Prepared, result: RunResult, target: Any, hooks: Any) -> Any:
    """The runner of the plan against *target* (``execute.runner.Target``): a findmax search's (whose probes'
    errors are judged against the search's bound, not failed), else the plain one."""
    from ycsb_runner.execute.runner import Runner, RunnerSettings, Tools

    runner_class: Any = Runner
    extra: dict[str, Any] = {}
    if opts.findmax is not None:
        from ycsb_runner.execute.findmax_runner import FindmaxRunner

        runner_class, extra = FindmaxRunner, {"findmax": opts.findmax}
    settings = RunnerSettings(
        templates=opts.templates,
        jvm_args=tuple(opts.jvm_args),
        max_error_rate=1.0 if opts.findmax is not None else opts.max_error_rate,
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
    results: Path,
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
            finished = finish_run_folder(result, report=False, log=log, history=_history(opts, results))
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
        finished = finish_run_folder(result, report=opts.report, log=log, history=_history(opts, results))
        raise RunFailed(
            str(err), run_dir=result.root, exit_code=err.exit_code, analysis=finished.analysis
        ) from None
    stage["completed"] = True
    try:
        finished = finish_run_folder(result, report=opts.report, log=log, history=_history(opts, results))
    except KeyboardInterrupt as exc:
        # the history record is written whole once begun (signals wait for it), but a signal may come before
        # it begins: index the run now (re-indexing replaces the record; later signals are ignored)
        with contextlib.suppress(OSError):  # a terminal that hung up (SIGHUP)
            finish_run_folder(result, report=False, log=log, history=_history(opts, results))
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
) -> BenchOutcome:
    """``ycsb-runner findmax``: *opts* as for :func:`run_bench`, *findmax* a
    :class:`ycsb_runner.findmax.FindmaxOptions`; the run folder's manifest holds the search (``findmax``)."""
    from dataclasses import replace

    return run_bench(replace(opts, findmax=findmax), log=log, progress=progress)


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


def _history(opts: BenchOptions, results: Path) -> tuple[Path, str | None] | None:
    return (results, opts.history_url) if opts.history else None


def _lock_target(
    stack: contextlib.ExitStack, opts: BenchOptions, suite: str, url: str | None = None
) -> Callable[[str], None]:
    """The per-target bench lock (``ycsb_runner.lock``), held until the run ends; a no-op with --no-lock.

    *url* None: the embedded server; else every address of the URL's hosts and of the replica set's
    members."""
    if not opts.lock:
        return lambda _run_id: None
    from ycsb_runner.lock import replica_set_members, target_keys, target_lock

    members = replica_set_members(url)[1] if url is not None else ()
    return stack.enter_context(target_lock(target_keys(url, members), suite=suite, run_id=opts.run_id))


def _load_generators(
    suite: Suite, opts: BenchOptions, java: str, log: Callable[[str], None] = print
) -> list[Any]:
    """The run's clients (``--client`` first, then ``[clients] hosts``), each checked over SSH."""
    from ycsb_runner.execute.clients import Client, check_clients, parse_clients, ssh_config_path

    names = opts.clients or list(suite.clients.hosts)
    if not names or names == ["local"]:
        return []
    config = ssh_config_path(suite.clients.ssh_config)
    clients = [Client(spec, config) for spec in parse_clients(names)]
    for note in check_clients(clients, java):
        log(note)
    return clients


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
    from ycsb_runner.model import RunResult
    from ycsb_runner.store import atomic_write_csv

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
            from ycsb_runner.nightly.history import index_run

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
