"""Run the fault operators against one real output and score the contract.

Three ways in, one pipeline:
- `run_mutations(input, target)` runs a transformation once on a deep copy of the input;
- `run_mutations(input, after=...)` tests a logged output without running any code;
- `mutate_pair(before, after, contract)` is the corpus audit's entry: both already loaded.

The baseline (the real output against the contract) is checked first; when it fails there is
nothing to measure and no mutant is built. Each distinct mutant is then judged by the contract.
Two paths build mutants: the copy-on-write fast path (`fastpath`), and the reference path that
deep-copies the raw output per mutant, edits it in place and rechecks it from scratch. The
reference path runs when asked (`verify=True`, which also proves the fast path agrees) and for
outputs whose objects are shared between positions, where in-place edits spread.
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass
from typing import Any

from frayproof_audit.collector import collector_paused
from frayproof_audit.contract import Contract, load_contract
from frayproof_audit.engine import (
    evaluate,
    findings_by_check,
    localize,
    prepare_before,
    split_by_check,
)
from frayproof_audit.errors import InputError
from frayproof_audit.formats import Format
from frayproof_audit.jsonio import plain_tree_copy
from frayproof_audit.loaded import Loaded
from frayproof_audit.model import Snapshot
from frayproof_audit.mutate.budget import Left, apply_budget, check_budget
from frayproof_audit.mutate.fastpath import SharedPair, shares_mutable_objects
from frayproof_audit.mutate.operators import (
    Candidate,
    Group,
    dedupe,
    get_operator,
    select_operators,
)
from frayproof_audit.mutate.report import (
    CAUGHT,
    SKIPPED,
    SURVIVED,
    MutantOutcome,
    MutationReport,
)
from frayproof_audit.prepared import BeforeFacts
from frayproof_audit.report import Report, Violation
from frayproof_audit.snapshot import (
    FormatLike,
    load_file,
    load_plain,
    load_wire,
    resolve_format,
)

Target = Callable[[list[Any]], Any]


class FastPathMismatch(AssertionError):
    """`verify=True` found the fast path disagreeing with the full recheck (a bug in us)."""


@dataclass(frozen=True, slots=True)
class MutationInput:
    """The before snapshot: raw wire data exactly as given or read (never modified) and its
    validated form. Loading it separately lets the CLI reject bad input before importing a
    target, and reads a file once."""

    raw: list[Any]
    before: Loaded


def load_mutation_input(source: Any, fmt: FormatLike = None) -> MutationInput:
    """A message list or a JSON file path, read in `fmt` (default `openai`); a neutral
    `Snapshot` has no raw form to mutate."""
    return _load_input(source, fmt, False)[0]


def _load_input(source: Any, fmt: FormatLike,
                detach: bool) -> tuple[MutationInput, list[Any] | None]:
    """The input, and with `detach` a deep copy of its raw list made by the same walk that
    proves a list plain JSON (`jsonio.plain_tree_copy`; None: the caller deep-copies)."""
    if isinstance(source, MutationInput):
        return source, None
    if isinstance(source, Snapshot):
        raise InputError("Mutation input must be a message list or a JSON file path, not a Snapshot")
    if isinstance(source, str | os.PathLike):
        loaded = load_file(source, fmt)
        return MutationInput(loaded.wire, loaded), None
    if type(source) is list:
        copied = plain_tree_copy(source) if detach else None
        if copied is not None:
            # Plain JSON, as load_plain would have found before validating the list in place.
            try:
                return MutationInput(source, load_wire(source, fmt)), copied
            except InputError:
                pass  # a bad snapshot: load_plain words the error
        return MutationInput(source, load_plain(source, fmt)), None
    raise InputError("Mutation input must be a message list or a JSON file path")


def run_mutations(
    input: Any,
    target: Target | None = None,
    contract: Any = None,
    *,
    after: Any = None,
    operators: Sequence[str] | None = None,
    verify: bool = False,
    input_format: FormatLike = None,
    max_mutants: int | None = None,
) -> MutationReport:
    """Mutation-test `contract` on one output: the target's (run once) or a logged `after`.

    Input and output are read in `input_format`, else the contract's `format`. `max_mutants`
    is the per-pair site budget (`mutate.budget`; None: judge every site). Raises
    `InputError` for bad input, a bad contract, a failing or async target (use
    `run_mutations_async`) and an output that is not a valid message list.
    """
    job = _prepare(input, target, contract, after, operators, input_format, max_mutants)
    if target is None:
        raw, loaded = _load_after(after, job.format)
    else:
        try:
            output = target(job.detached())
        except Exception as exc:
            raise _failed(exc) from exc
        if inspect.isawaitable(output):
            if inspect.iscoroutine(output):
                output.close()
            raise InputError("The target is async: use run_mutations_async (the CLI awaits it)")
        raw, loaded = _load_output(output, job.format)
    return job.run(raw, loaded, verify)


async def run_mutations_async(
    input: Any,
    target: Target | None = None,
    contract: Any = None,
    *,
    after: Any = None,
    operators: Sequence[str] | None = None,
    verify: bool = False,
    input_format: FormatLike = None,
    max_mutants: int | None = None,
) -> MutationReport:
    """`run_mutations` for async targets (sync targets are accepted too)."""
    job = _prepare(input, target, contract, after, operators, input_format, max_mutants)
    if target is None:
        raw, loaded = _load_after(after, job.format)
    else:
        try:
            output = target(job.detached())
            if inspect.isawaitable(output):
                output = await output
        except Exception as exc:
            raise _failed(exc) from exc
        raw, loaded = _load_output(output, job.format)
    return job.run(raw, loaded, verify)


def mutate_pair(
    before: Loaded,
    after: Loaded,
    contract: Contract,
    operators: Sequence[str] | None = None,
    baseline: Report | None = None,
    *,
    verify: bool = False,
    max_mutants: int | None = None,
) -> MutationReport:
    """Mutation-test one loaded pair; `after.wire` is the raw output and is never modified.

    `after.wire` must hold plain JSON values, as a JSON parser returns them. Pass `baseline`
    when `check_loaded(before, after, contract)` was already computed. `verify=True` also
    rechecks every mutant from scratch and raises `FastPathMismatch` on any difference.
    `max_mutants` judges at most that many sites, sampled (`mutate.budget`); None: all.
    """
    budget = check_budget(max_mutants)
    chosen = select_operators(operators, contract)
    facts = prepare_before(before, contract)
    found: Mapping[str, list[Violation]] | None
    if baseline is None:
        found = findings_by_check(after, contract, facts)
        baseline = localize(_report(found), after, before)
    else:
        found = split_by_check(baseline, after, before, contract)
    return _mutate(after.wire, after, contract, facts, baseline, chosen, verify, budget, found)


@dataclass(frozen=True, slots=True)
class BuiltMutant:
    """A distinct mutant with its message list (the reference path's deep-copied edit)."""

    operator: str
    description: str
    message_index: int
    sites: tuple[str, ...]
    messages: list[Any]


def build_mutants(
    before: Loaded, after: Loaded, contract: Contract, operators: Sequence[str] | None = None
) -> list[BuiltMutant]:
    """Every distinct mutant of `after.wire`, as message lists (for inspection and tests).

    Built the reference way (a deep copy per candidate, edited in place), so the lists are
    exactly what frayproof would check; the baseline is not consulted.
    """
    facts = prepare_before(before, contract)
    found: list[BuiltMutant] = []
    for name in select_operators(operators, contract):
        candidates = get_operator(name).find_sites(after, contract, facts)
        for group, messages in reference_mutants(after.wire, candidates):
            first = group.first
            found.append(BuiltMutant(name, first.description, first.message_index, group.sites,
                                     messages))
    return found


@dataclass(frozen=True, slots=True)
class _Job:
    """A validated request: the input, the contract, the operators and the before facts, all
    settled before any target runs (so nothing a target does can change them)."""

    input: MutationInput
    contract: Contract
    operators: tuple[str, ...]
    facts: BeforeFacts
    format: Format
    budget: int | None = None
    copied: list[Any] | None = None
    """A deep copy of the input made while loading it, for the one target run of this job."""

    def detached(self) -> list[Any]:
        """A deep copy of the raw input, the target's to change as it likes."""
        return self.copied if self.copied is not None else deepcopy(self.input.raw)

    def run(self, raw: list[Any], after: Loaded, verify: bool) -> MutationReport:
        found = findings_by_check(after, self.contract, self.facts)
        baseline = localize(_report(found), after, self.input.before)
        return _mutate(raw, after, self.contract, self.facts, baseline, self.operators, verify,
                       self.budget, found)


def _report(found: Mapping[str, list[Violation]]) -> Report:
    """The report of the checks' findings, in report order (`engine.evaluate`'s)."""
    return Report(tuple(violation for judged in found.values() for violation in judged))


def _prepare(
    source: Any, target: Target | None, contract: Any, after: Any, operators: Sequence[str] | None,
    input_format: FormatLike, max_mutants: int | None = None,
) -> _Job:
    if (target is None) == (after is None):
        raise InputError("Give exactly one of a target to run or a logged after snapshot")
    if isinstance(source, Snapshot):
        raise InputError("Mutation input must be a message list or a JSON file path, not a Snapshot")
    select_operators(operators)  # unknown operator names are reported before the contract's problems
    budget = check_budget(max_mutants)
    resolved = load_contract(contract)
    chosen = select_operators(operators, resolved)
    fmt = resolve_format(input_format or resolved.format)
    prepared, copied = _load_input(source, fmt, target is not None)
    return _Job(prepared, resolved, chosen, prepare_before(prepared.before, resolved), fmt, budget,
                copied)


def _failed(exc: Exception) -> InputError:
    return InputError(f"Transformation failed: {type(exc).__name__}: {exc}")


def _load_after(after: Any, fmt: Format) -> tuple[list[Any], Loaded]:
    if isinstance(after, Snapshot):
        raise InputError("A logged after snapshot must be a message list or a JSON file path")
    if isinstance(after, str | os.PathLike):
        loaded = load_file(after, fmt)
        return loaded.wire, loaded
    return _load_output(after, fmt, "A logged after snapshot")


def _load_output(
    output: Any, fmt: Format, what: str = "The transformation output"
) -> tuple[list[Any], Loaded]:
    """Validate an output list. Mutants are built from its raw objects when they are plain
    JSON values, else from the detached JSON copy (tuples read as arrays, see docs)."""
    if not isinstance(output, list):
        raise InputError(f"{what} must be a list of message objects")
    raw = output if type(output) is list else list(output)
    loaded = load_plain(raw, fmt)
    return loaded.wire, loaded


def _mutate(
    raw: list[Any], after: Loaded, contract: Contract, facts: BeforeFacts,
    baseline: Report, chosen: tuple[str, ...], verify: bool, budget: int | None = None,
    found: Mapping[str, list[Violation]] | None = None,
) -> MutationReport:
    if not baseline.passed:
        return MutationReport(baseline)
    with collector_paused():  # the loop makes no cycles; see frayproof_audit/collector.py
        return _judged(raw, after, contract, facts, baseline, chosen, verify, budget, found)


def _judged(
    raw: list[Any], after: Loaded, contract: Contract, facts: BeforeFacts,
    baseline: Report, chosen: tuple[str, ...], verify: bool, budget: int | None,
    found: Mapping[str, list[Violation]] | None,
) -> MutationReport:
    """Every mutant of a passing pair judged: the fast path, or the reference one (`verify`,
    or an output whose lists share objects), or both compared."""
    sites = [(name, get_operator(name).find_sites(after, contract, facts)) for name in chosen]
    groups, left = apply_budget(sites, budget, raw)
    fast_ok = not shares_mutable_objects(raw)
    if verify or not fast_ok:
        reference = MutationReport(
            baseline, _reference_outcomes(raw, after.format, contract, facts, groups, left))
        if verify and fast_ok:
            fast = MutationReport(baseline, _fast_outcomes(after, contract, facts, groups, left,
                                                           found))
            if fast != reference:
                raise FastPathMismatch(_first_difference(fast, reference))
        return reference
    return MutationReport(baseline, _fast_outcomes(after, contract, facts, groups, left, found))


Groups = list[tuple[str, list[Candidate]]]


def _fast_outcomes(
    after: Loaded, contract: Contract, facts: BeforeFacts, groups: Groups, left: dict[str, Left],
    found: Mapping[str, list[Violation]] | None = None,
) -> tuple[MutantOutcome, ...]:
    shared = SharedPair(after, contract, facts, found)
    outcomes: list[MutantOutcome] = []
    for name, candidates in groups:
        if not candidates and name not in left and not get_operator(name).quiet:
            outcomes.append(_skip(name))
        for group, mutant in shared.distinct(candidates) if candidates else ():
            outcomes.append(_outcome(group, shared.evaluate(group.first, mutant)))
        if name in left:
            outcomes.append(_budget_skip(left[name]))
    return tuple(outcomes)


def _reference_outcomes(
    raw: list[Any], fmt: Format, contract: Contract, facts: BeforeFacts, groups: Groups,
    left: dict[str, Left],
) -> tuple[MutantOutcome, ...]:
    """frayproof's way: every mutant (a deep copy, neutral message dicts) validated afresh by
    the format and judged by every enabled check from scratch, against the same before facts."""
    outcomes: list[MutantOutcome] = []
    for name, candidates in groups:
        if not candidates and name not in left and not get_operator(name).quiet:
            outcomes.append(_skip(name))
        for group, mutant in reference_mutants(raw, candidates) if candidates else ():
            loaded = Loaded(mutant, fmt.views(mutant), fmt)
            outcomes.append(_outcome(group, evaluate(loaded, contract, facts)))
        if name in left:
            outcomes.append(_budget_skip(left[name]))
    return tuple(outcomes)


def reference_mutants(
    raw: list[Any], candidates: Sequence[Candidate]
) -> list[tuple[Group, list[Any]]]:
    """Distinct mutants the reference way: a deep copy of the raw output per candidate, edited
    in place (so shared objects spread the edit, as in frayproof), deduplicated on its
    sorted-key JSON."""
    built: dict[int, list[Any]] = {}

    def key(candidate: Candidate) -> Hashable:
        mutant = deepcopy(raw)
        candidate.edit.apply_in_place(mutant)
        built[id(candidate)] = mutant
        return json.dumps(mutant, sort_keys=True, ensure_ascii=False)

    found = []
    for group in dedupe(candidates, key):
        mutant = built.get(id(group.first))
        if mutant is None:
            mutant = deepcopy(raw)
            group.first.edit.apply_in_place(mutant)
        found.append((group, mutant))
    return found


def _skip(name: str) -> MutantOutcome:
    reason = get_operator(name).skip_reason
    return MutantOutcome(name, reason, SKIPPED, None, (), reason)


def _budget_skip(left: Left) -> MutantOutcome:
    label = get_operator(left.operator).label
    return MutantOutcome(left.operator, label, SKIPPED, None, (), left.reason,
                         budget_skipped=left.not_judged)


def _outcome(group: Group, report: Report) -> MutantOutcome:
    first = group.first
    checks = tuple(report.error_checks())
    if checks:
        return MutantOutcome(first.operator, first.description, CAUGHT, first.message_index,
                             group.sites, f"Rejected by {', '.join(checks)}.", checks, report)
    return MutantOutcome(first.operator, first.description, SURVIVED, first.message_index,
                         group.sites, get_operator(first.operator).survivor_hint, (), report)


def _first_difference(fast: MutationReport, reference: MutationReport) -> str:
    for mine, theirs in zip(fast.mutants, reference.mutants, strict=False):
        if mine != theirs:
            return f"fast path {mine!r} != full recheck {theirs!r}"
    return f"fast path has {len(fast.mutants)} mutants, full recheck {len(reference.mutants)}"
