"""Render the YCSB command line and property files of a plan step from Jinja2 templates.

Templates (``templates/`` in the checkout; ``--templates DIR`` puts a user's folder first):

* ``java-command.j2``  the argv of ``java ... site.ycsb.Client`` (one argument per line, no shell);
* ``workload.properties.j2``  every workload property, given with ``-P``;
* ``connection.properties.j2``  ``mongodb.url`` alone, written with mode 0600 outside ``results/``;
* ``ycsb-cli.j2``  the equivalent ``./bin/ycsb load|run mongodb -s -p ...`` line for a release tarball.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import jinja2

from ycsb_runner._version import __version__
from ycsb_runner.errors import UserError
from ycsb_runner.paths import templates_dir
from ycsb_runner.prepare.plan import Plan, Step
from ycsb_runner.prepare.suite import INT_MAX, Suite
from ycsb_runner.runs.model import PERCENTILES_PROPERTY, STEPS_DIR, TAIL_PERCENTILE, WORKLOAD_PROPERTIES
from ycsb_runner.safe.secrets import mask_url

CORE_WORKLOAD = "site.ycsb.workloads.CoreWorkload"

# YCSB 0.17.0 defaults (CoreWorkload, Client, measurements): a property equal to its default is left out of
# the release-tarball command line, except the ones in ALWAYS_SHOWN.
YCSB_DEFAULTS: dict[str, str] = {
    "fieldcount": "10",
    "fieldlength": "100",
    "insertorder": "hashed",
    "readallfields": "true",
    "writeallfields": "false",
    "requestdistribution": "uniform",
    "table": "usertable",
    "measurementtype": "hdrhistogram",
    "measurement.interval": "op",
    "hdrhistogram.percentiles": "95,99",
    "status.interval": "10",
    "batchsize": "1",
    "mongodb.upsert": "false",
    "mongodb.driver_defaults": "stock",  # ycsb-runner's binding only; the stock binding ignores it
    "maxexecutiontime": "0",
    "readproportion": "0.95",
    "updateproportion": "0.05",
    "insertproportion": "0",
    "scanproportion": "0",
    "readmodifywriteproportion": "0",
}
ALWAYS_SHOWN = (
    "workload",
    "recordcount",
    "operationcount",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "requestdistribution",
    "mongodb.url",
)
_SHELL_SAFE = re.compile(r"^[\w@%+=:,./-]+$")


@dataclass(frozen=True)
class Rendered:
    """Everything needed to launch one step, and its shareable descriptions."""

    argv: list[str]
    properties: dict[str, str]
    workload_properties: str
    connection_properties: str  # holds the real URL: never print or store it
    ycsb_cli: str  # masked
    phase: str
    timeout_s: float

    def masked_argv(self) -> list[str]:
        return [mask_url(a) for a in self.argv]


def _fmt_number(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


_PROP_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f"}
_KEY_SPECIAL = frozenset(" =:#!")


def _propchars(text: str, special: frozenset[str], leading_space: bool) -> str:
    """*text* written so that ``java.util.Properties.load`` reads it back whole on one logical line: line
    ends, tabs and backslashes escaped, *special* characters after a backslash, and everything outside
    printable ASCII as ``\\uXXXX`` (YCSB loads its -P files as ISO-8859-1)."""
    out = []
    for i, ch in enumerate(text):
        if ch in _PROP_ESCAPES:
            out.append(_PROP_ESCAPES[ch])
        elif ch in special or (ch == " " and leading_space and i == 0):
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:  # control characters and non-ASCII: UTF-16 code units, as Properties decodes them
            units = ch.encode("utf-16-be")
            out.extend(f"\\u{units[j : j + 2].hex()}" for j in range(0, len(units), 2))
    return "".join(out)


def _propescape(value: object) -> str:
    """A property value as ``java.util.Properties`` reads it (a leading space kept)."""
    return _propchars(str(value), frozenset(), leading_space=True)


def _propkey(key: object) -> str:
    """A property key: also ``=``, ``:``, spaces, ``#`` and ``!`` escaped (they would end or start it)."""
    return _propchars(str(key), _KEY_SPECIAL, leading_space=True)


def property_lines(properties: dict[str, object]) -> str:
    """``key=value`` lines as ``java.util.Properties`` reads them back (keys and values escaped)."""
    return "".join(f"{_propkey(k)}={_propescape(v)}\n" for k, v in properties.items())


def _propcomment(text: object) -> str:
    """Text for a ``#`` comment line: escaped like a value, so that it cannot end the comment line."""
    return _propchars(str(text), frozenset(), leading_space=False)


def _shquote(value: object) -> str:
    text = str(value)
    if _SHELL_SAFE.match(text):
        return text
    if any(ch < " " or ch == "\x7f" for ch in text):  # bash's $'...': a control character stays visible
        escaped = text.encode("unicode_escape").decode("ascii").replace("'", "\\'")
        return f"$'{escaped}'"
    return '"' + re.sub(r'(["$`\\])', r"\\\1", text) + '"'


def environment(user_templates: Path | None = None) -> jinja2.Environment:
    loaders: list[jinja2.BaseLoader] = []
    if user_templates is not None:
        if not user_templates.is_dir():
            raise UserError(f"--templates {user_templates}: not a folder")
        loaders.append(jinja2.FileSystemLoader(str(user_templates)))
    loaders.append(jinja2.FileSystemLoader(str(templates_dir())))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["propescape"] = _propescape
    env.filters["propkey"] = _propkey
    env.filters["propcomment"] = _propcomment
    env.filters["shquote"] = _shquote
    return env


def database_name(url: str) -> str:
    """The database YCSB's MongoDB binding uses: the URL path, or ``ycsb`` when empty or ``admin``."""
    path = urlsplit(url).path.strip("/")
    return "ycsb" if path in ("", "admin") else path


def build_url(url: str, suite: Suite, threads: int) -> str:
    """Merge the suite's URL options into *url* (the suite's win: they are the methodology), bound server
    selection so an unreachable server fails fast, and give the pool room for every thread."""
    if not url.startswith(("mongodb://", "mongodb+srv://")):
        raise UserError("the MongoDB URL must start with mongodb:// or mongodb+srv://")
    parts = urlsplit(url)
    items = [q for q in parts.query.split("&") if q]
    keys = {q.split("=", 1)[0].lower(): i for i, q in enumerate(items)}
    for k, v in suite.mongodb.url_options.items():
        if k.lower() in keys:
            items[keys[k.lower()]] = f"{k}={v}"
        else:
            items.append(f"{k}={v}")
            keys[k.lower()] = len(items) - 1
    defaults = {"serverSelectionTimeoutMS": "10000"}
    if threads > 100:
        defaults["maxPoolSize"] = str(threads)
    for k, v in defaults.items():
        if k.lower() not in keys:
            items.append(f"{k}={v}")
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "&".join(items), parts.fragment))


def step_properties(step: Step, suite: Suite, *, hdr_dir: Path | None = None) -> dict[str, str]:
    """The workload properties of one step, in a stable order."""
    p: dict[str, str] = {"workload": CORE_WORKLOAD, "recordcount": str(suite.dataset.recordcount)}
    ds = suite.dataset
    if step.kind == "load":
        p.update(
            {
                "fieldcount": str(ds.fieldcount),
                "fieldlength": str(ds.fieldlength),
                "insertorder": ds.insertorder,
            }
        )
    else:
        assert step.mix is not None
        mix = step.mix
        p["operationcount"] = str(suite.run.operationcount or INT_MAX)
        p.update(
            {
                "fieldcount": str(ds.fieldcount),
                "fieldlength": str(ds.fieldlength),
                "insertorder": ds.insertorder,
                "readproportion": _fmt_number(mix.read),
                "updateproportion": _fmt_number(mix.update),
                "insertproportion": _fmt_number(mix.insert),
                "scanproportion": _fmt_number(mix.scan),
                "readmodifywriteproportion": _fmt_number(mix.readmodifywrite),
                "requestdistribution": mix.requestdistribution,
            }
        )
        if suite.run.maxexecutiontime:
            p["maxexecutiontime"] = str(suite.run.maxexecutiontime)
    m = suite.measurement
    p["measurementtype"] = m.type
    p["measurement.interval"] = m.interval
    if m.type.startswith("hdrhistogram"):
        listed = [_fmt_number(x) for x in m.percentiles]  # and 99.9, the tail the history judges (p999_us)
        p[PERCENTILES_PROPERTY] = ",".join(
            [*listed, *([TAIL_PERCENTILE] if TAIL_PERCENTILE not in listed else [])]
        )
        if m.hdr_fileoutput and hdr_dir is not None:
            p["hdrhistogram.fileoutput"] = "true"
            p["hdrhistogram.output.path"] = str(hdr_dir) + "/"
    p["status.interval"] = str(suite.run.status_interval)
    p["table"] = suite.mongodb.table
    if suite.mongodb.batchsize != 1:
        p["batchsize"] = str(suite.mongodb.batchsize)
    if suite.mongodb.upsert:
        p["mongodb.upsert"] = "true"
    p["mongodb.driver_defaults"] = suite.mongodb.driver_defaults
    if step.kind == "load":
        p.update(ds.properties)
    p.update(suite.properties)
    if step.mix is not None and step.kind != "load":
        p.update(step.mix.properties)
    return p


def timeout_for(step: Step, suite: Suite) -> float:
    """The hard timeout of a step: a last resort after maxexecutiontime, or generous for unbounded steps."""
    if step.kind != "load" and suite.run.maxexecutiontime:
        mx = suite.run.maxexecutiontime
        return mx + max(60.0, 0.25 * mx)
    return max(600.0, 10 * step.est_seconds)


def render_step(
    step: Step,
    suite: Suite,
    *,
    url: str,
    java: str,
    classpath: list[str],
    binding_class: str,
    workload_file: Path,
    connection_file: Path,
    jvm_args: list[str] | None = None,
    hdr_dir: Path | None = None,
    env: jinja2.Environment | None = None,
) -> Rendered:
    if step.kind not in ("load", "run", "warmup"):
        raise ValueError(f"step {step.label} does not launch YCSB")
    env = env or environment()
    full_url = build_url(url, suite, step.threads)
    _check_binding(binding_class, full_url, suite)
    props = step_properties(step, suite, hdr_dir=hdr_dir)
    phase = "load" if step.kind == "load" else "run"
    target = suite.dataset.load_target if step.kind == "load" else suite.run.target
    ctx = dict(
        java=java,
        jvm_args=list(jvm_args or []),
        classpath=":".join(classpath),
        phase=phase,
        binding_class=binding_class,
        workload_file=str(workload_file),
        connection_file=str(connection_file),
        threads=step.threads,
        target=target,
        suite=suite,
        step=step,
        properties=props,
        version=__version__,
        url=full_url,
    )
    argv = [ln.strip() for ln in env.get_template("java-command.j2").render(ctx).splitlines() if ln.strip()]
    cli_props = _shown_properties(props, full_url)
    ycsb_cli = env.get_template("ycsb-cli.j2").render({**ctx, "cli_properties": cli_props}).strip()
    return Rendered(
        argv=argv,
        properties=props,
        workload_properties=env.get_template("workload.properties.j2").render(ctx),
        connection_properties=env.get_template("connection.properties.j2").render(ctx),
        ycsb_cli=mask_url(ycsb_cli),
        phase=phase,
        timeout_s=timeout_for(step, suite),
    )


def _check_binding(binding_class: str, full_url: str, suite: Suite) -> None:
    """UserError where the stock YCSB binding cannot run what the suite asks."""
    if binding_class == "site.ycsb.db.MongoDbClient" and full_url.startswith("mongodb+srv://"):
        raise UserError(
            "the stock YCSB 0.17.0 binding rejects mongodb+srv:// URLs: list the hosts with "
            "mongodb://, or unset YCSB_HOME to use ycsb-runner's binding"
        )
    if binding_class == "site.ycsb.db.MongoDbClient" and suite.mongodb.driver_defaults != "stock":
        raise UserError(
            "mongodb.driver_defaults = driver needs ycsb-runner's binding (the stock one runs driver 3.8): "
            "unset YCSB_HOME, or use driver_defaults = stock"
        )


def _shown_properties(props: dict[str, Any], full_url: str) -> dict[str, Any]:
    """The properties the ``ycsb`` command line shows: the workload, those always shown and those that
    differ from YCSB's defaults (the URL masked, no HdrHistogram output path)."""
    cli_props = {"workload": props["workload"]}
    for k, v in props.items():
        if k in ALWAYS_SHOWN or YCSB_DEFAULTS.get(k) != v:
            cli_props[k] = v
    cli_props.pop("hdrhistogram.output.path", None)
    cli_props["mongodb.url"] = mask_url(full_url)
    return cli_props


def describe_plan(
    plan: Plan,
    *,
    url: str,
    classpath: list[str],
    binding_class: str,
    env: jinja2.Environment | None = None,
    show_properties: bool = False,
) -> str:
    """The text of ``ycsb-runner render``: every step, its exact argv and its ``./bin/ycsb`` line (masked)."""
    env = env or environment()
    suite = plan.suite
    lines = [
        f"# suite {suite.name}: {suite.description}",
        f"# {len(plan.steps)} steps, {len(plan.runs())} measured runs, estimated {plan.estimate}; "
        f"scale {suite.scale:g}",
    ]
    for step in plan.steps:
        lines.append(f"## step {step.label}" + (f"  ({step.reason})" if step.reason else ""))
        if step.kind == "audit":
            assert step.mix is not None
            what = ", ".join(step.mix.audit_ops) if step.audit == "on" else "nothing"
            lines.append(
                f"audit {step.audit}: {what} "
                f"(strategy: {suite.audit.strategy or 'choose with --audit-strategy'})"
            )
            continue
        r = render_step(
            step,
            suite,
            url=url,
            java="java",
            classpath=classpath,
            binding_class=binding_class,
            workload_file=Path("results/<run>") / STEPS_DIR / step.label / WORKLOAD_PROPERTIES,
            connection_file=Path("<private>/connection.properties"),
            env=env,
        )
        lines.append("exact: " + " ".join(r.masked_argv()))
        lines.append("ycsb:  " + r.ycsb_cli)
        if show_properties:
            lines.append(r.workload_properties.rstrip())
    return "\n".join(lines) + "\n"
