"""The zipai family: cards, groups and 胡数, the flow.

Its one variant is 桂林字牌: a bare ``§N`` in this package is a section of
docs/variants/guilin-zipai.md.
"""
