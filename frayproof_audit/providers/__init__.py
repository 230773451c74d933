"""Provider profiles: what each provider rejects with a 400, judged on any snapshot.

A profile is one module (its `Rule`s, each with a stable code and the provider's own error
text, and a `judge`), registered in `PROFILES`. `provider_defects` judges a loaded snapshot by a
profile and returns `ProviderDefect`s in the user's wire coordinates; the `provider_validity`
check reports them as findings, and the mutation operators `drop_reasoning_item` and
`alter_thinking_block` make the faults the thinking and reasoning rules exist for.

Without a profile name, the snapshot's format chooses one (`profile_for`): data read as
`anthropic` is judged by Anthropic's rules, `openai-responses` by the Responses API's, `gemini`
by Gemini's, anything else by Chat Completions'.
"""

from __future__ import annotations

from frayproof_audit.errors import InputError
from frayproof_audit.loaded import Loaded
from frayproof_audit.providers import anthropic, gemini, openai_chat, openai_responses
from frayproof_audit.providers.base import PriorFacts, Profile, ProviderDefect, Rule
from frayproof_audit.providers.prior import prior_facts

PROFILES: dict[str, Profile] = {
    profile.name: profile
    for profile in (openai_chat.PROFILE, openai_responses.PROFILE, anthropic.PROFILE,
                    gemini.PROFILE)
}
PROFILE_NAMES = tuple(PROFILES)
DEFAULT_PROFILE = openai_chat.PROFILE.name
"""The profile for formats no profile names (Chat Completions' adjacency rules are the most
widely shared)."""

RULES: dict[str, Rule] = {rule.code: rule for profile in PROFILES.values() for rule in profile.rules}
"""Every rule of every profile, by code."""


class UnknownProfile(InputError):
    """A profile name no registered profile has."""


def get_profile(name: str) -> Profile:
    found = PROFILES.get(name)
    if found is None:
        raise UnknownProfile(
            f"unknown provider profile {name!r} (known: {', '.join(PROFILE_NAMES)})")
    return found


def profile_for(format_name: str) -> str:
    """The profile that judges data read in `format_name` when none is named."""
    for profile in PROFILES.values():
        if format_name in profile.formats:
            return profile.name
    return DEFAULT_PROFILE


def provider_defects(
    after: Loaded,
    profile: str | None = None,
    before: Loaded | None = None,
    *,
    prior: PriorFacts | None = None,
    allow_trailing_pending_call: bool = False,
) -> list[ProviderDefect]:
    """The 400s `profile` (default: the one for `after`'s format) would answer `after` with.

    Rules that compare with before (thinking unchanged, reasoning kept with its item) run only
    when `before` (or its `prior_facts`, computed once and passed as `prior`) is given. With
    `allow_trailing_pending_call`, calls on the last non-tool message may stay unanswered.
    Defects come in message order.
    """
    chosen = get_profile(profile if profile is not None else profile_for(after.format.name))
    if prior is None and before is not None:
        prior = prior_facts(before)
    found = chosen.judge(after, prior, allow_trailing_pending_call)
    return [chosen.defect(hit, after) for hit in found]


__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "PROFILE_NAMES",
    "RULES",
    "PriorFacts",
    "Profile",
    "ProviderDefect",
    "Rule",
    "UnknownProfile",
    "get_profile",
    "prior_facts",
    "profile_for",
    "provider_defects",
]
