"""The template game: a whole game to copy (docs/template/README.md)."""
from .game import Position, Template

__all__ = ["Position", "Template"]
