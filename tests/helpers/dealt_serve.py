"""``python dealt_serve.py DEALS.json serve …``: the real ``qipai serve`` whose
first hand at each new table is dealt from a given deal (tests only).

The view-leak tests need two tables whose deals differ only in cards one
seat cannot see.  A production server has no way to be handed a deal (its
deals come from the OS CSPRNG, or from ``--seed`` for demos), and this test
launcher adds none to it: it replaces, in its own process only,
``HostedTable.new_hand`` for hand 0 so that the k-th table created is dealt
``DEALS[k]`` (a JSON list of :class:`qipai.core.model.Deal`); later hands,
and everything else — HTTP, WebSocket, database, commitment — are the
server's own code, run through the ``qipai`` command line.
"""

from __future__ import annotations

import sys

import msgspec


def main() -> None:
    from qipai.cli import main as qipai_main
    from qipai.core.model import Deal
    from qipai.host import match as game

    with open(sys.argv[1], "rb") as f:
        deals = msgspec.json.decode(f.read(), type=list[Deal])
    real_new_hand = game.HostedTable.new_hand

    def new_hand(self, index, dealer):  # type: ignore[no-untyped-def]
        if index == 0 and deals:
            table = game.Table(self.ruleset, deal=deals.pop(0), ask_all=True)
            salt = game.new_salt()
            return table, salt, game.commitment(table.state.deal, salt), None
        return real_new_hand(self, index, dealer)

    game.HostedTable.new_hand = new_hand
    sys.argv = ["qipai", *sys.argv[2:]]
    qipai_main()


if __name__ == "__main__":
    main()
