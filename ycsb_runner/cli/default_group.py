"""A command group with a default command: ``regress SUITE ...`` and ``regress accept SUITE ...``.

When the first word after the group's name is not one of its commands (nor ``-h``/``--help``), the group runs
its hidden default command with every word: ``regress quick -f json`` and ``regress -f json quick`` run the
default command as they did when ``regress`` was a plain command. The default command's usage and error
messages name the group (``ycsb-runner regress [OPTIONS] SUITE``), and the group's help shows each use and
the default command's options. (Written here: Typer's groups are its own class, which click-default-group's
group class does not extend.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:
    from typer._click import Command, HelpFormatter
    from typer._click.shell_completion import CompletionItem


class _AsGroupContext(typer.Context):
    """The default command's context: its command path is its group's (the hidden name never shows)."""

    @property
    def command_path(self) -> str:
        return self.parent.command_path if self.parent is not None else super().command_path


class DefaultCommand(TyperCommand):
    """The command a :class:`DefaultCommandGroup` runs when no command is named (register it hidden)."""

    context_class = _AsGroupContext


class DefaultCommandGroup(TyperGroup):
    default_command = "check"

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)

    def shell_complete(self, ctx: typer.Context, incomplete: str) -> list[CompletionItem]:
        """The group's commands and, for a word that is not an option, what the default command's first
        argument completes to (``regress qu`` -> ``quick``)."""
        out = super().shell_complete(ctx, incomplete)
        if incomplete.startswith("-"):
            return out
        default = self.commands[self.default_command]
        sub = default.context_class(default, info_name=self.default_command, parent=ctx)
        first = next((p for p in default.params if p.param_type_name == "argument"), None)
        return out + (first.shell_complete(sub, incomplete) if first is not None else [])

    def _uses(self, ctx: typer.Context) -> list[tuple[str, Command, typer.Context]]:
        """(words after the group's name, command, its context) of the default command, then the others."""
        out = []
        for name, cmd in self.commands.items():
            if cmd.hidden and name != self.default_command:
                continue
            sub = cmd.context_class(cmd, info_name=name, parent=ctx)
            pieces = " ".join(cmd.collect_usage_pieces(sub))
            out.append((pieces if name == self.default_command else f"{name} {pieces}", cmd, sub))
        return sorted(out, key=lambda u: u[1] is not self.commands[self.default_command])

    def format_usage(self, ctx: typer.Context, formatter: HelpFormatter) -> None:
        for i, (words, _, _) in enumerate(self._uses(ctx)):
            formatter.write_usage(ctx.command_path, words, prefix="Usage: " if i == 0 else "   or: ")

    def format_options(self, ctx: typer.Context, formatter: HelpFormatter) -> None:
        default = self.commands[self.default_command]
        sub = default.context_class(default, info_name=self.default_command, parent=ctx)
        default.format_options(sub, formatter)
        self.format_commands(ctx, formatter)
