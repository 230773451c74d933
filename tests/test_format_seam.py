"""A new input format is one module and one line in `FORMATS`: nothing else to touch.

`chatlog` is written into a temporary folder at test time (a wire format of its own, with
`speaker`, `text`, `invoke` and `reply_to` where Chat Completions has `role`, `content`,
`tool_calls` and `tool_call_id`), imported, and registered with one line. It is then read by
`check`, told apart by `auto` (from its own `evidence`), rewritten by `repair` and `compact`
(with its own `writer`), and its findings are repairable in an audit; the same format without
a writer is refused by name and repairs nothing.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from frayproof_audit.formats import FORMATS, detect, rewritable
from frayproof_audit.formats.auto import AmbiguousFormat
from tests.helpers import REPO, run_cli

CHATLOG = '''
"""`chatlog`: Chat Completions with other field names (a format for one test)."""

import copy

from frayproof_audit.formats.evidence import EvidenceRules
from frayproof_audit.formats.openai import OPENAI, ChatShaped
from frayproof_audit.formats.writer import Piece
from frayproof_audit.loaded import Loaded

WIRE = {"speaker": "role", "text": "content", "reply_to": "tool_call_id"}


def neutral(message):
    out = {WIRE[key]: value for key, value in message.items() if key in WIRE}
    if "invoke" in message:
        out["tool_calls"] = [{"id": c["id"], "type": "function",
                              "function": {"name": c["tool"], "arguments": c["args"]}}
                             for c in message["invoke"]]
    return out


def evidence(index, message):
    return (f"messages[{index}]", "has speaker") if "speaker" in message else None


class Writer:
    def pieces(self, snapshot):
        return [Piece(i, i, (m,), m.get("speaker") == "tool", True)
                for i, m in enumerate(snapshot.wire)]

    def result(self, call_id, text):
        return Piece(None, None, ({"speaker": "tool", "reply_to": call_id, "text": text},),
                     True, True)

    def assemble(self, snapshot, plan):
        return [piece.units[0] for piece in plan]

    def hosts(self, snapshot, plan):
        return [None] * len(plan)


class Chatlog(ChatShaped):
    name = "chatlog"
    containers = (list,)
    evidence = EvidenceRules(message=evidence)
    writer = Writer()

    def load(self, messages):
        converted = [neutral(message) for message in messages]
        return Loaded(converted, self.views(converted), self)

    def load_copy(self, messages):
        return self.load(copy.deepcopy(messages))

    def site(self, snapshot, origin, call=None, argument=None):
        where = f"{snapshot}[{origin.message}]"
        return where if call is None else f"{where}.invoke[{call}]"

    def span(self, snapshot, first, last):
        return f"{snapshot}[{first.message}:{last.message + 1}]"


class ReadOnly(Chatlog):
    writer = None


CHATLOG = Chatlog()
READ_ONLY = ReadOnly()
'''


def ask(text: str = "what is in a") -> dict[str, Any]:
    return {"speaker": "user", "text": text}


def invoke(*ids: str) -> dict[str, Any]:
    return {"speaker": "assistant", "text": None,
            "invoke": [{"id": i, "tool": "read", "args": '{"path":"a"}'} for i in ids]}


def reply(call_id: str) -> dict[str, Any]:
    return {"speaker": "tool", "reply_to": call_id, "text": "ok"}


BEFORE = [{"speaker": "system", "text": "Be brief."}, ask(), invoke("c1"), reply("c1"), ask("next")]
UNANSWERED = [{"speaker": "system", "text": "Be brief."}, ask(), invoke("c1", "c2"), reply("c1"),
              ask("next")]


@pytest.fixture
def chatlog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The module, written and imported; `CHATLOG` registered by one line."""
    folder = tmp_path / "formats_here"
    folder.mkdir()
    (folder / "chatlog.py").write_text(textwrap.dedent(CHATLOG), encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    module = importlib.import_module("chatlog")
    monkeypatch.setitem(FORMATS, "chatlog", module.CHATLOG)  # the one line
    yield module
    sys.modules.pop("chatlog", None)


def write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, indent=1), encoding="utf-8")
    return path


@pytest.mark.usefixtures("chatlog")
@pytest.mark.parametrize("named", ["chatlog", "auto"])
def test_check_reads_the_new_format_by_name_and_by_auto(tmp_path: Path, named: str) -> None:
    before, after = write(tmp_path / "b.json", BEFORE), write(tmp_path / "a.json", UNANSWERED)
    done = run_cli("check", "--before", before, "--after", after, "--input-format", named,
                   "--format", "json", expect=1)
    [finding] = json.loads(done.stdout)["violations"]
    assert (finding["code"], finding["message_index"], finding["tool_call_id"]) == (
        "TP-UNANSWERED", 2, "c2")
    passing = run_cli("check", "--before", before, "--after", before, "--input-format", named)
    assert passing.stdout.startswith("PASS")


def test_auto_detects_it_from_its_own_evidence_and_refuses_ambiguity(chatlog: ModuleType) -> None:
    assert detect(UNANSWERED) == (chatlog.CHATLOG, True)
    assert detect([{"role": "user", "content": "hi"}])[1] is False  # plain turns: no evidence
    mixed = [ask(), {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    with pytest.raises(AmbiguousFormat, match=r"messages\[0\] has speaker \(chatlog\) but "
                                              r"messages\[1\] has tool_call_id \(openai\)"):
        detect(mixed)
    one = [{"speaker": "tool", "tool_call_id": "c1"}]  # one place: registry order names first
    with pytest.raises(AmbiguousFormat, match=r"messages\[0\] has tool_call_id \(openai\) but "
                                              r"messages\[0\] has speaker \(chatlog\)"):
        detect(one)


def test_without_registration_auto_does_not_know_it(chatlog: ModuleType,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(FORMATS, "chatlog")
    assert detect(UNANSWERED)[1] is False


@pytest.mark.usefixtures("chatlog")
def test_repair_and_compact_write_it_back_with_its_writer(tmp_path: Path) -> None:
    assert "chatlog" in rewritable()
    broken = write(tmp_path / "broken.json", UNANSWERED)
    repaired = run_cli("repair", broken, "-o", tmp_path / "fixed.json")
    assert "synthesize" in repaired.stdout
    fixed = json.loads((tmp_path / "fixed.json").read_text("utf-8"))
    assert fixed[:4] == UNANSWERED[:4] and fixed[5:] == UNANSWERED[4:]
    assert fixed[4]["speaker"] == "tool" and fixed[4]["reply_to"] == "c2"
    assert run_cli("inspect", tmp_path / "fixed.json").stdout.startswith("ok")
    long = write(tmp_path / "long.json", [*BEFORE, ask("x" * 400), ask("y")])
    kept = json.loads(run_cli("compact", long, "--max-tokens", "60", "--keep", "1").stdout)
    assert kept == [BEFORE[0], ask("y")]  # the instructions and the latest turn, in chatlog


def test_a_format_without_a_writer_is_refused_by_name_and_never_repairable(
        chatlog: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from frayproof_audit.corpus import audit, read_table

    def repairable(out: Path) -> list[tuple[str, bool]]:
        record = {"pair_id": "p", "format": "chatlog", "before": BEFORE, "after": UNANSWERED}
        path = tmp_path / "log.jsonl"
        path.write_text(json.dumps(record) + "\n", encoding="utf-8")
        audit([str(path)], None, str(out), jobs=1, mutate=False, fail_on=("none",))
        findings = read_table(out, "findings").collect()
        return list(zip(findings["code"], findings["repairable"], strict=True))

    assert repairable(tmp_path / "with") == [("TP-UNANSWERED", True)]
    monkeypatch.setitem(FORMATS, "chatlog", chatlog.READ_ONLY)
    assert "chatlog" not in rewritable()
    assert repairable(tmp_path / "without") == [("TP-UNANSWERED", False)]
    refused = run_cli("repair", write(tmp_path / "broken.json", UNANSWERED), "--input-format",
                      "chatlog", expect=2)
    assert ("transcripts in format 'chatlog' cannot be rewritten (supported: openai, anthropic, "
            "openai-responses, otel-genai, langchain)") in refused.stderr


def test_a_real_process_registers_it_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "chatlog.py").write_text(textwrap.dedent(CHATLOG), encoding="utf-8")
    after = write(tmp_path / "a.json", UNANSWERED)
    script = (
        f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
        "import chatlog\n"
        "from frayproof_audit.formats import FORMATS\n"
        "FORMATS['chatlog'] = chatlog.CHATLOG\n"
        "from frayproof_audit.cli import main\n"
        f"main(['validate', '--snapshot', {str(after)!r}, '--input-format', 'auto'])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=REPO, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert "TP-UNANSWERED" in done.stdout and "after[2]" in done.stdout
