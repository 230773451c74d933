"""bench_report: what `frayproof-audit report` costs with its pair pages (issue #30): bytes written
and render time for 100, 1,000 and 10,000 pair pages.

A corpus of realistic sessions (`sessiongen.realistic`, 16-48 messages, tool results up to
20 KB, about 100 KB a record) compacted by the buggy compactors (every pair fails, so every
pair is worth a page) is audited once; `POOL` distinct sessions are drawn and repeated under
new pair ids, so a 10,000-pair corpus takes seconds to write. The report is then written with
`--max-pairs` 100, 1,000 and 10,000 (a folder above `FOLDER_FROM`), each timed end to end
(read the tables, read every record back from the JSONL input and check its SHA-256, align,
render, write). Printed per size: pair pages, bytes, bytes per page and seconds. The targets:
what one more page adds (the bytes between two sizes over the pages between them) within the
per-page budget at the largest step, no step dearer per page than 1.5x the one before (linear
growth; the first pages, the worst pairs, are the largest), and the render time per page.

    python -m benchmarks.bench_report [--quick] [--sizes 100,1000,10000] [--results DIR]
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script: make `frayproof_audit`/`sessiongen` importable
    sys.path.insert(0, str(REPO))

from benchmarks import results  # noqa: E402
from frayproof_audit.corpus import audit  # noqa: E402
from frayproof_audit.htmlreport.config import ReportConfig  # noqa: E402
from frayproof_audit.htmlreport.write import write_report_pages  # noqa: E402
from sessiongen import realistic  # noqa: E402

PAGE_BUDGET = 192 * 1024
"""Bytes one more pair page may add (its message text is capped at `pair_page.PAGE_CHARS`)."""
TARGET_LINEAR = 1.5
"""Bytes per added page of the largest step over those of the smallest, at most."""
TARGET_MS_PER_PAGE = 20.0
POOL = 500
"""Distinct sessions drawn; the corpus repeats them under new pair ids."""


def write_corpus(path: Path, pairs: int, seed: int) -> None:
    rng = random.Random(seed)
    buggy = sorted(realistic.BUGGY_COMPACTORS)
    pool = [realistic.generate_pair(rng, compactor=buggy[number % len(buggy)], n_messages=rng.randint(16, 48))
            for number in range(min(pairs, POOL))]
    with path.open("wb") as handle:
        for number in range(pairs):
            record = {**pool[number % len(pool)], "pair_id": f"bench-{number:06d}",
                      "session_id": f"sess-{number:06d}",
                      "logged_at": realistic.logged_at(number % 7, (number % 97) / 97)}
            handle.write(orjson.dumps(record) + b"\n")


def size_of(path: Path) -> int:
    if path.is_dir():
        return sum(item.stat().st_size for item in path.rglob("*") if item.is_file())
    return path.stat().st_size


def measure(out: Path, size: int, scratch: Path) -> dict[str, float]:
    target = scratch / f"report-{size}.html"
    start = time.perf_counter()
    written = write_report_pages(ReportConfig(str(out), str(target), max_pairs=size))
    seconds = time.perf_counter() - start
    pages = len(written.pages.pages)
    where = Path(written.path).parent if written.folder else Path(written.path)
    total = size_of(where)
    shown = sum(1 for page in written.pages.pages if page.state == "found")
    return {"pages": pages, "bytes": total, "bytes_per_page": total / max(pages, 1), "seconds": seconds,
            "ms_per_page": 1000 * seconds / max(pages, 1), "folder": written.folder, "with_messages": shown}


def _steps(sizes: Sequence[int], figures: dict[str, dict[str, float]]) -> list[float]:
    """The bytes each added page costs between consecutive sizes (the report's own tables and
    charts, the same at every size, cancel out)."""
    ordered = sorted(sizes)
    found = []
    for small, large in itertools.pairwise(ordered):
        a, b = figures[str(small)], figures[str(large)]
        found.append((b["bytes"] - a["bytes"]) / max(b["pages"] - a["pages"], 1))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_report",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small runs (a smoke test)")
    parser.add_argument("--sizes", default=None, help="pair pages per report (default 100,1000,10000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--results", type=Path,
                        help="write the JSON results into this folder (never with --quick)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in (args.sizes or ("10,30,60" if args.quick else "100,1000,10000")).split(",")]
    print(f"{os.cpu_count()} CPU(s); load average {os.getloadavg()[0]:.2f}", flush=True)
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench_report-") as folder:
        scratch = Path(folder)
        corpus = scratch / "corpus.jsonl"
        write_corpus(corpus, max(sizes), args.seed)
        out = scratch / "out"
        contract = realistic.write_contract(scratch / "contract.yaml")
        start = time.perf_counter()
        audit([str(corpus)], str(contract), str(out), jobs=1 if args.quick else 2, run_id="bench",
              mutate=False, fail_on=("none",))
        print(f"corpus: {max(sizes):,} pairs, {corpus.stat().st_size / 1e6:.1f} MB, audited in "
              f"{time.perf_counter() - start:.1f} s", flush=True)
        for size in sizes:
            figures[str(size)] = found = measure(out, size, scratch)
            kind = "folder" if found["folder"] else "file"
            print(f"  {found['pages']:>6,.0f} pair pages: {found['bytes'] / 1e6:8.2f} MB ({kind}), "
                  f"{found['bytes_per_page'] / 1024:6.1f} KB per page, {found['seconds']:6.2f} s "
                  f"({found['ms_per_page']:.2f} ms per page)", flush=True)
    steps = _steps(sizes, figures)
    growth = max((later / earlier for earlier, later in itertools.pairwise(steps)), default=1.0)
    large = figures[str(max(sizes))]
    print("  bytes per added page: " + ", ".join(f"{step / 1024:.1f} KB" for step in steps), flush=True)
    results.save(results.results_dir(args.results, args.quick), "bench_report", 1, [
        results.Target(f"report bytes per added pair page, up to {max(sizes):,} pages", steps[-1] / 1024,
                       PAGE_BUDGET / 1024, unit="KB", at_least=False,
                       note=f"{large['bytes'] / 1e6:.1f} MB in all for {large['pages']:,.0f} pages"),
        results.Target(f"bytes per added page, a step over the one before ({len(steps)} steps: linear)",
                       growth, TARGET_LINEAR, at_least=False),
        results.Target(f"report time per pair page, {max(sizes):,} pages", large["ms_per_page"],
                       TARGET_MS_PER_PAGE, unit="ms", at_least=False,
                       note=f"{large['seconds']:.1f} s in all: tables, read-back, alignment, HTML"),
    ], figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
