"""The one shape every CI output (SARIF, GitHub annotations, JUnit) is written from.

A `Report`, a `MutationReport` and an audit's `RunSummary` are turned into an `Outcome`
(`render/outcomes.py`): results (`Item`: a rule, a level, a message, a place and the stable
parts of its identity) and test cases (`Case`). Each output then only decides its syntax and
applies its cap, so the three outputs agree on what was found, where, and how many were left out.

An `Outcome` also shows what the result does not hold: the line of each place in its snapshot
file, the checks the contract turns off, an audit's committed rows. Rendering reads no file:
the caller reads them into a `Shown` (`frayproof_audit.shown.read_shown`) and hands it over in
the `RenderContext`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from frayproof_audit.corpus.dataset.run_details import RunDetails
    from frayproof_audit.render.positions import SnapshotLines

LEVELS = ("error", "warning", "note")
"""Result levels, most severe first (SARIF's and GitHub's names)."""

PASSED = "passed"
FAILURE = "failure"
ERROR = "error"
SKIPPED = "skipped"


class Shown(NamedTuple):
    """What a CI output shows beyond its result, read by the caller before rendering."""

    lines: Mapping[str, SnapshotLines] = {}
    """Snapshot file (as `RenderContext.files` names it) → where each value of it starts; a file
    the outcome points at that is missing here gets no line (logical locations only)."""
    enabled: frozenset[str] | None = None
    """Names of the checks the contract runs; None when it could not be read again (then a
    JUnit report has a case for every registered check)."""
    details: RunDetails | None = None
    """An audit's committed rows, at most the output's cap of each kind (`corpus.dataset.run_details`)."""


@dataclass(frozen=True, slots=True)
class RenderContext:
    """What a command knows beyond its result, for outputs that point at files.

    `files` maps a snapshot name (`before`, `after`) to the file it was read from, as the user
    spelled it; `subject` names the pair for fingerprints and test names (the after file);
    `contract` is the contract file, so JUnit can mark checks it turns off as skipped.
    `max_results` caps results, annotations or test cases (None: the output's own default).
    `command` names the command in titles and the SARIF category (default: the result's kind).
    `sarif_category` replaces that category (`frayproof-audit/<command>`) in SARIF's
    `automationDetails.id`, so two analyses uploaded for one commit stay apart. `shown` is what
    the CI outputs show beyond the result (None: nothing was read).
    """

    files: Mapping[str, str] = field(default_factory=dict)
    subject: str = ""
    contract: str | None = None
    max_results: int | None = None
    command: str | None = None
    sarif_category: str | None = None
    shown: Shown | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    """What a result means: a condition code, a mutation operator, or a notice of the tool."""

    id: str
    name: str
    short: str
    full: str
    help: str
    level: str
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Place:
    """Where a result is: a file (as the user spelled it), a line when known, and a logical name
    (`after[4].tool_calls[1]`, `row[12]/after[4]`) that is always given when there is one."""

    uri: str | None
    line: int | None = None
    logical: str | None = None


@dataclass(frozen=True, slots=True)
class Item:
    """One result. `identity` holds its stable parts (code, record, site), never a run id."""

    rule: str
    level: str
    message: str
    place: Place
    identity: tuple[str, ...]
    properties: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Case:
    """One JUnit test case: a pair × a check, a mutant, or an unreadable record."""

    suite: str
    classname: str
    name: str
    outcome: str = PASSED
    message: str = ""
    text: str = ""
    type: str = ""
    file: str | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """Everything a CI output shows of one result.

    `items` may be fewer than `items_total` (an audit reads at most as many as an output can
    show); every output says how many it left out. `cases` likewise for `cases_total`.
    """

    command: str
    rules: tuple[Rule, ...]
    items: tuple[Item, ...]
    items_total: int
    cases: tuple[Case, ...]
    cases_total: int
    verdict: str
    exit_code: int
    notices: tuple[str, ...] = ()
    properties: Mapping[str, Any] = field(default_factory=dict)


def by_severity(items: Iterable[Item]) -> list[Item]:
    """Errors first, then warnings, then notes; the given order within a level (a stable sort)."""
    return sorted(items, key=lambda item: LEVELS.index(item.level))


def fingerprints(items: Iterable[Item]) -> list[str]:
    """A stable hash per item from its identity; repeated identities get `:2`, `:3`, ..."""
    seen: dict[str, int] = {}
    found = []
    for item in items:
        digest = hashlib.sha256("\x1f".join(item.identity).encode("utf-8", "surrogatepass")).hexdigest()
        seen[digest] = seen.get(digest, 0) + 1
        found.append(f"{digest}:{seen[digest]}")
    return found


def left_out_sentence(left_out: int, total: int, what: str, command: str) -> str:
    """What a capped output says of what it left out, and where to find it all."""
    where = ("the run's findings, mutants and pairs tables hold them all" if command == "audit"
             else "--format json shows them all")
    return f"{left_out:,} of {total:,} {what} left out (the output is capped); {where}."
