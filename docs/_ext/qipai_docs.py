"""Sphinx helpers of the qipai docs: content generated from the code.

* ``{qipai-record-schema}`` — the JSON Schema of a game record, exactly what
  ``qipai schema`` prints (``msgspec.json.schema(Record)``).
* A consistency check: every hook of :mod:`qipai.core.hookspecs` must be
  documented (``autofunction``) somewhere, else the build warns — and the
  build runs with ``-W``.
* The options tables of the variant pages (``docs/variants/NAME.md``,
  between the ``OPTIONS_BEGIN`` and ``OPTIONS_END`` comments) are generated
  from the options Structs' metadata
  (:func:`qipai.core.options.markdown_table`); the build warns when a
  table differs, and ``uv run python docs/_ext/qipai_options_tables.py``
  rewrites them (see that module).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from qipai_options_tables import options_table, page_options_table

logger = logging.getLogger(__name__)


def record_schema_text() -> str:
    """The record's JSON Schema, pretty-printed (as ``qipai schema``)."""
    import msgspec

    from qipai.core.records import record_schema

    return msgspec.json.format(msgspec.json.encode(record_schema())).decode()


class RecordSchema(SphinxDirective):
    """Insert the record's JSON Schema as a JSON code block."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        text = record_schema_text()
        block = nodes.literal_block(text, text, language="json")
        return [block]


def hook_names() -> list[str]:
    """Every hook spec of qipai, in the order of ``core/hookspecs.py``."""
    import inspect

    from qipai.core import hookspecs

    return [name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
            if name.startswith("qipai_") and fn.__module__ == hookspecs.__name__]


def check_hooks_documented(app: Sphinx, env: Any) -> None:
    objects = env.get_domain("py").objects
    for name in hook_names():
        if f"qipai.core.hookspecs.{name}" not in objects:
            logger.warning("hook %s is not documented in the hook reference "
                           "(add an autofunction for it to reference/hooks.md)", name)


def check_options_tables(app: Sphinx, docname: str, source: list[str]) -> None:
    if not docname.startswith("variants/"):
        return
    written = page_options_table(source[0])
    if written is None:
        return
    variant = docname.split("/", 1)[1]
    if written != options_table(variant):
        logger.warning("%s: the options table differs from the options Struct's metadata "
                       "(regenerate: uv run python docs/_ext/qipai_options_tables.py)", docname)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("qipai-record-schema", RecordSchema)
    app.connect("env-check-consistency", check_hooks_documented)
    app.connect("source-read", check_options_tables)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}

