"""How one logged request relates to the one before it: the pure classifier of request-log sources.

Traces and observability exports hold model calls, not compactions. Two consecutive requests
of one conversation say what happened in between: the expected next request is the previous
request and its response (E), then whatever the turn appended (tool results, a user message).
`classify(previous, response, request)` compares the request (I) with E, message by message in
the neutral model (`formats`: every input format reads into it), and names the change:

* `append`: I starts with E (after its leading system block), or E survives whole in I with
  only insertions (injected reminders): nothing was lost, no event;
* `clear`: the same messages, some tool results (or a call's arguments) replaced by shorter
  text or a known placeholder (`[cleared]`, `[Old tool result content cleared]`,
  `<tool_output_masked>`, `...(argument truncated)`), nothing else gone;
* `summarize`: messages of E gone and new ones in their place that hold a known summary
  marker, or the summarizer's output, or (unmarked) a non-assistant message where history was
  dropped;
* `rewind`: E's history kept up to a point and everything after it gone, the conversation
  going on differently from there (an edited or regenerated turn);
* `truncate`: messages of E gone and nothing new in their place (what is left is a
  subsequence of E: a sliding window, a trimming step);
* `unrelated`: nothing of E in I and a different system prompt (or none on either side):
  another agent's call.

Keys ignore what moves between calls without changing the context: `cache_control`
breakpoints, reasoning / thinking blocks (dropped by design: Anthropic strips previous
thinking blocks, and OpenAI reasoning items are not resent without `store`), and whitespace
runs. The leading system / developer block is compared apart: a rebuilt system prompt (dates,
environment context) is no compaction, and is named in the reasons when it changed. The new
tail of I (the turn appended since: tool results answering the response's calls, or the one
new user message at the end) is not part of the after.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from frayproof_audit.jsonio import canonical
from frayproof_audit.loaded import Loaded
from frayproof_audit.sources.base import Classification
from frayproof_audit.sources.codex import SUMMARY_PREFIX

SUMMARY_MARKERS: tuple[tuple[str, str], ...] = (
    ("Here is a summary of the conversation to date:",
     "LangChain SummarizationMiddleware (langchain_v1 agents/middleware/summarization.py)"),
    ("This session is being continued from a previous conversation",
     "Claude Code compaction summary"),
    (SUMMARY_PREFIX.split(".", 1)[0], "Codex CLI compaction summary (templates/compact/summary_prefix.md)"),
    ("<state_snapshot>", "Gemini CLI compression (chatCompressionService.ts)"),
    ("You are in the middle of a conversation that has been summarized",
     "deepagents SummarizationMiddleware (middleware/summarization.py)"),
    ("Summary of the conversation so far:", "langmem SummarizationNode (short_term/summarization.py)"),
)
"""Text a summary message starts with or holds, and who writes it."""
CLEARED_MARKERS = ("[cleared]", "[Old tool result content cleared]", "<tool_output_masked>",
                   "...(argument truncated)")
"""Placeholders of context editing: LangChain `ContextEditingMiddleware` (`[cleared]`), Claude
Code microcompaction, Gemini CLI tool-output masking, deepagents argument truncation."""
SUMMARY_INSTRUCTION = re.compile(r"\bsummar(y|ize|ise|ization|isation)\b", re.IGNORECASE)
REASONING_TYPES = frozenset({"reasoning", "thinking", "redacted_thinking", "thought"})
LOOSE = frozenset({"cache_control"})
SIMILAR_SYSTEM = 0.5
"""Word overlap from which two system prompts are one agent's, rebuilt."""
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Item:
    """One neutral message as the diff sees it."""

    key: bytes
    role: str
    text: str
    """Its searchable text (text blocks, call names and arguments, a result's content)."""
    call_ids: tuple[str, ...]
    tool_call_id: str | None
    wire: int
    """The wire message it was read from."""
    marker: str | None
    """A known summary marker it holds (`SUMMARY_MARKERS`), described."""

    @property
    def anchor(self) -> tuple[str, ...] | None:
        """What identifies it across an edit of its content: a result's call id, a turn's
        call ids."""
        if self.tool_call_id is not None:
            return ("result", self.tool_call_id)
        return ("calls", *self.call_ids) if self.call_ids else None

    def describe(self, index: int, side: str) -> str:
        what = (f"tool result of {self.tool_call_id}" if self.tool_call_id is not None else
                f"{self.role} message with calls {', '.join(self.call_ids)}" if self.call_ids else
                f"{self.role or 'roleless'} message")
        return f"{side}[{index}] {what}, {len(self.text)} chars"


def items(loaded: Loaded, marked: frozenset[int] = frozenset()) -> list[Item]:
    """The neutral messages of a snapshot as diff items; `marked` wire messages carry a
    producer's own summary tag (LangChain's `lc_source: "summarization"`)."""
    found: list[Item] = []
    for index, message in enumerate(loaded.wire):
        view = loaded.views[index]
        wire = loaded.wire_index(index)
        wire = -1 if wire is None else wire
        text, blocks = _text_and_blocks(view.content)
        calls = []
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {} if isinstance(call, dict) else {}
            calls.append((call.get("id") if isinstance(call, dict) else None, function.get("name"),
                          _arguments(function.get("arguments"))))
        body = text + "".join(f"\n{name} {arguments}" for _, name, arguments in calls)
        key = canonical([view.role, _SPACE.sub(" ", text).strip(), blocks,
                         [[i, n, a] for i, n, a in calls], view.tool_call_id, view.refusal])
        marker = _marker(text, blocks) or ("lc_source summarization" if wire in marked else None)
        found.append(Item(key, view.role, body, tuple(str(i) for i, _, _ in calls),
                          view.tool_call_id, wire, marker))
    return found


def _text_and_blocks(content: Any) -> tuple[str, list[Any]]:
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    blocks: list[Any] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in REASONING_TYPES or block.get("thought") is True:
            continue
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
            if isinstance(block.get("compaction"), dict):
                blocks.append({"compaction": True})
        else:
            blocks.append({key: value for key, value in block.items() if key not in LOOSE})
    return "\n".join(texts), blocks


def _arguments(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _marker(text: str, blocks: list[Any]) -> str | None:
    for marker, who in SUMMARY_MARKERS:
        if marker in text[:4096]:
            return f"{marker!r} ({who})"
    if any(isinstance(block, dict) and (block.get("type") in ("compaction", "compaction_summary")
                                        or block.get("compaction") is True) for block in blocks):
        return "a compaction item (a provider's own summary)"
    return None


def system_head(found: list[Item]) -> int:
    """How many leading items are the system / developer block."""
    count = 0
    while count < len(found) and found[count].role in ("system", "developer"):
        count += 1
    return count


def similar_systems(first: list[Item], second: list[Item]) -> bool:
    """Whether two system blocks are one agent's (equal, or rebuilt: most words shared)."""
    if [item.key for item in first] == [item.key for item in second]:
        return True
    if not first or not second:
        return False
    a = Counter(" ".join(item.text for item in first).split())
    b = Counter(" ".join(item.text for item in second).split())
    largest = max(sum(a.values()), sum(b.values()))
    return largest > 0 and sum((a & b).values()) / largest >= SIMILAR_SYSTEM


@dataclass(frozen=True, slots=True)
class Verdict:
    """`classify`'s answer: the classification, why, and where before and after part."""

    classification: Classification
    reasons: tuple[str, ...]
    diverged_at: int | None
    """The index in E of its first item I does not continue with."""
    before_item: str | None
    after_item: str | None
    after_items: int
    """How many items of I make the after (I minus its new tail)."""
    kept: int = 0
    """How many messages of E the request still sends (how strongly the two are related)."""
    same_system: bool = False


def classify(expected: list[Item], request: list[Item], calls: frozenset[str] = frozenset(),
             summaries: tuple[str, ...] = ()) -> Verdict:
    """How `request` (I) relates to `expected` (E: the previous request and its response);
    `calls` are the ids of the response's calls (their results are the new tail), `summaries`
    the outputs of summarizer calls found in the log (see the module docstring)."""
    head_e, head_i = system_head(expected), system_head(request)
    body_e, body_i = expected[head_e:], request[head_i:]
    reasons: list[str] = []
    same_system = [i.key for i in expected[:head_e]] == [i.key for i in request[:head_i]]
    if not same_system and head_e + head_i:
        reasons.append("the system block differs between the two requests"
                       + (" (rebuilt)" if similar_systems(expected[:head_e], request[:head_i])
                          else ""))
    keys_e = [item.key for item in body_e]
    keys_i = [item.key for item in body_i]
    prefix = _common_prefix(keys_e, keys_i)
    if prefix == len(keys_e):
        return Verdict("append", (*reasons, "the request goes on from the previous request and "
                                              "its response"), None, None, None, len(request),
                       len(body_e), same_system)
    tail = _tail(body_i, set(keys_e), calls)
    after = body_i[:len(body_i) - tail]
    after_count = head_i + len(after)
    diverged_before = body_e[prefix].describe(head_e + prefix, "before")
    diverged_after = (after[prefix].describe(head_i + prefix, "after") if prefix < len(after)
                      else None)

    def verdict(kind: Classification, *why: str) -> Verdict:
        return Verdict(kind, (*reasons, *why), head_e + prefix, diverged_before, diverged_after,
                       after_count, len(body_e) - len(dropped), same_system)

    kept = Counter(item.key for item in after)
    dropped = [item for item in body_e if not _take(kept, item.key)]
    present = Counter(keys_e)
    new = [item for item in after if not _take(present, item.key)]
    if not dropped:
        return Verdict("append", (*reasons, f"every message of the previous request and its "
                                              f"response is still sent; {len(new)} inserted"),
                       None, None, None, len(request), len(body_e), same_system)
    summary = _summary(new, summaries)
    replaced = _replaced(dropped, new)
    if replaced is not None and len(replaced) == len(dropped) == len(new):
        old, shorter = replaced[0]
        return verdict("clear", f"{len(replaced)} tool result(s) or call(s) replaced by "
                                f"{'a placeholder' if _placeholder(shorter.text) else 'shorter text'} "
                                f"in place (first: {old.describe(expected.index(old), 'before')})")
    matched = len(body_e) - len(dropped)
    if not matched and not summary:
        systems = expected[:head_e], request[:head_i]
        if not (systems[0] or systems[1]) or not similar_systems(*systems):
            return verdict("unrelated", "nothing of the previous request is sent, and the "
                                        "system prompts differ")
    if summary:
        return verdict("summarize", f"{len(dropped)} message(s) dropped; {summary}")
    after_keys = {item.key for item in after}
    suffix_gone = all(item.key not in after_keys for item in body_e[prefix:])
    if suffix_gone and (not new or new[0].role == "assistant"):
        return verdict("rewind", f"the history is kept up to before[{head_e + prefix}] and the "
                                 f"{len(body_e) - prefix} message(s) after it are gone"
                       + (", the conversation going on differently" if new else ""))
    if not new:
        return verdict("truncate", f"{len(dropped)} message(s) dropped and nothing new in their "
                                   "place")
    if any(item.role != "assistant" for item in new):
        return verdict("summarize", f"{len(dropped)} message(s) dropped and {len(new)} new "
                                    "one(s) in their place (no known summary marker)")
    return verdict("rewind", f"{len(dropped)} message(s) gone and {len(new)} new assistant "
                             "message(s) in their place")


def _common_prefix(first: list[bytes], second: list[bytes]) -> int:
    count = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        count += 1
    return count


def _take(counter: Counter[bytes], key: bytes) -> bool:
    if counter[key] > 0:
        counter[key] -= 1
        return True
    return False


def _tail(body: list[Item], known: set[bytes], calls: frozenset[str]) -> int:
    """How many trailing items are the turn appended since the previous call: results of its
    response's calls, and at most one new user message, none of them known or a summary."""
    count = 0
    user = False
    for item in reversed(body):
        if item.key in known or item.marker is not None:
            break
        if item.role == "tool" and item.tool_call_id in calls:
            count += 1
        elif item.role == "user" and not user:
            user = True
            count += 1
        else:
            break
    return count


def _summary(new: list[Item], summaries: tuple[str, ...]) -> str | None:
    for item in new:
        if item.marker is not None:
            return f"a new message holds the summary marker {item.marker}"
    for item in new:
        for text in summaries:
            if _holds(item.text, text):
                return "a new message holds the summarizer's output"
    return None


def _holds(text: str, summary: str) -> bool:
    return bool(summary) and _SPACE.sub(" ", summary).strip() in _SPACE.sub(" ", text)


def _placeholder(text: str) -> bool:
    return any(marker in text for marker in CLEARED_MARKERS)


def _replaced(dropped: list[Item], new: list[Item]) -> list[tuple[Item, Item]] | None:
    """Each dropped item paired with the new one of the same anchor (call id) that is a
    placeholder or shorter; None when some dropped item has no such replacement."""
    by_anchor = {item.anchor: item for item in new if item.anchor is not None}
    pairs = []
    for old in dropped:
        found = by_anchor.get(old.anchor) if old.anchor is not None else None
        if found is None or not (_placeholder(found.text) or len(found.text) < len(old.text)):
            return None
        pairs.append((old, found))
    return pairs


def summarizer_output(request: list[Item], response: list[Item]) -> str | None:
    """The text of a response that may be a summary: a summarizer call's output (the caller
    checks it reappears later in another role)."""
    text = "\n".join(item.text for item in response if item.role == "assistant").strip()
    return text if len(text) >= 20 else None


def reused(text: str, request: list[Item]) -> bool:
    """Whether `text` (a call's output) reappears in `request` in a message that is not the
    assistant's own (a summary the agent sends back as a user or system message)."""
    return any(item.role != "assistant" and _holds(item.text, text) for item in request)


def carried(text: str, request: list[Item]) -> bool:
    """Whether `text` (a call's output) is an assistant turn of `request`: the conversation
    went on with it as the model's own answer."""
    return any(item.role == "assistant" and _holds(item.text, text) for item in request)


def asks_for_summary(request: list[Item]) -> bool:
    """Whether a request's last user or system message asks for a summary."""
    for item in reversed(request):
        if item.role in ("user", "system", "developer"):
            return bool(SUMMARY_INSTRUCTION.search(item.text[-2000:]))
    return False
