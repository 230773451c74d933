"""retention: positional rules that hold whatever the session's content is.

`latest_user_message: exact` — the last user message of before is the last user message of
after, identical, at or after the retained exchanges.
`recent_exchanges: N` — the last N closed exchanges of before appear verbatim, contiguous and
in order in after (summaries may sit between them).
`tool_results: complete` — a result kept for a before id keeps one of its before contents.
`compare: equivalent` (and `latest_user_message: equivalent`) accept re-serialized messages
and contents (`equivalence`); `exact` is frayproof's identity.
Bad:  after drops the final user request, or truncates a kept tool result.
Good: older exchanges replaced by a summary; the recent ones and the request kept verbatim.
"""

from __future__ import annotations

import functools
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

from frayproof_audit.checks.base import Check, CheckSettings, Condition
from frayproof_audit.equivalence import EXACT, equivalence_key
from frayproof_audit.loaded import KeySpan, Loaded
from frayproof_audit.prepared import ResultIndex, last_closed_exchanges
from frayproof_audit.recheck.local import at_index
from frayproof_audit.report import Violation

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.loaded import MessageView
    from frayproof_audit.prepared import BeforeFacts
    from frayproof_audit.recheck.base import PairContext
    from frayproof_audit.recheck.mutant import Effects, Mutant

NAME = "retention"
KEY = "retention"
LATEST = Condition("RET-LATEST",
                   "Latest user message was not retained {how}, after the retained exchanges.")
EXCHANGE = Condition("RET-EXCHANGE",
                     "Recent exchange {span} is not retained {how} and in order.")
RESULT = Condition("RET-RESULT",
                   "Retained tool result content differs from every original result for this id.")


@dataclass(frozen=True, slots=True)
class RetentionFacts:
    exchanges: tuple[tuple[int, int, Sequence[bytes]], ...] = ()
    """Last N closed exchanges of before: (start, end, keys), oldest first (each message's
    key under `retain.compare`: `Loaded.key`, computed on first use: `Loaded.keys`)."""
    latest_user: tuple[int, Sequence[bytes]] | None = None
    """Before's last user message: its index, and its key under `latest_user_message` as a
    one-key sequence computed on first use (`Loaded.keys_of`)."""
    results: ResultIndex | None = None
    """Before tool contents by call id (`tool_results: complete`), or None when inactive."""
    written: dict[tuple[Any, ...], Violation] = field(default_factory=dict, compare=False,
                                                      repr=False)
    """The exchange and latest-message findings once written (they point into before, so they
    are the same values whatever the after snapshot): mutation judges many mutants against
    these facts."""


def prepare(before: Loaded, contract: Contract) -> RetentionFacts:
    views = before.views
    retain = contract.retain
    exchanges: list[tuple[int, int, Sequence[bytes]]] = []
    if retain.recent_exchanges > 0:
        spans = last_closed_exchanges([view.role for view in views], retain.recent_exchanges)
        exchanges = [
            (start, end, before.keys(start, end, retain.compare))
            for start, end in spans
        ]
    latest_user = None
    if retain.latest_user_message is not None:
        index = before.last_index("user")
        if index is not None:
            latest_user = (index, before.keys_of((index,), retain.latest_user_message))
    results: ResultIndex | None = None
    if retain.tool_results is not None:
        contents: dict[str, list[Any]] = {}
        for view in views:
            if view.role == "tool" and view.tool_call_id:
                contents.setdefault(view.tool_call_id, []).append(view.content)
        results = ResultIndex(contents)
    return RetentionFacts(tuple(exchanges), latest_user, results)


def retention_facts(before: BeforeFacts) -> RetentionFacts:
    return cast("RetentionFacts", before.of(KEY))


def find(
    after: Loaded, contract: Contract, before: BeforeFacts | None, settings: CheckSettings
) -> list[Violation]:
    severity = settings.severity
    if before is None or not contract.retain.active:
        return []
    facts = retention_facts(before)
    missing: list[tuple[int, int]] = []
    cursor = 0
    compare = contract.retain.compare
    for start, end, identities in facts.exchanges:
        position = _find_block(after, identities, before.snapshot, start, cursor, compare)
        if position is None:
            missing.append((start, end))
        else:
            cursor = position + len(identities)
    latest_lost = False
    if facts.latest_user is not None:
        before_index, key = facts.latest_user
        after_index = after.last_index("user")
        latest = contract.retain.latest_user_message or EXACT
        latest_lost = (after_index is None or after_index < cursor
                       or not _same(after, after_index, key, before.snapshot, before_index, latest))
    found = _positional_findings(facts, before.snapshot, contract, severity, missing, latest_lost)
    if facts.results is not None:
        for index, view in enumerate(after.views):
            if view.role != "tool" or not view.tool_call_id:
                continue
            if facts.results.retained(view.tool_call_id, view.content, compare) is False:
                found.append(RESULT.violation(NAME, severity, "after", index,
                                              tool_call_id=view.tool_call_id, rule="tool_results"))
    return found


def _positional_findings(facts: RetentionFacts, before: Loaded | None, contract: Contract,
                         severity: str, missing: Sequence[tuple[int, int]],
                         latest_lost: bool) -> list[Violation]:
    """The latest-message finding (when `latest_lost`), then one per exchange not found
    (`missing`: its before span), each written once per facts (`RetentionFacts.written`)."""
    written = facts.written
    found: list[Violation] = []
    if latest_lost and facts.latest_user is not None:
        before_index = facts.latest_user[0]
        latest = contract.retain.latest_user_message or EXACT
        finding = written.get(("latest", before_index, severity, latest))
        if finding is None:
            finding = written[("latest", before_index, severity, latest)] = LATEST.violation(
                NAME, severity, "before", before_index, rule="latest_user_message",
                how="exactly" if latest == EXACT else "as an equivalent message")
        found.append(finding)
    compare = contract.retain.compare
    for start, end in missing:
        finding = written.get(("exchange", start, severity, compare))
        if finding is None:
            span = (f"before[{start}:{end}]" if before is None
                    else before.span_site("before", start, end))
            finding = written[("exchange", start, severity, compare)] = EXCHANGE.violation(
                NAME, severity, "before", start, rule="recent_exchanges", span=span,
                how="verbatim" if compare == EXACT else "as equivalent messages")
        found.append(finding)
    return found


def _same(after: Loaded, index: int, key: Sequence[bytes], before: Loaded | None,
          before_index: int, compare: str) -> bool:
    """Whether after message `index` has `key[0]`, before message `before_index`'s key (by
    equality first when the before snapshot is at hand: `Loaded.same_key`)."""
    if before is None:
        return after.key(index, compare) == key[0]
    return after.same_key(index, before, before_index, compare)


def _find_block(after: Loaded, identities: Sequence[bytes], before: Loaded | None, start: int,
                cursor: int, compare: str) -> int | None:
    """Smallest p ≥ cursor where after[p:p+len] has exactly these keys (`Loaded.key`) of before
    messages [start, start+len) (compared by equality first: `Loaded.same_key`)."""
    length = len(identities)
    if length == 0:
        return cursor if cursor <= len(after) else None
    views = after.views
    if before is None:
        key = after.identity if compare == EXACT else after.equivalence_key
        first = identities[0]
        for position in range(cursor, len(after) - length + 1):
            if views[position].role != "user" or key(position) != first:
                continue
            if all(key(position + k) == identities[k] for k in range(1, length)):
                return position
        return None
    keys = after.known_keys(compare)
    if keys is not None and isinstance(identities, KeySpan):
        return _find_known(after.views, keys, identities.all(), cursor)
    same = after.same_key
    for position in range(cursor, len(after) - length + 1):
        if views[position].role != "user" or not same(position, before, start, compare):
            continue
        for k in range(1, length):  # a loop, not all() over a generator: mutation reruns this
            if not same(position + k, before, start + k, compare):
                break
        else:
            return position
    return None


def _find_known(views: Sequence[MessageView], keys: list[bytes], block: tuple[bytes, ...],
                cursor: int) -> int | None:
    """`_find_block` when every key of after is known: the same test (a user message whose
    key and the next ones' are the block's), searched for in C (`list.index`, slices)."""
    length, first = len(block), block[0]
    stop = len(keys) - length + 1
    position = cursor
    while position < stop:
        try:
            position = keys.index(first, position, stop)
        except ValueError:
            return None
        if views[position].role == "user" and tuple(keys[position:position + length]) == block:
            return position
        position += 1
    return None


# --- mutation's re-check ---------------------------------------------------------------------

_OTHER = 0
_USER = 1
Symbol = int | tuple[bytes | None, bytes | None]
"""A skeleton symbol: U or O (ints), or an anchor's (block key, latest key)."""


def _recheck(pair: PairContext, check: Check, settings: CheckSettings,
             found: list[Violation]) -> _Split | None:
    """The split re-check, when running its two parts on the original reproduces `found`."""
    facts = retention_facts(pair.facts)
    if facts.exchanges or facts.latest_user is not None:
        pair.keep_identities()  # a rerun compares the mutant's messages with before's by key
    split = _Split(pair, check, settings, facts)
    return split if split.reproduces(found) else None


class _Split:
    """Mutation's re-check (O = original output, M = mutant): retention split in two, used only
    when running the two parts separately on O reproduces its findings exactly.

    Result findings (`tool_results`) are per message: with O clean for them, M's are those of
    its new messages. Latest/exchange findings depend only on M's *skeleton*: each message
    mapped to its identity if that identity is an *anchor* (it occurs in a retained before
    exchange, or is the before's latest user message), else to U (a user message) or O
    (anything else), with every maximal run of non-anchor symbols collapsed to one symbol that
    says only whether the run holds a U. Blocks consist of anchors only, so a match never spans
    a run, and collapsing preserves the order of the anchors, hence every block search and the
    cursor; the latest user message is the last anchor user or lies in the last run holding a
    U (whose identity is no anchor, so it never equals the latest one), which the collapsed
    form also tells. Under `equivalent` comparisons the same holds with each message's key
    under its rule's comparison in place of its identity (`Loaded.key`: the blocks use
    `retain.compare`, the latest rule its own), so an anchor's symbol holds both keys. An edit
    that leaves the collapsed skeleton unchanged leaves these findings (which point into
    before) unchanged: changing a message without changing its symbol; deleting, swapping or
    moving to behind a final run non-anchor messages, so long as no run empties (its anchors
    would meet) and no run gains or loses its only U messages. Any other edit reruns that part
    over M.
    """

    def __init__(self, pair: PairContext, check: Check, settings: CheckSettings,
                 facts: RetentionFacts) -> None:
        self.pair, self.check, self.settings, self.facts = pair, check, settings, facts
        self.positional_facts = pair.facts.with_facts(KEY, replace(facts, results=None))
        self.result_facts = pair.facts.with_facts(KEY, replace(facts, exchanges=(), latest_user=None))
        self.has_positional = bool(facts.exchanges) or facts.latest_user is not None

    def reproduces(self, found: list[Violation]) -> bool:
        """Whether the two parts on the original give `found` (then prepare the skeleton)."""
        after, contract = self.pair.after, self.pair.contract
        positional = self._positional(after)
        results = self.check.find(after, contract, self.result_facts, self.settings)
        if positional + results != found:
            return False
        facts = self.facts
        self.original_positional = positional
        self.results_clean = not results
        retain = contract.retain
        self.block_compare = retain.compare
        self.latest_compare = retain.latest_user_message or EXACT
        self.block_anchors = {key for _, _, block in facts.exchanges for key in block}
        self.latest_anchor = None if facts.latest_user is None else facts.latest_user[1][0]
        self.skeleton: list[Symbol] = []
        self.run_of: list[int] = []
        self.run_sizes: list[int] = []
        self.run_users: list[int] = []
        if self.has_positional:
            for index, view in enumerate(after.views):
                symbol = self._symbol(after.wire[index], view, functools.partial(after.key, index))
                self.skeleton.append(symbol)
                if type(symbol) is not int:
                    self.run_of.append(-1)
                    continue
                if not self.run_of or self.run_of[-1] < 0:
                    self.run_sizes.append(0)
                    self.run_users.append(0)
                run = len(self.run_sizes) - 1
                self.run_of.append(run)
                self.run_sizes[run] += 1
                self.run_users[run] += symbol == _USER
        self.matches = self._all_matches(after, positional)
        self.last_user = after.last_index("user")
        return True

    def _all_matches(self, after: Loaded, positional: list[Violation]) -> list[list[int]] | None:
        """Where each retained exchange matches in the original (every position, by its keys),
        for the anchor-loss lemma (`_anchors_lost`); None where it does not apply: findings on
        the original, `equivalent` comparisons, or an empty block."""
        facts = self.facts
        keys = after.known_keys(EXACT)
        if (positional or not self.has_positional or keys is None or self.block_compare != EXACT
                or self.latest_compare != EXACT):
            return None
        found: list[list[int]] = []
        for _, _, identities in facts.exchanges:
            if not isinstance(identities, KeySpan) or not len(identities):
                return None
            block, places = identities.all(), []
            place = _find_known(after.views, keys, block, 0)
            while place is not None:
                places.append(place)
                place = _find_known(after.views, keys, block, place + 1)
            found.append(places)
        return found

    def _positional(self, loaded: Loaded) -> list[Violation]:
        if not self.has_positional:
            return []
        return self.check.find(loaded, self.pair.contract, self.positional_facts, self.settings)

    def findings(self, effects: Effects, mutant: Mutant) -> list[Violation] | None:
        check, contract, settings = self.check, self.pair.contract, self.settings
        fresh = mutant.fresh
        lost = self._anchors_lost(effects, mutant)
        if lost is not None:
            found = self._without(lost)
        elif self._keeps_skeleton(effects, mutant):
            found = list(self.original_positional)
        else:
            if self.block_compare == EXACT:
                # every key known: the rerun's block search runs over the key list (`find`)
                for number in range(len(fresh)):
                    mutant.fresh_identity(number)
            found = self._positional(mutant.loaded)
        if not self.results_clean:
            return found + check.find(mutant.loaded, contract, self.result_facts, settings)
        if self.facts.results is None:
            return found
        new_results = [(p, message, view) for p, message, view in fresh if view.role == "tool"]
        if new_results:
            small = Loaded([message for _, message, _ in new_results],
                           [view for _, _, view in new_results], mutant.original.format)
            for violation in check.find(small, contract, self.result_facts, settings):
                assert violation.message_index is not None
                found.append(at_index(violation, new_results[violation.message_index][0]))
        return found

    def _anchors_lost(self, effects: Effects, mutant: Mutant) -> list[int] | None:
        """The anchor-loss lemma: positions (sorted) whose anchor an in-place rewrite turned into
        a non-anchor, when that is all the edit changes in the skeleton; else None.

        With the original clean for the positional part and exact keys, an edit that only
        rewrites messages in place, each keeping its role and either its symbol or becoming a
        non-anchor, leaves every other message where it was. A window of M holding a lost
        anchor matches no block (a block's keys are all anchors); any other window is O's own
        and matches exactly where it matched in O. So each block's search from its cursor
        finds its first match in O (`matches`) at or after the cursor that holds no lost
        position, and the latest user message is O's, lost when it lost its anchor or lies
        before the cursor: `_without`. (No lost anchor: the skeleton is kept.)
        """
        if (self.matches is None or not effects.rewritten or effects.deleted
                or effects.moved_to_end or effects.swapped):
            return None
        symbols, views = self.skeleton, self.pair.after.views
        lost: list[int] = []
        for number, (position, message, view) in enumerate(mutant.fresh):
            if view.role != views[position].role:
                return None
            key = functools.partial(self._fresh_key, mutant, number, message)
            symbol = self._symbol(message, view, key)
            if symbol != symbols[position]:
                if type(symbol) is not int:
                    return None  # an anchor made, or another anchor's keys
                lost.append(position)
        return sorted(lost)

    def _without(self, lost: list[int]) -> list[Violation]:
        """The positional findings of M, O's anchors at `lost` gone (`_anchors_lost`)."""
        assert self.matches is not None
        if not lost:
            return list(self.original_positional)
        facts, cursor = self.facts, 0
        missing: list[tuple[int, int]] = []
        for (start, end, identities), places in zip(facts.exchanges, self.matches, strict=True):
            length = len(identities)
            for place in places[bisect_left(places, cursor):]:
                k = bisect_left(lost, place)
                if k == len(lost) or lost[k] >= place + length:
                    cursor = place + length
                    break
            else:
                missing.append((start, end))
        latest_lost = facts.latest_user is not None and (
            self.last_user is None or self.last_user < cursor or self.last_user in lost)
        return _positional_findings(facts, self.pair.facts.snapshot,
                                    self.pair.contract, self.settings.severity, missing,
                                    latest_lost)

    def _keeps_skeleton(self, effects: Effects, mutant: Mutant) -> bool:
        """Whether the edit provably leaves the collapsed skeleton (class docstring) as is."""
        if not self.has_positional:
            return True
        symbols = self.skeleton
        if effects.rewritten:
            # In-place rewrites keep positions: each new message replaces the one at its index.
            if effects.deleted or effects.moved_to_end or effects.swapped:
                return False
            for number, (position, message, view) in enumerate(mutant.fresh):
                key = functools.partial(self._fresh_key, mutant, number, message)
                if self._symbol(message, view, key) != symbols[position]:
                    return False
            return True
        run_of = self.run_of
        sizes: Counter[int] = Counter()  # run -> change in its size
        users: Counter[int] = Counter()  # run -> change in its number of user messages
        if effects.swapped is not None:
            if effects.deleted or effects.moved_to_end:
                return False
            first, second = effects.swapped
            if run_of[first] < 0 or run_of[second] < 0:
                return False  # an anchor moves
            users[run_of[first]] += (symbols[second] == _USER) - (symbols[first] == _USER)
            users[run_of[second]] += (symbols[first] == _USER) - (symbols[second] == _USER)
        elif effects.moved_to_end:
            if effects.deleted or len(effects.moved_to_end) != 1:
                return False
            moved, last = effects.moved_to_end[0], run_of[-1]
            if run_of[moved] < 0 or last < 0:
                return False  # an anchor moves, or the moved message starts a new run at the end
            sizes[run_of[moved]] -= 1
            users[run_of[moved]] -= symbols[moved] == _USER
            sizes[last] += 1
            users[last] += symbols[moved] == _USER
        for index in effects.deleted:
            if run_of[index] < 0:
                return False  # an anchor goes
            sizes[run_of[index]] -= 1
            users[run_of[index]] -= symbols[index] == _USER
        for run in sizes.keys() | users.keys():
            size, count = self.run_sizes[run], self.run_users[run]
            if size + sizes[run] < 1 or (count > 0) != (count + users[run] > 0):
                return False  # a run vanishes (anchors meet), or gains or loses its only users
        return True

    @staticmethod
    def _fresh_key(mutant: Mutant, number: int, message: dict[str, Any], compare: str) -> bytes:
        """New message `number`'s key under `compare` (its identity computed once per mutant,
        for the rerun to reuse)."""
        return mutant.fresh_identity(number) if compare == EXACT else equivalence_key(message)

    def _symbol(self, message: dict[str, Any], view: MessageView,
                key: Callable[[str], bytes]) -> Symbol:
        """The message's skeleton symbol: its anchor keys if it is an anchor, else U or O.

        An anchor is a message whose key under the blocks' comparison is a block key, or
        whose key under the latest rule's comparison is the latest one's; the symbol holds
        both keys (None where it is no anchor), so equal symbols decide every block search
        and the latest test alike, whichever comparison each rule uses.
        """
        block_anchor = latest_anchor = None
        if self.block_anchors:
            block = key(self.block_compare)
            if block in self.block_anchors:
                block_anchor = block
        if self.latest_anchor is not None:
            latest = key(self.latest_compare)
            if latest == self.latest_anchor:
                latest_anchor = latest
        if block_anchor is None and latest_anchor is None:
            return _USER if view.role == "user" else _OTHER
        return block_anchor, latest_anchor


CHECK = Check(
    name=NAME,
    key=KEY,
    conditions=(LATEST, EXCHANGE, RESULT),
    find=find,
    summary="Positional rules: the latest request, recent exchanges and kept results survive.",
    needs_before=True,
    active=lambda contract: contract.retain.active,
    asks_for="retention rules",
    prepare=prepare,
    recheck=_recheck,
)
