"""``qipai schema``: the JSON Schema of a record, a case file or the protocol."""

from __future__ import annotations

import click


@click.command()
@click.option("--cases", is_flag=True, help="The schema of a conformance case file instead.")
@click.option("--protocol", is_flag=True,
              help="The game server's WebSocket messages and the per-seat view instead.")
def schema(cases: bool, protocol: bool) -> None:
    """Print the JSON Schema of a game record (the current format version)."""
    import msgspec

    if cases:
        from qipai.conformance.casespec import schema_text

        click.echo(schema_text())
        return
    if protocol:
        from qipai.host.protocol import schema as protocol_schema

        doc = protocol_schema()
    else:
        from qipai.core.records import record_schema

        doc = record_schema()
    click.echo(msgspec.json.format(msgspec.json.encode(doc)).decode())
