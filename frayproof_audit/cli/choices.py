"""A click choice among a registry's names, read each time it is used (parsing, help,
completion), so an entry registered after the commands were defined is offered at once: the
input formats, the outputs. Imports nothing but click.
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
