"""Line numbers of places in a JSON snapshot file, for outputs that point at a line.

A finding or a mutant names its place as the user's format spells it (`after[4]`,
`after[4].tool_calls[1]`, `after.system[0]`, `after[2].content[1]`). `SnapshotLines` reads the
file once with a small tokenizer that records the line where each value starts, down to a few
levels, and `line_of` follows a label's steps as deep as the file's structure goes: a step the
file does not have (a format's own label for a block that is not a JSON key) stops there, at the
deepest value that exists. A label whose first step is a list index but whose file holds an
object (a request with a top-level `system`) is not guessed at: `line_of` gives None, and the
outputs name the place as a logical location only.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass

Step = str | int
Path = tuple[Step, ...]

MAX_DEPTH = 4
"""Values deeper than this are not indexed: labels never go deeper (message, field, item, key)."""

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^\s{}\[\],:"]+', re.S)
_STEP = re.compile(r'\[(\d+)(?::\d+)?\]|\.([A-Za-z_][A-Za-z0-9_]*)|\[("(?:[^"\\]|\\.)*")\]')
_SNAPSHOT = re.compile(r"[A-Za-z_]+")


@dataclass(frozen=True, slots=True)
class SnapshotLines:
    """Where each value of one JSON document starts (1-based lines), by its path."""

    starts: dict[Path, int]

    @classmethod
    def from_text(cls, text: str) -> SnapshotLines:
        return cls(_index(text))

    def line_of(self, label: str) -> int | None:
        """The line of the deepest value of `label` (`after[4].tool_calls[1]`) the file holds."""
        steps = parse_label(label)
        if steps is None or () not in self.starts:
            return None
        found: int | None = None
        path: Path = ()
        for step in steps:
            path = (*path, step)
            line = self.starts.get(path)
            if line is None:
                break
            found = line
        if found is None and steps and isinstance(steps[0], int):
            return None  # an index into a document that is not a list: do not guess
        return found if found is not None else self.starts[()]


def parse_label(label: str) -> Path | None:
    """`after[4].tool_calls[1]` → (4, "tool_calls", 1); a span (`after[2:5]`,
    `after[2]..after[4]`) → its first place; None for a form it does not know."""
    label = label.split("..", 1)[0]
    head = _SNAPSHOT.match(label)
    if head is None:
        return None
    steps: list[Step] = []
    position = head.end()
    while position < len(label):
        match = _STEP.match(label, position)
        if match is None:
            return None
        index, name, quoted = match.groups()
        if index is not None:
            steps.append(int(index))
        elif name is not None:
            steps.append(name)
        else:
            steps.append(json.loads(quoted))
        position = match.end()
    return tuple(steps)


def _index(text: str) -> dict[Path, int]:
    """Start lines of values, by path, up to `MAX_DEPTH`; {} for text that is not JSON."""
    newlines = [match.start() for match in re.finditer("\n", text)]
    starts: dict[Path, int] = {}
    # One frame per open container: [path, is_object, next list index, pending key].
    stack: list[list[object]] = []
    expect_key = False
    try:
        for token in _TOKEN.finditer(text):
            value = token.group()
            if value in ",:":
                if value == "," and stack and stack[-1][1]:
                    expect_key = True
                continue
            if value in "}]":
                stack.pop()
                expect_key = False
                continue
            if expect_key:
                stack[-1][3] = json.loads(value)
                expect_key = False
                continue
            path = _value_path(stack)
            if len(path) <= MAX_DEPTH and path not in starts:
                starts[path] = bisect_right(newlines, token.start()) + 1
            if value == "{":
                stack.append([path, True, 0, None])
                expect_key = True
            elif value == "[":
                stack.append([path, False, 0, None])
    except (IndexError, ValueError):
        return {}
    return starts


def _value_path(stack: list[list[object]]) -> Path:
    """The path of the value that starts now, advancing the enclosing list's index."""
    if not stack:
        return ()
    frame = stack[-1]
    parent = frame[0]
    assert isinstance(parent, tuple)
    if frame[1]:
        key = frame[3]
        assert isinstance(key, str)
        return (*parent, key)
    index = frame[2]
    assert isinstance(index, int)
    frame[2] = index + 1
    return (*parent, index)
