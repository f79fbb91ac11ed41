"""Which nodes a deployment has, and direct connections to each of them.

Audit settings do not reach every node by themselves: ``setParameter`` changes only the process it
runs on (one mongos, one replica-set member), and ``setAuditConfig`` / ``setClusterParameter`` reach
other mongos and the shards by polling. So the strategy lists every node (standalone; every
data-bearing replica-set member; every shard member and every mongos of a sharded cluster), and talks
to each one over a direct connection.

The discovery reads documented replies only: ``hello`` (``setName``, ``hosts``, ``passives``,
``arbiters``, ``primary``, ``msg: "isdbgrid"`` on mongos), ``replSetGetConfig`` (``config.members[]``
with ``host``, ``arbiterOnly``, ``hidden``), ``listShards`` (``shards[].{_id, host: "rs/h1,h2"}``) and the
``config.mongos`` collection (one document per mongos that pinged the config servers: ``_id`` "host:port",
``ping`` date). The I/O goes through two callables so the same code runs against pymongo and against
documented replies in tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from ycsb_runner.errors import UserError
from ycsb_runner.secrets import mask_url

#: Host name suffixes of MongoDB Atlas clusters.
ATLAS_SUFFIXES = (".mongodb.net", ".mongodb-dev.net", ".mongodbgov.net")
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

    @property
    def label(self) -> str:
        where = f"shard {self.shard} " if self.shard else ""
        return f"{where}{self.role} {self.host}"


@dataclass(frozen=True)
class Topology:
    kind: str  # standalone | replicaset | sharded
    nodes: tuple[Node, ...]
    set_name: str | None = None
    atlas: bool = False

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


def replset_hosts(hello: Mapping[str, Any], config: Mapping[str, Any] | None = None) -> list[str]:
    """Data-bearing members of a replica set: ``replSetGetConfig`` members without ``arbiterOnly``
    (hidden ones included), else ``hello.hosts`` + ``hello.passives`` (arbiters are listed apart). Pure."""
    members = ((config or {}).get("config") or {}).get("members")
    if isinstance(members, list) and members:
        return [
            str(m["host"])
            for m in members
            if isinstance(m, Mapping) and m.get("host") and not m.get("arbiterOnly")
        ]
    return [str(h) for h in [*(hello.get("hosts") or []), *(hello.get("passives") or [])]]


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
) -> Topology:
    """List every node: ``entry`` runs a command through the connection the user gave, ``direct`` on one
    node. Replies that cannot be read (privileges) fall back to what ``hello`` lists."""
    from pymongo.errors import PyMongoError

    def maybe(fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except PyMongoError:
            return None

    if entry_hello.get("msg") == "isdbgrid":
        shards = entry({"listShards": 1}).get("shards") or []
        nodes: list[Node] = []
        for shard in shards:
            name, hosts = parse_shard_host(str(shard.get("host", "")))
            name = name or str(shard.get("_id"))
            hello = None
            for host in hosts:
                hello = maybe(lambda host=host: direct(host, {"hello": 1}))
                if hello is not None:
                    config = maybe(lambda host=host: direct(host, {"replSetGetConfig": 1}))
                    hosts = replset_hosts(hello, config) or hosts
                    break
            primary = (hello or {}).get("primary")
            nodes += [Node(h, "primary" if h == primary else "secondary", shard=name) for h in hosts]
        mongos = set(seeds)
        if mongos_docs is not None:
            mongos |= set(maybe(lambda: live_mongos(mongos_docs())) or [])
        nodes += [Node(h, "mongos") for h in sorted(mongos)]
        topo = Topology("sharded", _dedupe(nodes))
    elif entry_hello.get("setName"):
        config = maybe(lambda: entry({"replSetGetConfig": 1}))
        hosts = (
            replset_hosts(entry_hello, config) or list(seeds) or [str(entry_hello.get("me") or "<server>")]
        )
        primary = entry_hello.get("primary")
        nodes = [Node(h, "primary" if h == primary else "secondary") for h in hosts]
        topo = Topology("replicaset", _dedupe(nodes), set_name=str(entry_hello["setName"]))
    else:
        topo = Topology("standalone", (Node(seeds[0] if seeds else "<server>", "standalone"),))
    return Topology(
        topo.kind, topo.nodes, topo.set_name, atlas=is_atlas([*seeds, *(n.host for n in topo.nodes)])
    )


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
