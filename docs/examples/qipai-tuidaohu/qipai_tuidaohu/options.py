"""The options of 推倒胡: a msgspec Struct with defaults.

A host's dict (``qipai play "tuidaohu(stake=2)"``) is converted into it, so an
unknown name or a bad value fails with a message naming it.
"""

from __future__ import annotations

from typing import Annotated

import msgspec


# start-options
class TuidaohuOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """House-rule switches of 推倒胡; each field's metadata says what it
    means and where the rule comes from (``qipai variants tuidaohu``)."""

    stake: Annotated[int, msgspec.Meta(
        ge=1,
        description="What each payer pays for a plain win (子), before doubling.",
        extra={"source": "write-a-variant.md, Options"},
    )] = 1
    qidui: Annotated[bool, msgspec.Meta(
        description="七对 (seven pairs) is a winning shape.",
        extra={"source": "write-a-variant.md, Options"},
    )] = True
# end-options
