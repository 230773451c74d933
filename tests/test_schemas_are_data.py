"""Schemas are data, never a reason to fetch or open (issue 23 D2, D8).

Every tool schema reaches the engine through three doors: `tool-args --schema`, a contract's
`tools:`, and each corpus record's own `tools`. Through each, a `$ref` or `$dynamicRef` that
leaves the schema (an `http:` URL, a `file:` path, a nested `$id` that moves the base URI) is an
input error at load, a `$ref` cycle that never moves into the arguments and a schema nested
deeper than the stated limit are input errors, and nothing is ever fetched or opened. A real
HTTP server on 127.0.0.1 counts the requests it receives (none), and a `file:` reference points
at a FIFO nobody writes: opening it would block the run, so a run that finishes never opened it.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from frayproof_audit.contract import ContractError
from frayproof_audit.corpus import read_table
from frayproof_audit.toolargs.refs import MAX_SCHEMA_DEPTH
from frayproof_audit.toolargs.schemas import ToolSchemaError, tool_schemas
from tests.helpers import run_cli


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Answers every GET with a schema that would change the verdict if it were used."""

    seen: list[str]

    def do_GET(self) -> None:
        self.seen.append(self.path)
        body = b'{"type": "integer"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def recording_server() -> Iterator[tuple[str, list[str]]]:
    """A real HTTP server on 127.0.0.1 (a free port); yields its base URL and the paths asked."""
    seen: list[str] = []
    handler = type("Handler", (_Recorder,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def function(parameters: dict[str, Any], name: str = "t") -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


def remote_ref(base: str) -> dict[str, Any]:
    """The issue's reproducer: a nested `$id` moves the base to the server, `$ref` names a file."""
    return function({"type": "object", "properties": {"x": {"$id": f"{base}/sub/", "$ref": "remote2.json"}}})


def remote_dynamic_ref(base: str) -> dict[str, Any]:
    return function({"type": "object", "properties": {"x": {"$id": f"{base}/sub/",
                                                            "$dynamicRef": "remote2.json"}}})


def file_ref(folder: Path) -> dict[str, Any]:
    return function({"type": "object", "properties": {"x": {"$id": folder.as_uri() + "/",
                                                            "$ref": "secret.json"}}})


def write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def trace(tmp_path: Path, arguments: dict[str, Any]) -> Path:
    return write(tmp_path / "trace.json", {"id": "c1", "type": "function",
                                           "function": {"name": "t", "arguments": json.dumps(arguments)}})


def secret_fifo(tmp_path: Path) -> Path:
    """A folder whose `secret.json` is a FIFO nobody writes: opening it blocks forever."""
    folder = tmp_path / "some" / "dir"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "secret.json")
    return folder


# --- D2 through tool-args ----------------------------------------------------------------------

@pytest.mark.parametrize("build", [remote_ref, remote_dynamic_ref], ids=["$ref", "$dynamicRef"])
@pytest.mark.parametrize("real", [False, True], ids=["runner", "subprocess"])
def test_tool_args_never_fetches_a_remote_reference(tmp_path: Path, build: Any, real: bool) -> None:
    with recording_server() as (base, seen):
        schema = write(tmp_path / "schema.json", build(base))
        out = run_cli("tool-args", "--trace", trace(tmp_path, {"x": 5}), "--schema", schema,
                      expect=2, real=real)
    assert seen == []
    assert "remote2.json" in out.stderr and f"{base}/sub/remote2.json" in out.stderr
    assert "outside the schema" in out.stderr


def test_tool_args_never_opens_a_file_reference(tmp_path: Path) -> None:
    folder = secret_fifo(tmp_path)
    schema = write(tmp_path / "schema.json", file_ref(folder))
    out = run_cli("tool-args", "--trace", trace(tmp_path, {"x": 5}), "--schema", schema,
                  expect=2, real=True)  # a run that opened the FIFO would block until the timeout
    assert f"{folder.as_uri()}/secret.json" in out.stderr and "outside the schema" in out.stderr


def test_a_file_references_content_changes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "some" / "dir"
    folder.mkdir(parents=True)
    schema = write(tmp_path / "schema.json", file_ref(folder))
    outcomes = []
    for content in (None, '{"type": "integer"}', "false"):
        if content is not None:
            (folder / "secret.json").write_text(content, encoding="utf-8")
        with pytest.raises(ToolSchemaError) as raised:
            tool_schemas(json.loads(schema.read_text(encoding="utf-8")), "schema.json")
        outcomes.append(str(raised.value))
    assert len(set(outcomes)) == 1 and "secret.json" in outcomes[0]


def test_a_reference_inside_a_nested_resource_still_resolves(tmp_path: Path) -> None:
    # A nested $id is fine when every reference under it resolves inside the schema.
    nested = {"type": "object", "properties": {"x": {
        "$id": "https://example.com/x/", "$defs": {"n": {"type": "integer"}}, "$ref": "#/$defs/n"}}}
    schema = write(tmp_path / "schema.json", function(nested))
    out = run_cli("tool-args", "--trace", trace(tmp_path, {"x": "five"}), "--schema", schema, expect=1)
    assert "TA-SCHEMA $.x: 'five' is not of type 'integer'" in out.stdout
    run_cli("tool-args", "--trace", trace(tmp_path, {"x": 5}), "--schema", schema, expect=0)


def test_a_reference_to_a_bundled_meta_schema_is_outside_the_schema_too() -> None:
    tools = [function({"type": "object", "properties": {
        "s": {"$ref": "https://json-schema.org/draft/2020-12/schema"}}})]
    with pytest.raises(ToolSchemaError, match="outside the schema"):
        tool_schemas(tools)


# --- D2 through a contract's tools: (check) --------------------------------------------------

def _pair_files(tmp_path: Path, arguments: dict[str, Any]) -> tuple[Path, Path]:
    session = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "t", "arguments": json.dumps(arguments)}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    return write(tmp_path / "before.json", session), write(tmp_path / "after.json", session)


@pytest.mark.parametrize("real", [False, True], ids=["runner", "subprocess"])
def test_check_never_fetches_a_contracts_remote_reference(tmp_path: Path, real: bool) -> None:
    before, after = _pair_files(tmp_path, {"x": 5})
    with recording_server() as (base, seen):
        contract = tmp_path / "contract.yaml"
        contract.write_text(json.dumps({"tools": [remote_ref(base)]}), encoding="utf-8")
        out = run_cli("check", "--before", before, "--after", after, "--contract", contract,
                      expect=2, real=real)
    assert seen == []
    assert f"{base}/sub/remote2.json" in out.stderr and "outside the schema" in out.stderr


def test_check_never_opens_a_contracts_file_reference(tmp_path: Path) -> None:
    before, after = _pair_files(tmp_path, {"x": 5})
    folder = secret_fifo(tmp_path)
    contract = tmp_path / "contract.yaml"
    contract.write_text(json.dumps({"tools": [file_ref(folder)]}), encoding="utf-8")
    out = run_cli("check", "--before", before, "--after", after, "--contract", contract,
                  expect=2, real=True)
    assert "secret.json" in out.stderr and "outside the schema" in out.stderr


# --- D2 through a corpus record's own tools (audit) ---------------------------------------------

def _records(tools: list[Any]) -> list[dict[str, Any]]:
    session = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "t", "arguments": '{"x": 5}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "user", "content": "thanks"},
    ]
    fine = function({"type": "object", "properties": {"x": {"type": "integer"}}})
    return [{"pair_id": "hostile", "before": session, "after": session, "tools": tools},
            {"pair_id": "fine", "before": session, "after": session, "tools": [fine]}]


def _audit(tmp_path: Path, records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    log = tmp_path / "logs" / "log.jsonl"
    log.parent.mkdir()
    log.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    run_cli("audit", log.parent, "--out", tmp_path / "out", "-q", "--fail-on", "none", expect=0, real=True)
    return {row["pair_id"]: row for row in read_table(tmp_path / "out", "pairs").collect().to_dicts()}


@pytest.mark.parametrize("build", [remote_ref, remote_dynamic_ref], ids=["$ref", "$dynamicRef"])
def test_audit_never_fetches_a_records_remote_reference(tmp_path: Path, build: Any) -> None:
    with recording_server() as (base, seen):
        pairs = _audit(tmp_path, _records([build(base)]))
    assert seen == []
    assert pairs["hostile"]["status"] == "input_error"
    assert "the record's tools" in pairs["hostile"]["input_error"]
    assert f"{base}/sub/remote2.json" in pairs["hostile"]["input_error"]
    assert pairs["fine"]["status"] == "pass"


def test_audit_never_opens_a_records_file_reference(tmp_path: Path) -> None:
    folder = secret_fifo(tmp_path)
    pairs = _audit(tmp_path, _records([file_ref(folder)]))
    assert pairs["hostile"]["status"] == "input_error"
    assert "secret.json" in pairs["hostile"]["input_error"]
    assert pairs["fine"]["status"] == "pass"


# --- D8: cycles and depth ---------------------------------------------------------------------

SELF = {"$ref": "#"}
A_B_A = {"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}},
         "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}
A_B_ALLOF_A = {"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}},
               "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}}


def deep(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


@pytest.mark.parametrize(("parameters", "problem"), [
    (SELF, r"\$ref cycle .*never moves into the arguments: # → #"),
    (A_B_A, r"\$ref cycle .*: #/\$defs/a → #/\$defs/b → #/\$defs/a"),
    (A_B_ALLOF_A, r"\$ref cycle .*: #/\$defs/a → #/\$defs/b → #/\$defs/b/allOf/0 → #/\$defs/a"),
    (deep(250), rf"nested deeper than {MAX_SCHEMA_DEPTH} subschemas"),
    (deep(MAX_SCHEMA_DEPTH + 1), rf"nested deeper than {MAX_SCHEMA_DEPTH} subschemas"),
], ids=["self", "a-b-a", "a-b-allOf-a", "250-deep", "one-too-deep"])
def test_cycles_and_deep_schemas_are_input_errors(tmp_path: Path, parameters: Any, problem: str) -> None:
    with pytest.raises(ToolSchemaError, match=problem):
        tool_schemas([function(parameters)])
    schema = write(tmp_path / "schema.json", function(parameters))
    out = run_cli("tool-args", "--trace", trace(tmp_path, {"x": 5}), "--schema", schema, expect=2,
                  real=parameters is SELF)  # one real process: exit 2, not 123
    assert "INPUT ERROR" in out.stderr and "Traceback" not in out.stderr


def test_a_schema_at_the_depth_limit_loads_and_judges() -> None:
    tool_schemas([function(deep(MAX_SCHEMA_DEPTH - 1))])


def test_recursion_that_moves_into_the_arguments_is_no_cycle(tmp_path: Path) -> None:
    # The tree schemas OpenAI's structured outputs document: `$ref: "#"` under items.
    tree = {"type": "object", "properties": {"label": {"type": "string"},
                                             "children": {"type": "array", "items": {"$ref": "#"}}},
            "required": ["label"]}
    schema = write(tmp_path / "schema.json", function(tree))
    node: dict[str, Any] = {"label": "leaf"}
    for depth in range(60):
        node = {"label": f"n{depth}", "children": [node]}
    run_cli("tool-args", "--trace", trace(tmp_path, node), "--schema", schema, expect=0)
    node["children"][0]["children"][0]["children"] = [{"label": 3}]
    out = run_cli("tool-args", "--trace", trace(tmp_path, node), "--schema", schema, expect=1)
    assert "TA-SCHEMA $.children[0].children[0].children[0].label: 3 is not of type 'string'" in out.stdout


def test_arguments_too_deep_for_a_recursive_schema_are_not_judged(tmp_path: Path) -> None:
    tree = {"type": "object", "properties": {"c": {"$ref": "#"}}}
    schema = write(tmp_path / "schema.json", function(tree))
    node: dict[str, Any] = {}
    for _ in range(500):  # the JSON reader's limit is 512 levels
        node = {"c": node}
    out = run_cli("tool-args", "--trace", trace(tmp_path, node), "--schema", schema, expect=1, real=True)
    assert "TA-NOT-JUDGED" in out.stdout and "Traceback" not in out.stderr


def test_a_contracts_cycle_fails_the_contract(tmp_path: Path) -> None:
    before, after = _pair_files(tmp_path, {"x": 5})
    contract = tmp_path / "contract.yaml"
    contract.write_text(json.dumps({"tools": [function(A_B_A)]}), encoding="utf-8")
    out = run_cli("check", "--before", before, "--after", after, "--contract", contract, expect=2)
    assert "$ref cycle" in out.stderr
    from frayproof_audit.contract import load_contract

    with pytest.raises(ContractError, match=r"\$ref cycle"):
        load_contract(contract)


def test_a_records_cycle_or_depth_is_an_input_error_row(tmp_path: Path) -> None:
    records = _records([function(A_B_A)])
    records.append({**records[1], "pair_id": "deep", "tools": [function(deep(250))]})
    pairs = _audit(tmp_path, records)
    assert pairs["hostile"]["status"] == "input_error" and "$ref cycle" in pairs["hostile"]["input_error"]
    assert pairs["deep"]["status"] == "input_error" and "nested deeper" in pairs["deep"]["input_error"]
    assert pairs["fine"]["status"] == "pass"


def test_a_schema_inside_the_schema_is_refused() -> None:
    # jsonschema would validate such a subschema with its stock class, outside every bound here.
    nested = {"type": "object", "properties": {"x": {
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "string"}}}
    with pytest.raises(ToolSchemaError, match=r"\$schema .*properties/x"):
        tool_schemas([function(nested)])


def test_a_property_named_like_a_keyword_is_no_keyword() -> None:
    # `properties` keys are argument names: `$ref`, `$id` and `$schema` there are names, not keywords.
    named = {"type": "object", "properties": {"$ref": {"type": "string"}, "$id": {"type": "string"},
                                              "$schema": {"type": "string"}},
             "default": {"$ref": "https://example.com/never"}}
    assert tool_schemas([function(named)])[0].name == "t"


def test_a_recursive_yaml_alias_is_not_json(tmp_path: Path) -> None:
    # PyYAML builds `x: *p` inside `&p` as a dict that contains itself: walked, it never ends.
    contract = tmp_path / "contract.yaml"
    contract.write_text("tools:\n  - name: t\n    parameters: &p\n      type: object\n"
                        "      properties:\n        x: *p\n", encoding="utf-8")
    snapshot = write(tmp_path / "after.json", [{"role": "user", "content": "go"}])
    out = run_cli("validate", "--snapshot", snapshot, "--contract", contract, expect=2, real=True)
    assert "contains itself (a recursive YAML alias)" in out.stderr


def test_a_yaml_alias_bomb_is_refused_not_expanded(tmp_path: Path) -> None:
    lines = ["tools:", "  - name: t", "    parameters:", "      type: object", "      default:",
             "        a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    lines += [f"        a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 9)]
    contract = tmp_path / "contract.yaml"
    contract.write_text("\n".join(lines) + "\n", encoding="utf-8")  # 10^9 values once expanded
    from frayproof_audit.contract import load_contract

    with pytest.raises(ContractError, match="at most 1,000,000 values"):
        load_contract(contract)


def test_a_shared_yaml_alias_is_fine(tmp_path: Path) -> None:
    contract = tmp_path / "contract.yaml"
    contract.write_text("tools:\n  - name: t\n    parameters:\n      type: object\n      properties:\n"
                        "        a: &s {type: string, pattern: '^(a+)+$'}\n        b: *s\n", encoding="utf-8")
    from frayproof_audit.contract import load_contract

    assert load_contract(contract).tools[0].name == "t"


@pytest.mark.parametrize(("ref", "problem"), [
    ("#/x-defs/list/0", "points at a value that is no schema"),
    ("#/x-defs/broken", "not a valid JSON Schema at type"),
    ("#/$defs/~2", "does not resolve inside the schema"),
    ("urn:example:other", "is urn:example:other, outside the schema"),
    ("//127.0.0.1/x.json", "outside the schema"),
])
def test_references_that_cannot_be_followed_are_named(ref: str, problem: str) -> None:
    schema = {"type": "object", "properties": {"x": {"$ref": ref}},
              "x-defs": {"list": [1], "broken": {"type": 7}, "fine": {"type": "integer"}}}
    with pytest.raises(ToolSchemaError, match=re.escape(f"$ref {ref!r} at #/properties/x") + f".*{problem}"):
        tool_schemas([function(schema)])


def test_a_reference_into_a_vendor_keyword_is_followed_as_a_schema(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"x": {"$ref": "#/x-defs/fine"}},
              "x-defs": {"fine": {"type": "integer"}}}
    path = write(tmp_path / "schema.json", function(schema))
    out = run_cli("tool-args", "--trace", trace(tmp_path, {"x": "5"}), "--schema", path, expect=1)
    assert "TA-SCHEMA $.x: '5' is not of type 'integer'" in out.stdout
