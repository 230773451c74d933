"""`--format sarif`: SARIF 2.1.0, as GitHub code scanning and SARIF viewers read it.

One rule per condition code and per mutation operator (with help text), `level` from the
finding's severity, and `partialFingerprints` hashed from stable content only (code, pair,
site), so the same finding in tomorrow's run is the same alert. Every result has a physical
location (GitHub rejects a whole file for one result without it): the file and line when
known, else line 1 with the place as a logical location. GitHub accepts at most 25,000 results
per run: beyond `--max-results` (that by default) the most severe are kept and one note says
how many were left out.
"""

from __future__ import annotations

import json
import os
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

import orjson

from frayproof_audit import __version__
from frayproof_audit.render.ci import (
    Item,
    Outcome,
    Place,
    RenderContext,
    fingerprints,
    left_out_sentence,
)
from frayproof_audit.render.failure import Failure, Said
from frayproof_audit.render.outcomes import outcome_of
from frayproof_audit.render.rules import CAPPED, information_uri

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
DEFAULT_MAX_RESULTS = 25_000
"""GitHub code scanning's limit of results per run."""
TOOL_NAME = "frayproof-audit"
FINGERPRINT = "frayproofResult/v1"


def render_sarif(result: object, context: RenderContext) -> str:
    cap = max(1, context.max_results or DEFAULT_MAX_RESULTS)
    log = sarif_log(outcome_of(result, context), cap, context.sarif_category)
    try:
        return orjson.dumps(log, option=orjson.OPT_INDENT_2).decode("utf-8")
    except TypeError:  # a lone surrogate (from a snapshot's own text): the exact slow path
        return json.dumps(log, indent=2)


def capped(outcome: Outcome, cap: int) -> tuple[list[Item], int]:
    """The items to show (at most `cap`, the last place kept for the note) and how many are left out."""
    items = list(outcome.items)
    if outcome.items_total <= cap and len(items) <= cap:
        return items, 0
    shown = items[: cap - 1]
    return shown, outcome.items_total - len(shown)


class SarifCategoryError(ValueError):
    """A SARIF category that code scanning could not use (empty, or only slashes and spaces)."""


def sarif_category(text: str) -> str:
    """`text` as an analysis category: without the trailing `/` the id adds (`nightly/` is
    `nightly`). Raises `SarifCategoryError` for one that names nothing."""
    category = text.rstrip("/")
    if not category.strip():
        raise SarifCategoryError(f"SARIF category {text!r} is empty: give a name such as "
                                 f"'frayproof-audit/corpus-a'")
    if any(ord(character) < 32 for character in category):
        raise SarifCategoryError(f"SARIF category {text!r} holds a control character")
    return category


def automation_id(command: str, run_id: str = "", category: str | None = None) -> str:
    """`runs[0].automationDetails.id`: the category, `/`, the run id. Code scanning takes the
    part before the last `/` as the analysis category (default `frayproof-audit/<command>`)."""
    chosen = sarif_category(category) if category is not None else f"{TOOL_NAME}/{command}"
    return f"{chosen}/{run_id}"


def sarif_log(outcome: Outcome, cap: int, category: str | None = None) -> dict[str, Any]:
    items, left_out = capped(outcome, cap)
    if left_out:
        first_left_out = outcome.items[len(items)].place if len(outcome.items) > len(items) else Place(None)
        anchor = Place(first_left_out.uri, first_left_out.line)
        items.append(Item(CAPPED, "note", left_out_sentence(left_out, outcome.items_total, "results",
                                            outcome.command),
                          anchor, ("capped", outcome.command),
                          {"results_total": outcome.items_total, "results_left_out": left_out}))
    index = {rule.id: number for number, rule in enumerate(outcome.rules)}
    default_uri = next((item.place.uri for item in items if item.place.uri), None)
    results = [_result(item, print_, index, default_uri)
               for item, print_ in zip(items, fingerprints(items), strict=True)]
    driver = tool_driver([_rule(rule) for rule in outcome.rules])
    run_id = str(outcome.properties.get("run_id", ""))
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "automationDetails": {"id": automation_id(outcome.command, run_id, category)},
        "invocations": [{
            "executionSuccessful": outcome.exit_code in (0, 1),
            "exitCode": outcome.exit_code,
            "toolExecutionNotifications": [
                {"level": "warning", "message": {"text": text}} for text in outcome.notices
            ],
        }],
        "results": results,
        "properties": {**outcome.properties, "verdict": outcome.verdict,
                       "results_total": outcome.items_total, "results_left_out": left_out},
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def tool_driver(rules: list[dict[str, Any]]) -> dict[str, Any]:
    """`tool.driver`: this tool, its version and home page, and `rules`."""
    driver: dict[str, Any] = {"name": TOOL_NAME, "version": __version__,
                              "semanticVersion": __version__}
    home = information_uri()
    if home:
        driver["informationUri"] = home
    driver["rules"] = rules
    return driver


def _rule(rule: Any) -> dict[str, Any]:
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.short},
        "fullDescription": {"text": rule.full},
        "help": {"text": rule.help},
        "defaultConfiguration": {"level": rule.level},
        "properties": {"tags": list(rule.tags)[:20], "precision": "very-high",
                       "problem.severity": "recommendation" if rule.level == "note" else rule.level},
    }


def artifact_uri(path: str) -> str:
    """A file path as a URI reference: relative paths stay relative (GitHub wants them relative
    to the repository root), absolute ones become `file://` URIs."""
    if os.path.isabs(path):
        return PurePath(path).as_uri()
    posix = PurePath(path).as_posix()
    if ":" in posix.split("/", 1)[0]:
        posix = "./" + posix  # `a:b/c` would read as a URI scheme
    return quote(posix, safe="/!$&'()*+,;=:@~")


def _result(item: Item, print_: str, index: dict[str, int], default_uri: str | None) -> dict[str, Any]:
    result: dict[str, Any] = {"ruleId": item.rule}
    if item.rule in index:
        result["ruleIndex"] = index[item.rule]
    result["level"] = item.level
    result["message"] = {"text": item.message}
    location: dict[str, Any] = {}
    uri = item.place.uri or default_uri
    if uri:
        location["physicalLocation"] = {
            "artifactLocation": {"uri": artifact_uri(uri)},
            "region": {"startLine": item.place.line or 1},
        }
    if item.place.logical:
        location["logicalLocations"] = [{"fullyQualifiedName": item.place.logical, "kind": "element"}]
    if location:
        result["locations"] = [location]
    digest, occurrence = print_.rsplit(":", 1)
    result["partialFingerprints"] = {FINGERPRINT: print_,
                                     "primaryLocationLineHash": f"{digest[:16]}:{occurrence}"}
    properties = {key: value for key, value in item.properties.items() if value is not None}
    if properties:
        result["properties"] = properties
    return result


def sarif_failure(failure: Failure) -> Said:
    """One run with no results whose invocation failed, the error as its notification."""
    run = {
        "tool": {"driver": tool_driver([])},
        "automationDetails": {"id": automation_id(failure.command, "", failure.sarif_category)},
        "invocations": [{
            "executionSuccessful": False,
            "exitCode": failure.exit_code,
            "toolExecutionNotifications": [{
                "level": "error",
                "message": {"text": failure.line},
                "descriptor": {"id": failure.label.lower().replace(" ", "-")},
            }],
        }],
        "results": [],
        "properties": {"verdict": failure.label.lower()},
    }
    document = json.dumps({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}, indent=2,
                          ensure_ascii=False)
    return Said(document, failure.line)
