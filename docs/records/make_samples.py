"""Write the sample records of the current format from those of format 1.

Each format-1 sample (one hand of each variant) is replayed on today's
engine and its record written again, so the samples of every format are the
same hands.  Run from the repository's root::

    uv run python docs/records/make_samples.py

and check the result with ``uv run pytest tests/test_docs.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from qipai.core.records import FORMAT_VERSION, load_record, record_of, replay, replay_check

HERE = Path(__file__).resolve().parent


def main() -> None:
    out = HERE / f"format-{FORMAT_VERSION}"
    out.mkdir(exist_ok=True)
    for path in sorted((HERE / "format-1").glob("*.json")):
        old = load_record(path)
        assert replay_check(old) is None, f"{path.name} no longer replays"
        record = record_of(replay(old))
        text = json.dumps(msgspec.to_builtins(record), indent=1, ensure_ascii=False) + "\n"
        (out / path.name).write_text(text, encoding="utf-8")
        print(f"wrote {out.name}/{path.name}")


if __name__ == "__main__":
    main()
