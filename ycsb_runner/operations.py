"""YCSB 0.17.0's operations, defined once: the name a suite and CoreWorkload use, and the section YCSB prints.

``read`` is the ``readproportion`` of CoreWorkload and the ``[READ]`` section of its output. The suite's mix
keys, the audit filters, the parser and the tables all take their operation names from here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Operation:
    name: str  # CoreWorkload's name: <name>proportion, and a suite's mix key
    section: str  # the section YCSB prints: [READ], [READ-MODIFY-WRITE], ...
    in_mix: bool = True  # a mix may give it a share (DELETE is not a CoreWorkload proportion)


OPERATIONS: tuple[Operation, ...] = (
    Operation("read", "READ"),
    Operation("update", "UPDATE"),
    Operation("insert", "INSERT"),
    Operation("scan", "SCAN"),
    Operation("readmodifywrite", "READ-MODIFY-WRITE"),
    Operation("delete", "DELETE", in_mix=False),
)
BY_NAME = {op.name: op for op in OPERATIONS}

#: The mix keys of a suite (CoreWorkload's ``*proportion`` properties), in CoreWorkload's order.
MIX_OPS: tuple[str, ...] = tuple(op.name for op in OPERATIONS if op.in_mix)
#: Every operation name an audit filter may name.
OP_NAMES: tuple[str, ...] = tuple(op.name for op in OPERATIONS)
#: The sections the tables report on (the workload's own operations, not CLEANUP or VERIFY).
MAIN_SECTIONS: tuple[str, ...] = tuple(op.section for op in OPERATIONS)
#: Sections whose average is a write latency (the Tencent study's WAL).
WRITE_SECTIONS: tuple[str, ...] = ("UPDATE", "INSERT", "DELETE")
#: Every operation section YCSB 0.17.0 prints (``CLEANUP`` closes each thread, ``VERIFY`` when
#: ``dataintegrity=true``).
ALL_SECTIONS: frozenset[str] = frozenset({*MAIN_SECTIONS, "CLEANUP", "VERIFY"})
