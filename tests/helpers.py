"""Shared test helpers: message builders, verdict extraction, contracts, and the CLI runner.

The builders mirror the spec's vocabulary (`call(*ids)`, `result(id)`, `user(...)`,
`session()`), so a test reads like the rule it checks.
"""

from __future__ import annotations

import gc
import importlib.util
import os
import subprocess
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml
from click.testing import CliRunner

from frayproof_audit.checks import CHECKS, CONDITIONS
from frayproof_audit.cli import main as cli_main
from frayproof_audit.contract import Contract, parse_contract
from frayproof_audit.report import Report, Violation

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
EXAMPLES = REPO / "examples"
EXAMPLE_CONTRACT = EXAMPLES / "contract.yaml"

CHECK_KEYS = tuple(check.key for check in CHECKS)
"""The registered checks' contract keys, in report order."""

Message = dict[str, Any]
Finding = tuple[str, str, str, "int | None", "str | None", "str | None", "str | None"]


# --- message builders -------------------------------------------------------------------

def tool_call(call_id: str, name: str = "read", arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def call(*ids: str, content: Any = None) -> Message:
    """An assistant message with null content calling `read` once per id."""
    return {"role": "assistant", "content": content, "tool_calls": [tool_call(i) for i in ids]}


def result(call_id: str, content: Any = "ok") -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def user(text: Any = "hello") -> Message:
    return {"role": "user", "content": text}


def system(text: Any = "Never write to production") -> Message:
    return {"role": "system", "content": text}


def developer(text: Any = "Answer in English.") -> Message:
    return {"role": "developer", "content": text}


def assistant(text: Any = "done") -> Message:
    return {"role": "assistant", "content": text}


def session() -> list[Message]:
    """[system, user, call a, result a, user "Continue"]: valid, one closed exchange."""
    return [system(), user(), call("a"), result("a"), user("Continue")]


def history(exchanges: int = 3) -> list[Message]:
    """system + `exchanges` closed exchanges (user, call, result, answer) + an open user turn.

    With 3 exchanges it has 15 messages: users at 1, 5, 9 and 13.
    """
    messages = [system()]
    for n in range(exchanges):
        call_id = f"c{n}"
        messages += [user(f"question {n}"), call(call_id), result(call_id, f"data {n}"),
                     assistant(f"answer {n}")]
    messages.append(user("latest request"))
    return messages


SHORTHAND_ROLES = ("user", "system", "developer", "assistant")


def expand(message: Any) -> Any:
    """Turn a YAML case's shorthand into a wire message; anything with `role`, or anything
    that is not a mapping, is used verbatim.

    `{user: text}` (also system/developer/assistant), `{call: [a, b]}`, `{result: a}` with an
    optional `content:`; any other keys next to the shorthand are added to the message.
    """
    if not isinstance(message, dict) or "role" in message or "raw" in message:
        return message.get("raw", message) if isinstance(message, dict) else message
    extra = dict(message)
    if "call" in extra:
        ids = extra.pop("call")
        built = call(*([ids] if isinstance(ids, str) else ids))
    elif "result" in extra:
        built = result(extra.pop("result"))
    else:
        role = next((r for r in SHORTHAND_ROLES if r in extra), None)
        if role is None:
            raise ValueError(f"unknown message shorthand: {message!r}")
        built = {"role": role, "content": extra.pop(role)}
    built.update(extra)
    return built


# --- verdicts ---------------------------------------------------------------------------

def finding(v: Violation) -> Finding:
    return (v.check, v.severity, v.snapshot, v.message_index, v.tool_call_id, v.pin, v.rule)


def verdict(report: Report) -> list[Finding]:
    """The verdict data of a report, finding by finding, in order (message wording excluded)."""
    return [finding(v) for v in report.violations]


def condition(v: Violation) -> str:
    """The finding's condition code (e.g. `TP-ORPHAN`), checked against its fixed title."""
    assert v.code in CONDITIONS, f"finding has no registered condition code: {v!r}"
    title = CONDITIONS[v.code].title
    if "{" in title:
        assert v.message.startswith(title.split("{", 1)[0]), (v.code, v.message)
    else:
        assert v.message == title, (v.code, v.message)
    return v.code


def conditions(report: Report) -> list[str]:
    return [condition(v) for v in report.violations]


def make_contract(document: dict[str, Any] | str | None = None) -> Contract:
    """A contract from a YAML mapping (or YAML text), parsed exactly as a file would be."""
    if document is None:
        return Contract()
    text = document if isinstance(document, str) else yaml.safe_dump(document, sort_keys=False)
    return parse_contract(text, "<test>")


# --- the CLI ----------------------------------------------------------------------------

@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str
    exception: BaseException | None = None
    trace: str = ""


def run_cli(*args: str | os.PathLike[str], expect: int | None = 0,
            real: bool = False, cwd: Path = REPO) -> CliResult:
    """Run `frayproof-audit ARGS` and check its exit code.

    In process through click's CliRunner by default; with `real=True` as
    `python -m frayproof_audit` in a subprocess. When the exit code is not `expect`, the
    assertion message shows stdout, stderr and any exception with its traceback.
    """
    argv = [os.fspath(a) for a in args]
    if real:
        done = subprocess.run(
            [sys.executable, "-m", "frayproof_audit", *argv],
            capture_output=True, text=True, cwd=cwd, timeout=60, check=False,
        )
        outcome = CliResult(done.returncode, done.stdout, done.stderr)
    else:
        previous = Path.cwd()
        os.chdir(cwd)
        try:
            ran = CliRunner().invoke(cli_main, argv, prog_name="frayproof-audit", catch_exceptions=True)
        finally:
            os.chdir(previous)
        error = ran.exception if not isinstance(ran.exception, SystemExit) else None
        trace = "".join(traceback.format_exception(*ran.exc_info)) if error and ran.exc_info else ""
        outcome = CliResult(ran.exit_code, ran.stdout, ran.stderr, error, trace)
    if expect is not None and outcome.exit_code != expect:
        raise AssertionError(
            f"frayproof-audit {' '.join(argv)}: exit {outcome.exit_code}, expected {expect}\n"
            f"--- stdout ---\n{outcome.stdout}--- stderr ---\n{outcome.stderr}"
            f"--- exception ---\n{outcome.exception!r}\n{outcome.trace}"
        )
    return outcome


def load_module(path: Path, text: str | None = None) -> ModuleType:
    """The module in `path` (written first when `text` is given), imported under its file's
    name: a throwaway registry member written at test time, or a script of `scripts/`."""
    if text is not None:
        path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cycles_left(work: Callable[[], object]) -> int:
    """How many objects in reference cycles `work` left behind: counted by a full collection
    after it ran with the collector off (so nothing collected them meanwhile). What the loops
    run with the collector paused (`frayproof_audit/collector.py`) must keep at 0."""
    gc.collect()
    gc.disable()
    try:
        work()
        return gc.collect()
    finally:
        gc.enable()
