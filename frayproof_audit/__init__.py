"""frayproof-audit: audit LLM agent context compaction against a YAML context contract.

The public names match frayproof's, so switching is one import line.
"""

from frayproof_audit.contract import Contract, load_contract
from frayproof_audit.engine import check, validate
from frayproof_audit.errors import ContractViolation, ContractWarning, InputError
from frayproof_audit.guard import guard
from frayproof_audit.model import Message, Snapshot, ToolCall
from frayproof_audit.report import Report, Violation
from frayproof_audit.snapshot import load_snapshot

__version__ = "0.1.0"

__all__ = [
    "Contract",
    "ContractViolation",
    "ContractWarning",
    "InputError",
    "Message",
    "Report",
    "Snapshot",
    "ToolCall",
    "Violation",
    "__version__",
    "check",
    "guard",
    "load_contract",
    "load_snapshot",
    "validate",
]
