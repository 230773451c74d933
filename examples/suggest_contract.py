"""Suggest a contract from the example corpus: `examples/suggested_contract.yaml`.

    python examples/suggest_contract.py            # rewrites examples/suggested_contract.yaml
    python examples/suggest_contract.py --check    # exit 1 if the committed file is out of date

The good pairs are those of the three good compactors on the first seven nights; the last
night (a regressed release of `summary_keep_last_n`) and the buggy compactors are the "other"
pairs the contract should fail. `read_pairs` reads the plain and gzipped JSON Lines nights
(2025-06-02, -03, -06, -08, -09); `frayproof-audit suggest examples/corpus ...` reads the
Parquet and zstd nights too, with the audit's readers (docs/suggest.md, from the command line).
The summary and the comparison with `examples/audit_contract.yaml` are printed, as
docs/suggest.md shows them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from frayproof_audit.suggest import read_pairs, suggest  # noqa: E402 - the root is on sys.path only now

GOOD = "compactor=summary_keep_last_n,keep_last_window,summary_user_turn;night=2025-06-02..2025-06-08"
OUT = REPO / "examples" / "suggested_contract.yaml"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only verify the committed file")
    args = parser.parse_args(argv)
    logs = read_pairs(REPO / "examples" / "corpus")
    found = suggest(logs.records, good=GOOD, compare_with="examples/audit_contract.yaml")
    print(f"read {len(logs.records)} record(s) from {len(logs.files)} file(s); "
          f"{len(logs.problems)} line(s) unreadable")
    print(found.to_text())
    assert found.comparison is not None
    print(found.comparison.to_text())
    if args.check:
        if not OUT.is_file() or OUT.read_text(encoding="utf-8") != found.contract_text:
            print(f"out of date: {OUT.relative_to(REPO)}")
            return 1
        return found.exit_code
    OUT.write_text(found.contract_text, encoding="utf-8")
    return found.exit_code


if __name__ == "__main__":
    sys.exit(main())
