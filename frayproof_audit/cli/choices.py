"""Click types and options read from a registry each time they are used (parsing, help,
completion), so an entry registered after the commands were defined is offered at once: the
input formats, the outputs, the outputs' caps. Imports nothing but click.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import click


class RegistryChoice(click.Choice[str]):
    """`names()` are the choices (case-sensitive); `aliases()` maps another spelling to one of
    them, accepted and turned into it, never listed."""

    def __init__(self, names: Callable[[], Iterable[str]],
                 aliases: Callable[[], Mapping[str, str]] = dict) -> None:
        self._names = names
        self._aliases = aliases
        self.case_sensitive = True

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self._names())

    @choices.setter
    def choices(self, value: tuple[str, ...]) -> None:
        raise AttributeError("a registry's choices are its names")

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        if isinstance(value, str):
            value = self._aliases().get(value, value)
        return super().convert(value, param, ctx)


class LiveHelp(click.Option):
    """An option whose help text is written from a registry when it is shown (`help_of`), so
    it never keeps what the registry held when the command was first loaded."""

    def __init__(self, *args: Any, help_of: Callable[[], str], **kwargs: Any) -> None:
        kwargs["help"] = help_of()
        super().__init__(*args, **kwargs)
        self._help_of = help_of

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = self._help_of()
        return super().get_help_record(ctx)
