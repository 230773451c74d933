"""Subcommands imported when they are asked for, not when the program starts.

Every run of `frayproof-audit` pays for the imports of the command it runs, not for those of
the eleven others (the single-pair mutation runner, the transcript tools and the report builder
together take about 0.1 s to import, a fifth of a one-record audit). `--help` and the docs
generator still see every command: listing the names imports nothing, looking one up imports it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping

import click


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's commands by name, each given as `"module:attribute"` and imported on first
    lookup; commands added later (`Group.add_command`) are kept as they are."""

    def __init__(self, specs: Mapping[str, str]) -> None:
        self._specs = dict(specs)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        command = self._loaded.get(name)
        if command is None:
            module_name, _, attribute = self._specs[name].partition(":")
            command = getattr(importlib.import_module(module_name), attribute)
            if not isinstance(command, click.Command):
                raise TypeError(f"{self._specs[name]} is not a click command")
            self._loaded[name] = command
        return command

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command
        self._specs.pop(name, None)

    def __delitem__(self, name: str) -> None:
        if name not in self._loaded and name not in self._specs:
            raise KeyError(name)
        self._loaded.pop(name, None)
        self._specs.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(set(self._specs) | set(self._loaded)))

    def __len__(self) -> int:
        return len(set(self._specs) | set(self._loaded))

    def __contains__(self, name: object) -> bool:
        return name in self._specs or name in self._loaded
