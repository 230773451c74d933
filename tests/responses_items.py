"""The Responses items converter now lives in `sessiongen.responses_items` (the example corpus
uses it too); this module keeps the old import path working."""

from sessiongen.responses_items import Message, Written, representable, to_items

__all__ = ["Message", "Written", "representable", "to_items"]
