"""Judging pairs with contract documents, through the public engine only.

Every verdict `suggest` reports is `frayproof_audit.check` on the pair as logged, in the
pair's format, with the record's own tools where it has them (as the audit judges it). A
document becomes a `Contract` by being written as YAML and read by `parse_contract`, the same
path a user's contract takes, once per distinct document.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from frayproof_audit.contract import Contract, parse_contract
from frayproof_audit.engine import check
from frayproof_audit.report import Violation
from frayproof_audit.suggest import emit
from frayproof_audit.suggest.pairs import Pair
from frayproof_audit.suggest.settings import Setting, document


class Judge:
    """Parses documents once and checks pairs against them."""

    def __init__(self, fmt: str) -> None:
        self.format = fmt
        self._contracts: dict[str, Contract] = {}
        self._with_tools: dict[tuple[int, str], tuple[Contract, Contract]] = {}

    def contract(self, doc: dict[str, Any]) -> Contract:
        text = emit.document(doc)
        found = self._contracts.get(text)
        if found is None:
            found = parse_contract(text, "<suggested contract>")
            self._contracts[text] = found
        return found

    def of(self, settings: Sequence[Setting], *, isolated: bool) -> Contract:
        return self.contract(document(settings, self.format, isolated=isolated))

    def for_pair(self, contract: Contract, pair: Pair) -> Contract:
        """`contract`, with the record's own tools in place of its tools when it has some."""
        if pair.tools is None or pair.tools_key is None:
            return contract
        cache_key = (id(contract), pair.tools_key)
        found = self._with_tools.get(cache_key)
        if found is None or found[0] is not contract:
            found = (contract, replace(contract, tools=pair.tools))  # holding `contract` keeps its id
            self._with_tools[cache_key] = found
        return found[1]

    def errors(self, pair: Pair, contract: Contract) -> tuple[Violation, ...]:
        report = check(pair.before, pair.after, self.for_pair(contract, pair), input_format=pair.format)
        return tuple(v for v in report.violations if v.severity == "error")

    def failing(self, pairs: Iterable[Pair], contract: Contract,
                settings: Sequence[Setting]) -> dict[str, set[int]]:
        """For each setting, the indices (`Pair.index`) of the pairs it fails under `contract`."""
        failed: dict[str, set[int]] = {setting.key: set() for setting in settings}
        for pair in pairs:
            for violation in self.errors(pair, contract):
                for setting in settings:
                    if setting.owns(violation):
                        failed[setting.key].add(pair.index)
        return failed
