"""The `good` selector: which logged pairs the user trusts, parsed with errors that say why.

    all                          every usable pair
    compactor=NAME[,NAME...]     pairs whose `compactor` is one of the names
    night=DAY | night=DAY..DAY   pairs logged on that UTC day, or in that range (both included)
    passes=CONTRACT              pairs that pass the contract file (checked as the audit would)
    A;B                          pairs every one of the selectors selects
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from frayproof_audit.contract import Contract, load_contract
from frayproof_audit.errors import InputError
from frayproof_audit.suggest.config import SuggestError
from frayproof_audit.suggest.judge import Judge
from frayproof_audit.suggest.pairs import Pair

FORMS = "all, compactor=NAME[,NAME...], night=DAY[..DAY] or passes=CONTRACT (several joined by ';')"


@dataclass(frozen=True, slots=True)
class GoodSelector:
    text: str
    kind: str
    """`all`, `compactor`, `night`, `passes` or `and` (every one of `parts`)."""
    compactors: tuple[str, ...] = ()
    first_day: dt.date | None = None
    last_day: dt.date | None = None
    contract: Contract | None = None
    parts: tuple[GoodSelector, ...] = ()

    def selects(self, pair: Pair, judge: Judge) -> bool:
        if self.kind == "all":
            return True
        if self.kind == "and":
            return all(part.selects(pair, judge) for part in self.parts)
        if self.kind == "compactor":
            return pair.compactor in self.compactors
        if self.kind == "night":
            assert self.first_day is not None and self.last_day is not None
            return pair.day is not None and self.first_day <= pair.day <= self.last_day
        assert self.contract is not None
        return not judge.errors(pair, self.contract)


def parse_good(text: str) -> GoodSelector:
    """Parse a selector (see the module docstring); `SuggestError` says what is wrong."""
    if ";" in text:
        pieces = text.split(";")
        if any(not piece.strip() for piece in pieces):
            raise SuggestError(f"good selector {text!r}: an empty selector between ';'")
        return GoodSelector(text.strip(), "and", parts=tuple(_one(piece) for piece in pieces))
    return _one(text)


def _one(text: str) -> GoodSelector:
    stripped = text.strip()
    if stripped == "all":
        return GoodSelector(stripped, "all")
    name, sep, value = stripped.partition("=")
    name, value = name.strip(), value.strip()
    if not sep:
        raise SuggestError(f"good selector {text!r}: expected {FORMS}")
    if name == "compactor":
        names = tuple(part.strip() for part in value.split(","))
        if not value or any(not part for part in names):
            raise SuggestError(f"good selector {text!r}: name at least one compactor "
                               "(compactor=NAME[,NAME...])")
        return GoodSelector(stripped, "compactor", compactors=names)
    if name == "night":
        first_text, dots, last_text = value.partition("..")
        first = _day(first_text, text)
        last = _day(last_text, text) if dots else first
        if last < first:
            raise SuggestError(f"good selector {text!r}: the range ends before it starts")
        return GoodSelector(stripped, "night", first_day=first, last_day=last)
    if name == "passes":
        if not value:
            raise SuggestError(f"good selector {text!r}: name a contract file (passes=CONTRACT)")
        try:
            contract = load_contract(value)
        except InputError as problem:
            raise SuggestError(f"good selector {text!r}: {problem}") from None
        return GoodSelector(stripped, "passes", contract=contract)
    raise SuggestError(f"good selector {text!r}: unknown selector {name!r} (expected {FORMS})")


def _day(text: str, selector: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise SuggestError(f"good selector {selector!r}: {text.strip()!r} is not a day "
                           "(YYYY-MM-DD)") from None
