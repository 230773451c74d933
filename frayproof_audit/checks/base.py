"""What a check is: one record with its name, contract key, options, conditions and `find`,
and what it knows beyond judging one snapshot: its facts of the before snapshot (`prepare`)
and, optionally, how mutation re-judges a mutant from what its edit changed (`recheck`).

A check is registered by adding its `CHECK` record to `checks.CHECKS`; the contract parser,
the engine, the before facts, the mutation evaluator, the repair of `--repair-out`, the docs
meta-tests and the tables all read that one table, so nothing else keys on check names.

Conditions carry stable codes (`TP-ORPHAN`, ...): a code is a promise to users' dashboards and
warehouses, never renamed or reused, only added. Each has a fixed title, the finding's message
(a title with `{fields}` is filled in per finding), and says whether a transcript repair fixes
it (`repairable`, as a linter declares a rule fixable).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from frayproof_audit.report import Violation

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.loaded import Loaded
    from frayproof_audit.prepared import BeforeFacts
    from frayproof_audit.recheck.base import RecheckFactory

SEVERITIES = ("error", "warning")


@dataclass(frozen=True, slots=True)
class Condition:
    """One way a check can fail, with its stable code and fixed title. `repairable`: a
    transcript repair (`transcript.repair`) makes a finding of it go away, so `audit` asks the
    repair about it (`findings.repairable`, `--repair-out`)."""

    code: str
    title: str
    repairable: bool = False

    def violation(
        self,
        check: str,
        severity: str,
        snapshot: str,
        index: int | None,
        *,
        tool_call_id: str | None = None,
        pin: str | None = None,
        rule: str | None = None,
        **fields: Any,
    ) -> Violation:
        message = self.title.format(**fields) if fields else self.title
        return Violation(check, severity, snapshot, index, message, tool_call_id=tool_call_id,
                         pin=pin, rule=rule, code=self.code)


class OptionProblem(ValueError):
    """An option value is unusable; the message is the reason, without the key path."""


class Option(Protocol):
    """One check-specific option of a contract's `checks.<key>` block."""

    @property
    def name(self) -> str: ...

    @property
    def default(self) -> Any: ...

    def parse(self, value: Any) -> Any:
        """The option's value, or `OptionProblem` naming what is allowed."""
        ...


@dataclass(frozen=True, slots=True)
class Flag:
    """A YAML boolean (`yes`/`no` count, as YAML 1.1 reads them)."""

    name: str
    default: bool = False

    def parse(self, value: Any) -> Any:
        if type(value) is not bool:
            raise OptionProblem("must be a boolean")
        return value


@dataclass(frozen=True, slots=True)
class OneOf:
    """One string out of a fixed, case-sensitive list."""

    name: str
    choices: tuple[str, ...]
    default: str

    def parse(self, value: Any) -> Any:
        if type(value) is not str or value not in self.choices:
            raise OptionProblem(f"must be one of {', '.join(self.choices)}")
        return value


@dataclass(frozen=True, slots=True)
class CheckSettings:
    """A check's block of the contract: on/off, severity, and its own options (all filled in)."""

    enabled: bool = True
    severity: str = "error"
    options: Mapping[str, Any] = field(default_factory=dict)

    def option(self, name: str) -> Any:
        return self.options[name]


class Find(Protocol):
    def __call__(
        self, after: Loaded, contract: Contract, before: BeforeFacts | None, settings: CheckSettings
    ) -> list[Violation]: ...


Prepare = Callable[["Loaded", "Contract"], object]
"""A check's facts of the before snapshot under a contract, taken once per pair."""


@dataclass(frozen=True, slots=True)
class Check:
    """A registered check.

    `key` is the contract's `checks.<key>` block; `name` is what findings call it (they differ
    for `tool_pairs` / `tool_pair_integrity`, as in frayproof). A check with `needs_before`
    runs only when a before snapshot is given; `active(contract)` says whether the contract
    asks anything of it that needs one (then `validate` refuses, naming `asks_for`).

    `enabled_by_default` is False for checks that go beyond frayproof's: a contract that does not
    mention them keeps frayproof's verdicts, and `checks: {<key>: true}` opts in.
    `default_severity` is `warning` for checks that report how the input was read rather than
    what the compaction did (`format_notes`): they inform, a contract can make them gate.

    `prepare(before, contract)` takes what `find` compares with from the before snapshot, once
    per pair; `find` reads it back as `before.of(key)` (`prepared.BeforeFacts`). `recheck` is
    the optional fast path of mutation (`recheck.base`): without it the check is rerun in full
    on every mutant.
    """

    name: str
    key: str
    conditions: tuple[Condition, ...]
    find: Find
    summary: str
    options: tuple[Option, ...] = ()
    needs_before: bool = False
    active: Callable[[Contract], bool] | None = None
    asks_for: str = ""
    enabled_by_default: bool = True
    default_severity: str = "error"
    prepare: Prepare | None = None
    recheck: RecheckFactory | None = None

    def defaults(self) -> CheckSettings:
        return CheckSettings(enabled=self.enabled_by_default, severity=self.default_severity,
                             options={option.name: option.default for option in self.options})
