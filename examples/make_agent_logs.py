"""Write `examples/agent-logs/`: one small coding session per agent, in that agent's own files.

    python examples/make_agent_logs.py            # rewrites examples/agent-logs/ (deterministic)
    python examples/make_agent_logs.py --check    # exit 1 if the committed files are out of date

The same session (a failing checkout test found, fixed and run, then a follow-up request) is
compacted once by each agent the way it compacts, and written where the agent keeps it:

    codex/sessions/2026/08/01/rollout-...jsonl            Codex CLI: the user messages, then the summary
    claude-code/projects/-home-dev-shop/<session>.jsonl   Claude Code: summary, then the latest request
    gemini-cli/tmp/<project hash>/chats/session-...jsonl  Gemini CLI: snapshot, then the latest request

`sessiongen.agent_logs` writes the files (with the lines each agent writes that are no
message); `frayproof_audit.sources` reads them back.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from frayproof_audit.sources.codex import SUMMARY_PREFIX  # noqa: E402 - the root is on sys.path only now
from sessiongen import agent_logs  # noqa: E402

OUT = REPO / "examples" / "agent-logs"
CODEX = "codex/sessions/2026/08/01/rollout-2026-08-01T09-12-44-0199d3a2-5c1e-7b40-9a61-2f0c8e4d7a11.jsonl"
CLAUDE = "claude-code/projects/-home-dev-shop/6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f.jsonl"
GEMINI = "gemini-cli/tmp/9ac0ffee4b1d/chats/session-2026-08-01T09-12-b1f00000.jsonl"


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, separators=(",", ":"))}}


ASK = "The checkout test fails with KeyError: 'currency'. Can you fix it?"
FOLLOW_UP = "Great. Now add a test for an empty cart."
SESSION: list[dict[str, Any]] = [
    {"role": "user", "content": ASK},
    {"role": "assistant", "content": "Let me read the test and the code.",
     "tool_calls": [_call("call_1", "read_file", {"path": "tests/test_checkout.py"}),
                    _call("call_2", "read_file", {"path": "shop/checkout.py"})]},
    {"role": "tool", "tool_call_id": "call_1",
     "content": "def test_total():\n    cart = Cart([Item('book', 12.5)])\n"
                "    assert checkout(cart)['currency'] == 'EUR'\n"},
    {"role": "tool", "tool_call_id": "call_2",
     "content": "def checkout(cart):\n    return {'total': cart.total()}\n"},
    {"role": "assistant", "content": "checkout() never sets the currency; adding it.",
     "tool_calls": [_call("call_3", "apply_patch", {
         "path": "shop/checkout.py",
         "patch": "-    return {'total': cart.total()}\n"
                  "+    return {'total': cart.total(), 'currency': 'EUR'}"})]},
    {"role": "tool", "tool_call_id": "call_3", "content": "Patched shop/checkout.py"},
    {"role": "assistant", "content": None,
     "tool_calls": [_call("call_4", "run_tests", {"args": ["-q", "tests/test_checkout.py"]})]},
    {"role": "tool", "tool_call_id": "call_4", "content": "1 passed in 0.12s"},
    {"role": "assistant", "content": "Fixed: checkout() now returns the currency and the test passes."},
    {"role": "user", "content": FOLLOW_UP},
]
SUMMARY = ("checkout() in shop/checkout.py did not return 'currency'; it now returns "
           "'currency': 'EUR' and tests/test_checkout.py passes.")


def files() -> dict[str, str]:
    codex_summary = f"{SUMMARY_PREFIX}\n{SUMMARY}"
    codex = agent_logs.as_codex(
        SESSION, [{"role": "user", "content": ASK}, {"role": "user", "content": FOLLOW_UP},
                  {"role": "user", "content": codex_summary}],
        "0199d3a2-5c1e-7b40-9a61-2f0c8e4d7a11", summary=codex_summary)
    claude = agent_logs.as_claude_code(
        SESSION, [{"role": "user", "content": (
            "This session is being continued from a previous conversation that ran out of "
            f"context. The summary below covers the earlier portion of the conversation.\n\n{SUMMARY}")},
            {"role": "user", "content": FOLLOW_UP}],
        "6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f", trigger="manual")
    gemini = agent_logs.as_gemini_cli(
        SESSION, [{"role": "user", "content": FOLLOW_UP}], "b1f00000-7a2b-4c3d-9e8f-0a1b2c3d4e5f",
        snapshot=("<state_snapshot>\n  <overall_goal>Fix the failing checkout test.</overall_goal>\n"
                  f"  <key_knowledge>{SUMMARY}</key_knowledge>\n</state_snapshot>"))
    written = {CODEX: codex, CLAUDE: claude, GEMINI: gemini}
    out: dict[str, str] = {}
    for name, found in written.items():
        if found is None:
            raise SystemExit(f"{name}: the agent cannot write this session")
        out[name] = "".join(f"{line}\n" for line in found.lines)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the files are out of date")
    check = parser.parse_args().check
    stale = []
    for name, text in files().items():
        path = OUT / name
        if check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if stale:
        print("out of date (run python examples/make_agent_logs.py):", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
