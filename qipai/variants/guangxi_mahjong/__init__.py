"""广西麻将 ``guangxi-mahjong`` (rules/guangxi-mahjong.md): options, patterns, scoring."""
