"""The rules `suggest` considers, each as a family of forms from strongest to weakest.

A family is one rule of the contract (a check's block, a pin, a retention field) and the forms
it may take, strongest first (`tool_pairs` strict, then with a trailing batch allowed). The
strongest form the good pairs support is proposed; a default-on check none of whose forms is
supported is written as `false`, since leaving it out would leave it on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from frayproof_audit.suggest.facts import Facts
from frayproof_audit.suggest.inferred_tools import InferredTools
from frayproof_audit.suggest.settings import Setting
from frayproof_audit.suggest.texts import TextCandidate

Evidence = Callable[[Facts], bool]


@dataclass(frozen=True, slots=True)
class Family:
    key: str
    kind: str
    """`check`, `pin`, `retention` or `tools`."""
    labels: tuple[str, ...]
    variants: tuple[Setting, ...]
    evidence: Evidence | None = None
    """Which pairs the rule has something to check in; None: every pair (no evidence needed)."""
    implied: bool = True
    """A pair passing a form passes every weaker one (so only failures are measured again)."""
    off: Setting | None = None
    """Written when no form is proposed (a check that is on unless turned off)."""
    subject: str = ""
    """What the rule is about, for its explanation (a role, a text, the inferred tools)."""


def _check(name: str, value: object) -> Setting:
    return Setting(f"checks.{name}", "checks", name, value)


def _tools_in_after(facts: Facts) -> bool:
    return facts.after_has_tools


PROFILE_OF_FORMAT = {"anthropic": "anthropic", "openai-responses": "openai-responses", "gemini": "gemini"}
"""The provider profile `provider_validity: true` judges a snapshot by (openai-chat otherwise)."""


def profiles(formats: list[str]) -> str:
    """Which profiles `provider_validity` uses on pairs of these formats, with their counts."""
    counts: dict[str, int] = {}
    for fmt in formats:
        profile = PROFILE_OF_FORMAT.get(fmt, "openai-chat") if fmt != "auto" else "the detected format's"
        counts[profile] = counts.get(profile, 0) + 1
    return ", ".join(f"{profile} for {count} pair(s)" for profile, count in sorted(counts.items()))


def check_families(records_have_tools: bool, inferred: InferredTools | None,
                   formats: list[str]) -> list[Family]:
    families = [
        Family("checks.tool_pairs", "check", ("strict", "allow_trailing_pending_call: true"),
               (_check("tool_pairs", True), _check("tool_pairs", {"allow_trailing_pending_call": True})),
               off=_check("tool_pairs", False)),
        Family("checks.unique_tool_ids", "check", ("on",), (_check("unique_tool_ids", True),),
               off=_check("unique_tool_ids", False)),
        Family("checks.structure", "check", ("system_messages: leading_only", "system_messages: anywhere"),
               (_check("structure", {"system_messages": "leading_only"}),
                _check("structure", {"system_messages": "anywhere"})),
               off=_check("structure", False)),
    ]
    if records_have_tools:
        families.append(Family("checks.tool_arguments", "tools", ("the records' tools",),
                               (_check("tool_arguments", True),), _tools_in_after,
                               off=_check("tool_arguments", False), subject="records"))
    elif inferred is not None and inferred.definitions:
        setting = Setting("checks.tool_arguments", "checks", "tool_arguments",
                          {"rules": {"unknown_tool": "off"}}, tools=inferred.definitions)
        families.append(Family("checks.tool_arguments", "tools", ("inferred schemas",), (setting,),
                               _tools_in_after, subject="inferred"))
    families += [
        Family("checks.tool_call_integrity", "check", ("on",), (_check("tool_call_integrity", True),),
               _tools_in_after),
        Family("checks.provider_validity", "check", ("strict", "allow_trailing_pending_call: true"),
               (_check("provider_validity", True),
                _check("provider_validity", {"allow_trailing_pending_call": True})),
               subject=profiles(formats)),
    ]
    return families


ROLE_PIN_NAMES = {"system": "system-prompt", "developer": "developer-instructions"}


def role_pin_families() -> list[Family]:
    families = []
    for role, name in ROLE_PIN_NAMES.items():
        variants = tuple(Setting(f"pins.{name}", "pins", name, {"name": name, "role": role, "match": match})
                         for match in ("exact", "equivalent"))
        families.append(Family(f"pins.{name}", "pin", (f"role: {role}, match: exact",
                                                       f"role: {role}, match: equivalent"),
                               variants, _has_role(role), subject=role))
    return families


def _has_role(role: str) -> Evidence:
    return lambda facts: role in facts.before_roles


def text_pin_families(candidates: list[TextCandidate], names: list[str]) -> list[Family]:
    families = []
    for candidate, name in zip(candidates, names, strict=True):
        variants = tuple(Setting(f"pins.{name}", "pins", name,
                                 {"name": name, "contains": candidate.text, "match": match})
                         for match in ("exact", "equivalent"))
        families.append(Family(f"pins.{name}", "pin", ("contains, match: exact",
                                                       "contains, match: equivalent"),
                               variants, _holds(candidate.text), implied=False, subject=candidate.text))
    return families


def _holds(text: str) -> Evidence:
    return lambda facts: any(text in part for part in facts.instruction_parts)


def _has_user(facts: Facts) -> bool:
    return facts.has_user


def retention_families() -> list[Family]:
    return [
        Family("retain.latest_user_message", "retention", ("exact", "equivalent"),
               tuple(Setting("retain.latest_user_message", "retain", "latest_user_message", match)
                     for match in ("exact", "equivalent")), _has_user),
        Family("retain.tool_results", "retention",
               ("complete, compare: exact", "complete, compare: equivalent"),
               tuple(Setting("retain.tool_results", "retain", "tool_results", "complete", compare=compare)
                     for compare in ("exact", "equivalent")), _tools_in_after),
    ]


def exchanges_setting(window: int, compare: str) -> Setting:
    return Setting("retain.recent_exchanges", "retain", "recent_exchanges", window, compare=compare)
