"""Realistic OpenAI Chat Completions sessions, compaction pairs and JSONL corpora (seeded).

Benchmarks, the example corpus and corpus tests need logs that look like the ones teams really
write: long agent sessions with parallel tool calls, tool results that are logs, JSON documents
and source code (so parsers meet escaped quotes, nested JSON strings and non-ASCII text), SDK
dumps full of explicit nulls, and compactors both good and buggy. Messages are assembled from
`sessiongen.wire` (the same shapes the small test generators use) and texts from
`sessiongen.prose`. Everything derives from one `random.Random`, so a seed always gives the same
bytes (`CORPUS_VERSION` names the generator revision; bump it when the output for a seed
changes, since caches are keyed on it).

* `generate_session(rng, n_messages)` — one session of exactly `n_messages` messages.
* `COMPACTORS` — named strategies `(messages, rng) -> messages`; `EXPECTED_CHECKS` says which
  checks of `BENCH_CONTRACT` each one trips (empty for the good ones).
* `generate_pair(rng, ...)` — one input record (`pair_id`, `session_id`, `compactor`,
  `logged_at`, `before`, `after`).
* `iter_lines(...)` / `write_jsonl(...)` — a JSONL corpus, optionally with bad lines mixed in.

Compactor outputs share message dicts with their input (as a real compactor returning
`messages[k:]` does); copy before mutating either list.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import math
import os
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO, cast

import orjson

from frayproof_audit.contract import Contract, parse_contract
from sessiongen import wire
from sessiongen.prose import (
    PREAMBLES,
    TOOLS,
    SessionStyle,
    assistant_answer,
    developer_note,
    image_block,
    summary_text,
    system_prompt,
    tool_arguments,
    tool_output,
    user_request,
)
from sessiongen.wire import closed_exchanges, header_length

CORPUS_VERSION = 2
"""Revision of the generator's output for a given seed (part of every cache key)."""

BASE_DATE = dt.date(2025, 6, 2)
"""The first night of a generated corpus; night k is BASE_DATE + k days (UTC)."""

Message = dict[str, Any]
Compactor = Callable[[list[Message], random.Random], list[Message]]

BENCH_CONTRACT = """\
# The contract a careful team writes for its compactor: keep the system prompt verbatim, the
# latest request, the last two closed exchanges and every retained tool result unchanged.
version: 1
format: openai
checks:
  tool_pairs:
    allow_trailing_pending_call: true
pins:
  - name: system-prompt
    role: system
retain:
  latest_user_message: exact
  recent_exchanges: 2
  tool_results: complete
"""


def bench_contract() -> Contract:
    """`BENCH_CONTRACT` parsed by the engine."""
    return parse_contract(BENCH_CONTRACT, "<benchmark contract>")


def write_contract(path: str | os.PathLike[str]) -> Path:
    """Write `BENCH_CONTRACT` to `path` (for CLIs and for frayproof, which takes file paths)."""
    target = Path(path)
    target.write_text(BENCH_CONTRACT, encoding="utf-8")
    return target


# --------------------------------------------------------------------------- sessions


def random_style(rng: random.Random) -> SessionStyle:
    return SessionStyle(
        sdk_nulls=rng.random() < 0.3,
        developer=rng.random() < 0.25,
        multimodal=rng.choice((0.0, 0.0, 0.0, 0.1, 0.3)),
        pending_tail=rng.random() < 0.15,
        stack=rng.choices(("python", "node", "jvm"), weights=(60, 25, 15))[0],
        nested_json=rng.random() < 0.2,
    )


def session_length(rng: random.Random, low: int = 10, high: int = 400) -> int:
    """A log-uniform session length: most sessions are short, a long tail reaches `high`."""
    return int(math.exp(rng.uniform(math.log(low), math.log(high + 1))))


def tool_result_size(rng: random.Random, low: int = 50, high: int = 20_000) -> int:
    """A log-uniform tool result size in characters (median about 1 KB)."""
    return max(low, int(math.exp(rng.uniform(math.log(low), math.log(high)))))


class _Builder:
    """Builds the messages of one session in its producer's style, with unique call ids."""

    def __init__(self, rng: random.Random, style: SessionStyle, max_result: int = 20_000) -> None:
        self.rng = rng
        self.style = style
        self.max_result = max_result
        self.ids: set[str] = set()

    def _call_id(self) -> str:
        while True:
            call_id = f"call_{self.rng.getrandbits(96):024x}"
            if call_id not in self.ids:
                self.ids.add(call_id)
                return call_id

    def system(self) -> Message:
        return wire.instruction("system", system_prompt(self.rng))

    def developer(self) -> Message:
        return wire.instruction("developer", developer_note(self.rng))

    def user(self) -> Message:
        rng = self.rng
        request = user_request(rng)
        content: str | list[dict[str, Any]] = request
        if self.style.multimodal and rng.random() < self.style.multimodal:
            content = [wire.text_block(request), image_block(rng)]
        return wire.user(content, sdk_nulls=self.style.sdk_nulls)

    def assistant_text(self) -> Message:
        return wire.assistant(assistant_answer(self.rng), sdk_nulls=self.style.sdk_nulls)

    def tool_round(self, n_calls: int, n_results: int | None = None) -> list[Message]:
        """An assistant message with `n_calls` parallel calls, then results (any order)."""
        rng = self.rng
        calls = []
        for _ in range(n_calls):
            tool = rng.choice(TOOLS)
            arguments = tool_arguments(rng, tool)
            calls.append(wire.function_call(self._call_id(), tool, arguments,
                                            sdk_nulls=self.style.sdk_nulls))
        preamble = rng.choice(PREAMBLES) if rng.random() < 0.2 else None
        messages = [wire.assistant(preamble, calls, sdk_nulls=self.style.sdk_nulls)]
        order = list(range(n_calls))
        if n_calls > 1 and rng.random() < 0.3:
            rng.shuffle(order)
        for position in order[: n_calls if n_results is None else n_results]:
            messages.append(self.tool_result(calls[position]))
        return messages

    def tool_result(self, call: dict[str, Any]) -> Message:
        rng = self.rng
        size = tool_result_size(rng, high=self.max_result)
        body = tool_output(rng, call["function"]["name"], size, self.style)
        content: str | list[dict[str, Any]] = body
        if rng.random() < 0.05:
            content = [wire.text_block(body)]
        return wire.tool_result(call["id"], content, sdk_nulls=self.style.sdk_nulls)

    def exchange(self, size: int) -> list[Message]:
        """A user turn and `size - 1` answering messages (tool rounds, then usually a reply)."""
        body = size - 1
        final = 1 if body == 1 or self.rng.random() < 0.85 else 0
        if body - final == 1:  # one message cannot form a tool round: reshape
            final = 1 - final
        messages = [self.user()]
        for round_size in _split(self.rng, body - final, _round_size, largest=5):
            messages.extend(self.tool_round(round_size - 1))
        if final:
            messages.append(self.assistant_text())
        return messages


def _round_size(rng: random.Random) -> int:
    """1 + the number of parallel calls (1–4, mostly 1)."""
    return 1 + rng.choices((1, 2, 3, 4), weights=(45, 25, 18, 12))[0]


def _exchange_size(rng: random.Random) -> int:
    return 2 if rng.random() < 0.25 else 3 + int(rng.expovariate(1 / 7))


def _split(
    rng: random.Random, total: int, draw: Callable[[random.Random], int], largest: int | None = None
) -> list[int]:
    """Split `total` (0 or >= 2) into parts >= 2 drawn from `draw`, never leaving a remainder of 1."""
    parts: list[int] = []
    left = total
    while left:
        size = min(draw(rng), left)
        if left - size == 1:
            size = size + 1 if largest is None or size < largest else size - 1
        parts.append(size)
        left -= size
    return parts


def generate_session(
    rng: random.Random, n_messages: int, style: SessionStyle | None = None,
    max_result: int = 20_000,
) -> list[Message]:
    """A chat session of exactly `n_messages` (>= 4) messages, ending where a compactor runs.

    Shape: system prompt (and maybe a developer message), closed exchanges, then the latest user
    request — or, with `style.pending_tail`, the latest request followed by an assistant batch
    whose results are only partly in. Call ids are unique within the session. Tool results are
    50 B to `max_result` characters, log-uniformly.
    """
    if n_messages < 4:
        raise ValueError("a session needs at least 4 messages")
    style = style or random_style(rng)
    builder = _Builder(rng, style, max(max_result, 51))
    n_calls = _round_size(rng) - 1
    n_results = rng.randrange(n_calls)
    tails = [2 + n_results, 1] if style.pending_tail else [1]
    headers = [2, 1] if style.developer else [1, 2]
    header, tail = next((h, t) for t in tails for h in headers if n_messages - h - t not in (-1, 1)
                        and n_messages - h - t >= 0)
    messages = [builder.system()]
    if header == 2:
        messages.append(builder.developer())
    for size in _split(rng, n_messages - header - tail, _exchange_size):
        messages.extend(builder.exchange(size))
    messages.append(builder.user())
    if tail > 1:
        messages.extend(builder.tool_round(n_calls, n_results))
    return messages


# --------------------------------------------------------------------------- compactors


class NotApplicable(Exception):
    """The session lacks what a (buggy) compactor needs, e.g. a tool batch it could cut."""


def _protected_start(messages: Sequence[Message], exchanges: int = 2) -> int:
    """Start of the window the benchmark contract protects (the last `exchanges` closed ones)."""
    spans = closed_exchanges(messages)
    if len(spans) < exchanges:
        raise NotApplicable(f"fewer than {exchanges} closed exchanges")
    return spans[-exchanges][0]


def _old_tool_indices(messages: Sequence[Message]) -> list[int]:
    start = _protected_start(messages)
    found = [i for i in range(header_length(messages), start) if messages[i].get("role") == "tool"]
    if not found:
        raise NotApplicable("no tool result outside the protected window")
    return found


def _summary_message(rng: random.Random, dropped: int, role: str = "system") -> Message:
    return {"role": role, "content": summary_text(rng, dropped)}


def _summary_cut(messages: list[Message], keep: int) -> tuple[int, int] | None:
    """(header length, start of the last `keep` closed exchanges), or None when there is
    nothing older to summarise."""
    spans = closed_exchanges(messages)
    if len(spans) <= keep:
        return None
    return header_length(messages), spans[-keep][0]


def summary_keep_last_n(messages: list[Message], rng: random.Random) -> list[Message]:
    """Good: instructions + a summary of older turns + the last 2–4 closed exchanges + the rest."""
    cut = _summary_cut(messages, rng.randint(2, 4))
    if cut is None:
        return list(messages)
    header, start = cut
    return [*messages[:header], _summary_message(rng, start - header), *messages[start:]]


def summary_user_turn(messages: list[Message], rng: random.Random) -> list[Message]:
    """Good: older turns replaced by a user-role summary and an assistant acknowledgement."""
    cut = _summary_cut(messages, rng.randint(2, 3))
    if cut is None:
        return list(messages)
    header, start = cut
    acknowledgement = {"role": "assistant", "content": "Thanks, I have the context. Continuing."}
    return [*messages[:header], _summary_message(rng, start - header, "user"), acknowledgement,
            *messages[start:]]


def keep_last_window(messages: list[Message], rng: random.Random) -> list[Message]:
    """Good: instructions + roughly the last W messages, the cut moved to an exchange boundary
    (and never inside the last two closed exchanges)."""
    header = header_length(messages)
    users = [i for i in range(header, len(messages)) if messages[i].get("role") == "user"]
    cut = max(header, len(messages) - rng.randint(10, 80))
    start = next((u for u in users if u >= cut), users[-1])
    spans = closed_exchanges(messages)
    if spans:
        start = min(start, spans[-min(2, len(spans))][0])
    return [*messages[:header], *messages[start:]]


def cut_mid_tool_batch(messages: list[Message], rng: random.Random) -> list[Message]:
    """Bug: a message-count window whose cut lands inside a tool batch → orphaned results."""
    cut = rng.choice(_old_tool_indices(messages))
    return [*messages[: header_length(messages)], *messages[cut:]]


def drop_old_tool_results(messages: list[Message], rng: random.Random) -> list[Message]:
    """Bug: old tool results pruned to save tokens, their calls kept → unanswered calls."""
    _old_tool_indices(messages)
    header, start = header_length(messages), _protected_start(messages)
    kept = [m for m in messages[header:start] if m.get("role") != "tool"]
    return [*messages[:header], *kept, *messages[start:]]


def drop_system_prompt(messages: list[Message], rng: random.Random) -> list[Message]:
    """Bug: the summary replaces every instruction message, the system prompt included."""
    header = header_length(messages)
    spans = closed_exchanges(messages)
    keep = rng.randint(2, 4)
    start = spans[-keep][0] if len(spans) > keep else header
    return [_summary_message(rng, start), *messages[start:]]


def drop_latest_user(messages: list[Message], rng: random.Random) -> list[Message]:
    """Bug: an off-by-one window end loses the request the model is about to answer."""
    after = summary_keep_last_n(messages, rng)
    latest = max(i for i, message in enumerate(after) if message.get("role") == "user")
    return after[:latest] + after[latest + 1:]


def truncate_tool_results(messages: list[Message], rng: random.Random) -> list[Message]:
    """Bug: kept tool results clipped to a character budget → retained results changed."""
    limit = rng.choice((500, 1000, 2000))
    after = summary_keep_last_n(messages, rng)
    clipped = 0
    for index, message in enumerate(after):
        content = message.get("content")
        if message.get("role") == "tool" and type(content) is str and len(content) > limit:
            omitted = len(content) - limit
            after[index] = {**message, "content": f"{content[:limit]}\n…[{omitted} chars truncated]"}
            clipped += 1
    if not clipped:
        raise NotApplicable(f"no retained tool result longer than {limit} characters")
    return after


def duplicate_tool_message(messages: list[Message], rng: random.Random) -> list[Message]:
    """Bug: a retried tool step appends the same result twice → one id answered twice."""
    target = rng.choice(_old_tool_indices(messages))
    header = header_length(messages)
    start = max(i for i in range(header, target) if messages[i].get("role") == "user")
    first_user = next(i for i in range(header, len(messages)) if messages[i].get("role") == "user")
    summary = [_summary_message(rng, start - header)] if start > first_user else []
    return [*messages[:header], *summary, *messages[start: target + 1], dict(messages[target]),
            *messages[target + 1:]]


GOOD_COMPACTORS: dict[str, Compactor] = {
    "summary_keep_last_n": summary_keep_last_n,
    "keep_last_window": keep_last_window,
    "summary_user_turn": summary_user_turn,
}
BUGGY_COMPACTORS: dict[str, Compactor] = {
    "cut_mid_tool_batch": cut_mid_tool_batch,
    "drop_old_tool_results": drop_old_tool_results,
    "drop_system_prompt": drop_system_prompt,
    "drop_latest_user": drop_latest_user,
    "truncate_tool_results": truncate_tool_results,
    "duplicate_tool_message": duplicate_tool_message,
}
COMPACTORS: dict[str, Compactor] = {**GOOD_COMPACTORS, **BUGGY_COMPACTORS}
"""Every strategy by the name written into a record's `compactor` field."""

EXPECTED_CHECKS: dict[str, frozenset[str]] = {
    **{name: frozenset() for name in GOOD_COMPACTORS},
    "cut_mid_tool_batch": frozenset({"tool_pair_integrity"}),
    "drop_old_tool_results": frozenset({"tool_pair_integrity"}),
    "drop_system_prompt": frozenset({"pinned_content"}),
    "drop_latest_user": frozenset({"retention"}),
    "truncate_tool_results": frozenset({"retention"}),
    "duplicate_tool_message": frozenset({"unique_tool_ids"}),
}
"""The checks of `BENCH_CONTRACT` each compactor's output fails (exactly these)."""

COMPACTOR_WEIGHTS: dict[str, float] = {
    "summary_keep_last_n": 0.35,
    "keep_last_window": 0.25,
    "summary_user_turn": 0.15,
    **{name: 0.25 / len(BUGGY_COMPACTORS) for name in BUGGY_COMPACTORS},
}
"""How often `generate_pair` picks each compactor: three quarters good, one quarter buggy."""


# --------------------------------------------------------------------------- records


def rfc3339(moment: dt.datetime) -> str:
    """UTC RFC 3339 with milliseconds and a `Z`, as most loggers write it."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def logged_at(night: int, fraction: float) -> str:
    """A timestamp `fraction` (0–1) of the way through night `night` (UTC)."""
    start = dt.datetime.combine(BASE_DATE, dt.time(), dt.UTC) + dt.timedelta(days=night)
    return rfc3339(start + dt.timedelta(seconds=min(fraction, 0.999999) * 86_400))


def generate_pair(
    rng: random.Random,
    *,
    compactor: str | None = None,
    n_messages: int | None = None,
    pair_id: str | None = None,
    session_id: str | None = None,
    when: str | None = None,
    max_tries: int = 30,
) -> dict[str, Any]:
    """One input record: `pair_id`, `session_id`, `compactor`, `logged_at`, `before`, `after`.

    `compactor` defaults to a draw from `COMPACTOR_WEIGHTS`. A buggy compactor needs a session
    that has what it breaks; new sessions are drawn until one fits (`max_tries`, then
    `RuntimeError`), longer ones after the first few tries unless `n_messages` is fixed.
    """
    name = compactor or rng.choices(list(COMPACTOR_WEIGHTS), weights=list(COMPACTOR_WEIGHTS.values()))[0]
    strategy = COMPACTORS[name]
    for attempt in range(max_tries):
        length = n_messages or (session_length(rng) if attempt < 3 else rng.randint(40, 400))
        before = generate_session(rng, length)
        try:
            after = strategy(before, rng)
        except NotApplicable:
            continue
        session = session_id or f"sess_{rng.getrandbits(64):016x}"
        return {
            "pair_id": pair_id or f"{session}:{rng.getrandbits(32):08x}",
            "session_id": session,
            "compactor": name,
            "logged_at": when or logged_at(0, rng.random()),
            "before": before,
            "after": after,
        }
    raise RuntimeError(f"compactor {name!r} found no applicable session in {max_tries} tries")


def dump_record(record: dict[str, Any], rng: random.Random) -> bytes:
    """One JSONL line. Two producers: compact orjson, or Python's default `json.dumps`
    (spaces after separators, non-ASCII escaped), as real logs mix both."""
    if rng.random() < 0.35:
        return json.dumps(record).encode("ascii") + b"\n"
    return orjson.dumps(record) + b"\n"


BAD_KIND_STAGE: dict[str, str] = {
    "invalid_json": "json", "truncated": "json", "duplicate_keys": "json", "nan": "json",
    "wrong_types": "load", "missing_after": "record", "after_not_list": "record",
    "undecodable_bytes": "json",
}
"""Realistic bad lines, and where each must be rejected: strict JSON parsing
(`jsonio.loads_strict`), the record's shape (`after` missing or not a list), or snapshot loading
(`snapshot.load_wire`)."""

BAD_KINDS = tuple(BAD_KIND_STAGE)
"""The bad kinds, in the order `iter_lines` cycles through them."""

_LATIN1 = "caf\xe9 cr\xe8me br\xfbl\xe9e".encode("latin-1")
_MARKER = "@@LATIN1@@"


def bad_line(kind: str, record: dict[str, Any], rng: random.Random) -> bytes:
    """A bad JSONL line of `kind` made from a good `record` (which is not modified)."""
    record = {**record, "pair_id": f"{record['pair_id']}-bad-{kind}"}
    after: list[Message] = list(record["after"])
    if kind == "invalid_json":  # a trailing comma, as hand-rolled serializers write
        return orjson.dumps(record)[:-1] + b",}\n"
    if kind == "truncated":  # the writer died mid-line
        line = orjson.dumps(record)
        return line[: int(len(line) * rng.uniform(0.1, 0.9))] + b"\n"
    if kind == "duplicate_keys":
        items = [orjson.dumps(m) for m in after]
        index = rng.randrange(len(items))
        items[index] = b'{"role":' + orjson.dumps(after[index].get("role", "user")) + b"," + items[index][1:]
        head = orjson.dumps({k: v for k, v in record.items() if k != "after"})[:-1]
        return head + b',"after":[' + b",".join(items) + b"]}\n"
    if kind == "nan":  # Python's json.dumps writes NaN unless told not to
        after[-1] = {**after[-1], "logprob_mean": float("nan")}
        return json.dumps({**record, "after": after}).encode("ascii") + b"\n"
    if kind == "wrong_types":
        return orjson.dumps({**record, "after": _wrong_types(after, rng)}) + b"\n"
    if kind == "missing_after":
        return orjson.dumps({k: v for k, v in record.items() if k != "after"}) + b"\n"
    if kind == "after_not_list":  # double-encoded: the list was logged as a JSON string
        return orjson.dumps({**record, "after": json.dumps(after)}) + b"\n"
    if kind == "undecodable_bytes":  # Latin-1 file contents pasted into a result
        index = max(i for i, m in enumerate(after) if type(m.get("content")) is str)
        after[index] = {**after[index], "content": after[index]["content"] + _MARKER}
        return orjson.dumps({**record, "after": after}).replace(_MARKER.encode(), _LATIN1) + b"\n"
    raise ValueError(f"unknown bad record kind {kind!r}")


def _wrong_types(after: list[Message], rng: random.Random) -> list[Message]:
    """A message whose fields have types the wire format forbids."""
    with_calls = [i for i, m in enumerate(after) if m.get("tool_calls")]
    after = list(after)
    if with_calls and rng.random() < 0.5:  # a single call logged without its list
        index = rng.choice(with_calls)
        after[index] = {**after[index], "tool_calls": after[index]["tool_calls"][0]}
    else:
        index = rng.randrange(len(after))
        after[index] = {**after[index], "content": rng.choice((42, True, {"text": "hi"}))}
    return after


def iter_lines(
    n_pairs: int | None = None,
    target_bytes: int | None = None,
    seed: int = 0,
    nights: int = 1,
    bad_records: int = 0,
) -> Iterator[bytes]:
    """JSONL lines: `n_pairs` good records (or good records until `target_bytes` are written),
    plus `bad_records` bad lines (kinds cycling through `BAD_KINDS`) spread evenly among them.

    Records are spread over `nights` consecutive UTC nights from `BASE_DATE`, in time order.
    Bad lines keep their record's `pair_id` with `-bad-<kind>` appended.
    """
    if (n_pairs is None) == (target_bytes is None):
        raise ValueError("give exactly one of n_pairs and target_bytes")
    rng = random.Random(seed)
    total = n_pairs + bad_records if n_pairs is not None else None
    bad_at = {int((j + 0.5) * total / bad_records) for j in range(bad_records)} if total else set()
    written = emitted = bad = 0
    while True:
        if total is not None:
            if emitted >= total:
                return
            progress = emitted / total
            make_bad = emitted in bad_at
        else:
            assert target_bytes is not None
            progress = min(written / target_bytes, 1.0)
            make_bad = bad < bad_records and written >= target_bytes * (bad + 0.5) / bad_records
            if written >= target_bytes and not make_bad:
                if bad >= bad_records:
                    return
                make_bad = True
        night = min(int(progress * nights), nights - 1)
        stamp = logged_at(night, progress * nights - night)
        record = generate_pair(rng, pair_id=f"p{seed}-{emitted:07d}", when=stamp)
        if make_bad:
            line = bad_line(BAD_KINDS[bad % len(BAD_KINDS)], record, rng)
            bad += 1
        else:
            line = dump_record(record, rng)
        yield line
        written += len(line)
        emitted += 1


def write_jsonl(
    path: str | os.PathLike[str],
    n_pairs: int | None = None,
    target_bytes: int | None = None,
    seed: int = 0,
    nights: int = 1,
    bad_records: int = 0,
) -> int:
    """Write `iter_lines(...)` to `path` (gzip if it ends in `.gz`) atomically; return the number
    of lines (`n_pairs + bad_records` when `n_pairs` is given)."""
    return write_lines(path, iter_lines(n_pairs, target_bytes, seed, nights, bad_records))


def write_lines(path: str | os.PathLike[str], lines: Iterable[bytes]) -> int:
    """Write `lines` to `path` (gzip if it ends in `.gz`) under a temporary name, then rename:
    a reader never sees half a corpus. Returns the number of lines."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    count = 0
    try:
        with _open_for_writing(temporary, target.name.endswith(".gz")) as out:
            for line in lines:
                out.write(line)
                count += 1
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
    return count


def _open_for_writing(path: Path, compress: bool) -> BinaryIO:
    if compress:
        return cast(BinaryIO, gzip.open(path, "wb", compresslevel=5))
    return open(path, "wb")
