"""Realistic message text for `sessiongen.realistic`: prose, logs, code, JSON documents.

Tool outputs deliberately include what makes JSON parsing slow or tricky in real logs: escaped
quotes (JSON documents carried as strings), JSON strings nested two levels deep, Spring-style log
lines (" : "), JavaScript ternaries, non-ASCII text.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sessiongen import wire

_VOCABULARY = (
    "the request timeout cache session token deploy build config retry queue worker handler "
    "database index migration schema latency error upstream downstream replica shard lock "
    "transaction payload header client server endpoint response status metric alert threshold "
    "rollback release branch commit test fixture coverage dependency version module function "
    "class method argument return value field record table column query plan scan partition "
    "we should first check whether this is caused by a change in that because it looks like "
    "after before when then only also still again now not all some each every most"
)
_WORDS = tuple(_VOCABULARY.split())
_SERVICES = ("billing-api", "auth-gateway", "search-indexer", "checkout", "notifications",
             "ledger-sync", "media-transcoder", "orders-db", "inventory", "feature-flags")
_PATHS = ("src/app/main.py", "src/billing/invoice.py", "src/auth/tokens.py", "src/db/models.py",
          "web/src/components/Cart.tsx", "web/src/api/client.ts", "deploy/helm/values.yaml",
          "src/search/indexer.py", "tests/test_invoice.py", "web/src/hooks/useSession.ts")
_NAMES = ("José", "Zoë", "Ana", "Mikko", "Søren", "李雷", "Ngozi", "Priya", "Олег", "Dmitri")
PREAMBLES = ("Let me look at the logs first.", "I'll check the code and the config.",
              "Running the tests to reproduce.", "Checking both services in parallel.")
TOOLS = ("read_file", "run_shell", "search_code", "http_get", "query_db", "list_dir",
          "get_logs", "fetch_ticket")


def _sentence(rng: random.Random) -> str:
    words = rng.choices(_WORDS, k=rng.randint(6, 18))
    return " ".join(words).capitalize() + rng.choice((".", ".", ".", "?", ":"))


def _prose(rng: random.Random, n_chars: int) -> str:
    paragraphs: list[str] = []
    length = 0
    while length < n_chars:
        paragraphs.append(" ".join(_sentence(rng) for _ in range(rng.randint(2, 5))))
        length += len(paragraphs[-1]) + 2
    return "\n\n".join(paragraphs)


def _timestamp(rng: random.Random) -> str:
    ms = rng.randrange(28 * 86_400_000)
    return (f"2025-06-{ms // 86_400_000 + 1:02d}T{ms // 3_600_000 % 24:02d}:{ms // 60_000 % 60:02d}:"
            f"{ms // 1000 % 60:02d}.{ms % 1000:03d}Z")


def _stack_trace(rng: random.Random) -> str:
    frames = "\n".join(
        f'  File "/app/{rng.choice(_PATHS)}", line {rng.randint(1, 500)}, in {rng.choice(_WORDS)}'
        for _ in range(rng.randint(2, 6))
    )
    return f"Traceback (most recent call last):\n{frames}\nTimeoutError: upstream did not answer in 30s"


_FILLERS: dict[str, Callable[[random.Random], str]] = {
    "ts": _timestamp,
    "level": lambda r: r.choice(("INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR")),
    "svc": lambda r: r.choice(_SERVICES),
    "path": lambda r: r.choice(_PATHS),
    "file": lambda r: r.choice(_PATHS).rsplit("/", 1)[-1],
    "word": lambda r: r.choice(_WORDS),
    "other": lambda r: r.choice(_WORDS),
    "Word": lambda r: r.choice(_WORDS).capitalize(),
    "Other": lambda r: r.choice(_WORDS).capitalize(),
    "words": lambda r: " ".join(r.choices(_WORDS, k=r.randint(3, 10))),
    "sentence": _sentence,
    "trace": _stack_trace,
    "name": lambda r: r.choice(_NAMES),
    "n": lambda r: str(r.randint(1, 999)),
    "m": lambda r: str(r.randint(1, 999)),
    "id": lambda r: str(r.randint(1, 999_999)),
    "ms": lambda r: str(r.randint(2, 4000)),
    "http": lambda r: r.choice(("200", "200", "200", "404", "500", "503")),
    "outcome": lambda r: r.choice(("PASSED", "PASSED", "FAILED")),
    "hex": lambda r: f"{r.getrandbits(160):040x}",
    "kind": lambda r: r.choice("-d"),
    "amount": lambda r: f"{r.uniform(1, 5000):.2f}",
    "state": lambda r: r.choice(("paid", "open", "refunded")),
}

_LINES: dict[str, tuple[str, ...]] = {
    "python": (
        "def {word}_{other}(value: dict[str, Any], retries: int = 3) -> str | None:",
        '    """Return the {word} for {other}; None when it is missing."""',
        '    if not value.get("{word}"):\n        return None',
        "    result = {{\"{word}\": value[\"{other}\"], 'path': r\"C:\\data\\{word}\"}}",
        '    logger.info("{word} took %.2f ms", elapsed * 1000)',
        "class {Word}{Other}(BaseModel):",
        '    {word}: str = Field(default="", description="The {other}")',
        "",
    ),
    "node": (
        "export function {word}{Other}(input: {Other}): string {{",
        '  const {word} = input.{other} ? input.{other}.trim() : "";',
        "  return `${{{word}}}/{other}`;\n}}",
        '  if (!{word}) throw new Error("missing {other}");',
        "const {word}Url = `https://api.example.com/{other}?q=${{encodeURIComponent({word})}}`;",
        "",
    ),
    "jvm": (
        "public final class {Word}{Other}Service {{",
        "    private final Map<String, {Other}> {word}s = new ConcurrentHashMap<>();",
        '    String {word}() {{ return {other} != null ? {other}.trim() : ""; }}',
        "    @Transactional(readOnly = true)\n    public Optional<{Word}> find(long id) {{",
        '        log.info("{word} {{}} took {{}} ms", id, elapsed);',
        "    }}",
    ),
    "log": ("{ts} {level} [{svc}] GET /api/v1/orders/{id} {http} {ms}ms",) * 10
    + ("{ts} {level} [{svc}] {sentence}",) * 9 + ("{trace}",),
    "spring": ("{ts}  {level:>5} 1 --- [nio-8080-exec-{n}] c.e.{word}.Handler : {sentence}",),
    "console": ("{path}::test_{word} {outcome}",) * 3
    + ("commit {hex}\nAuthor: {name} <dev@example.com>", "E   AssertionError: assert {n} == {m}"),
    "grep": ("{path}:{n}: {words}",),
    "listing": ("{kind}rw-r--r--  {id:>6}  {file}",),
    "table": (" {id:<6} | {state:<9} | {amount:>8} | {ts}",),
}


class _Fill(dict[str, str]):
    """Placeholder values drawn on first use, so a template pays only for what it names."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__()
        self.rng = rng

    def __missing__(self, key: str) -> str:
        value = self[key] = _FILLERS[key](self.rng)
        return value


def _lines(rng: random.Random, kind: str, size: int) -> str:
    """Lines of one kind until `size` characters, clipped there (tools clip output too).

    Long outputs repeat lines from a small pool, as real logs and listings do; it also keeps
    generating a 200 MB corpus fast."""
    templates = _LINES[kind]
    pool = [rng.choice(templates).format_map(_Fill(rng)) for _ in range(min(24, 1 + size // 80))]
    lines: list[str] = []
    length = 0
    while length < size:
        lines.extend(rng.choices(pool, k=16))
        length = sum(map(len, lines)) + len(lines)
    return "\n".join(lines)[:size]


def system_prompt(rng: random.Random) -> str:
    rules = [
        "Work in small, reviewable steps and explain what you changed.",
        "Run the test suite before you claim a fix works.",
        "Ask before deleting files or rewriting history.",
        "Never write to production databases; use the staging replica.",
        "Keep secrets out of logs, commits and messages.",
        "Prefer the project's existing libraries over new dependencies.",
    ]
    rng.shuffle(rules)
    listed = "\n".join(f"{i}. {rule}" for i, rule in enumerate(rules[: rng.randint(3, 6)], 1))
    return (f"You are Forge, an autonomous engineering agent working in the {rng.choice(_SERVICES)} "
            f"repository.\nCurrent date: 2025-06-{rng.randint(1, 28):02d}. On-call engineer: "
            f"{rng.choice(_NAMES)}.\n\nRules:\n{listed}\n\n{_prose(rng, rng.randint(300, 2500))}")


def developer_note(rng: random.Random) -> str:
    return (f"Project conventions for {rng.choice(_SERVICES)}: Python 3.12, ruff, pytest; "
            f"TypeScript with strict mode. {_prose(rng, rng.randint(80, 400))}")


def user_request(rng: random.Random) -> str:
    request = rng.choice((
        "Why is the {svc} deploy failing since this morning?",
        "Can you find what changed in {path} and fix the failing test?",
        "The p99 latency of {svc} doubled after the last release. Investigate please.",
        "Please add retries with backoff to the client in {path}.",
        "continue",
        "Looks good. Now check the logs of {svc} for the last hour.",
        "{name} says the invoices for June are wrong — can you look at {path}?",
        "Summarize what you found so far and propose a fix.",
    )).format_map(_Fill(rng))
    roll = rng.random()
    if roll < 0.15:
        request += f"\n\nHere is the error I get:\n```\n{_stack_trace(rng)}\n```"
    elif roll < 0.3:
        request += " " + _prose(rng, rng.randint(50, 600))
    elif roll < 0.35:
        request += " Merci beaucoup ✅ — 東京のチームも確認済み."
    return request


def image_block(rng: random.Random) -> dict[str, Any]:
    if rng.random() < 0.2:
        data = base64.b64encode(rng.randbytes(rng.randint(1_000, 6_000))).decode("ascii")
        url = f"data:image/png;base64,{data}"
    else:
        url = f"https://files.example.com/uploads/{rng.getrandbits(64):016x}.png"
    return wire.image_block(url, rng.choice(("auto", "high")))


def assistant_answer(rng: random.Random) -> str:
    answer = _prose(rng, rng.randint(100, 900))
    if rng.random() < 0.5:
        answer += "\n\n" + "\n".join(f"- {_sentence(rng)}" for _ in range(rng.randint(2, 5)))
    if rng.random() < 0.25:
        answer += f"\n\n```python\n{_lines(rng, 'python', rng.randint(150, 800))}\n```"
    return answer


def summary_text(rng: random.Random, dropped: int) -> str:
    points = "\n".join(f"- {_sentence(rng)}" for _ in range(rng.randint(3, 8)))
    return f"Summary of the {dropped} earlier messages of this session:\n{points}"


def tool_arguments(rng: random.Random, tool: str) -> str:
    path, svc = rng.choice(_PATHS), rng.choice(_SERVICES)
    by_tool: dict[str, dict[str, Any]] = {
        "read_file": {"path": path},
        "run_shell": {"command": rng.choice(("pytest -x -q", "npm run build", "git log -n 20 --stat",
                                             f"kubectl -n prod describe deploy {svc}")),
                      "timeout": 120},
        "search_code": {"query": rng.choice(_WORDS), "path": path.rsplit("/", 1)[0]},
        "http_get": {"url": f"https://{svc}.internal/api/v1/status",
                     "headers": {"Accept": "application/json"}},
        "query_db": {"sql": f"SELECT id, status, total FROM {rng.choice(('orders', 'invoices'))} "
                            f"WHERE updated_at > now() - interval '1 hour' LIMIT {rng.randint(5, 200)}"},
        "list_dir": {"path": path.rsplit("/", 1)[0], "recursive": rng.random() < 0.3},
        "get_logs": {"service": svc, "since": "1h", "level": rng.choice(("INFO", "WARN", "ERROR"))},
        "fetch_ticket": {"id": f"OPS-{rng.randint(100, 9999)}"},
    }
    return json.dumps(by_tool[tool], separators=rng.choice(((", ", ": "), (",", ":"))))


def tool_output(rng: random.Random, tool: str, size: int, style: SessionStyle) -> str:
    if tool in ("http_get", "fetch_ticket") or (tool == "query_db" and rng.random() < 0.5):
        return _json_document(rng, size, nested=style.nested_json and tool != "query_db")
    kind = {"read_file": style.stack, "run_shell": "console", "search_code": "grep",
            "query_db": "table", "list_dir": "listing"}.get(tool)
    return _lines(rng, kind or ("spring" if style.stack == "jvm" else "log"), size)


def _json_document(rng: random.Random, size: int, nested: bool) -> str:
    """A JSON document carried as a string, as tools return API responses (about `size`
    characters). With `nested`, some fields hold JSON-encoded strings (webhook bodies), so the
    log line nests JSON twice."""
    indent = 2 if rng.random() < 0.3 else None
    document: dict[str, Any] = {"data": [], "has_more": rng.random() < 0.3,
                                "request_id": f"req_{rng.getrandbits(48):012x}"}
    items: list[dict[str, Any]] = document["data"]
    length = 80
    while size >= 300:
        item: dict[str, Any] = {
            "id": f"{rng.choice(('ord', 'inv', 'evt'))}_{rng.getrandbits(40):010x}",
            "status": rng.choice(("paid", "pending", "failed", "refunded")),
            "amount": round(rng.uniform(1, 5000), 2),
            "currency": rng.choice(("EUR", "USD", "JPY")),
            "customer": {"name": rng.choice(_NAMES), "tier": rng.choice(("free", "pro", None))},
            "tags": rng.sample(_WORDS, rng.randint(0, 4)),
            "updated_at": _timestamp(rng),
        }
        if nested and rng.random() < 0.3:
            item["payload"] = json.dumps({"event": rng.choice(_WORDS), "attempt": rng.randint(1, 5),
                                          "body": json.dumps({"note": _sentence(rng)})})
        cost = len(json.dumps(item, indent=indent, ensure_ascii=False)) * (1.4 if indent else 1) + 2
        if items and length + cost > size:
            break
        items.append(item)
        length += int(cost)
    text = json.dumps(document, indent=indent, ensure_ascii=False)
    while len(text) > size and len(items) > 1:
        items.pop()
        text = json.dumps(document, indent=indent, ensure_ascii=False)
    return text


@dataclass(frozen=True, slots=True)
class SessionStyle:
    """How one producer writes a whole session (real logs are consistent within a session)."""

    sdk_nulls: bool = False
    """SDK model dumps: `"refusal": null`, `"tool_calls": null`, `"name": null`, ..."""
    developer: bool = False
    """A developer message follows the system prompt."""
    multimodal: float = 0.0
    """Share of user turns sent as content arrays with an image."""
    pending_tail: bool = False
    """The session ends inside a tool batch: the assistant called, only some results are in."""
    stack: str = "python"
    """The repository the agent works in: `python`, `node` or `jvm` (code and log layouts)."""
    nested_json: bool = False
    """API results carry JSON-encoded string fields (webhook bodies), nesting JSON twice."""
