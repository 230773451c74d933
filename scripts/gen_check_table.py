"""Write the table of check names into docs/contract.md from the check registry (`make docs`).

A check has one name in findings, reports and its case file, one contract key and one module;
the table says which, for every registered check, so the one alias (frayproof's
`tool_pair_integrity` under the key `tool_pairs`) is written down once, by the registry:

    <!-- BEGIN GENERATED: check names -->
    ...the table...
    <!-- END GENERATED -->

`--check` only reports whether the file is up to date (exit 1 if not); the test suite runs the
same comparison.

    python scripts/gen_check_table.py [--check] [PATH]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/ is no package

from generated_region import rewrite

from frayproof_audit.checks import CHECKS, Check

ROOT = Path(__file__).resolve().parent.parent
CONTRACT_DOC = ROOT / "docs" / "contract.md"
REGION = re.compile(r"(?P<begin><!-- BEGIN GENERATED: check names -->\n)(?P<body>.*?)"
                    r"(?P<end><!-- END GENERATED -->)", re.DOTALL)
LISTED = 6
"""Up to this many codes are listed in a cell; more are counted (each check's section lists them)."""


def module_path(check: Check) -> str:
    """Where the check is defined: the module of its `find`, as a path in the package."""
    return check.find.__module__.replace("frayproof_audit.", "", 1).replace(".", "/") + ".py"


def _codes(codes: list[str]) -> str:
    if not codes:
        return "none"
    if len(codes) > LISTED:
        prefixes = {code.split("-", 1)[0] for code in codes}
        shared = f" (`{prefixes.pop()}-…`)" if len(prefixes) == 1 else ""
        return f"{len(codes)} codes{shared}"
    return ", ".join(f"`{code}`" for code in codes)


def table(checks: tuple[Check, ...] = CHECKS) -> str:
    """The table, in report order."""
    lines = ["| check (findings, `tests/cases/<check>.yaml`) | contract key (`checks.<key>`) | module "
             "| default | condition codes | repairable (a transcript repair fixes them) |",
             "| --- | --- | --- | --- | --- | --- |"]
    for check in checks:
        default = f"{'on' if check.enabled_by_default else 'off'}, {check.default_severity}"
        codes = [condition.code for condition in check.conditions]
        fixed = [condition.code for condition in check.conditions if condition.repairable]
        lines.append(f"| `{check.name}` | `{check.key}` | `{module_path(check)}` | {default} "
                     f"| {_codes(codes)} | {_codes(fixed)} |")
    return "\n".join(lines) + "\n"


def render(document: str) -> str:
    """`document` with its check-names region rewritten from the registry."""
    rendered, count = REGION.subn(lambda match: match["begin"] + table() + match["end"], document)
    if count != 1:
        raise SystemExit("docs/contract.md needs exactly one '<!-- BEGIN GENERATED: check names -->'"
                         " ... '<!-- END GENERATED -->' region")
    return rendered


def main(argv: list[str] | None = None) -> int:
    return rewrite(argv, __doc__.splitlines()[0], CONTRACT_DOC, render, "check names")


if __name__ == "__main__":
    sys.exit(main())
