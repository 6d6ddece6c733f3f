"""The options tables of the variant pages, generated from the options Structs.

A variant page ``docs/variants/NAME.md`` holds, under its Options heading,
a block between two comments (``OPTIONS_BEGIN`` … ``OPTIONS_END``) whose
table is :func:`qipai.core.options.markdown_table` of variant NAME's
options Struct: its fields' metadata (type, allowed values, default,
meaning, source) is the one source of truth, read by ``qipai variants
NAME`` too.  The docs build (``qipai_docs``) and ``tests/test_docs.py``
fail when a table differs; rewrite them with::

    uv run python docs/_ext/qipai_options_tables.py

No Sphinx import here, so the script runs without the ``docs`` group.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent

#: The generated block of a variant page: the two comments and the table between.
OPTIONS_BEGIN = ("<!-- OPTIONS_BEGIN: generated from the options Struct's metadata; "
                 "regenerate with `uv run python docs/_ext/qipai_options_tables.py` -->")
OPTIONS_END = "<!-- OPTIONS_END -->"
_BLOCK = re.compile(re.escape(OPTIONS_BEGIN) + r"\n(.*?)" + re.escape(OPTIONS_END), re.S)


def options_table(variant: str) -> str:
    """The generated options table of ``variant`` (Markdown)."""
    from qipai.core.options import markdown_table
    from qipai.core.ruleset import load

    return markdown_table(load(variant).manifest.options_type)


def page_options_table(text: str) -> str | None:
    """The options table written in a page's generated block, or None."""
    m = _BLOCK.search(text)
    return m.group(1) if m else None


def write_options_tables() -> list[Path]:
    """Rewrite the generated options block of every variant page; the pages changed."""
    changed = []
    for page in sorted((DOCS / "variants").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        if page_options_table(text) is None:
            continue
        new = _BLOCK.sub(lambda _m: f"{OPTIONS_BEGIN}\n{options_table(page.stem)}{OPTIONS_END}",
                         text)
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(page)
    return changed


if __name__ == "__main__":
    for path in write_options_tables():
        print(f"rewrote the options table of {path.relative_to(DOCS.parent)}")
    sys.exit(0)
