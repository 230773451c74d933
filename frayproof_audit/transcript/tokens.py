"""Token counting for `compact`: a counter is any `Callable[[Any], int]` over a wire value.

The default counts characters of the compact JSON text (four to a token, rounded up): no
dependency, deterministic, and on the safe side for English and code with the BPE tokenizers
providers use. `tiktoken_counter` counts with a real tokenizer; it needs the optional extra
`frayproof-audit[tokens]` and is imported only when asked for.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

TokenCounter = Callable[[Any], int]
CHARS_PER_TOKEN = 4


class TokenizerUnavailable(RuntimeError):
    """The tokenizer asked for is not installed (`pip install 'frayproof-audit[tokens]'`) or
    cannot load its encoding."""


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def approximate_tokens(value: Any) -> int:
    """Characters of the compact JSON of `value`, divided by four, rounded up."""
    return math.ceil(len(_text(value)) / CHARS_PER_TOKEN)


def tiktoken_counter(encoding: str = "o200k_base") -> TokenCounter:
    """A counter that encodes the compact JSON of a value with tiktoken's `encoding`."""
    try:
        import tiktoken
    except ImportError:
        raise TokenizerUnavailable(
            "tiktoken is not installed: pip install 'frayproof-audit[tokens]'") from None
    try:
        encoder = tiktoken.get_encoding(encoding)
    except Exception as exc:  # unknown name, or its ranks file cannot be fetched offline
        raise TokenizerUnavailable(f"tiktoken cannot load encoding {encoding!r}: {exc}") from None

    def count(value: Any) -> int:
        return len(encoder.encode(_text(value), disallowed_special=()))

    return count
