"""The options of 推倒胡: a msgspec Struct with defaults.

A host's dict (``qipai play "tuidaohu(stake=2)"``) is converted into it, so an
unknown name or a bad value fails with a message naming it.
"""

from __future__ import annotations

from typing import Annotated

import msgspec


# start-options
class TuidaohuOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """House-rule switches of 推倒胡.

    Attributes:
        stake: what each payer pays for a plain win (子), before doubling.
        qidui: 七对 (seven pairs) is a winning shape.
    """

    stake: Annotated[int, msgspec.Meta(ge=1)] = 1
    qidui: bool = True
# end-options
