"""provider_validity: would the provider accept the compacted history as the next request?

Each provider profile (`frayproof_audit.providers`) lists the rules its provider enforces with a
400; every rule is a condition with a stable code, and a finding quotes the provider's own
error text, so it can be matched with the error a user pasted.

Bad (openai-chat): [assistant calls a] [user "go on"] [tool a]  → PV-CHAT-TOOL-ORPHAN
Bad (anthropic):  a thinking block of the latest assistant message re-serialized
                  (with before)                                 → PV-ANTH-THINKING-MODIFIED
Good: every call answered right after its message, reasoning and thinking kept as they were.

Off by default (it goes beyond frayproof's checks); `checks: {provider_validity: true}` judges
by the profile of the format the snapshot was read in, `profile:` names one. Rules that compare
with before run only when there is one (`check`, mutation), from facts prepared once per pair.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from frayproof_audit.checks.base import Check, CheckSettings, Condition, Flag, OptionProblem
from frayproof_audit.providers import PROFILE_NAMES, PROFILES, provider_defects
from frayproof_audit.report import Violation

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.prepared import BeforeFacts
    from frayproof_audit.snapshot import Loaded

NAME = "provider_validity"
KEY = "provider_validity"
PROFILE = "profile"
ALLOW_PENDING = "allow_trailing_pending_call"
CONDITIONS: tuple[Condition, ...] = tuple(
    Condition(rule.code, profile.template(rule))
    for profile in PROFILES.values() for rule in profile.rules
)
_BY_CODE = {condition.code: condition for condition in CONDITIONS}


@dataclass(frozen=True, slots=True)
class ProfileName:
    """A registered profile's name, or null: the profile of the snapshot's format."""

    name: str = PROFILE
    default: Any = None

    def parse(self, value: Any) -> Any:
        if value is not None and (type(value) is not str or value not in PROFILE_NAMES):
            raise OptionProblem(f"must be one of {', '.join(PROFILE_NAMES)} (or null)")
        return value


def find(
    after: Loaded, contract: Contract, before: BeforeFacts | None, settings: CheckSettings
) -> list[Violation]:
    severity = settings.severity
    defects = provider_defects(
        after, settings.option(PROFILE), prior=None if before is None else before.provider,
        allow_trailing_pending_call=settings.option(ALLOW_PENDING))
    return [
        _BY_CODE[defect.code].violation(NAME, severity, "after", defect.index,
                                        tool_call_id=defect.tool_call_id, site=defect.site,
                                        error=defect.error)
        for defect in defects
    ]


CHECK = Check(
    name=NAME,
    key=KEY,
    conditions=CONDITIONS,
    find=find,
    summary="The compacted history is a request the provider accepts (no 400 it would answer).",
    options=(ProfileName(), Flag(ALLOW_PENDING, False)),
    enabled_by_default=False,
)
