"""The ``qipai`` command line: list variants, let bots play, check replays.

``qipai variants [NAME]`` · ``qipai play [VARIANT] [--seed N] [--hands K] [--bots …] [--json]``
· ``qipai replay FILE`` · ``qipai verify RECORD`` · ``qipai conformance VARIANT [--cases PATH …]``
· ``qipai conformance --check-cases PATH`` · ``qipai schema [--cases]`` · ``qipai score``
· ``qipai new-variant`` · ``qipai serve`` · ``qipai keys`` · ``qipai connect`` · ``qipai simulate``
· ``qipai arena`` · ``qipai report``.

One module per command group; the group below knows each command's name
and module and imports the module only when the command runs or its help
is shown (as pip, hatch and flask load theirs), so ``qipai --help`` stays
fast.  Heavy modules (the engine, rich) are imported inside the commands.

Bad input ends with one ``error: …`` line on stderr and exit status 2; no
traceback.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from qipai.cli.common import fail
from qipai.core.errors import QipaiError

#: Command name → ``module:function`` of this package that defines it.
COMMANDS = {
    "arena": "arena:arena",
    "conformance": "conformance:conformance",
    "connect": "connect:connect",
    "keys": "keys:keys",
    "new-variant": "new_variant:new_variant",
    "play": "play:play",
    "replay": "records:replay",
    "report": "simulate:report",
    "schema": "schema:schema",
    "score": "score:score",
    "serve": "serve:serve",
    "simulate": "simulate:simulate",
    "variants": "variants:variants",
    "verify": "records:verify",
}


class QipaiGroup(click.Group):
    """The command group: loads each command from its module on first use
    (:data:`COMMANDS`); its ``invoke`` is the CLI boundary where the
    library's input errors become one-line messages."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, name = COMMANDS[cmd_name].split(":")
            command = getattr(importlib.import_module(f"{__name__}.{module}"), name)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except QipaiError as exc:
            fail(str(exc))
        except OSError as exc:
            where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
            fail(f"{where}{exc.strerror or exc}")


@click.group(cls=QipaiGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="qipai", prog_name="qipai")
def cli() -> None:
    """Chinese tile games (桂林麻将 …) on one table engine."""


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (``qipai``, ``python -m qipai``)."""
    cli.main(args=argv, prog_name="qipai")
