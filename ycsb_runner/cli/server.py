"""``ycsb-runner server start|stop|status``: the embedded local server."""

from __future__ import annotations

import typer

from ycsb_runner.cli.options import log

app = typer.Typer(help="The embedded local server (mongod if on PATH, else FerretDB).", no_args_is_help=True)


@app.command("start")
def server_start() -> None:
    """Start the embedded server; the last line of the output is its URL."""
    from ycsb_runner import server

    info = server.start(log=log)
    log(f"{info.version}, pid {info.pid}, data in {info.workdir}")
    print(info.url)


@app.command("stop")
def server_stop() -> None:
    """Stop the embedded server and remove its throwaway data."""
    from ycsb_runner import server

    info = server.stop()
    log("stopped" if info else "no embedded server is running")


@app.command("status")
def server_status() -> None:
    """Say which embedded servers run: the one `server start` started, and those that running benches
    started for themselves, with the bench that owns each (exit 1 when none runs)."""
    from ycsb_runner import server

    info = server.status(log=log)
    running = ([info] if info is not None else []) + server.private_servers()
    if not running:
        log("no embedded server is running")
        raise typer.Exit(1)
    for each in running:
        print(each.describe())
