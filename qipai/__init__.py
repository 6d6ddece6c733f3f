"""qipai — Chinese regional tile and card games on one table engine.

Start with :func:`qipai.core.ruleset.load` (a variant by name, with its
options), ``Ruleset.table()`` and the ``qipai`` command
(:mod:`qipai.cli`); bots that play whole hands live in :mod:`qipai.bots`.
Importing this package imports nothing else, so the command starts fast.
"""
