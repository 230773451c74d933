"""A second input format, for tests only: it proves the `Format` seam carries a format whose
wire messages are not the neutral ones.

Wire: a list of turns, `{"turn": [chat message, ...]}`; a turn may hold several messages
(an assistant call and its results, say). Neutral: the chat messages, flattened. Message k of
turn i sits at `after[i].turn[k]`.
"""

from __future__ import annotations

import copy
from typing import Any

from frayproof_audit.errors import InputError
from frayproof_audit.formats.openai import OPENAI
from frayproof_audit.loaded import Loaded, MessageView, Origin


class TurnsFormat:
    name = "turns"
    containers: tuple[type, ...] = (list,)

    def load(self, messages: list[Any]) -> Loaded:
        neutral: list[Any] = []
        origins: list[Origin] = []
        for index, item in enumerate(messages):
            if type(item) is not dict or type(item.get("turn")) is not list:
                raise InputError(f"turns[{index}] must be an object with a turn array")
            for position, message in enumerate(item["turn"]):
                neutral.append(message)
                origins.append(Origin(index, position))
        return Loaded(neutral, OPENAI.views(neutral), self, origins=tuple(origins))

    def load_copy(self, messages: list[Any]) -> Loaded:
        return self.load(copy.deepcopy(list(messages)))

    def views(self, messages: list[dict[str, Any]]) -> list[MessageView]:
        return OPENAI.views(messages)

    def identity(self, message: dict[str, Any]) -> bytes:
        return OPENAI.identity(message)

    def site(self, snapshot: str, origin: Origin, call: int | None = None) -> str:
        where = f"{snapshot}[{origin.message}].turn[{origin.block}]"
        return where if call is None else f"{where}.tool_calls[{call}]"

    def span(self, snapshot: str, first: Origin, last: Origin) -> str:
        return f"{snapshot}[{first.message}].turn[{first.block}]..[{last.message}].turn[{last.block}]"


TURNS = TurnsFormat()


def as_turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Group a chat message list into turns: a new turn starts at every user or system message."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        if not turns or message.get("role") in ("user", "system"):
            turns.append({"turn": []})
        turns[-1]["turn"].append(message)
    return turns
