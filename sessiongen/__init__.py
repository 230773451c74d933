"""One session generator for the tests, the benchmarks and the example corpus.

A top-level helper package (like `benchmarks/`, not installed with `frayproof_audit`), so both
`tests/` and `benchmarks/` import it from a checkout without importing each other.

* `sessiongen.source` — `Source`, the choices builders make, and `RandomSource` (seeded).
* `sessiongen.wire` — the Chat Completions message shapes every builder assembles.
* `sessiongen.small` — small-vocabulary builders for the checks' corner cases, from valid
  transcripts to wild inputs, plus seeded batches (`mutation_cases`, `differential_cases`).
* `sessiongen.strategies` — the same builders as hypothesis strategies (needs hypothesis).
* `sessiongen.realistic` / `sessiongen.prose` — realistic seeded sessions, compactors, records
  and JSONL corpora for benchmarks and corpus fixtures.
* `sessiongen.tooled` — the same records carrying their agent's tool schemas (`tools`), with
  calls that mostly obey them and kept calls re-spaced or altered in after (bench_toolargs).
* `sessiongen.anthropic_wire` / `sessiongen.responses_items` — Chat Completions sessions
  rewritten as Anthropic Messages wire data / OpenAI Responses items (format equivalence tests,
  the example corpus's Anthropic and Responses nights).
"""
