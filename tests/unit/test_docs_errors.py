"""Issue 51: the FAQ covers every one-line error the tool can print, read from its own source.

tools/error_messages.py reads every user-facing ``raise`` in ycsb_runner/ (UserError and its subclasses) as a
template; each has a key (its first words). docs/faq.md lists them by topic (cog, `make cli-docs`), each
topic with what to do first. These tests fail when the code raises a message whose key the FAQ lacks, when a
module's errors fall under no topic, and when a topic has no advice of its own."""

from __future__ import annotations

import ast
import re
import sys
import textwrap
from pathlib import Path

from docs_pages import DOCS, ROOT

sys.path.insert(0, str(ROOT / "tools"))
from error_messages import HOLE, key, messages  # noqa: E402

FAQ = DOCS / "faq.md"


def _topics(page: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """(heading, the text between it and its list, module prefixes) of each topic: a ``###`` heading
    followed by a cog block calling ``catalogue(...)``."""
    out = []
    pattern = r"^### (.+?)\n(.*?)<!-- \[\[\[cog\n(.*?)\]\]\] -->"
    for heading, advice, code in re.findall(pattern, page, re.S | re.M):
        call = next(
            n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Call) and _named(n, "catalogue")
        )
        out.append((heading, advice, tuple(a.value for a in call.args)))
    return out


def _named(call: ast.Call, name: str) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id == name


def test_every_error_the_code_raises_has_its_key_in_the_faq() -> None:
    page = FAQ.read_text(encoding="utf-8")
    found = messages()
    assert len(found) > 200  # the tool raises some 250 user-facing messages
    missing = sorted({f"{m.module}:{m.line}: {m.key}" for m in found if m.key not in page})
    assert not missing, f"errors the FAQ does not list (run `make cli-docs`): {missing}"


def test_every_module_that_raises_errors_is_in_one_topic_with_advice() -> None:
    from error_messages import in_topic

    topics = _topics(FAQ.read_text(encoding="utf-8"))
    assert len(topics) >= 6
    for heading, advice, _ in topics:
        words = re.sub(r"<!--.*?-->", "", advice).split()
        assert len(words) >= 20, f"topic {heading!r}: say what to do before its list"
    for module in sorted({m.module for m in messages()}):
        homes = [h for h, _, prefixes in topics if in_topic(module, prefixes)]
        assert len(homes) == 1, f"ycsb_runner/{module}: in topics {homes}; add it to one topic of docs/faq.md"


def test_the_faq_lists_are_up_to_date() -> None:
    from cogapp import Cog

    assert Cog().main(["cog", "--check", str(FAQ)]) == 0


def test_templates_keep_the_literal_text_and_mark_what_is_computed(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "m.py").write_text(
        textwrap.dedent(
            """
            def f(name, err, message):
                if name:
                    raise UserError(f"no suite named {name!r}; `ycsb-runner suites` lists them")
                if err:
                    raise errors.RunFailed(f"step {name} failed: " + str(err), run_dir=None)
                if message:
                    raise UserError(message)  # built elsewhere: no template
                raise ValueError("not user-facing")
            def g(name, err):
                raise SuiteError(f"client {name}: {err}")  # a wrapper: too few words of its own
            """
        )
    )
    got = [(m.module, m.template) for m in messages(tmp_path)]
    assert got == [
        ("sub/m.py", f"no suite named {HOLE}; `ycsb-runner suites` lists them"),
        ("sub/m.py", f"step {HOLE} failed: {HOLE}"),
    ]
    assert key("no suite named … (did you mean …)? run `ycsb-runner suites`") == "no suite named … (did you"
