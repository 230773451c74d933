"""Output formats of tables (`stats` and `trend` `--format`), registered in `TABLE_OUTPUTS`.

A table result (`corpus.stats.Stats`, `trends.render.TrendReport`) knows its text, its JSON and
its rows as one long Polars frame (`tidy`); a `TableOutput` says which of them it shows and how,
and what it shows when the command could not run. `text` was spelled `table` before it had
one name with the results' `text`; the old spelling is still accepted (`aliases`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, TYPE_CHECKING, NamedTuple, Protocol

from frayproof_audit.render.failure import Failure, Said, json_failure, text_failure

if TYPE_CHECKING:
    import polars as pl


class Tabular(Protocol):
    """What every table result offers every table output."""

    def to_text(self) -> str: ...

    def to_json(self) -> str: ...

    def tidy(self) -> pl.DataFrame: ...


class TableOutput(NamedTuple):
    """One output format of tables: text (`text`) or bytes written to `--output` (`write`)."""

    name: str
    text: Callable[[Tabular], str] | None = None
    """The text printed, or written to `--output`."""
    write: Callable[[Tabular, IO[bytes]], None] | None = None
    """A binary output: written into the `--output` file, which it needs."""
    failure: Callable[[Failure], Said] = text_failure
    verdict: bool = True
    """Whether it shows a gate's verdict (`trend --fail-on-regression`); a plain table does
    not, so the verdict goes to stderr beside it."""
    aliases: tuple[str, ...] = ()
    """Other spellings accepted for it."""


def _text(result: Tabular) -> str:
    return result.to_text()


def _json(result: Tabular) -> str:
    return result.to_json()


def _csv(result: Tabular) -> str:
    return result.tidy().write_csv()


def _parquet(result: Tabular, handle: IO[bytes]) -> None:
    result.tidy().write_parquet(handle)


TABLE_OUTPUTS: dict[str, TableOutput] = {output.name: output for output in (
    TableOutput("text", _text, aliases=("table",)),
    TableOutput("json", _json, failure=json_failure),
    TableOutput("csv", _csv, verdict=False),
    TableOutput("parquet", write=_parquet, verdict=False),
)}
"""Table output name → output: `text` for people, `json`, `csv` and `parquet` for machines
(csv and parquet hold every table in one long table)."""


def table_aliases() -> dict[str, str]:
    """Every other spelling of a table output → its name."""
    return {alias: name for name, output in TABLE_OUTPUTS.items() for alias in output.aliases}
