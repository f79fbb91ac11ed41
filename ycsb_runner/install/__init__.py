"""Set-up: get YCSB 0.17.0 (jars and a MongoDB binding) and the embedded server binary;
``embedded`` starts that server (a real ``mongod`` when one is on PATH, else FerretDB) and stops it."""

from ycsb_runner.install.ferretdb import ensure_ferretdb, ferretdb_binary
from ycsb_runner.install.java import JavaInfo, find_java
from ycsb_runner.install.ycsb import YcsbInstall, ensure_ycsb, locate_ycsb

__all__ = [
    "JavaInfo",
    "YcsbInstall",
    "ensure_ferretdb",
    "ensure_ycsb",
    "ferretdb_binary",
    "find_java",
    "locate_ycsb",
]
