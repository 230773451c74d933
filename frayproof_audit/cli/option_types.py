"""Click types for integer options: each bounded by what it counts (`frayproof_audit.bounds`).

Every integer option of every command uses one of these, so a value past what the option can
mean (`--shard-bytes 99999999999999999999999`) is a usage error naming the range (exit 2)
before any work, never a crash after it. Imports nothing but click.
"""

from __future__ import annotations

import click

from frayproof_audit.bounds import MAX_BYTES, MAX_COUNT


def count(low: int) -> click.IntRange:
    """An option that counts something (workers, results, mutants, nights, pairs, messages,
    tokens): `low` to `MAX_COUNT`."""
    return click.IntRange(min=low, max=MAX_COUNT)


BYTES = click.IntRange(min=1, max=MAX_BYTES)
"""An option that is a size in bytes: 1 to `MAX_BYTES` (1 TiB)."""
