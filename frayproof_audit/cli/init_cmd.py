"""`init`: write a starter contract and tool schema into a folder (both or neither)."""

from __future__ import annotations

import click

from frayproof_audit.cli.common import fail_input
from frayproof_audit.starter import StarterError, write_starter


@click.command("init")
@click.option("--dir", "folder", type=click.Path(file_okay=False), default=".", show_default=True,
              help="Existing folder to write contract.yaml and tool-schema.json into.")
def init_command(folder: str) -> None:
    """Write a starter contract.yaml and the tool-schema.json it names.

    Refuses (exit 2) when either file already exists, even as a dangling symlink, and then
    writes neither: nothing is ever overwritten.

    \b
    Example:
        frayproof-audit init --dir my-agent
    """
    try:
        written = write_starter(folder)
    except StarterError as exc:
        fail_input(str(exc), "text")
    for path in written.paths:
        click.echo(f"Wrote {path}")
