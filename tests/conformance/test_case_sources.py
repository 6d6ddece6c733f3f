"""Every shipped case's ``source`` names something a reader of the repository
can open (docs/reference/case-format.md, "Sources"): a section of a docs page
— ``docs/PAGE.md § HEADING`` — every decision it names stated on a page it
cites, source documents by the title listed in docs/variants/index.md, and
nothing outside the repository (no file of the shared rules folder, no
source-document file name)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import pytest

from qipai.conformance.cases import read_file

ROOT = Path(__file__).resolve().parents[2]
CASE_FILES = sorted((ROOT / "qipai" / "variants").glob("*/cases/*.toml")) + \
    sorted((ROOT / "docs" / "examples").rglob("cases/*.toml"))
REF = re.compile(r"(docs/[\w./-]+\.md)|§\s*([^;§]*)")
DECISION = re.compile(r"\bD-[A-Z]+\d+\b")
TITLE = re.compile(r"《([^》]+)》")
OUTSIDE = re.compile(r"\d{3}_[0-9a-f]{16}\.txt|\.\./shared|/work/shared|CONFORMANCE|"
                     r"(?<![\w/])rules/|(?<!docs/variants/)(?<![\w/-])"
                     r"(mahjong-common|guilin-mahjong|guangxi-mahjong|guilin-zipai)\.md")
_NAME_END = re.compile(r"\s\(|,|:|\s—|;")


def norm(text: str) -> str:
    return " ".join(text.replace("`", "").split())


#: A section number before a heading ("3.2 Multipliers", "4. Winning"):
#: docs/variants pages number their headings so a ``rule`` can cite a section
#: (guilin-mahjong ``§3.2``).
SECTION_NUMBER = re.compile(r"^(\d+[a-z]?(?:\.\d+)*)\.?\s+")


def names_of(heading: str) -> set[str]:
    """What a citation may call a heading: all of it, its part before the
    first ``(``, ``,``, ``:`` or ``—``, and its leading Chinese term — each
    with or without the heading's section number."""
    h = norm(heading)
    m = SECTION_NUMBER.match(h)
    if m:
        bare = names_of(h[m.end():])
        return bare | {f"{m.group(1)} {n}" for n in bare} | {h}
    names = {h}
    m = _NAME_END.search(h)
    if m:
        names.add(h[:m.start()].strip())
    m = re.match(r"^([\u3400-\u9fff]+)\s", h)
    if m:
        names.add(m.group(1))
    return names


@lru_cache(maxsize=None)
def headings(page: str) -> frozenset[str]:
    names: set[str] = set()
    fence = False
    for line in (ROOT / page).read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^#{1,6}\s+(.*)$", line)
        if m:
            names |= names_of(m.group(1))
    return frozenset(names)


def cited_heading(page: str, text: str) -> str | None:
    """The longest name of a heading of ``page`` that ``text`` starts with,
    ending there or before a character that cannot continue a word."""
    text = norm(text)
    for name in sorted(headings(page), key=len, reverse=True):
        if text.startswith(name) and not re.match(r"[A-Za-z0-9_-]", text[len(name):len(name) + 1]):
            return name
    return None


@lru_cache(maxsize=None)
def page_text(page: str) -> str:
    return (ROOT / page).read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def titles() -> frozenset[str]:
    text = page_text("docs/variants/index.md")
    sources = text[text.index("## Sources"):]
    return frozenset(TITLE.findall(sources))


def source_problems(source: str) -> list[str]:
    """Why ``source`` does not name something in the repository (empty: it does)."""
    out = []
    m = OUTSIDE.search(source)
    if m:
        out.append(f"points outside the repository: {m.group(0)!r}")
    pages: list[str] = []
    sections = 0
    page = None
    for m in REF.finditer(source):
        if m.group(1):  # a page
            page = m.group(1)
            if not (ROOT / page).is_file():
                out.append(f"no page {page}")
                page = None
            else:
                pages.append(page)
            continue
        if page is None:
            out.append(f"§ {m.group(2).strip()!r} follows no docs page")
            continue
        if cited_heading(page, m.group(2)) is None:
            out.append(f"{page} has no section {norm(m.group(2))[:40]!r}…")
        else:
            sections += 1
    if not sections:
        out.append("cites no section of a docs page (docs/PAGE.md § HEADING)")
    for d in DECISION.findall(source):
        if pages and not any(re.search(rf"\b{d}\b", page_text(p)) for p in pages):
            out.append(f"{d} is on none of the pages cited ({', '.join(pages)})")
    for t in TITLE.findall(source):
        if t not in titles():
            out.append(f"《{t}》 is not a source listed in docs/variants/index.md § Sources")
    return out


CASES = [(f.relative_to(ROOT), c) for f in CASE_FILES for c in read_file(f).cases]


def test_there_are_cases():
    assert len(CASES) > 400


@pytest.mark.parametrize("path, case", CASES, ids=[f"{p.parent.parent.name}:{c.id}"
                                                  for p, c in CASES])
def test_the_source_names_a_docs_section(path, case):
    assert source_problems(case.source) == [], case.source


def test_the_checker_refuses_what_a_clone_cannot_open():
    assert source_problems("002_fdff6a979369d26a.txt 翻倍")
    assert source_problems("guilin-mahjong.md §3.1")
    assert source_problems("docs/variants/guilin-mahjong.md § No such section")
    assert source_problems("docs/variants/guilin-mahjong.md § Optionsx")
    assert source_problems("§ Options")
    assert source_problems("docs/variants/nowhere.md § Options")
    assert source_problems("docs/variants/guilin-mahjong.md § Options, D-GX3")
    assert source_problems("docs/variants/guilin-mahjong.md § Options; 《No such book》 x")
    assert source_problems("docs/variants/guilin-mahjong.md")
    assert not source_problems("docs/variants/guilin-mahjong.md § 互包, case 2; "
                               "《桂林麻將遊戲規則》 互包的結算 2")
    assert not source_problems("docs/variants/guilin-mahjong.md § Multipliers (翻倍), each ×2 "
                               "(D-GL3)")
    # a heading's section number may be cited with it or left out
    assert not source_problems("docs/variants/guilin-mahjong.md § 3.2 Multipliers (D-GL3)")
    assert not source_problems("docs/variants/guilin-zipai.md § Turn sequence")
