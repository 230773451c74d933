"""Re-judging a mutant from what its edit changed: the vocabulary checks and mutation share.

`mutant.py` says what an edit changed (`Effects`) and what a re-check may ask of a mutant
(`Mutant`, over the original `Output`); `base.py` what a check's re-check is (`Recheck`, built
per pair by a `RecheckFactory` from a `PairContext`); `local.py` runs a check on the few
messages of a mutant its edit can affect. It imports neither `checks/` nor `mutate/`: both
import it.
"""
