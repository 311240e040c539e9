"""Zig Zag: its rules and notation (game.py), its vector file (zigzag.json) and its rule text
(RULES.md); its kernel is cext/zigzag.pyx."""
from .game import ZigZag, Position

__all__ = ["ZigZag", "Position"]
