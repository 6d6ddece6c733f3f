"""Every section number the repository cites resolves on a docs page a reader
of a clone can open.

The variant pages (docs/variants/*.md) number their headings ("## 3.
Settlement of a win", "### 3.2 Multipliers …").  What a ``§N`` / ``§N.M``
means (docs/concepts/payments.md, "What ``rule`` names"):

* a payment term's ``rule``: the section of the variant's own page, unless
  the rule names another page first (``"mahjong-common §3"``);
* in code, tests and docs: the page named before it on the same line
  (``guilin-mahjong.md §1``, ``docs/variants/guangxi-mahjong.md § 2``),
  else the page of the module's variant — ``qipai/variants/guilin_mahjong``
  → guilin-mahjong, ``qipai/families/zipai`` → guilin-zipai (its only
  variant), ``qipai/families/mahjong`` → mahjong-common — and a variant
  page's own ``§`` its own sections.  Anywhere else a bare ``§N`` is an
  error: it names no page.

Checked: ``rule`` values of the terms of every payment on a sample of
random-play and greedy hands of each variant (the liability options
included), and every ``§`` number in qipai/, docs/, tests/ and README.md.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import pytest

from qipai.core.model import Term

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("mahjong-common", "guilin-mahjong", "guangxi-mahjong", "guilin-zipai")
_PAGE = "|".join(PAGES)
#: a variant page named in text or a rule: ``docs/variants/X.md``, ``X.md``, ``X``
PAGE_NAME = re.compile(rf"(?<![\w-])(?:docs/variants/)?({_PAGE})(?:\.md)?(?![\w-])")
#: a section number: ``§3``, ``§ 3.2``, ``§7a``
SECTION = re.compile(r"§\s*(\d+[a-z]?(?:\.\d+)*)(?![\d.]*\d)")
DECISION = re.compile(r"\bD-[A-Z]+\d+\b")
HEADING = re.compile(r"^#{1,6}\s+(\d+[a-z]?(?:\.\d+)*)\.?\s+\S")

#: files whose ``§`` belongs to a document of someone else, with why
EXEMPT = {
    "tests/test_section_refs.py": "this file's examples of bad references",
}


@lru_cache(maxsize=None)
def page_text(page: str) -> str:
    return (ROOT / "docs" / "variants" / f"{page}.md").read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def sections(page: str) -> frozenset[str]:
    """The section numbers of the headings of docs/variants/PAGE.md."""
    out: set[str] = set()
    fence = False
    for line in page_text(page).splitlines():
        if line.startswith("```"):
            fence = not fence
        m = None if fence else HEADING.match(line)
        if m:
            out.add(m.group(1))
    return frozenset(out)


def ref_problems(text: str, default: str | None) -> list[str]:
    """Why the ``§`` numbers of one line ``text`` do not resolve (empty: they
    do).  A page named on the line applies to the ``§`` after it; before
    any, ``default`` (None: a bare ``§N`` is a problem)."""
    out = []
    names = [(m.start(), m.group(1)) for m in PAGE_NAME.finditer(text)]
    for m in SECTION.finditer(text):
        page = next((p for at, p in reversed(names) if at < m.start()), default)
        if page is None:
            out.append(f"§{m.group(1)} names no page")
        elif m.group(1) not in sections(page):
            out.append(f"docs/variants/{page}.md has no section {m.group(1)}")
    return out


def rule_problems(rule: str, page: str) -> list[str]:
    """Why a term's ``rule`` of variant ``page`` does not resolve."""
    out = ref_problems(rule, page)
    pages = {page, *PAGE_NAME.findall(rule)}
    if page in ("guilin-mahjong", "guangxi-mahjong"):
        pages.add("mahjong-common")
    for d in DECISION.findall(rule):
        if not any(re.search(rf"\b{d}\b", page_text(p)) for p in pages):
            out.append(f"{d} is stated on none of {sorted(pages)}")
    return out


def test_the_pages_are_numbered():
    assert {"1", "2", "3", "3.1", "3.2", "3.3", "3.4", "4", "4.1", "4.2", "5", "6", "7"} \
        <= sections("guilin-mahjong")
    assert {"1", "2", "3", "4", "5", "6", "7"} <= sections("guangxi-mahjong")
    assert {"1", "2", "3", "3.1", "3.2", "3.3", "4", "5", "6", "7", "8"} <= sections("guilin-zipai")
    assert {"1", "2", "3", "4", "5", "6"} <= sections("mahjong-common")


def test_the_checker_refuses_what_does_not_resolve():
    assert ref_problems("§9", "guilin-mahjong")
    assert ref_problems("§3.7", "guilin-mahjong")
    assert ref_problems("§3.1", "guangxi-mahjong")  # 广西麻将 has no 3.1
    assert ref_problems("§3", None)  # a bare § outside a variant's module
    assert ref_problems("guangxi-mahjong.md §3.2", "guilin-mahjong")  # the named page wins
    assert ref_problems("(guilin-mahjong.md §1–§8)", None)
    assert not ref_problems("(guilin-mahjong.md §1–§5)", None)
    assert not ref_problems("docs/variants/guilin-zipai.md § 3.3 step 1", None)
    assert not ref_problems("§3.3 and mahjong-common §5", "guilin-zipai")
    assert rule_problems("§4.2 case 2", "guilin-mahjong") == []
    assert rule_problems("§6, D-GX7", "guangxi-mahjong") == []
    assert rule_problems("§3, D-GL7", "guangxi-mahjong")  # a Guilin decision
    assert rule_problems("mahjong-common §2, D-M1", "guangxi-mahjong") == []
    assert rule_problems("mahjong-common §7", "guangxi-mahjong")


# ------------------------------------------------------------- the rules of the payments


def _terms(terms: tuple[Term, ...]):
    for t in terms:
        yield t
        yield from _terms(t.of)
        yield from _terms(t.basis)


SPECS = {
    "guilin-mahjong": ("guilin-mahjong", "guilin-mahjong(hubao_dealin=literal)"),
    "guangxi-mahjong": ("guangxi-mahjong", "guangxi-mahjong(liability=both, fenghu_count=1)",
                        "guangxi-mahjong(liability=hubao)"),
    "guilin-zipai": ("guilin-zipai", "guilin-zipai(bonus_mode=zi)"),
}


@pytest.mark.parametrize("variant", list(SPECS))
def test_every_rule_of_a_payment_resolves_on_the_variant_page(variant):
    from qipai.bots import play_hands
    from qipai.conformance.properties import play_checked
    from qipai.core.ruleset import load, load_cached

    tables = [play_checked(load_cached(variant), seed) for seed in range(8)]
    for spec in SPECS[variant]:
        tables += list(play_hands(load(spec), 20, seed=5))
    rules: dict[str, list[str]] = {}
    for table in tables:
        for p in table.result.payments:
            for t in _terms(p.why):
                if t.rule:
                    rules.setdefault(t.rule, rule_problems(t.rule, variant))
    assert sum("§" in r for r in rules) >= 3, rules  # the sample did reach settlements
    assert {r: why for r, why in rules.items() if why} == {}


# ------------------------------------------------------------- § in the repository's text


def default_page(rel: str) -> str | None:
    """The page a bare ``§N`` in file ``rel`` means, or None."""
    m = re.match(r"qipai/variants/(\w+)/", rel)
    if m:
        return m.group(1).replace("_", "-")
    m = re.match(r"docs/(?:variants|records/format-\d+)/([\w-]+)\.(?:md|json)$", rel)
    if m and m.group(1) in PAGES:
        return m.group(1)
    if rel.startswith("qipai/families/zipai/"):
        return "guilin-zipai"
    if rel.startswith("qipai/families/mahjong/"):
        return "mahjong-common"
    m = re.match(r"tests/(?:families|variants)/test_(guilin|guangxi|zipai)_", rel)
    if m:
        return {"guilin": "guilin-mahjong", "guangxi": "guangxi-mahjong",
                "zipai": "guilin-zipai"}[m.group(1)]
    return None


def _text_files():
    for top in ("qipai", "docs", "tests"):
        for f in sorted((ROOT / top).rglob("*")):
            rel = f.relative_to(ROOT).as_posix()
            if f.suffix in (".py", ".md", ".toml", ".json") and "/_build/" not in rel \
                    and "__pycache__" not in rel and rel not in EXEMPT:
                yield rel
    yield "README.md"


def test_every_section_cited_in_the_repository_resolves():
    problems = []
    seen = 0
    for rel in _text_files():
        default = default_page(rel)
        for n, line in enumerate((ROOT / rel).read_text(encoding="utf-8").splitlines(), 1):
            if "§" in line:
                seen += len(SECTION.findall(line))
                problems += [f"{rel}:{n}: {why}" for why in ref_problems(line, default)]
    assert seen > 150
    assert problems == []
