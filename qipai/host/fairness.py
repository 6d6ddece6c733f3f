"""The commitment of a hosted deal: :mod:`qipai.core.fair` when present.

Until that module is in the library, the same construction is made here:
``hex(SHA-256(deal_bytes ‖ salt))``, ``deal_bytes`` the ASCII JSON
``{"dealer":D,"hands":[[…],…],"wall":[…],"shown":[…]}`` without spaces,
the salt 32 bytes from the OS's CSPRNG.
"""

from __future__ import annotations

try:
    from qipai.core.fair import commitment, new_salt
except ImportError:  # pragma: no cover - the library's module not there yet
    import hashlib
    import secrets

    from qipai.core.model import Deal

    def _ints(values: object) -> str:
        return ",".join(str(int(v)) for v in values)  # type: ignore[attr-defined]

    def commitment(deal: Deal, salt: bytes) -> str:
        hands = ",".join(f"[{_ints(h)}]" for h in deal.hands)
        body = (f'{{"dealer":{int(deal.dealer)},"hands":[{hands}],'
                f'"wall":[{_ints(deal.wall)}],"shown":[{_ints(deal.shown)}]}}').encode("ascii")
        return hashlib.sha256(body + bytes(salt)).hexdigest()

    def new_salt() -> bytes:
        return secrets.token_bytes(32)

__all__ = ["commitment", "new_salt"]
