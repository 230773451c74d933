"""Tool-call argument invariants: tool schemas, and the rules that check calls against them."""
