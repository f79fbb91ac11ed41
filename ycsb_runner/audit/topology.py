"""Which nodes a deployment has, and direct connections to each of them.

Audit settings do not reach every node by themselves: ``setParameter`` changes only the process it
runs on (one mongos, one replica-set member), and ``setAuditConfig`` / ``setClusterParameter`` reach
other mongos and the shards by polling. So the strategy lists every node (standalone; every
data-bearing replica-set member; every shard member and every mongos of a sharded cluster), and talks
to each one over a direct connection.

The discovery reads documented replies only: ``hello`` (``setName``, ``hosts``, ``passives``,
``arbiters``, ``primary``, ``msg: "isdbgrid"`` on mongos), ``replSetGetConfig`` (``config.members[]``
with ``host``, ``arbiterOnly``, ``hidden``, ``secondaryDelaySecs`` (5.0+; ``slaveDelay`` before)),
``listShards`` (``shards[].{_id, host: "rs/h1,h2"}``) and the
``config.mongos`` collection (one document per mongos that pinged the config servers: ``_id`` "host:port",
``ping`` date). The I/O goes through two callables so the same code runs against pymongo and against
documented replies in tests.

Hidden members (and so delayed ones, which the manual requires to be hidden with priority 0) appear in
``replSetGetConfig`` only: ``hello`` lists neither in ``hosts`` nor in ``passives``. So a refused
``replSetGetConfig`` (it needs the ``replSetGetConfig`` action on the cluster: built-in roles
clusterMonitor, clusterManager, clusterAdmin, root) stops discovery with a one-line refusal, unless the
caller allows going on with what ``hello`` lists (``--allow-unlisted-members``); the topology then
carries a warning per replica set whose members could not all be listed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from ycsb_runner.errors import UserError
from ycsb_runner.safe.secrets import mask_url

#: Host name suffixes of MongoDB Atlas clusters.
ATLAS_SUFFIXES = (".mongodb.net", ".mongodb-dev.net", ".mongodbgov.net")
#: The privilege replSetGetConfig needs, and the built-in roles that grant it (manual: "Built-In Roles").
REPLSET_CONFIG_PRIVILEGE = (
    "the replSetGetConfig action on the cluster (built-in roles clusterMonitor, clusterManager, "
    "clusterAdmin or root)"
)
#: A mongos whose last ping is older than this (relative to the newest one) is taken as gone.
MONGOS_STALE = timedelta(minutes=10)

Command = Mapping[str, Any]
#: ``direct(host, command)`` runs an admin command on one node over a direct connection.
DirectFn = Callable[[str, Command], Mapping[str, Any]]


@dataclass(frozen=True)
class Node:
    """One process of the deployment. ``role``: standalone | primary | secondary | mongos."""

    host: str
    role: str
    shard: str | None = None  # the shard (replica set) name for shard members
    hidden: bool = False  # replSetGetConfig members[n].hidden
    delay_s: float = 0.0  # members[n].secondaryDelaySecs (slaveDelay before 5.0): applies the oplog late

    @property
    def label(self) -> str:
        where = f"shard {self.shard} " if self.shard else ""
        kind = "hidden " if self.hidden and not self.delay_s else ""
        if self.delay_s:
            kind = f"delayed ({self.delay_s:g} s) "
        return f"{where}{kind}{self.role} {self.host}"


@dataclass(frozen=True)
class Topology:
    kind: str  # standalone | replicaset | sharded
    nodes: tuple[Node, ...]
    set_name: str | None = None
    atlas: bool = False
    #: One line per replica set whose members could not all be listed (replSetGetConfig refused and the
    #: caller allowed going on): what was refused, and which members hello listed instead.
    unlisted: tuple[str, ...] = ()

    @property
    def mongos(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.role == "mongos")

    @property
    def data_nodes(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.role != "mongos")

    def describe(self) -> str:
        if self.kind == "sharded":
            shards = sorted({n.shard for n in self.nodes if n.shard})
            return (
                f"sharded cluster: {len(self.mongos)} mongos, {len(shards)} shard(s) "
                f"({len(self.data_nodes)} data-bearing members)"
            )
        if self.kind == "replicaset":
            return f"replica set {self.set_name}: {len(self.nodes)} data-bearing member(s)"
        return "standalone"


# ---------------------------------------------------------------- pure: replies -> nodes


def is_atlas(hosts: Iterable[str]) -> bool:
    """Any host name of an Atlas cluster (``*.mongodb.net``). Pure."""
    return any(h.split(":")[0].lower().rstrip(".").endswith(ATLAS_SUFFIXES) for h in hosts)


def parse_shard_host(text: str) -> tuple[str | None, list[str]]:
    """``listShards`` ``host``: ``"rs0/h1:27018,h2:27018"`` (or a lone ``"h:p"``) -> (set, hosts). Pure."""
    name, sep, rest = text.partition("/")
    if not sep:
        return None, [h for h in text.split(",") if h]
    return name or None, [h for h in rest.split(",") if h]


@dataclass(frozen=True)
class Member:
    """One data-bearing member as ``replSetGetConfig`` describes it."""

    host: str
    hidden: bool = False
    delay_s: float = 0.0


def config_members(config: Mapping[str, Any] | None) -> list[Member] | None:
    """``replSetGetConfig`` -> its data-bearing members (arbiters left out; hidden and delayed ones kept,
    with ``secondaryDelaySecs``, or ``slaveDelay`` on servers before 5.0); None without a members list.
    Pure."""
    members = ((config or {}).get("config") or {}).get("members")
    if not isinstance(members, list) or not members:
        return None
    out = []
    for m in members:
        if not isinstance(m, Mapping) or not m.get("host") or m.get("arbiterOnly"):
            continue
        delay = m.get("secondaryDelaySecs", m.get("slaveDelay")) or 0
        out.append(Member(str(m["host"]), hidden=bool(m.get("hidden")), delay_s=float(delay)))
    return out


def hello_members(hello: Mapping[str, Any]) -> list[Member]:
    """``hello.hosts`` + ``hello.passives`` (priority-0 members): never the hidden ones. Pure."""
    return [Member(str(h)) for h in [*(hello.get("hosts") or []), *(hello.get("passives") or [])]]


def replset_hosts(hello: Mapping[str, Any], config: Mapping[str, Any] | None = None) -> list[str]:
    """Data-bearing members of a replica set: ``replSetGetConfig`` members without ``arbiterOnly``
    (hidden ones included), else ``hello.hosts`` + ``hello.passives`` (arbiters are listed apart). Pure."""
    members = config_members(config)
    return [m.host for m in (hello_members(hello) if members is None else members)]


def refused_config_message(set_name: str, error: str, listed: Sequence[str], *, allowed: bool) -> str:
    """The one line said when ``replSetGetConfig`` was refused on replica set ``set_name``: a refusal
    naming the privilege and ``--allow-unlisted-members``, or (``allowed``) the warning. Pure."""
    what = f"replica set {set_name}: replSetGetConfig was refused ({error})"
    if allowed:
        return (
            f"{what}; going on with the {len(listed)} member(s) hello lists ({', '.join(listed)}): hidden "
            "and delayed members, if any, are neither switched nor verified"
        )
    return (
        f"cannot list every member of {what}: hidden and delayed members appear only there, so their "
        f"audit state would go unchecked; grant the user {REPLSET_CONFIG_PRIVILEGE}, or pass "
        f"--allow-unlisted-members to go on with the {len(listed)} member(s) hello lists "
        f"({', '.join(listed)})"
    )


def live_mongos(docs: Iterable[Mapping[str, Any]]) -> list[str]:
    """``config.mongos`` documents -> the mongos that pinged recently (newest ping - MONGOS_STALE). Pure."""
    rows = [d for d in docs if d.get("_id")]
    pings = [d["ping"] for d in rows if d.get("ping") is not None]
    if not pings:
        return sorted(str(d["_id"]) for d in rows)
    newest = max(pings)
    return sorted(str(d["_id"]) for d in rows if d.get("ping") is None or newest - d["ping"] <= MONGOS_STALE)


def _dedupe(nodes: Iterable[Node]) -> tuple[Node, ...]:
    seen: dict[str, Node] = {}
    for n in nodes:
        seen.setdefault(n.host.lower(), n)
    return tuple(seen.values())


def discover(
    entry_hello: Mapping[str, Any],
    seeds: Sequence[str],
    *,
    entry: Callable[[Command], Mapping[str, Any]],
    direct: DirectFn,
    mongos_docs: Callable[[], Iterable[Mapping[str, Any]]] | None = None,
    allow_unlisted: bool = False,
) -> Topology:
    """List every node: ``entry`` runs a command through the connection the user gave, ``direct`` on one
    node. A refused ``replSetGetConfig`` raises UserError naming the privilege, unless ``allow_unlisted``
    (then the members ``hello`` lists are used and ``Topology.unlisted`` says so). Other replies that
    cannot be read (an unreachable shard member, ``config.mongos``) fall back to what is listed."""
    lister = _MemberLister(allow_unlisted)
    if entry_hello.get("msg") == "isdbgrid":
        nodes = _shard_nodes(entry, direct, lister)
        mongos = set(seeds)
        if mongos_docs is not None:
            mongos |= set(_maybe(lambda: live_mongos(mongos_docs())) or [])
        nodes += [Node(h, "mongos") for h in sorted(mongos)]
        topo = Topology("sharded", _dedupe(nodes))
    elif entry_hello.get("setName"):
        set_name = str(entry_hello["setName"])
        members = lister.members_of(set_name, entry_hello, entry)
        if not members:
            members = [Member(h) for h in seeds] or [Member(str(entry_hello.get("me") or "<server>"))]
        nodes = _as_nodes(members, entry_hello.get("primary"))
        topo = Topology("replicaset", _dedupe(nodes), set_name=set_name)
    else:
        topo = Topology("standalone", (Node(seeds[0] if seeds else "<server>", "standalone"),))
    return Topology(
        topo.kind,
        topo.nodes,
        topo.set_name,
        atlas=is_atlas([*seeds, *(n.host for n in topo.nodes)]),
        unlisted=tuple(lister.unlisted),
    )


def _maybe(fn: Callable[[], Any]) -> Any:
    """*fn*'s reply, None when the server could not be asked."""
    from pymongo.errors import PyMongoError

    try:
        return fn()
    except PyMongoError:
        return None


class _MemberLister:
    """A replica set's members from its configuration; where ``replSetGetConfig`` is refused, the members
    ``hello`` lists (with ``allow_unlisted``; the lines saying so are kept in ``unlisted``) or UserError."""

    def __init__(self, allow_unlisted: bool) -> None:
        self.allow_unlisted = allow_unlisted
        self.unlisted: list[str] = []

    def members_of(
        self, set_name: str, hello: Mapping[str, Any], run: Callable[[Command], Mapping[str, Any]]
    ) -> list[Member]:
        from pymongo.errors import PyMongoError

        try:
            members = config_members(run({"replSetGetConfig": 1}))
        except PyMongoError as exc:
            listed = hello_members(hello)
            error = _error_text(exc)
            allowed = self.allow_unlisted
            line = refused_config_message(set_name, error, [m.host for m in listed], allowed=allowed)
            if not allowed:
                raise UserError(line) from None
            self.unlisted.append(line)
            return listed
        return hello_members(hello) if members is None else members


def _shard_nodes(
    entry: Callable[[Command], Mapping[str, Any]], direct: DirectFn, lister: _MemberLister
) -> list[Node]:
    """Every shard's members, asked of the first of its hosts that answers (its listed hosts otherwise)."""
    shards = entry({"listShards": 1}).get("shards") or []
    nodes: list[Node] = []
    for shard in shards:
        name, hosts = parse_shard_host(str(shard.get("host", "")))
        name = name or str(shard.get("_id"))
        members = [Member(h) for h in hosts]
        hello = None
        for host in hosts:
            hello = _maybe(lambda host=host: direct(host, {"hello": 1}))
            if hello is not None:
                run = functools.partial(direct, host)
                members = lister.members_of(name, hello, run) or members
                break
        nodes += _as_nodes(members, (hello or {}).get("primary"), shard=name)
    return nodes


def _as_nodes(members: Sequence[Member], primary: Any, shard: str | None = None) -> list[Node]:
    return [
        Node(
            m.host,
            "primary" if m.host == primary else "secondary",
            shard=shard,
            hidden=m.hidden,
            delay_s=m.delay_s,
        )
        for m in members
    ]


def _error_text(exc: Exception) -> str:
    """``codeName: errmsg`` of a server error (pymongo's OperationFailure.details), else its text."""
    details = getattr(exc, "details", None) or {}
    code, msg = details.get("codeName"), details.get("errmsg")
    text = f"{code}: {msg}" if code and msg else str(code or msg or exc)
    return " ".join(text.split())[:200]


# ---------------------------------------------------------------- direct connections (I/O)


def member_url(url: str, host: str) -> str:
    """The connection string ``url`` pointed at ``host`` alone (``directConnection=true``, no
    ``replicaSet``), keeping credentials, TLS and auth options. ``mongodb+srv://`` becomes ``mongodb://``
    with ``tls=true`` (what SRV implies). Pure."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("mongodb", "mongodb+srv"):
        raise UserError(f"not a MongoDB connection string: {mask_url(url)}")
    before_query, _, query = rest.partition("?")
    netloc, _, path = before_query.partition("/")
    userinfo = netloc.rpartition("@")[0] if "@" in netloc else ""
    params = [
        (k, v)
        for k, v in parse_qsl(query, keep_blank_values=True)
        if k.lower()
        not in ("replicaset", "directconnection", "loadbalanced", "srvservicename", "srvmaxhosts")
    ]
    if scheme == "mongodb+srv" and not any(k.lower() in ("tls", "ssl") for k, _ in params):
        params.append(("tls", "true"))
    params.append(("directConnection", "true"))
    auth = f"{userinfo}@" if userinfo else ""
    return f"mongodb://{auth}{host}/{path}?{urlencode(params, quote_via=quote, safe=',:')}"


class DirectConnections:
    """One pymongo client per node (``directConnection=true``), opened on first use, closed together."""

    def __init__(self, url: str, *, timeout_ms: int = 10000) -> None:
        self.url = url
        self.timeout_ms = timeout_ms
        self._clients: dict[str, Any] = {}

    def command(self, host: str, command: Command) -> Mapping[str, Any]:
        from pymongo import MongoClient

        client = self._clients.get(host)
        if client is None:
            client = MongoClient(
                member_url(self.url, host),
                serverSelectionTimeoutMS=self.timeout_ms,
                connectTimeoutMS=self.timeout_ms,
                appname="ycsb-runner-audit",
            )
            self._clients[host] = client
        return client.admin.command(dict(command))

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()


def seed_hosts(client: Any) -> list[str]:
    """``host:port`` of the seeds a pymongo client was given (its topology description)."""
    try:
        return [f"{h}:{p}" for h, p in client.topology_description.server_descriptions()]
    except (AttributeError, TypeError):
        return []
