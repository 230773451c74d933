"""One audit run: its options, the plan executed on a backend, the worker, the tallies and the
`RunSummary` that owns the exit code.

Nothing is imported on the package's import: each worker pays only for the modules it uses.
"""
