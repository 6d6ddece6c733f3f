"""推倒胡 (push-down mahjong), a qipai variant plugin (see ``plugin``)."""
