"""The "Using it from code" example of README.md (and its copy in the
docs' table concept page) runs as shown and prints what its comment says:
a hand that ends in a win, settled to zero — not a 荒庄 of zeros, which is
what always taking the last legal action (a pass, the highest discard)
gave before."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _block(path: Path, after: str) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.index("```python\n", text.index(after)) + len("```python\n")
    return text[start:text.index("```", start)]


@pytest.mark.parametrize("path, after", [("README.md", "## Using it from code"),
                                         ("docs/concepts/table.md", "# The table")])
def test_the_code_example_prints_what_it_says(path, after):
    code = _block(ROOT / path, after)
    claimed = re.search(r"print\(.*\)\s*# (.*?):", code).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, path, "exec"), {})
    printed = out.getvalue().strip()
    assert printed == claimed, (path, printed, claimed)
    end, net = printed.split(" ", 1)
    net = [int(x) for x in net.strip("()").split(",")]
    assert end == "hu" and sum(net) == 0 and any(net), printed
