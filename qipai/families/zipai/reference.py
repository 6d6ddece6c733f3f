"""Plain brute-force twins of :mod:`qipai.families.zipai.groups`.

The test oracle for the fast search: written to be obviously right, not
fast.  :func:`ref_best_split` lists the cards, tries **every** partition of
them into groups of 2, 3 or 4 cards, keeps those the rules allow and scores
each one from scratch.  Use it on small holdings only (a dozen cards).

Rule source: docs/variants/guilin-zipai.md, "Cards and groups", "Winning"
(D-ZP5, D-ZP9), "胡数".  It
shares no code with the fast module except the :class:`Split` container.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from qipai.core.errors import BadCards
from qipai.core.model import Meld
from qipai.families.zipai.groups import Split

SMALL, BIG = "x", "d"


def _case(k: int) -> str:
    return BIG if k >= 10 else SMALL


def _num(k: int) -> int:
    return k % 10 + 1


def ref_valid_group(cards: Sequence[int]) -> bool:
    """The §1 list of 3-card groups, spelled out case by case."""
    if len(cards) != 3:
        return False
    a, b, c = sorted(cards)
    if a == b == c:
        return True
    nums = sorted([_num(a), _num(b), _num(c)])
    cases = {_case(a), _case(b), _case(c)}
    if nums[0] == nums[1] == nums[2]:
        return len(cases) == 2  # 大大小 / 小小大 (identical excluded above)
    if len(cases) != 1:
        return False
    if nums == [2, 7, 10]:
        return True
    return nums[1] == nums[0] + 1 and nums[2] == nums[1] + 1


def _run_value(cards: Sequence[int]) -> int:
    a, b, c = sorted(cards)
    nums = [_num(a), _num(b), _num(c)]
    if _case(a) == _case(b) == _case(c) and nums in ([1, 2, 3], [2, 7, 10]):
        return 6 if _case(a) == BIG else 3
    return 0


def _possible_block(block: tuple[int, ...]) -> bool:
    """A block that some rule allows: 2 or 4 identical, or a valid group of 3."""
    if len(block) == 3:
        return ref_valid_group(block)
    return block[0] == block[-1]


def _partitions(cards: list[int]):
    """Every partition of the sorted list ``cards`` into possible blocks of
    2–4 cards (each block a sorted tuple); equal blocks chosen for the same
    first card are tried once (they leave the same cards)."""
    if not cards:
        yield []
        return
    first, rest = cards[0], cards[1:]
    n = len(rest)
    seen = set()
    for size in (1, 2, 3):
        for picks in combinations(range(n), size):
            block = tuple([first] + [rest[i] for i in picks])
            if block in seen or not _possible_block(block):
                continue
            seen.add(block)
            left = [rest[i] for i in range(n) if i not in picks]
            for tail in _partitions(left):
                yield [block] + tail


def ref_best_split(
    counts: Sequence[int], card: int | None = None, self_drawn: bool = True
) -> Split | None:
    """Same contract as :func:`qipai.families.zipai.groups.best_split`.

    Every partition of hand + card into blocks is scored by these rules:

    * blocks of 2: identical (the pair), at most one;
    * blocks of 3: a valid group; three identical of kind k are a 坎 (6/3)
      when the hand held three k, else (a pair + the card) a 碰 (3/1) or, on
      one's own card, a 坎;
    * blocks of 4: identical, only a 坎 of the hand + the card: 开招 (9/6),
      or on one's own card 扫穿 (12/9);
    * a 坎 of the hand lies whole in one identical block;
    * one's own card on a pair or a 坎 lies in one identical block with it
      (compulsory 扫 / 扫穿).
    """
    if len(counts) != 20:
        raise BadCards("20 counts")
    if any(n >= 4 or n < 0 for n in counts):
        raise BadCards("a count is 0..3")
    cards = [k for k in range(20) for _ in range(counts[k])]
    if card is not None:
        cards.append(card)
        cards.sort()
    best: Split | None = None
    for part in _partitions(cards):
        scored = _score(part, counts, card, self_drawn)
        if scored is not None and (best is None or scored.hu > best.hu):
            best = scored
    return best


def every_split(
    counts: Sequence[int], card: int | None = None, self_drawn: bool = True
) -> list[Split]:
    """Every split :func:`ref_best_split` accepts, most 胡数 first (ties in
    the order found): what a hand calculator lists beside the split paid.
    Same arguments and errors as :func:`ref_best_split`; brute force, meant
    for a hand that is known to split (a winning one: well under a second).
    """
    if len(counts) != 20:
        raise BadCards("20 counts")
    if any(n >= 4 or n < 0 for n in counts):
        raise BadCards("a count is 0..3")
    cards = sorted([k for k in range(20) for _ in range(counts[k])]
                   + ([card] if card is not None else []))
    found = [s for part in _partitions(cards)
             if (s := _score(part, counts, card, self_drawn)) is not None]
    return sorted(found, key=lambda s: -s.hu)


def _score(part, counts, card, self_drawn) -> Split | None:
    pairs = [b for b in part if len(b) == 2]
    if len(pairs) > 1 or any(b[0] != b[1] for b in pairs):
        return None
    groups = []
    hu = 0
    for b in part:
        if len(b) == 2:
            continue
        identical = b[0] == b[-1]
        k = b[0]
        big = k >= 10
        if len(b) == 4:
            if not (identical and counts[k] == 3 and card == k):
                return None
            if self_drawn:
                groups.append(("saochuan", b))
                hu += 12 if big else 9
            else:
                groups.append(("kaizhao", b))
                hu += 9 if big else 6
        elif identical:
            if counts[k] == 3 or self_drawn:
                groups.append(("kan", b))
                hu += 6 if big else 3
            else:
                groups.append(("peng", b))
                hu += 3 if big else 1
        else:
            if not ref_valid_group(b):
                return None
            groups.append(("bi", b))
            hu += _run_value(b)
    # 坎 never split
    for k in range(20):
        if counts[k] == 3 and not any(b[0] == b[-1] == k and len(b) >= 3 for b in part):
            return None
    # one's own card on a pair / 坎 stays with it
    if card is not None and self_drawn and counts[card] >= 2:
        whole = counts[card] + 1
        if not any(b[0] == b[-1] == card and len(b) == whole for b in part):
            return None
    groups.sort(key=lambda g: g[1])
    return Split(tuple(groups), pairs[0] if pairs else None, hu)


def ref_meld_hu(meld: Meld) -> int:
    """§5 from scratch for a table meld (valid cards assumed)."""
    k = meld.cards[0]
    big = k >= 10
    table = {
        "peng": (3, 1),
        "sao": (6, 3),
        "guosao": (6, 3),
        "kaizhao": (9, 6),
        "saochuan": (12, 9),
    }
    if meld.kind in table:
        return table[meld.kind][0 if big else 1]
    return _run_value(meld.cards)


def ref_waits(
    counts: Sequence[int], melds: Sequence[Meld] = (), min_hu: int = 10, drawn: bool = False
) -> list[int]:
    """Same contract as :func:`qipai.families.zipai.groups.waits`: try each kind."""
    visible = list(counts)
    for m in melds:
        for k in m.cards:
            visible[k] += 1
    base = sum(ref_meld_hu(m) for m in melds)
    out = []
    for c in range(20):
        if visible[c] >= 4:
            continue
        ok = False
        s = ref_best_split(counts, c, self_drawn=False)
        if s is not None and s.hu + base >= min_hu:
            ok = True
        for m in melds:
            if m.cards[0] == c and (m.kind in ("sao", "guosao") or (drawn and m.kind == "peng")):
                alone = ref_best_split(counts, None, self_drawn=False)
                extra = (9 if c >= 10 else 6) - ref_meld_hu(m)
                if alone is not None and alone.hu + base + extra >= min_hu:
                    ok = True
        if ok:
            out.append(c)
    return out
