"""The faces' font (``qipai/server/static/fonts/``): a subset of Noto Sans CJK
SC Bold holding the characters tiles.js draws, served by qipai itself as
``font/woff2`` with its licence beside it, declared in page.css and first in
the faces' font stack; tiles.js draws no character the subset was not made
with (``faces.txt``, the subset's ``--text-file``).  The browser side (the
font fetched on the first load, counted in its 150 KB, and used) is in
test_page_tiles."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hostkit import start_server
from qipai.server.routes import STATIC

FONTS = STATIC / "fonts"
WOFF2 = "NotoSansCJKsc-Bold-faces.woff2"
FAMILY = "qipai faces"
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def listed() -> set[str]:
    """The characters the subset was made with."""
    return set((FONTS / "faces.txt").read_text(encoding="utf-8").strip())


def drawn(js: str) -> set[str]:
    """The CJK characters of tiles.js's code, comments and ``label`` (the
    screen reader's words: 大/小, （红）, never drawn) left out."""
    code = js.split("export function label", 1)[0]
    code = re.sub(r"/\*.*?\*/", "", code, flags=re.S)
    code = re.sub(r"(^|[^:])//[^\n]*", r"\1", code)
    return set(CJK.findall(code))


def test_the_subset_holds_what_tiles_js_draws():
    js = (STATIC / "tiles.js").read_text(encoding="utf-8")
    chars = drawn(js)
    assert len(chars) >= 27, sorted(chars)   # 一…十, 壹…拾, 萬, 東南西北中發
    missing = chars - listed()
    assert not missing, f"tiles.js draws {''.join(sorted(missing))}, not in fonts/faces.txt: " \
                        f"add them and make the subset again (fonts/README.md)"
    unused = listed() - chars
    assert not unused, f"fonts/faces.txt lists {''.join(sorted(unused))}, drawn nowhere"
    font = re.search(r"const FONT = (.*?);", js, re.S).group(1)
    assert font.startswith(f"`'{FAMILY}',"), f"the faces' stack does not start with the subset: {font}"


def test_the_font_file_holds_every_listed_character():
    """The committed WOFF2's cmap (read with fontTools, when it and brotli
    are importable) has a glyph for every character of faces.txt."""
    pytest.importorskip("brotli")
    ttlib = pytest.importorskip("fontTools.ttLib")
    font = ttlib.TTFont(FONTS / WOFF2)
    assert font.flavor == "woff2"
    cmap = font.getBestCmap()
    missing = {c for c in listed() if ord(c) not in cmap}
    assert not missing, f"{WOFF2} has no glyph for {''.join(sorted(missing))}"


def test_the_font_is_served_with_its_licence(tmp_path: Path):
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path)
    try:
        with s.http() as http:
            css = http.get("/static/page.css").text
            face = re.search(r"@font-face\s*\{([^}]*)\}", css)
            assert face, "page.css declares no @font-face"
            assert f'font-family: "{FAMILY}"' in face.group(1)
            assert f'url("fonts/{WOFF2}") format("woff2")' in face.group(1)

            r = http.get(f"/static/fonts/{WOFF2}")
            assert r.status_code == 200
            assert r.headers["content-type"] == "font/woff2"
            assert r.content == (FONTS / WOFF2).read_bytes() and r.content[:4] == b"wOF2"
            # cached as every static file: validators, and a revalidation is a 304
            js = http.get("/static/tiles.js")
            for h in ("etag", "last-modified"):
                assert h in r.headers and h in js.headers, (h, r.headers, js.headers)
            again = http.get(f"/static/fonts/{WOFF2}", headers={"if-none-match": r.headers["etag"]})
            assert again.status_code == 304 and not again.content

            lic = http.get("/static/fonts/OFL.txt")
            assert lic.status_code == 200 and lic.headers["content-type"].startswith("text/plain")
            assert "SIL OPEN FONT LICENSE Version 1.1" in lic.text
            assert "Reserved Font Name 'Source'" in lic.text
    finally:
        s.stop()
