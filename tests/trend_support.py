"""A small nightly dataset for the trend and stats tests: one run per night, a planted
regression on the last night, and a three-pair night of pure noise before it.

Nights 0–4 hold 20 pairs each: 16 good (`keep_all`, `window`), 2 `drop_result` (fails
`tool_pair_integrity`), 2 `drop_system` (fails `pinned_content`): 10% each. Night 5 holds three
pairs, two of them `drop_system` (67%: noise, too few pairs to mean anything). Night 6, the
latest, is the regression: 12 of its 20 pairs are `drop_result` (60% vs a 10% baseline).
(No tests here.)
"""

from __future__ import annotations

from pathlib import Path

from frayproof_audit.corpus import audit
from tests.corpus_support import line, record, write_contract, write_jsonl

NIGHTS = 7
REGRESSION_NIGHT = "2025-06-08"
NOISY_NIGHT = "2025-06-07"


def night_compactors(night: int) -> list[str]:
    if night == 5:
        return ["drop_system", "drop_system", "keep_all"]
    if night == 6:
        return ["drop_result"] * 12 + ["keep_all", "window"] * 4
    return ["drop_result"] * 2 + ["drop_system"] * 2 + ["keep_all", "window"] * 8


def build_nights(folder: Path, contract: Path | None = None) -> Path:
    """Audit every night into `folder/out` (run ids `night-0` … `night-6`); returns OUT."""
    contract = contract or write_contract(folder)
    out = folder / "out"
    for night in range(NIGHTS):
        names = night_compactors(night)
        lines = [line(record(night * 100 + i, name, night=night)) for i, name in enumerate(names)]
        source = write_jsonl(folder / "logs" / f"night{night}.jsonl", lines)
        audit([str(source)], str(contract), str(out), jobs=1, run_id=f"night-{night}", fail_on=())
    return out
