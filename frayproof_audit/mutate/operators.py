"""The mutation operators, one `Operator` record each, registered in frayproof's order.
Adding an operator is one site finder and one record in `OPERATOR_TABLE`.

A site finder reads a validated output snapshot (its neutral message dicts and their views)
and returns one `Candidate` per eligible site: a label in the user's wire coordinates, a
description and the `Edit` that would produce the mutant. Operators never build or modify
message lists themselves, so the same candidates serve the copy-on-write fast path and the
deep-copy reference path, and the edit's declared `effects` tell the checks' re-checks what
they may skip. Identical mutants of one operator are merged by `dedupe` (the key is supplied by
the path that builds the mutants); an operator with no candidate yields one skip entry.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from functools import partial

import frayproof_audit.mutate.arguments as arguments
from frayproof_audit.checks import pinned_content
from frayproof_audit.contract import Contract
from frayproof_audit.equivalence import EXACT, text_runs
from frayproof_audit.errors import InputError
from frayproof_audit.loaded import Loaded
from frayproof_audit.model import (
    INSTRUCTION_ROLES,
    edited_copy,
    first_nonblank,
    has_content,
    text_parts,
)
from frayproof_audit.mutate.edits import (
    AppendCallCopy,
    DeleteMessage,
    DropBlock,
    DropCall,
    Edit,
    EditText,
    KeepInstructions,
    MoveToEnd,
    ReplaceBlock,
    SetArguments,
    Swap,
    remove_literal,
    truncate_half,
)
from frayproof_audit.prepared import BeforeFacts, closed_exchanges
from frayproof_audit.providers.blocks import (
    altered_thinking,
    block_site,
    reasoning_positions,
    thinking_positions,
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One eligible site: the mutant it would produce is described by `edit`."""

    operator: str
    description: str
    message_index: int
    site: str
    edit: Edit


@dataclass(frozen=True, slots=True)
class Group:
    """A distinct mutant: the first candidate that produced it plus every site producing it."""

    first: Candidate
    sites: tuple[str, ...]


def site(after: Loaded, index: int, position: int | None = None, argument: str | None = None) -> str:
    """A message, one call of it, or one argument of that call, in the user's wire coordinates."""
    return after.site("after", index, position, argument)


def call_sites(after: Loaded) -> list[tuple[int, int, str]]:
    """(message index, position in tool_calls, id) of every assistant call with a non-empty id."""
    return [
        (index, position, call.id)
        for index, view in enumerate(after.views)
        if view.role == "assistant"
        for position, call in enumerate(view.calls)
        if call.id
    ]


def drop_tool_call(after: Loaded, contract: Contract, facts: BeforeFacts) -> list[Candidate]:
    views = after.views
    answered = {view.tool_call_id for view in views if view.role == "tool"}
    calls = call_sites(after)
    uses = Counter(call_id for _, _, call_id in calls)
    found = []
    for index, position, call_id in calls:
        if call_id not in answered or uses[call_id] != 1:
            continue
        view = views[index]
        # Emptying an assistant message would let structure catch the mutant for the wrong
        # reason, so a message left with nothing at all is removed with its last call.
        drops = len(view.calls) == 1 and not (
            has_content(view.content) or (view.refusal and view.refusal.strip())
        )
        found.append(Candidate("drop_tool_call", "Delete a tool call and keep its result.",
                               index, site(after, index, position), DropCall(index, position, drops)))
    return found


def drop_tool_result(after: Loaded, contract: Contract, facts: BeforeFacts) -> list[Candidate]:
    views = after.views
    called = {call_id for _, _, call_id in call_sites(after)}
    results = Counter(view.tool_call_id for view in views if view.role == "tool")
    return [
        Candidate("drop_tool_result", "Delete a tool result and keep its call.",
                  index, site(after, index), DeleteMessage(index))
        for index, view in enumerate(views)
        if view.role == "tool" and view.tool_call_id in called and results[view.tool_call_id] == 1
    ]


def duplicate_tool_id(after: Loaded, contract: Contract, facts: BeforeFacts) -> list[Candidate]:
    return [
        Candidate("duplicate_tool_id", "Repeat a tool call with the same id in its message.",
                  index, site(after, index, position), AppendCallCopy(index, position))
        for index, position, _ in call_sites(after)
    ]


def remove_pinned_text(after: Loaded, contract: Contract, facts: BeforeFacts) -> list[Candidate]:
    """Contains pins remove their literal everywhere; role pins alter each preserved message;
    without any pin selector, each instruction message loses its first non-blank line."""
    views = after.views
    parts = [text_parts(view.content) for view in views]
    found: list[Candidate] = []
    for pin, pin_facts in zip(contract.pins, pinned_content.pin_facts(facts), strict=True):
        if pin.contains is not None:
            literal = pin.contains
            if pin_facts.text_index is None:
                continue
            holders = tuple(i for i, texts in enumerate(parts) if any(literal in t for t in texts))
            if pin.match != EXACT:
                joined = _joined_holders(after, literal)
                if joined is None:
                    continue
                holders = joined
            if holders:
                found.append(Candidate(
                    "remove_pinned_text", f"Delete the text pinned by {pin.name!r}.", holders[0],
                    f"pin:{pin.name}",
                    EditText(holders, partial(_remove, literal=literal), every=True)))
        else:
            protected = set(pin_facts.role_keys)
            if not protected:
                continue
            for index, view in enumerate(views):
                if view.role != pin.role:
                    continue
                text = first_nonblank(parts[index])
                if text is not None and after.key(index, pin.match) in protected:
                    found.append(Candidate(
                        "remove_pinned_text", f"Alter the message pinned by {pin.name!r}.",
                        index, f"pin:{pin.name}@{site(after, index)}",
                        EditText((index,), partial(_remove, literal=text))))
    if found:
        return found
    for index, view in enumerate(views):
        if view.role not in INSTRUCTION_ROLES:
            continue
        line = next((line for part in parts[index] for line in part.splitlines() if line.strip()),
                    None)
        if line is not None:
            found.append(Candidate(
                "remove_pinned_text", "Delete instruction text (no pin selects any text).",
                index, site(after, index), EditText((index,), partial(_remove, literal=line))))
    return found


def _remove(part: str, literal: str) -> str:
    return remove_literal(part, literal)


def _joined_holders(after: Loaded, literal: str) -> tuple[int, ...] | None:
    """For a `match: equivalent` contains pin, which reads text parts joined: the messages
    holding the literal, or None when removing it from each part would leave it split across
    parts somewhere (no text edit makes that mutant, so none is offered)."""
    holders = tuple(i for i, view in enumerate(after.views)
                    if any(literal in run for run in text_runs(view.content)))
    edit = partial(_remove, literal=literal)
    if any(literal in run for i in holders
           for run in text_runs(edited_copy(after.wire[i], edit).get("content"))):
        return None
    return holders


def swap_call_result(after: Loaded, contract: Contract, facts: BeforeFacts) -> list[Candidate]:
    views = after.views
    results: dict[str, list[int]] = {}
    for index, view in enumerate(views):
        if view.role == "tool" and view.tool_call_id:
            results.setdefault(view.tool_call_id, []).append(index)
    return [
        Candidate("swap_call_result", "Put a tool result before its call.", result,
                  f"{site(after, index, position)}->{site(after, result)}", Swap(index, result))
        for index, position, call_id in call_sites(after)
        for result in results.get(call_id, ())
        if result > index
    ]


def move_instruction(after: Loaded, contract: Contract, facts: BeforeFacts) -> list[Candidate]:
    views = after.views
    last_other = max(
        (index for index, view in enumerate(views) if view.role not in INSTRUCTION_ROLES),
        default=-1,
    )
    return [
        Candidate("move_instruction", "Move an instruction message behind the conversation.",
                  index, site(after, index), MoveToEnd(index))
        for index, view in enumerate(views[:max(last_other, 0)])
        if view.role in INSTRUCTION_ROLES
    ]


def drop_latest_user(after: Loaded, contract: Contract, facts: BeforeFacts) -> list[Candidate]:
    index = after.last_index("user")
    if index is None:
        return []
    return [Candidate("drop_latest_user", "Delete the latest user message.",
                      index, site(after, index), DeleteMessage(index))]


def truncate_tool_result(after: Loaded, contract: Contract, facts: BeforeFacts) -> list[Candidate]:
    return [
        Candidate("truncate_tool_result", "Cut a tool result's text in half, keeping its id.",
                  index, site(after, index), EditText((index,), truncate_half))
        for index, view in enumerate(after.views)
        if view.role == "tool" and any(len(part) > 1 for part in text_parts(view.content))
    ]


def drop_recent_exchange(after: Loaded, contract: Contract, facts: BeforeFacts) -> list[Candidate]:
    views = after.views
    return [
        Candidate(
            "drop_recent_exchange", "Delete a closed exchange with its calls and results.",
            start, after.span_site("after", start, stop),
            KeepInstructions(start, stop, tuple(
                k for k in range(start, stop) if views[k].role in INSTRUCTION_ROLES)))
        for start, stop in closed_exchanges([view.role for view in views])
    ]


def drop_required_argument(after: Loaded, contract: Contract, facts: BeforeFacts) -> list[Candidate]:
    """One mutant per call × required argument it holds (schema `required` order)."""
    found = []
    for call in arguments.call_sites(after, contract):
        for name in arguments.required(call.parameters):
            if name not in call.arguments:
                continue
            rest = {key: value for key, value in call.arguments.items() if key != name}
            found.append(Candidate(
                "drop_required_argument",
                f"Delete required argument {name!r} of a {call.tool} call.", call.index,
                site(after, call.index, call.position, name),
                SetArguments(call.index, call.position, arguments.compact(rest))))
    return found


def retype_argument(after: Loaded, contract: Contract, facts: BeforeFacts) -> list[Candidate]:
    """One mutant per call × declared argument it holds (schema `properties` order), the value
    replaced by the first wrong-typed one of `arguments.WRONG_VALUES`."""
    found = []
    for call in arguments.call_sites(after, contract):
        for name, allowed in arguments.declared_types(call.parameters):
            if name not in call.arguments:
                continue
            exists, wrong = arguments.wrong_value(allowed)
            if not exists or arguments.same_value(call.arguments[name], wrong):
                continue
            changed = {**call.arguments, name: wrong}
            shown = json.dumps(wrong)
            found.append(Candidate(
                "retype_argument",
                f"Give argument {name!r} of a {call.tool} call the wrong type ({shown}).",
                call.index, site(after, call.index, call.position, name),
                SetArguments(call.index, call.position, arguments.compact(changed))))
    return found


def drop_reasoning_item(after: Loaded, contract: Contract, facts: BeforeFacts) -> list[Candidate]:
    """One mutant per reasoning item (a `reasoning` block with an `id`, as the Responses API
    requires of one, in an assistant message): the item goes, the message or call it came with
    stays. A turn of reasoning only goes whole. Reasoning without an id (an OpenTelemetry
    `reasoning` part, plain text) is no provider item, so no site."""
    found = []
    for index, view in enumerate(after.views):
        if view.role != "assistant":
            continue
        for position in reasoning_positions(after.wire[index]):
            content = after.wire[index]["content"]  # a list: it holds a reasoning block
            if type(content[position].get("id")) is not str:
                continue
            drops = len(content) == 1 and not (view.calls or (view.refusal and view.refusal.strip()))
            found.append(Candidate(
                "drop_reasoning_item", "Delete a reasoning item and keep the item it came with.",
                index, block_site(after, index, position), DropBlock(index, position, drops)))
    return found


def alter_thinking_block(after: Loaded, contract: Contract, facts: BeforeFacts) -> list[Candidate]:
    """One mutant per thinking or redacted thinking block of the latest assistant message (the
    blocks a provider verifies), its signed text changed."""
    index = after.last_index("assistant")
    if index is None:
        return []
    message = after.wire[index]
    found = []
    for position in thinking_positions(message):
        altered = altered_thinking(message["content"][position])
        if altered is not None:
            found.append(Candidate(
                "alter_thinking_block", "Change a thinking block of the latest assistant message.",
                index, block_site(after, index, position), ReplaceBlock(index, position, altered)))
    return found


def _has_tool_schemas(contract: Contract) -> bool:
    return bool(contract.tools)


SiteFinder = Callable[[Loaded, Contract, BeforeFacts], list[Candidate]]


@dataclass(frozen=True, slots=True)
class Operator:
    """A registered fault: its name, what it does, why it may not apply, what a survivor of
    it means for the contract, and the function that finds its sites."""

    name: str
    label: str
    skip_reason: str
    survivor_hint: str
    find_sites: SiteFinder
    applies: Callable[[Contract], bool] | None = None
    """None: always part of a run. Otherwise the operator runs (and reports a skip entry) only
    for contracts where this is true, e.g. argument faults only where tool schemas exist, so
    runs without them keep frayproof's nine entries."""
    quiet: bool = False
    """With no site, report nothing rather than a skip entry: for content only some formats
    carry (reasoning items, thinking blocks), so data without it (all Chat Completions data)
    keeps exactly the entries it had."""


OPERATOR_TABLE: tuple[Operator, ...] = (
    Operator(
        "drop_tool_call", "Delete a tool call and keep its result.",
        "No answered assistant call with an id used only once in the output.",
        "An orphaned result passed; enable tool_pairs so every result needs its call.",
        drop_tool_call),
    Operator(
        "drop_tool_result", "Delete a tool result and keep its call.",
        "No tool result whose id is called and answered only once in the output.",
        "An unanswered call passed; review tool_pairs and its trailing-pending allowance.",
        drop_tool_result),
    Operator(
        "duplicate_tool_id", "Repeat a tool call with the same id in its message.",
        "No assistant tool call with an id in the output.",
        "A reused call id passed; enable unique_tool_ids.",
        duplicate_tool_id),
    Operator(
        "remove_pinned_text", "Delete pinned or instruction text.",
        "No activated text pin, role-pinned text or instruction text in the output.",
        "Lost instruction or pinned text passed; add or strengthen content pins.",
        remove_pinned_text),
    Operator(
        "swap_call_result", "Put a tool result before its call.",
        "No tool call followed by its result in the output.",
        "A result before its call passed; enable tool_pairs and structure.",
        swap_call_result),
    Operator(
        "move_instruction", "Move an instruction message behind the conversation.",
        "No instruction message with conversation after it in the output.",
        "A moved instruction passed; tighten the structure.system_messages placement policy.",
        move_instruction),
    Operator(
        "drop_latest_user", "Delete the latest user message.",
        "No user message in the output.",
        "Losing the latest user message passed; set retain.latest_user_message: exact.",
        drop_latest_user),
    Operator(
        "truncate_tool_result", "Cut a tool result's text in half, keeping its id.",
        "No tool result with text longer than one character in the output.",
        "A truncated result passed; set retain.tool_results: complete.",
        truncate_tool_result),
    Operator(
        "drop_recent_exchange", "Delete a closed exchange with its calls and results.",
        "No closed user exchange in the output.",
        "Losing a whole exchange passed; set retain.recent_exchanges to the window you need.",
        drop_recent_exchange),
    Operator(
        "drop_required_argument", "Delete a required argument of a tool call.",
        "No call of a tool with a schema holds one of its required arguments in a JSON object.",
        "A call without a required argument passed; enable tool_arguments (tool_call_integrity "
        "also catches it in calls kept from before).",
        drop_required_argument, applies=_has_tool_schemas),
    Operator(
        "retype_argument", "Give a declared argument of a tool call a value of the wrong type.",
        "No call of a tool with a schema holds a declared, typed argument in a JSON object.",
        "An argument of the wrong type passed; enable tool_arguments (tool_call_integrity also "
        "catches it in calls kept from before).",
        retype_argument, applies=_has_tool_schemas),
    Operator(
        "drop_reasoning_item", "Delete a reasoning item and keep the item it came with.",
        "No reasoning item in the output.",
        "A dropped reasoning item passed; enable provider_validity (profile openai-responses): "
        "PV-RESP-REASONING-MISSING catches an item with an id kept without its reasoning, "
        "PV-RESP-REASONING-ALONE a reasoning item left without its item.",
        drop_reasoning_item, quiet=True),
    Operator(
        "alter_thinking_block", "Change a thinking block of the latest assistant message.",
        "No thinking block in the latest assistant message of the output.",
        "A changed thinking block passed; enable provider_validity (profile anthropic): "
        "PV-ANTH-THINKING-MODIFIED catches any byte of the latest assistant message's thinking "
        "that differs from before.",
        alter_thinking_block, quiet=True),
)
"""Every operator: frayproof's nine in its order (the order of reports and tables), then the
argument operators, which run only for contracts with tool schemas, then the reasoning and
thinking operators, which report only where the output holds such content."""

OPERATORS: tuple[str, ...] = tuple(operator.name for operator in OPERATOR_TABLE)
"""The operator names at import (help texts); what runs reads `OPERATOR_TABLE` when it runs,
so registering an operator is its one record there."""

_INDEX: tuple[tuple[Operator, ...], dict[str, Operator]] = ((), {})


def _by_name() -> dict[str, Operator]:
    """`OPERATOR_TABLE` by name, rebuilt only when the table is another tuple."""
    global _INDEX
    if _INDEX[0] is not OPERATOR_TABLE:
        _INDEX = (OPERATOR_TABLE, {operator.name: operator for operator in OPERATOR_TABLE})
    return _INDEX[1]


def operator_names() -> tuple[str, ...]:
    """Every registered operator's name, in registry order."""
    return tuple(_by_name())


def get_operator(name: str) -> Operator:
    return _by_name()[name]


def select_operators(names: Sequence[str] | None, contract: Contract | None = None) -> tuple[str, ...]:
    """The chosen operators in registry order; unknown names are an input error. Without
    names: every operator that applies to `contract` (all when no contract is given)."""
    if names is None:
        return tuple(
            operator.name for operator in OPERATOR_TABLE
            if contract is None or operator.applies is None or operator.applies(contract)
        )
    known = operator_names()
    chosen = set()
    for name in names:
        if name not in known:
            raise InputError(
                f"Unknown mutation operator {name!r} (choose from {', '.join(known)})")
        chosen.add(name)
    if not chosen:
        raise InputError("Choose at least one mutation operator")
    return tuple(name for name in known if name in chosen)


def dedupe(candidates: Sequence[Candidate], key: Callable[[Candidate], Hashable]) -> list[Group]:
    """Merge candidates whose mutants are identical (equal `key`), first one first.

    A single candidate needs no key at all, which spares building it.
    """
    if len(candidates) == 1:
        only = candidates[0]
        return [Group(only, (only.site,))]
    groups: dict[Hashable, Group] = {}
    for candidate in candidates:
        mutant_key = key(candidate)
        group = groups.get(mutant_key)
        if group is None:
            groups[mutant_key] = Group(candidate, (candidate.site,))
        else:
            groups[mutant_key] = Group(group.first, (*group.sites, candidate.site))
    return list(groups.values())
