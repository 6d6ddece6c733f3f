"""广西麻将 ``guangxi-mahjong`` (docs/variants/guangxi-mahjong.md): options, patterns, scoring."""
