"""The known-issue baseline (`audit --baseline-findings FILE`): findings accepted for now.

A team turns the gate on before its backlog is gone, as with ruff's per-file ignores: the
file lists error findings by pair id × condition code, and a pair fails a gate only by an error
finding the file does not list. Listed findings are still stored in `findings` and counted
(`baseline_accepted` in the run summary); only the gates look past them.

The format is JSON Lines, one finding a line, `check` optional (a reminder for people, not
matched), blank lines ignored:

    {"pair_id": "p0042", "code": "TP-ORPHAN", "check": "tool_pair_integrity"}

`stats OUT --write-baseline FILE` writes one from a dataset's error findings (`dataset.baseline`).
"""

from __future__ import annotations

from pathlib import Path

import orjson

from frayproof_audit.errors import InputError

Accepted = frozenset[tuple[str, str]]
"""(pair_id, condition code) pairs the baseline accepts."""


class BaselineError(InputError):
    """A baseline-findings file that cannot be read, or a line of it that is not a finding."""


def read_baseline(path: str) -> Accepted:
    """The (pair_id, code) pairs `path` lists; an unknown code is refused (a typo there would
    silently accept nothing)."""
    from frayproof_audit.checks import CONDITIONS

    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise BaselineError(f"--baseline-findings '{path}': cannot read it:"
                            f" {exc.strerror or exc}") from None
    found: set[tuple[str, str]] = set()
    for number, text in enumerate(data.splitlines(), 1):
        if not text.strip():
            continue
        where = f"--baseline-findings '{path}' line {number}"
        try:
            entry = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise BaselineError(f"{where}: invalid JSON ({exc})") from None
        if not isinstance(entry, dict):
            raise BaselineError(f"{where}: a finding is a JSON object with pair_id and code")
        pair_id, code = entry.get("pair_id"), entry.get("code")
        if not isinstance(pair_id, str) or not pair_id:
            raise BaselineError(f"{where}: pair_id must be a non-empty string")
        if not isinstance(code, str) or code not in CONDITIONS:
            raise BaselineError(f"{where}: code {code!r} is no condition code of a registered"
                                " check (TP-ORPHAN, ...: docs/contract.md lists them)")
        found.add((pair_id, code))
    return frozenset(found)


def baseline_lines(entries: list[tuple[str, str, str]]) -> bytes:
    """(pair_id, check, code) entries as the file's lines, sorted, each once."""
    return b"".join(orjson.dumps({"pair_id": pair_id, "code": code, "check": check}) + b"\n"
                    for pair_id, check, code in sorted(set(entries)))
