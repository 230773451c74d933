"""What a run reads: input locations, their expansion into files, shards and their records.

Everything here runs before any check: a path that names nothing is exit 2 within a second, and
a shard is planned without parsing a record. Nothing is imported on the package's import: each
worker pays only for the modules it uses.
"""
