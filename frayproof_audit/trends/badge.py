"""The mutation-score badge: a shields.io endpoint JSON for a README.

Serve the file anywhere shields.io can fetch it and point
`https://img.shields.io/endpoint?url=<its URL>` at it. The score is the latest period's
`mutants_caught / (mutants_caught + mutants_survived)`: how much of what the mutation operators
broke the contract noticed. Colours follow Stryker's defaults (high 80, low 60).
"""

from __future__ import annotations

from typing import Any

from frayproof_audit.trends.series import Trend

HIGH = 0.8
LOW = 0.6


def badge(trend: Trend, label: str = "mutation score") -> dict[str, Any]:
    """`{schemaVersion, label, message, color}` for the latest period's mutation score."""
    score = trend.totals["mutation_score"][-1] if trend.totals.height else None
    if score is None:
        return {"schemaVersion": 1, "label": label, "message": "no mutants", "color": "lightgrey"}
    color = "brightgreen" if score >= HIGH else "yellow" if score >= LOW else "red"
    return {"schemaVersion": 1, "label": label, "message": f"{score:.1%}", "color": color}
