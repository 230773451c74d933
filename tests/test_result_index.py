"""Finding a kept tool result among before's results of its id (`prepared.ResultIndex`).

Retention (`tool_results`) and `tool_call_integrity` ask, for each result in after, whether
before holds a result of that id with the same content. With a few results per id they
compare with each (`content_retained`, the plain reading); above `SCAN_AT_MOST` they look the
content's key up in a set built once, which keeps a log that reuses one id for every call
linear instead of quadratic. The two readings must agree on every content: strings, lists of
parts, numbers that `==` confuses (`1`, `1.0`, `True`), key order, equivalent spellings.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit.equivalence import COMPARISONS, EXACT
from frayproof_audit.prepared import (
    SCAN_AT_MOST,
    ResultIndex,
    content_key,
    content_retained,
    key_among,
)

leaves = st.sampled_from([1, 1.0, True, 0, -0.0, 0.0, None, "1", "", "a b"])
parts = st.one_of(
    st.builds(lambda text: {"type": "text", "text": text}, st.sampled_from(["a", "b", "a b", ""])),
    st.builds(lambda n: {"type": "text", "text": "a", "n": n}, leaves),
    st.builds(lambda n: {"n": n, "type": "text", "text": "a"}, leaves),  # key order
    st.builds(lambda url: {"type": "image_url", "image_url": {"url": url}}, st.sampled_from(["x", "y"])),
)
contents = st.one_of(st.sampled_from(["a", "b", "a b", "", "ab"]), st.lists(parts, max_size=3), leaves)


@settings(max_examples=300, deadline=None)
@given(st.lists(contents, max_size=3 * SCAN_AT_MOST), st.lists(contents, min_size=1, max_size=6),
       st.sampled_from(COMPARISONS))
def test_the_index_reads_as_comparing_with_each(originals: list[Any], asked: list[Any],
                                                compare: str) -> None:
    index = ResultIndex({"c": originals})
    for content in asked:
        assert index.retained("c", content, compare) == content_retained(content, originals, compare)
        assert index.retained("other", content, compare) is None
        assert index.has_key("c", content_key(content)) == key_among(content_key(content), originals)
        assert not index.has_key("other", content_key(content))


def test_many_results_of_one_id_are_looked_up_in_a_set_built_once() -> None:
    originals: list[Any] = [f"r{n}" for n in range(SCAN_AT_MOST + 1)] + [[{"type": "text", "text": "p"}]]
    index = ResultIndex({"c": originals})
    assert index.retained("c", "r3") is True
    assert index.retained("c", [{"text": "p", "type": "text"}]) is True  # key order ignored
    assert index.retained("c", "p", "equivalent") is True  # the same text as a part list
    assert index.retained("c", "p") is False
    assert index.retained("c", "nope") is False
    assert set(index._keys) == {("c", EXACT), ("c", "equivalent")}
    built = index._keys[("c", EXACT)]
    index.retained("c", "r4")
    assert index._keys[("c", EXACT)] is built
