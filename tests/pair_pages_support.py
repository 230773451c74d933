"""A dataset for the pair pages and `show`: the worked examples of every wire format
(`fixtures/formats/corpus.jsonl`: a passing and a failing pair each, the failing one a
stranded tool result whose call was dropped), a second compactor, a pair whose messages hold
hostile HTML, and a Codex session log audited as it is (a pair derived from an agent log).

(No tests here: the report and `show` tests import it.)
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frayproof_audit.corpus import audit
from tests.helpers import EXAMPLES, FIXTURES

FORMATS = ("openai", "anthropic", "openai-responses", "otel-genai")
"""The wire formats with worked examples in `fixtures/formats/`."""
HOSTILE_TEXT = ("<script>alert(1)</script></style><img src=x onerror=\""
                "document.documentElement.setAttribute('data-pwned','1')\">"
                "<a href=\"javascript:alert(2)\">x</a>")
HOSTILE_PAIR = "hostile-text"
OTHER_COMPACTOR = "trim-v1"
CODEX_LOG = EXAMPLES / "agent-logs" / "codex"
CODEX_PAIR = "0199d3a2-5c1e-7b40-9a61-2f0c8e4d7a11:1"


@dataclass(frozen=True)
class PairsDataset:
    root: Path
    """The folder the audit ran in (the dataset's relative sources are relative to it)."""
    out: Path
    corpus: Path


def _records() -> list[dict[str, Any]]:
    lines = (FIXTURES / "formats" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(text) for text in lines]
    kept = [r for r in records if r["format"] != "auto"]
    broken = next(r for r in kept if r["pair_id"] == "openai-broken")
    trimmed = {**broken, "pair_id": "openai-trimmed", "compactor": OTHER_COMPACTOR}
    hostile = json.loads(json.dumps(broken))
    hostile.update(pair_id=HOSTILE_PAIR, compactor=OTHER_COMPACTOR, session_id=HOSTILE_TEXT)
    for snapshot in (hostile["before"], hostile["after"]):
        snapshot[-1]["content"] = f"Change it to 9090 in staging. {HOSTILE_TEXT}"
        for message in snapshot:
            if message.get("role") == "tool":
                message["content"] = HOSTILE_TEXT
    return [*kept, trimmed, hostile]


def build_pairs_dataset(folder: Path) -> PairsDataset:
    """The corpus and the Codex log in `folder`, audited there into `folder/out` with mutation
    testing and one contract (so one report covers both runs), with relative source paths (as
    a nightly job in its own folder does)."""
    folder.mkdir(parents=True, exist_ok=True)
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in _records()), encoding="utf-8")
    contract = folder / "contract.yaml"
    shutil.copy(FIXTURES / "formats" / "contract.yaml", contract)
    shutil.copytree(CODEX_LOG, folder / "codex")
    out = folder / "out"
    previous = os.getcwd()
    os.chdir(folder)
    try:
        audit(["corpus.jsonl"], "contract.yaml", "out", jobs=1, run_id="formats", fail_on=("none",))
        audit(["codex"], "contract.yaml", "out", jobs=1, run_id="codex", source="codex",
              fail_on=("none",))
    finally:
        os.chdir(previous)
    return PairsDataset(folder, out, corpus)
