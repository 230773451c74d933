"""The Anthropic wire converter now lives in `sessiongen.anthropic_wire` (the example corpus uses
it too); this module keeps the old import path working."""

from sessiongen.anthropic_wire import NotExpressible, Place, expected_site, index_map, to_anthropic

__all__ = ["NotExpressible", "Place", "expected_site", "index_map", "to_anthropic"]
