"""Chat Completions transcripts in every format the transcript tools write, for their tests.

`in_format(messages, name)` rewrites a Chat transcript with the test converters (None when the
format cannot say it), and `shape(snapshot, name)` is the neutral shape of a transcript:
its roles, call ids and result ids, `*` marking a result repair synthesized.
"""

from __future__ import annotations

import copy
from typing import Any

from frayproof_audit.transcript import INTERRUPTED
from frayproof_audit.transcript.loading import read_transcript
from tests.anthropic_wire import NotExpressible, to_anthropic
from tests.otel_messages import to_otel
from tests.responses_items import representable, to_items

FORMATS = ("openai", "anthropic", "openai-responses", "otel-genai")


def in_format(messages: list[dict[str, Any]], name: str) -> Any:
    messages = copy.deepcopy(messages)
    if name == "openai":
        return messages
    if name == "anthropic":
        try:
            return to_anthropic(messages, top_system=False)[0]
        except NotExpressible:
            return None
    if name == "openai-responses":
        chat = representable(messages)
        return None if chat is None or chat != messages else to_items(chat).items
    return to_otel(messages, group_results=True)


def shape(snapshot: Any, name: str) -> list[str]:
    loaded = read_transcript(snapshot, name).loaded
    found = []
    for view in loaded.views:
        if view.role == "tool":
            mark = "*" if view.content == INTERRUPTED else ""
            found.append(f"tool:{view.tool_call_id}{mark}")
        elif view.calls:
            found.append(f"{view.role}:{','.join(call.id for call in view.calls)}")
        else:
            found.append(view.role)
    return found
