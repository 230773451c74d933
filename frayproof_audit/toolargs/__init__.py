"""Tool-call arguments against tool schemas, shared by the `tool_arguments` check and `tool-args`.

`schemas` reads tool definitions into `ToolSchema`s (`tool_schemas` for a record's `tools`),
`compiled` builds their validators once per tools tuple, `policy` and `rules` judge one call,
`trace`, `single` and `table` are the `tool-args` command's library side. Nothing is imported
here: the contract imports `schemas` while the checks package is still loading.
"""
