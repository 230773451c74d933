"""Which neutral defect a provider defect joins (`transcript.defects`).

`find_defects` attaches a provider pairing rule's code to the neutral defect that explains
it. It indexes the defects once per transcript (`_Explainers`) instead of scanning them all
for every provider defect, which was quadratic in a transcript with many unanswered calls;
this proves the indexed reading equal to the plain one (`explaining_hit`) on every mix of
call ids, messages and codes, ties between several candidates above all.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit.transcript.defects import (
    DANGLING_CALL,
    PAIRING_CODES,
    _Explainers,
    _Hit,
    explaining_hit,
)

CODES = [*sorted(PAIRING_CODES), "PV-CHAT-NAME", "PV-ANTH-THINKING-MOVED"]
call_ids = st.one_of(st.none(), st.sampled_from(["", "call_a", "call_b", "call_c"]))
hits = st.lists(st.builds(_Hit, index=st.integers(0, 4), name=st.just(DANGLING_CALL),
                          detail=st.just(""), call_id=call_ids), max_size=8)
provider = st.tuples(st.sampled_from(CODES), call_ids, st.integers(0, 4))


@settings(max_examples=400, deadline=None)
@given(hits, st.lists(provider, min_size=1, max_size=6))
def test_indexed_lookup_equals_the_plain_scan(found: list[_Hit],
                                              defects: list[tuple[str, str | None, int]]) -> None:
    explainers = _Explainers(found)
    for code, call_id, index in defects:
        assert explainers.find(code, call_id, index) is explaining_hit(found, code, call_id, index)


def test_a_tie_goes_to_the_hit_at_the_provider_defects_own_message() -> None:
    first = _Hit(1, DANGLING_CALL, "", "call_a")
    second = _Hit(3, DANGLING_CALL, "", "call_a")
    code = "PV-CHAT-CALL-UNANSWERED"
    for lookup in (_Explainers([first, second]).find,
                   lambda *a: explaining_hit([first, second], *a)):
        assert lookup(code, "call_a", 3) is second
        assert lookup(code, "call_a", 2) is first  # none at its message: the first one
        assert lookup(code, "call_b", 3) is None
        assert lookup(code, None, 3) is second  # no call id: the hits at that message
        assert lookup("PV-CHAT-NAME", "call_a", 3) is None  # not a pairing rule
