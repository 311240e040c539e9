"""Overflow: its rules and notation (game.py), its vector file (overflow.json) and its rule
text (RULES.md); its kernel is cext/overflow.pyx."""
from .game import Overflow, OverflowEndgame, Position

__all__ = ["Overflow", "OverflowEndgame", "Position"]
