"""Benchmarks for frayproof-audit: the speed measurements and a corpus-writing command line.

Run them with `python -m benchmarks [--quick] [names...]` (or `make bench`). Their sessions come
from `sessiongen.realistic`, the generator the tests and the example corpus share;
`python -m benchmarks.corpus` writes a corpus file from it. `benchmarks.peer` runs code under
the optional frayproof 0.1.0 environment so every figure can be printed beside frayproof's own.
"""
