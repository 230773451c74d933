"""Benchmarks for frayproof-audit: a realistic corpus generator and the speed measurements.

Run them with `python -m benchmarks [--quick] [names...]` (or `make bench`). `benchmarks.corpus`
is also the generator the example corpus and the tests reuse; `benchmarks.peer` runs code under
the optional frayproof 0.1.0 environment so every figure can be printed beside frayproof's own.
"""
