"""Realistic records that carry their agent's tool schemas, with calls that mostly obey them.

`sessiongen.realistic` writes calls whose arguments no schema describes, which is all the
frayproof checks need. The tool-argument checks need more: each record names the tools the agent
had (`tools`, as a logger copies them from the request), its calls use those tools with
arguments that mostly conform, and after keeps some of before's calls with their arguments
re-spaced (no change) or altered (a change), as summarizers and lossy serializers do. This
module derives such records from `realistic.generate_pair` without changing what that
function returns for a seed, so every existing corpus stays byte-identical.

* `TOOL_LISTS` — a handful of agents' tool lists (OpenAI, bare-function and Anthropic
  spellings; strict schemas with `additionalProperties: false`; `$defs`/`$ref`; extra tools),
  each a realistic set of JSON Schemas with nested objects, enums, arrays and required fields.
* `conforming_arguments(rng, tool)` — arguments every list's schema for `tool` accepts.
* `with_tools(record, rng)` — the record with a `tools` field and rewritten call arguments.
* `iter_lines(...)` / `write_jsonl(...)` — a JSONL corpus of such records (seeded).

The rates (`VIOLATION_RATE`, `RESPACE_RATE`, `ALTER_RATE`, `SWAP_RATE`) are what the
benchmark's figures mean, so they are constants; `TOOLED_VERSION` names this module's output
revision for caches (bump it when the output for a seed changes).
"""

from __future__ import annotations

import copy
import json
import os
import random
from collections.abc import Callable, Iterator
from typing import Any

from sessiongen import realistic
from sessiongen.prose import TOOLS
from sessiongen.wire import closed_exchanges

TOOLED_VERSION = 1
"""Revision of this module's output for a given seed (with `realistic.CORPUS_VERSION`)."""

VIOLATION_RATE = 0.04
"""Share of before's calls whose arguments break their schema (a missing required field, a
wrong type, an undeclared field, a value outside an enum or a bound, a broken nested item)."""
RESPACE_RATE = 0.10
"""Share of kept calls whose after arguments are re-serialized: other spacing or key order,
the same JSON (tool_call_integrity must parse both sides and find no change)."""
ALTER_RATE = 0.03
"""Share of kept calls whose after arguments change: a value cut short, an optional field
dropped, the text truncated mid-way (each a TC-ARGS finding)."""
RENAME_RATE = 0.005
"""Share of kept calls whose tool name changes in after (TC-NAME)."""
SWAP_RATE = 0.02
"""Share of records whose after has two tool results trading ids (TC-RESULT-ID)."""

Message = dict[str, Any]
JSONObject = dict[str, Any]

# --------------------------------------------------------------------------- schemas

_PATH = {"type": "string", "minLength": 1, "description": "Path relative to the repository root."}
_HEADERS = {"type": "object", "additionalProperties": {"type": "string"},
            "description": "Extra request headers."}
_LEVELS = ["DEBUG", "INFO", "WARN", "ERROR"]
_FILE_TYPES = ["py", "ts", "tsx", "js", "java", "kt", "go", "yaml", "json", "md", "sql"]
_DATABASES = ["orders", "billing", "analytics", "inventory"]


def _object(properties: JSONObject, required: list[str], **extra: Any) -> JSONObject:
    return {"type": "object", "properties": properties, "required": required, **extra}


BASE_PARAMETERS: dict[str, JSONObject] = {
    "read_file": _object({
        "path": _PATH,
        "encoding": {"type": "string", "enum": ["utf-8", "latin-1", "ascii"]},
        "lines": _object({"start": {"type": "integer", "minimum": 1},
                          "end": {"type": "integer", "minimum": 1}}, ["start"],
                         additionalProperties=False),
    }, ["path"]),
    "run_shell": _object({
        "command": {"type": "string", "minLength": 1},
        "timeout": {"type": "integer", "minimum": 1, "maximum": 3600,
                    "description": "Seconds before the command is killed."},
        "cwd": {"type": "string"},
        "env": {"type": "object", "additionalProperties": {"type": "string"}},
    }, ["command"]),
    "search_code": _object({
        "query": {"type": "string", "minLength": 1},
        "path": {"type": "string"},
        "file_types": {"type": "array", "items": {"type": "string", "enum": _FILE_TYPES},
                       "uniqueItems": True},
        "options": _object({"case_sensitive": {"type": "boolean"}, "regex": {"type": "boolean"},
                            "max_results": {"type": "integer", "minimum": 1, "maximum": 1000}}, []),
    }, ["query"]),
    "http_get": _object({
        "url": {"type": "string", "pattern": "^https?://"},
        "headers": _HEADERS,
        "retry": _object({"attempts": {"type": "integer", "minimum": 0, "maximum": 10},
                          "backoff_ms": {"type": "integer", "minimum": 0}}, ["attempts"]),
    }, ["url"]),
    "query_db": _object({
        "sql": {"type": "string", "minLength": 1},
        "database": {"type": "string", "enum": _DATABASES},
        "params": {"type": "array", "items": {"type": ["string", "number", "boolean", "null"]}},
        "timeout_ms": {"type": "integer", "minimum": 100},
    }, ["sql", "database"]),
    "list_dir": _object({
        "path": _PATH,
        "recursive": {"type": "boolean"},
        "depth": {"type": "integer", "minimum": 1, "maximum": 10},
        "include_hidden": {"type": "boolean"},
    }, ["path"]),
    "get_logs": _object({
        "service": {"type": "string"},
        "since": {"type": "string", "pattern": "^[0-9]+[smhd]$"},
        "level": {"type": "string", "enum": _LEVELS},
        "filters": {"type": "array", "maxItems": 5, "items": _object({
            "field": {"type": "string"},
            "op": {"type": "string", "enum": ["eq", "ne", "contains", "gt", "lt"]},
            "value": {"type": ["string", "number", "boolean"]},
        }, ["field", "op", "value"], additionalProperties=False)},
        "limit": {"type": "integer", "minimum": 1, "maximum": 5000},
    }, ["service", "since"]),
    "fetch_ticket": _object({
        "id": {"type": "string", "pattern": "^[A-Z][A-Z0-9]+-[0-9]+$"},
        "include": {"type": "array", "items": {"type": "string",
                                               "enum": ["comments", "history", "links", "attachments"]}},
    }, ["id"]),
}
"""The parameters of every tool the realistic sessions call (`prose.TOOLS`)."""

EXTRA_PARAMETERS: dict[str, JSONObject] = {
    "restart_service": _object({"service": {"type": "string"},
                                "strategy": {"type": "string", "enum": ["rolling", "recreate"]}},
                               ["service"]),
    "scale_deployment": _object({"deployment": {"type": "string"},
                                 "replicas": {"type": "integer", "minimum": 0, "maximum": 50}},
                                ["deployment", "replicas"]),
    "page_oncall": _object({"team": {"type": "string"},
                            "severity": {"type": "string", "enum": ["sev1", "sev2", "sev3"]},
                            "summary": {"type": "string", "maxLength": 500}},
                           ["team", "severity", "summary"]),
}
"""Tools some agents have and the sessions never call (a longer list to compile)."""

_DESCRIPTIONS = {
    "read_file": "Read a file from the repository.",
    "run_shell": "Run a shell command in the sandbox.",
    "search_code": "Search the code base.",
    "http_get": "GET an internal HTTP endpoint.",
    "query_db": "Run a read-only SQL query.",
    "list_dir": "List a directory.",
    "get_logs": "Fetch recent log lines of a service.",
    "fetch_ticket": "Fetch an issue tracker ticket.",
    "restart_service": "Restart a service.",
    "scale_deployment": "Scale a deployment.",
    "page_oncall": "Page the on-call engineer.",
}


def _strict(schema: Any) -> Any:
    """`schema` with `additionalProperties: false` on every object that does not set it."""
    if isinstance(schema, dict):
        out = {key: _strict(value) for key, value in schema.items()}
        if out.get("type") == "object" and "properties" in out:
            out.setdefault("additionalProperties", False)
        return out
    if isinstance(schema, list):
        return [_strict(item) for item in schema]
    return schema


def _with_refs(schema: JSONObject) -> JSONObject:
    """`schema` under draft 2020-12 with its path-like properties moved to `$defs`."""
    out = copy.deepcopy(schema)
    properties = out["properties"]
    defs = {}
    for key in ("path", "service"):
        if key in properties:
            defs[key] = properties[key]
            properties[key] = {"$ref": f"#/$defs/{key}"}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **out,
            **({"$defs": defs} if defs else {})}


def _openai(name: str, parameters: JSONObject, strict: bool = False) -> JSONObject:
    function: JSONObject = {"name": name, "description": _DESCRIPTIONS[name], "parameters": parameters}
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def _anthropic(name: str, parameters: JSONObject) -> JSONObject:
    return {"name": name, "description": _DESCRIPTIONS[name], "input_schema": parameters}


def _bare(name: str, parameters: JSONObject) -> JSONObject:
    return {"name": name, "description": _DESCRIPTIONS[name], "parameters": parameters}


TOOL_LISTS: dict[str, list[JSONObject]] = {
    "coding-agent": [_openai(name, BASE_PARAMETERS[name]) for name in TOOLS],
    "strict-agent": [_openai(name, _strict(BASE_PARAMETERS[name]), strict=True) for name in TOOLS],
    "claude-agent": [_anthropic(name, BASE_PARAMETERS[name]) for name in TOOLS],
    "ops-agent": [_openai(name, parameters) for name, parameters in
                  {**BASE_PARAMETERS, **EXTRA_PARAMETERS}.items()],
    "refs-agent": [_bare(name, _with_refs(BASE_PARAMETERS[name])) for name in TOOLS],
}
"""Each agent's `tools`, as its logger records them. Every list has every tool the sessions
call, so calls that conform pass under any of them (strict-agent turns drift into a schema
error instead of a warning)."""

TOOL_LIST_WEIGHTS = {"coding-agent": 40, "strict-agent": 20, "claude-agent": 15, "ops-agent": 15,
                     "refs-agent": 10}

# --------------------------------------------------------------------------- arguments

_PATHS = ("src/app/main.py", "src/billing/invoice.py", "src/auth/tokens.py", "web/src/api/client.ts",
          "deploy/helm/values.yaml", "tests/test_invoice.py", "src/search/indexer.py")
_SERVICES = ("billing-api", "auth-gateway", "search-indexer", "checkout", "ledger-sync", "inventory")
_QUERIES = ("retry_budget", "def refresh_token", "TODO(timeout)", "class InvoiceLine", "useSession(",
            "pool_size", "ORDER BY created_at")
_COMMANDS = ("pytest -x -q tests/test_invoice.py", "npm run build", "git log -n 20 --stat",
             "kubectl -n prod describe deploy checkout", "ruff check src", "du -sh /var/log/*")


def conforming_arguments(rng: random.Random, tool: str) -> JSONObject:
    """Arguments for `tool` that every list's schema accepts: required fields, and a random
    selection of the optional ones (nested objects and arrays included)."""
    path = rng.choice(_PATHS)
    folder = path.rsplit("/", 1)[0]
    service = rng.choice(_SERVICES)
    optional: dict[str, Callable[[], Any]]
    if tool == "read_file":
        required: JSONObject = {"path": path}
        start = rng.randint(1, 400)
        optional = {"encoding": lambda: rng.choice(("utf-8", "latin-1")),
                    "lines": lambda: {"start": start, "end": start + rng.randint(20, 200)}}
    elif tool == "run_shell":
        required = {"command": rng.choice(_COMMANDS)}
        optional = {"timeout": lambda: rng.choice((30, 60, 120, 600)), "cwd": lambda: f"/work/{folder}",
                    "env": lambda: {"CI": "1", "LANG": "C.UTF-8"}}
    elif tool == "search_code":
        required = {"query": rng.choice(_QUERIES)}
        optional = {"path": lambda: folder,
                    "file_types": lambda: rng.sample(_FILE_TYPES, rng.randint(1, 3)),
                    "options": lambda: {"case_sensitive": rng.random() < 0.5,
                                        "max_results": rng.choice((20, 50, 200))}}
    elif tool == "http_get":
        required = {"url": f"https://{service}.internal/api/v1/{rng.choice(('status', 'health', 'metrics'))}"}
        optional = {"headers": lambda: {"Accept": "application/json",
                                        "X-Request-Id": f"{rng.getrandbits(32):08x}"},
                    "retry": lambda: {"attempts": rng.randint(1, 5),
                                      "backoff_ms": rng.choice((100, 250, 1000))}}
    elif tool == "query_db":
        table = rng.choice(("orders", "invoices", "payments"))
        required = {"sql": f"SELECT id, status, total FROM {table} WHERE updated_at > $1 LIMIT $2",
                    "database": rng.choice(_DATABASES)}
        optional = {"params": lambda: ["2025-06-01T00:00:00Z", rng.randint(5, 200)],
                    "timeout_ms": lambda: rng.choice((1000, 5000, 30000))}
    elif tool == "list_dir":
        required = {"path": folder}
        optional = {"recursive": lambda: rng.random() < 0.3, "depth": lambda: rng.randint(1, 4),
                    "include_hidden": lambda: rng.random() < 0.1}
    elif tool == "get_logs":
        required = {"service": service, "since": rng.choice(("15m", "1h", "6h", "1d"))}
        optional = {"level": lambda: rng.choice(_LEVELS),
                    "filters": lambda: [{"field": "status", "op": "eq", "value": rng.choice((500, 502, 504))},
                                        {"field": "path", "op": "contains", "value": "/checkout"}][
                                            : rng.randint(1, 2)],
                    "limit": lambda: rng.choice((100, 500, 2000))}
    elif tool == "fetch_ticket":
        required = {"id": f"OPS-{rng.randint(100, 9999)}"}
        optional = {"include": lambda: rng.sample(["comments", "history", "links"], rng.randint(1, 2))}
    else:
        raise ValueError(f"no arguments for tool {tool!r}")
    arguments = dict(required)
    for key, make in optional.items():
        if rng.random() < 0.5:
            arguments[key] = make()
    return arguments


VIOLATIONS = ("missing_required", "wrong_type", "undeclared_field", "out_of_range", "nested")
"""How `violating_arguments` breaks a call (each reaches a different rule of `tool_arguments`)."""

_OUT_OF_RANGE: dict[str, tuple[str, Any]] = {
    "read_file": ("encoding", "utf8"), "run_shell": ("timeout", 0), "search_code": ("query", ""),
    "http_get": ("url", "ftp://files.internal/"), "query_db": ("database", "prod"),
    "list_dir": ("depth", 99), "get_logs": ("level", "warning"), "fetch_ticket": ("id", "ops-12"),
}
"""Per tool, a field and a value of the right type outside its enum, bound or pattern."""
_NESTED: dict[str, Any] = {
    "lines": {"start": 0}, "filters": [{"field": "status", "value": 500}],
    "options": {"max_results": 0}, "retry": {"backoff_ms": 100}, "file_types": ["python"],
    "params": [{"id": 1}], "include": ["all"], "env": {"CI": 1}, "headers": {"Accept": None},
}
"""Per nested property, a value whose inside breaks the schema."""


def violating_arguments(rng: random.Random, tool: str, arguments: JSONObject) -> JSONObject:
    """A copy of conforming `arguments` that breaks the schema of `tool` in one way."""
    schema = BASE_PARAMETERS[tool]
    broken = copy.deepcopy(arguments)
    kind = rng.choice(VIOLATIONS)
    nested = [key for key in schema["properties"] if key in _NESTED]
    if kind == "nested" and not nested:
        kind = "out_of_range"
    if kind == "missing_required":
        del broken[rng.choice(schema["required"])]
    elif kind == "wrong_type":  # a model that quotes numbers or writes an object as text
        key = rng.choice(sorted(broken))
        value = broken[key]
        broken[key] = str(value) if type(value) is not str else len(value)
    elif kind == "undeclared_field":  # a hallucinated or misspelled parameter
        broken[rng.choice(("verbose", "timout", "dry_run", "format"))] = rng.choice((True, "json", 1))
    elif kind == "out_of_range":
        key, value = _OUT_OF_RANGE[tool]
        broken[key] = value
    else:
        key = rng.choice(nested)
        broken[key] = copy.deepcopy(_NESTED[key])
    return broken


def _dumps(value: JSONObject, rng: random.Random) -> str:
    """The text a producer writes: compact, or Python's default spacing (as models emit both)."""
    return json.dumps(value, separators=rng.choice(((", ", ": "), (",", ":"))), ensure_ascii=False)


def respaced(text: str, rng: random.Random) -> str:
    """The same JSON object written differently: other spacing, or its keys in reverse order."""
    value = json.loads(text)
    if rng.random() < 0.5:
        value = dict(reversed(list(value.items())))
    candidates = [json.dumps(value, indent=rng.choice((None, 2))), json.dumps(value, separators=(",", ":"))]
    return next((candidate for candidate in candidates if candidate != text), text + " ")


def altered(text: str, rng: random.Random) -> str:
    """The arguments a lossy compactor leaves: a string value cut short, an optional field
    dropped, or the text truncated (which is not JSON any more)."""
    value = json.loads(text)
    roll = rng.random()
    strings = [key for key, item in value.items() if type(item) is str and len(item) > 3]
    if roll < 0.45 and strings:
        key = rng.choice(strings)
        value[key] = value[key][: len(value[key]) // 2]
    elif roll < 0.8 and len(value) > 1:
        del value[rng.choice(list(value)[1:])]
    else:
        return text[: max(1, len(text) // 2)]
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# --------------------------------------------------------------------------- records


def _calls(message: Message) -> list[dict[str, Any]] | None:
    calls = message.get("tool_calls")
    return calls if type(calls) is list and calls else None


def _protected_start(after: list[Message]) -> int:
    """Where the last two closed exchanges of after start (the benchmark contract keeps them
    exact): compactors rewrite older turns, so kept calls change only before this index."""
    spans = closed_exchanges(after)
    return spans[-min(2, len(spans))][0] if spans else len(after)


def _with_arguments(call: dict[str, Any], arguments: str, name: str | None = None) -> dict[str, Any]:
    """A copy of `call` with new arguments (and name), keeping the producer's key order."""
    function = {**call["function"], "arguments": arguments}
    if name is not None:
        function["name"] = name
    return {**call, "function": function}


def with_tools(record: dict[str, Any], rng: random.Random, tool_list: str | None = None) -> dict[str, Any]:
    """`record` with a `tools` field and calls that use those tools.

    Before's calls get conforming arguments (`VIOLATION_RATE` of them broken); after keeps each
    kept call's text, except that of the calls older than the last two closed exchanges (which
    the benchmark contract keeps exact) `RESPACE_RATE` are re-serialized, `ALTER_RATE` altered
    and `RENAME_RATE` renamed; with `SWAP_RATE` two of after's results trade ids. Messages are
    copied where they change, so `record` itself is left as it was.
    """
    name = tool_list or rng.choices(list(TOOL_LIST_WEIGHTS), weights=list(TOOL_LIST_WEIGHTS.values()))[0]
    texts: dict[str, str] = {}
    rewritten: dict[int, Message] = {}
    before: list[Message] = []
    for message in record["before"]:
        calls = _calls(message)
        if calls is None:
            before.append(message)
            continue
        new_calls = []
        for call in calls:
            tool = call["function"]["name"]
            arguments = conforming_arguments(rng, tool)
            if rng.random() < VIOLATION_RATE:
                arguments = violating_arguments(rng, tool, arguments)
            text = texts.setdefault(call["id"], _dumps(arguments, rng))
            new_calls.append(_with_arguments(call, text))
        rewritten[id(message)] = {**message, "tool_calls": new_calls}
        before.append(rewritten[id(message)])
    after: list[Message] = []
    protected = _protected_start(record["after"])
    for index, message in enumerate(record["after"]):
        calls = _calls(message)
        if calls is None:
            after.append(message)
            continue
        base = rewritten.get(id(message))
        new_calls = list(base["tool_calls"]) if base is not None else [
            _with_arguments(call, texts.get(call["id"]) or _dumps(
                conforming_arguments(rng, call["function"]["name"]), rng)) for call in calls]
        for position, call in enumerate(new_calls):
            text = call["function"]["arguments"]
            roll = rng.random() if index < protected else 1.0
            if roll < ALTER_RATE:
                new_calls[position] = _with_arguments(call, altered(text, rng))
            elif roll < ALTER_RATE + RESPACE_RATE:
                new_calls[position] = _with_arguments(call, respaced(text, rng))
            elif roll < ALTER_RATE + RESPACE_RATE + RENAME_RATE:
                other = rng.choice([tool for tool in TOOLS if tool != call["function"]["name"]])
                new_calls[position] = _with_arguments(call, text, other)
        unchanged = base is not None and all(
            a is b for a, b in zip(new_calls, base["tool_calls"], strict=True))
        after.append(base if unchanged and base is not None else {**message, "tool_calls": new_calls})
    results = [index for index, message in enumerate(after) if message.get("role") == "tool"]
    if len(results) > 1 and rng.random() < SWAP_RATE:
        first, second = rng.sample(results, 2)
        one, two = after[first], after[second]
        after[first] = {**one, "tool_call_id": two["tool_call_id"]}
        after[second] = {**two, "tool_call_id": one["tool_call_id"]}
    out = {key: value for key, value in record.items() if key not in ("before", "after")}
    out.update(tools=TOOL_LISTS[name], before=before, after=after)
    return out


def generate_pair(rng: random.Random, **options: Any) -> dict[str, Any]:
    """`realistic.generate_pair(rng, **options)`, then `with_tools` from the same stream."""
    return with_tools(realistic.generate_pair(rng, **options), rng)


def iter_lines(n_pairs: int | None = None, target_bytes: int | None = None, seed: int = 0,
               nights: int = 1) -> Iterator[bytes]:
    """JSONL lines of `generate_pair` records: `n_pairs` of them, or until `target_bytes` are
    written; spread over `nights` UTC nights from `realistic.BASE_DATE`, in time order. Each
    line is written by one of `realistic.dump_record`'s two producers."""
    if (n_pairs is None) == (target_bytes is None):
        raise ValueError("give exactly one of n_pairs and target_bytes")
    rng = random.Random(f"tooled-{seed}")
    written = emitted = 0
    while (emitted < n_pairs) if n_pairs is not None else (written < (target_bytes or 0)):
        progress = emitted / n_pairs if n_pairs is not None else min(written / (target_bytes or 1), 1.0)
        night = min(int(progress * nights), nights - 1)
        record = generate_pair(rng, pair_id=f"t{seed}-{emitted:07d}",
                               when=realistic.logged_at(night, progress * nights - night))
        line = realistic.dump_record(record, rng)
        yield line
        written += len(line)
        emitted += 1


def write_jsonl(path: str | os.PathLike[str], n_pairs: int | None = None, target_bytes: int | None = None,
                seed: int = 0, nights: int = 1) -> int:
    """Write `iter_lines(...)` to `path` atomically; return the number of lines."""
    return realistic.write_lines(path, iter_lines(n_pairs, target_bytes, seed, nights))

