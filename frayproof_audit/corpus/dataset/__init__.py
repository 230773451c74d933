"""A committed dataset read back: its checked files, `read_table`, the runs a selection holds,
the statistics over them, and one run's details for the CI outputs.

What `stats`, `trend` and `report` use. Nothing is imported on the package's import.
"""
