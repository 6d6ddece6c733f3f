"""``python -m qipai.cli …`` — the same as the ``qipai`` command."""

from qipai.cli import main

if __name__ == "__main__":  # pragma: no cover
    main()
