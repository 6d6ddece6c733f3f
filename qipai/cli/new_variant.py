"""``qipai new-variant NAME``: the skeleton of a variant plugin package.

The package is what the tutorial (docs/tutorial/write-a-variant.md) builds
by hand: a ``pyproject.toml`` with the entry point in ``qipai.variants``, a
plugin module answering the hooks a variant must fill (built on the
family's common flow), an options Struct and one conformance case file.
It installs as it is (``pip install -e qipai-NAME``), ``qipai variants``
lists it, and ``qipai play NAME`` plays it — with placeholder rules (any
complete hand wins, a flat stake) marked ``TODO`` for you to replace.

The files are written from the templates in ``qipai/cli/templates/``
(``{NAME}``, ``{MODULE}``, ``{CLASS}``, ``{FAMILY}`` are filled in).
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from qipai.core.errors import QipaiError

FAMILIES = ("mahjong", "zipai")
_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


class ScaffoldError(QipaiError, ValueError):
    """A bad variant name, family or target folder."""


def module_name(name: str) -> str:
    """The import package of variant ``name``: ``qipai_`` + name with ``_`` for ``-``."""
    return "qipai_" + name.replace("-", "_")


def files(name: str, family: str = "mahjong") -> dict[str, str]:
    """The skeleton's files: relative path → text.

    Raises:
        ScaffoldError: ``name`` is not lower-case words joined by ``-``, or
            ``family`` is not one of :data:`FAMILIES`.
    """
    if not _NAME.match(name):
        raise ScaffoldError(f"bad variant name {name!r}: use lower-case letters and digits, "
                            "words joined by '-' (e.g. 'my-mahjong')")
    if family not in FAMILIES:
        raise ScaffoldError(f"unknown family {family!r}; families are {', '.join(FAMILIES)}")
    mod = module_name(name)
    subs = {"NAME": name, "MODULE": mod, "CLASS": "".join(w.title() for w in name.split("-")),
            "FAMILY": family}
    out = {
        "pyproject.toml": "pyproject.toml",
        "README.md": "README.md",
        f"{mod}/__init__.py": "init.py",
        f"{mod}/options.py": "options.py",
        f"{mod}/plugin.py": f"plugin-{family}.py",
        f"{mod}/cases/deck.toml": f"cases-{family}.toml",
        f"tests/test_{mod}.py": "test.py",
    }
    return {path: _fill(_template(name), subs) for path, name in out.items()}


def _template(name: str) -> str:
    from importlib import resources  # here: `qipai --help` loads this module

    return (resources.files(__package__) / "templates" / f"{name}.tmpl").read_text(
        encoding="utf-8")


def _fill(text: str, subs: dict[str, str]) -> str:
    for key, value in subs.items():
        text = text.replace("{" + key + "}", value)
    return text


def write_skeleton(name: str, family: str = "mahjong", directory: str | Path = ".") -> Path:
    """Write the skeleton of variant ``name`` into ``directory/qipai-NAME``.

    Returns:
        The package folder.

    Raises:
        ScaffoldError: a bad name or family, the name of an installed
            variant, or the folder exists already.
    """
    content = files(name, family)
    from qipai.core.ruleset import available

    if name in available():  # it would stand beside (or replace) the installed one
        raise ScaffoldError(f"a variant named {name!r} is installed already; choose another "
                            f"name (e.g. '{name}-house')")
    root = Path(directory) / f"qipai-{name}"
    if root.exists():
        raise ScaffoldError(f"{root} exists already; choose another --dir or name")
    for rel, text in content.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@click.command("new-variant")
@click.argument("name")
@click.option("--family", type=click.Choice(["mahjong", "zipai"]), default="mahjong",
              show_default=True, help="The family whose common flow the variant plays on.")
@click.option("--dir", "directory", type=click.Path(file_okay=False), default=".",
              show_default=True, help="Where to write the package folder qipai-NAME.")
def new_variant(name: str, family: str, directory: str) -> None:
    """Write the skeleton of a variant plugin package NAME (qipai-NAME/)."""
    root = write_skeleton(name, family, directory)
    click.echo(f"wrote {root}/ — variant {name!r}, module {module_name(name)}\n"
               f"next: pip install -e {root}   (or: uv pip install -e {root})\n"
               f"      qipai variants · qipai play {name} · qipai conformance {name}")
