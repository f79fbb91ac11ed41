"""What a run's tables and reports say before any of its figures, in words: the run folder records the facts
(``target.engine``, ``embedded``...), this module the sentences people read."""

from __future__ import annotations

from ycsb_runner.runs.model import Manifest, ServerEngine, TargetRecord


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


def audit_caveat(manifest: Manifest) -> str:
    """The unverified-audit caveat of a run (*manifest*; "" when its audit switch was verified or not made):
    the one it recorded (``audit_unverified``), else from its strategy's name, for folders written before
    that was recorded."""
    from ycsb_runner.audit import unverified_audit

    return manifest.audit_unverified or unverified_audit(manifest.audit_strategy)
