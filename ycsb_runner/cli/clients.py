"""``probe-client``: how many ops/s each load generator can generate at all (YCSB's no-op BasicDB)."""

from __future__ import annotations

from typing import Annotated

import typer

from ycsb_runner.cli.options import ClientOpt, Format, FormatOpt, SetOpt, complete_suite, emit, log


def probe_client_cmd(
    suite: Annotated[
        str,
        typer.Argument(
            metavar="SUITE",
            help="Threads, mix and field sizes from this suite.",
            autocompletion=complete_suite,
        ),
    ] = "quick",
    client: ClientOpt = None,
    set_: SetOpt = None,
    threads: Annotated[
        int | None,
        typer.Option(metavar="N", min=1, help="Threads per client (default: the suite's largest count)."),
    ] = None,
    seconds: Annotated[int, typer.Option(metavar="S", min=1, help="How long each probe runs.")] = 10,
    fmt: FormatOpt = Format.table,
) -> None:
    """Run YCSB's no-op binding (site.ycsb.BasicDB) on each client: the ops/s it can generate at all."""
    from ycsb_runner.execute.clients import Client, check_clients, parse_clients, ssh_config_path
    from ycsb_runner.execute.probe import SAFE_SHARE, probe_client, save_probes
    from ycsb_runner.install import ensure_ycsb, find_java
    from ycsb_runner.prepare.suite import load_suite

    s = load_suite(suite, overrides=set_ or [])
    names = client or list(s.clients.hosts) or ["local"]
    specs = parse_clients(names)
    config = ssh_config_path(s.clients.ssh_config) if any(not x.local for x in specs) else None
    clients = [Client(spec, config) for spec in specs]
    install = ensure_ycsb(log=log)
    java = find_java()
    check_clients(clients, java.path)
    t = threads or max(s.run.threads)
    results = []
    for c in clients:  # one after the other: clients on one machine would share its cores
        log(f"probing {c.name}: BasicDB, {t} threads, mix {s.mixes[0].name}, {seconds}s")
        results.append(
            probe_client(c, s, java=java.path, classpath=install.classpath, threads=t, seconds=seconds)
        )
    path = save_probes(results)
    import pandas as pd

    df = pd.DataFrame(
        [{"client": r.client, "threads": r.threads, "mix": r.mix, "ops_s": round(r.ops_s)} for r in results]
    )
    total = sum(r.ops_s for r in results)
    emit(
        df,
        fmt,
        f"ops/s the clients can generate (BasicDB, no server): {total:,.0f} together",
        extra={"total_ops_s": total, "safe_share": SAFE_SHARE, "saved": str(path)},
    )
    log(f"saved in {path}; bench warns when a target is above {SAFE_SHARE:.0%} of this")


def register(app: typer.Typer) -> None:
    app.command("probe-client")(probe_client_cmd)
