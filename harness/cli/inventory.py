"""``forensic tools``: the tools and their argument schemas."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from ._common import app
from ._terminal import console


@app.command("tools")
def list_tools(
    as_json: Annotated[bool, typer.Option("--json", help="Print the tools' JSON schemas.")] = False,
) -> None:
    """List the investigator's tools and their arguments."""
    from forensic.tools import all_tools

    schemas = [t.schema() for t in all_tools().values()]
    if as_json:
        sys.stdout.write(json.dumps(schemas, indent=2) + "\n")
        return
    con = console()
    for s in schemas:
        con.print(f"[bold]{s['name']}[/]  {s['description']}")
