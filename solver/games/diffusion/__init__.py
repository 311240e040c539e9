"""Diffusion, v1 and v2: its rules and notation (game.py), its vector files (diffusion.json,
diffusion-v2.json) and its rule text (RULES.md); its kernel is cext/diffusion.pyx."""
from .game import Diffusion, Position

__all__ = ["Diffusion", "Position"]
