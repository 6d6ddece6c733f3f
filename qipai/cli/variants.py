"""``qipai variants [NAME]``: the registered variants, or one variant's options described."""

from __future__ import annotations

from typing import Any

import click

from qipai.cli.common import fail


@click.command()
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: the variant with every option described (a list of "
                   "variants without NAME).")
def variants(name: str | None, as_json: bool) -> None:
    """List the registered variants with their players and options, or show
    one variant's options: type, allowed values, default, what it means and
    where the rule comes from.

    Example: qipai variants guilin-mahjong
    """
    from qipai.core.ruleset import available, load, parse_spec

    if name is not None:
        vname, given = parse_spec(name)
        if given:
            fail(f"give the variant's name alone ({vname!r}), without options")
        _show_variant(load(vname), as_json)
        return
    loaded: list[tuple[str, Any]] = []
    for vname in sorted(available()):
        try:
            loaded.append((vname, load(vname)))
        except Exception as exc:  # a broken plugin must not hide the others
            loaded.append((vname, exc))
    if as_json:
        import msgspec

        out = [_variant_doc(rs) if not isinstance(rs, Exception)
               else {"name": vname, "error": f"{type(rs).__name__}: {rs}"}
               for vname, rs in loaded]
        click.echo(msgspec.json.encode(out).decode())
        return
    from rich.console import Console
    from rich.table import Table as RichTable

    table = RichTable(title="registered variants")
    for col in ("variant", "title", "family", "players", "options (default)"):
        table.add_column(col)
    for vname, rs in loaded:
        if isinstance(rs, Exception):
            table.add_row(vname, f"cannot load: {type(rs).__name__}: {rs}", "", "", "")
            continue
        m = rs.manifest
        opts = "\n".join(f"{k} = {_literal(v)}" for k, v in rs.options_dict().items())
        table.add_row(vname, m.title, m.family, str(m.players), opts or "—")
    console = Console()
    console.print(table)
    console.print("Each option explained: qipai variants NAME", style="dim")


def _variant_doc(rs: Any) -> dict[str, Any]:
    import msgspec

    from qipai.core.options import describe

    m = rs.manifest
    return {"name": m.name, "title": m.title, "family": m.family, "players": m.players,
            "version": m.version,
            "options": [msgspec.to_builtins(o) for o in describe(m.options_type)]}


def _show_variant(rs: Any, as_json: bool) -> None:
    """One variant and its options, described from the options Struct's metadata."""
    if as_json:
        import msgspec

        click.echo(msgspec.json.encode(_variant_doc(rs)).decode())
        return
    from rich.console import Console
    from rich.text import Text

    from qipai.core.options import describe

    m = rs.manifest
    console = Console(highlight=False)
    family = f" · {m.family}" if m.family else ""
    console.print(Text(f"{m.title} {m.name}", style="bold") + Text(f"{family} · "
                                                                     f"{m.players} players"))
    infos = describe(m.options_type)
    if not infos:
        console.print("no options")
        return
    for o in infos:
        console.print()
        scalar = not isinstance(o.default, (dict, list))
        head = Text(o.name, style="bold") + Text(f"  {o.type}")
        if scalar:
            head += Text(f" · default {_shown(o.default)}")
        console.print(head)
        body = Text("" if scalar else f"default: {_shown(o.default)}\n")
        body += Text(f"allowed: {o.allowed}\n{o.description or '—'}")
        if o.source:
            body += Text(f"\nfrom: {o.source}", style="dim")
        for line in body.wrap(console, max(20, console.width - 4)):
            line.rstrip()
            console.print(Text("    ") + line, soft_wrap=True)
    example = next((f"{o.name}={v!r}" if isinstance(v, str) else f"{o.name}={_literal(v)}"
                    for o in infos for v in _other_values(o)), "")
    console.print()
    console.print(f"Give options as {m.name}(key=value, …)"
                  + (f", e.g. qipai play \"{m.name}({example})\"" if example else ""),
                  soft_wrap=True)


def _other_values(o: Any) -> list[Any]:
    """A value of option ``o`` other than its default, for an example (or none)."""
    if o.choices:
        return [c for c in o.choices if c != o.default][:1]
    if o.type == "bool":
        return [not o.default]
    return []


def _shown(value: Any) -> str:
    if isinstance(value, (dict, list)):
        import json

        return json.dumps(value, ensure_ascii=False)
    return _literal(value)


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)
