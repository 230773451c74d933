"""Loading the data-driven check cases in `tests/cases/*.yaml`.

Each file holds `cases` (and optionally `defaults` for `contract`/`before`, and a `library`
of YAML anchors). A case has a readable `id`, an `after` message list, an optional `before`
(present → `check`, absent → `validate`), an optional `contract` mapping and the expected
findings as [check, severity, snapshot, message_index, tool_call_id, pin, rule, condition].
`peer: input-error` marks a deliberate difference where frayproof 0.1.0 raises instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.helpers import expand

SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML has it (the same documents, seven times faster to load),
for the cases every test worker loads when it collects."""

CASES_DIR = Path(__file__).parent / "cases"


@dataclass(frozen=True)
class Case:
    file: str
    id: str
    after: list[Any]
    before: list[Any] | None
    contract: dict[str, Any] | None
    expect: list[tuple[Any, ...]]
    peer: str | None

    @property
    def label(self) -> str:
        return f"{self.file}:{self.id}"


def load_cases() -> list[Case]:
    cases: list[Case] = []
    for path in sorted(CASES_DIR.glob("*.yaml")):
        document = yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
        defaults = document.get("defaults", {})
        for raw in document["cases"]:
            before = raw.get("before", defaults.get("before"))
            cases.append(Case(
                file=path.stem,
                id=raw["id"],
                after=[expand(m) for m in raw["after"]],
                before=None if before is None else [expand(m) for m in before],
                contract=raw.get("contract", defaults.get("contract")),
                expect=[tuple(item) for item in raw["expect"]],
                peer=raw.get("peer"),
            ))
    return cases
