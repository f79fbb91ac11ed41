"""``ycsb-runner server start|stop|status``: the embedded local server."""

from __future__ import annotations

import typer

from ycsb_runner.cli.options import log

app = typer.Typer(help="The embedded local server (mongod if on PATH, else FerretDB).", no_args_is_help=True)


@app.command("start")
def server_start() -> None:
    """Start the embedded server; the last line of the output is its URL."""
    from ycsb_runner.install import embedded as server

    info = server.start(log=log)
    log(f"{info.version}, pid {info.pid}, data in {info.workdir}")
    print(info.url)


@app.command("stop")
def server_stop() -> None:
    """Stop the embedded server and remove its throwaway data."""
    from ycsb_runner.install import embedded as server

    info = server.stop()
    log("stopped" if info else "no embedded server is running")


@app.command("status")
def server_status() -> None:
    """Say which embedded servers run: the one `server start` started (exit 1 when it does not run), and
    those that running benches started for themselves, each with the bench that owns it."""
    from ycsb_runner.install import embedded as server

    info = server.status(log=log)
    for each in ([info] if info is not None else []) + server.private_servers():
        print(each.describe())
    if info is None:
        log("no embedded server started by `ycsb-runner server start` is running")
        raise typer.Exit(1)
