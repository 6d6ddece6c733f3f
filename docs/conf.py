"""Sphinx configuration of the qipai documentation.

Build (warnings are errors, no network needed):

    uv run --group docs sphinx-build -W -b html docs docs/_build/html
"""

from __future__ import annotations

import sys
from importlib.metadata import version as _version
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE / "_ext"))

project = "qipai 棋牌"
author = "the qipai developers"
copyright = "the qipai developers"
release = _version("qipai")
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx_click",
    "qipai_docs",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
language = "en"
exclude_patterns = [
    "_build",
    "DECISIONS.md",  # a note for the commit, not a page
    "examples/**",  # code included by pages (literalinclude), not pages themselves
    "records/**",
    "**/.venv",
    "**/.pytest_cache",
]

# MyST: ``:::`` fences for directives with Markdown bodies, ``{deflist}`` lists,
# anchors on headings so pages can link to a section.
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# autodoc: the hook reference names every hook explicitly (reference/hooks.md).
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False

# No intersphinx: the build must work offline.

html_theme = "furo"
html_title = "qipai 棋牌"
html_static_path: list[str] = []
