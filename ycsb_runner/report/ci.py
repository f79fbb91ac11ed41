"""What a CI job shows of a night: the Markdown summary appended to ``$GITHUB_STEP_SUMMARY`` (a document
of ``ycsb_runner.present.document`` written by the Markdown renderer, ``output.MARKDOWN``) by ``regress`` and
``bench``, and the JUnit XML of ``regress --junit FILE`` (one test case per series, a failure per open
regression: GitLab, Jenkins and GitHub test views read it)."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

from ycsb_runner.present.document import Document, Facts, Note, Section, Table
from ycsb_runner.present.output import cell_text
from ycsb_runner.runs import model

if TYPE_CHECKING:
    from ycsb_runner.nightly.regress import RegressResult
    from ycsb_runner.runs.model import RunResult

SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
DECISION_WORDS = {0: "pass", 1: "regression", 2: "could not tell"}  # (the summary's "verdict" line)


def regress_summary(result: RegressResult, files: list[tuple[str, str]] | None = None) -> Document:
    """The job summary of a regress: its decision, the open and accepted changes, the flagged series, and
    *files*: (what, path) of the files it wrote (report, junit)."""
    from ycsb_runner.nightly.regress import flagged
    from ycsb_runner.report.regress_report import flagged_table, lifecycle_section

    shown = flagged(result.table)
    decision = DECISION_WORDS.get(result.exit_code, str(result.exit_code))
    facts = [
        ("verdict", f"{decision} (exit {result.exit_code})"),
        ("decision", result.reason),
        ("newest run", str(result.newest)),
    ]
    facts += list(files or [])
    flagged_block = Note("No series flagged.", "aside") if shown.empty else Table(flagged_table(shown))
    sections = [
        Section(None, [Facts(facts, listed=True)]),
        lifecycle_section(result),
        Section("Flagged series", [flagged_block]),
    ]
    title = f"ycsb-runner regress {result.suite}: {decision}"
    return Document(title, title, sections, "")


def bench_summary(result: RunResult, reports: list[str] | None = None) -> Document:
    """The job summary of a bench: the run, its status, its results table and where its files are."""
    from ycsb_runner.analyse.results import results_table

    m = result.manifest
    facts = [
        ("run", m.run_id),
        ("suite", m.suite.name),
        ("status", m.status),
        ("tags", ", ".join(f"{k}={v}" for k, v in sorted(m.tags.items())) or "none"),
        ("folder", str(result.root)),
    ]
    if m.error:
        facts.append(("error", m.error))
    own = [
        str(result.root / name)
        for name in (model.REPORT_HTML, model.REPORT_MD)
        if (result.root / name).is_file()
    ]
    facts += [("report", path) for path in [*own, *(reports or [])]]
    table = results_table(result)
    body = Note("No figures.", "aside") if table.empty else Table(table)
    title = f"ycsb-runner bench {m.suite.name}: {m.status}"
    return Document(
        title, title, [Section(None, [Facts(facts, listed=True)]), Section("Results", [body])], ""
    )


def append_summary(doc: Document, env: dict[str, str] | None = None) -> Path | None:
    """Append *doc* as Markdown to the file ``$GITHUB_STEP_SUMMARY`` names; None when it names none.
    OSError when it cannot be written."""
    from ycsb_runner.present.output import MARKDOWN

    target = (os.environ if env is None else env).get(SUMMARY_ENV)
    if not target:
        return None
    path = Path(target)
    with path.open("a", encoding="utf-8") as f:
        f.write(MARKDOWN.page(doc) + "\n")
    return path


def junit_xml(result: RegressResult) -> str:
    """The JUnit XML of a regress: one ``testsuite`` (the suite), one ``testcase`` per series (classname
    ``<suite>.<phase>.<mix>.t<threads>``, name ``<operation> <metric>``), a ``failure`` per open regression,
    ``skipped`` where the series could not be tested or the canaries explain its change."""
    from ycsb_runner.nightly.regress import ENVIRONMENT, REGRESSION
    from ycsb_runner.safe.text import UNSAFE

    def clean(text: object) -> str:  # XML 1.0 cannot hold most control characters, even escaped
        return UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))

    rows = result.table.to_dict("records")
    failures = sum(r["verdict"] == REGRESSION for r in rows)
    skipped = sum(r["verdict"] in (ENVIRONMENT, "cannot tell", "untested") for r in rows)
    suite = ET.Element(
        "testsuite",
        name=clean(f"regress {result.suite}"),
        tests=str(len(rows)),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
    )
    for r in rows:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=clean(f"{result.suite}.{r['phase']}.{r['mix']}.t{r['threads']}"),
            name=clean(f"{r['operation']} {r['metric']}"),
        )
        change = r.get("change_pct")
        text = clean(
            f"{r['verdict']}: change {cell_text(change, decimals=1, signed=True)} % since "
            f"{r.get('change_run')} (p adjusted {cell_text(r.get('p_adjusted'), significant=2)}); "
            f"{r.get('note') or ''}".strip("; ")
            if isinstance(change, float) and change == change
            else f"{r['verdict']}: {r.get('note') or ''}"
        )
        if r["verdict"] == REGRESSION:
            ET.SubElement(case, "failure", message=text, type="regression").text = text
        elif r["verdict"] in (ENVIRONMENT, "cannot tell", "untested"):
            ET.SubElement(case, "skipped", message=text)
        else:
            ET.SubElement(case, "system-out").text = text
    root = ET.Element("testsuites", name="ycsb-runner regress", tests=suite.get("tests", "0"))
    root.set("failures", str(failures))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
