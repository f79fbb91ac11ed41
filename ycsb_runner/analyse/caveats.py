"""What a run's tables and reports say before any of its figures, in words: the run folder records the facts
(``target.engine``, ``embedded``...), this module the sentences people read."""

from __future__ import annotations

from ycsb_runner.model import ServerEngine, TargetRecord


def server_caveat(target: TargetRecord) -> str:
    """What every table and report of a run on FerretDB (the embedded test server, or one given by URL)
    says: its figures are FerretDB's, not MongoDB's; empty for any other server."""
    if target.engine != ServerEngine.FERRETDB:
        return ""
    if target.embedded:
        what = f"ycsb-runner's embedded test server, {target.server_version or 'FerretDB'}"
    else:
        what = f"the server at the URL, FerretDB {target.build_info.ferretdb or ''}".rstrip()
    return (
        f"Not MongoDB: {what}, speaks MongoDB's protocol over another engine; its figures show that "
        "the benchmark ran, not how fast MongoDB is."
    )
