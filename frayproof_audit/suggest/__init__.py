"""Learn the contract from the logs: the strongest contract the good compactions already keep.

    from frayproof_audit.suggest import read_pairs, suggest

    logs = read_pairs("logs/2025-06-02/")
    found = suggest(logs.records, good="compactor=summarize-v3")
    Path("contract.yaml").write_text(found.contract_text, encoding="utf-8")

`suggest` (or `run_suggest` with a `SuggestConfig`, what a command builds) measures every rule
a contract can hold on the pairs the user trusts, proposes the strongest form each of them
passes at `min_support`, and reports each rule's support, its bite (other pairs it fails,
mutants it newly catches) and why. docs/suggest.md describes every rule.

`suggest_logs(LogInputs(paths, ...), config)` is what `frayproof-audit suggest` runs: the logs
read as `audit` reads them (Parquet, zstd, field maps, agents' own session files), every
input error named (`LogSuggestion`). It is imported on first use: it needs pyarrow.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from frayproof_audit.lazy_exports import lazy_exports
from frayproof_audit.suggest.config import SuggestConfig, SuggestError
from frayproof_audit.suggest.pairs import Pair, Unusable, held_out, log_day, record_key
from frayproof_audit.suggest.reading import PairFiles, ReadProblem, read_pairs
from frayproof_audit.suggest.result import (
    Alternative,
    Comparison,
    Counts,
    Difference,
    MutationScore,
    OperatorScore,
    RuleResult,
    Share,
    Suggestion,
)
from frayproof_audit.suggest.run import run_suggest
from frayproof_audit.suggest.selector import GoodSelector, parse_good

if TYPE_CHECKING:
    from frayproof_audit.corpus.inputs.pair_records import InputProblem
    from frayproof_audit.suggest.logs import LogInputs, LogSuggestion, suggest_logs

_LAZY = {
    "InputProblem": "frayproof_audit.corpus.inputs.pair_records",
    "LogInputs": "frayproof_audit.suggest.logs",
    "LogSuggestion": "frayproof_audit.suggest.logs",
    "suggest_logs": "frayproof_audit.suggest.logs",
}
__getattr__ = lazy_exports(__name__, _LAZY)

_DEFAULTS = SuggestConfig()


def suggest(
    pairs: Iterable[Any],
    *,
    good: str = _DEFAULTS.good,
    min_support: float = _DEFAULTS.min_support,
    holdout: float = _DEFAULTS.holdout,
    compare_with: Any = None,
    input_format: str = _DEFAULTS.input_format,
    min_sessions: int = _DEFAULTS.min_sessions,
    max_text_pins: int = _DEFAULTS.max_text_pins,
    infer_tools: bool = _DEFAULTS.infer_tools,
    mutation_pairs: int = _DEFAULTS.mutation_pairs,
    max_mutants: int | None = _DEFAULTS.max_mutants,
    operators: tuple[str, ...] | None = None,
) -> Suggestion:
    """`run_suggest(pairs, SuggestConfig(...))` with the options as keywords."""
    config = SuggestConfig(good=good, min_support=min_support, holdout=holdout, compare_with=compare_with,
                           input_format=input_format, min_sessions=min_sessions,
                           max_text_pins=max_text_pins, infer_tools=infer_tools,
                           mutation_pairs=mutation_pairs, max_mutants=max_mutants, operators=operators)
    return run_suggest(pairs, config)


__all__ = [
    "Alternative",
    "Comparison",
    "Counts",
    "Difference",
    "GoodSelector",
    "InputProblem",
    "LogInputs",
    "LogSuggestion",
    "MutationScore",
    "OperatorScore",
    "Pair",
    "PairFiles",
    "ReadProblem",
    "RuleResult",
    "Share",
    "SuggestConfig",
    "SuggestError",
    "Suggestion",
    "Unusable",
    "held_out",
    "log_day",
    "parse_good",
    "read_pairs",
    "record_key",
    "run_suggest",
    "suggest",
    "suggest_logs",
]
