"""The largest value each kind of integer a user gives may take: command options and contract keys.

Python integers have no size, but the tables, Arrow and the C code under the libraries do: a
value past what it can mean (`--shard-bytes 99999999999999999999999`) once ran a whole audit
and then crashed writing the `runs` row. So every such integer is bounded where it is parsed,
by the kind of thing it counts, and refused there (exit 2) with the bound named.
"""

from __future__ import annotations

MAX_COUNT = 2**31 - 1
"""A count (workers, results, mutants per pair, nights, pairs, turns, messages, tokens, recent
exchanges): 2,147,483,647, the widest count an int32 column of the tables holds, far past any
count such a limit is set to."""

MAX_BYTES = 2**40
"""A size in bytes (a record, a shard): 1 TiB, more than a record or a unit of work held in
memory can be."""
