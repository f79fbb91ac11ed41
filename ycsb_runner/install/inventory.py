"""What ``ycsb-runner version`` names: the YCSB, binding, embedded server and Java a run would use, and
where the cache and the results are. Finds, never installs."""

from __future__ import annotations

import shutil
from dataclasses import dataclass

from ycsb_runner._version import __version__
from ycsb_runner.errors import UserError


@dataclass(frozen=True)
class Item:
    """One line of the inventory: what, its version ("" when not known) and where it is (or what to do)."""

    what: str
    version: str
    where: str


def _tool() -> Item:
    from ycsb_runner.paths import PACKAGE_DIR, checkout_root

    root = checkout_root()
    how = f"checkout {root}" if root is not None else f"installed package {PACKAGE_DIR}"
    return Item("ycsb-runner", __version__, how)


def _ycsb() -> list[Item]:
    from ycsb_runner.install.ycsb import locate_ycsb

    try:
        inst = locate_ycsb()
    except UserError as err:
        return [Item("YCSB", "0.17.0", f"not usable: {err}")]
    return [
        Item(
            "YCSB", inst.core_jar.removeprefix("core-").removesuffix(".jar"), f"{inst.home} ({inst.source})"
        ),
        Item("binding", inst.binding_class, inst.binding_jar),
        Item("MongoDB driver", inst.driver_version, inst.driver_jar),
    ]


def _server() -> Item:
    from ycsb_runner.install.ferretdb import FERRETDB_VERSION, ferretdb_binary

    mongod = shutil.which("mongod")
    if mongod:
        return Item("embedded server", "mongod", f"{mongod} (on PATH: used instead of FerretDB)")
    binary = ferretdb_binary()
    if not binary.exists():
        return Item("FerretDB", FERRETDB_VERSION, f"not built ({binary}): run `ycsb-runner setup`")
    return Item("FerretDB", f"{FERRETDB_VERSION} (SQLite, _id lookups through its _id index)", str(binary))


def _java() -> Item:
    from ycsb_runner.install.java import find_java

    try:
        java = find_java()
    except UserError as err:
        return Item("Java", "", f"not usable: {err}")
    return Item("Java", java.version, java.path)


def _folders() -> list[Item]:
    from ycsb_runner import config
    from ycsb_runner.paths import cache_dir, checkout_root, results_dir

    env = config.current()
    if env.cache:
        why = config.CACHE
    elif checkout_root() is not None:
        why = "the checkout's .cache"
    else:
        why = f"the user cache folder; {config.CACHE} names another"
    where = config.RESULTS if env.results else "--results names another"
    return [
        Item("cache", "", f"{cache_dir()} ({why})"),
        Item("results", "", f"{results_dir()} ({where})"),
    ]


def inventory() -> list[Item]:
    """Every line of ``ycsb-runner version``, in order."""
    return [_tool(), *_ycsb(), _server(), _java(), *_folders()]
