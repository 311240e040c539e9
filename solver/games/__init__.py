"""The games sowsolve knows, by name, and how to build one from its parameters."""
from __future__ import annotations

from ..contract import Game
from ..errors import BadParameters, quote
from .diffusion import Diffusion
from .overflow import Overflow, parse_size
from .zigzag import ZigZag


def _unexpected(game: str, takes: str, extra: dict) -> None:
    if extra:
        options = ", ".join("--" + name.replace("_", "-") for name in extra)
        raise BadParameters(f"{game} takes {takes}, not {options}")


def _diffusion(variant):
    def build(cols: int = 6, stones: int = 4, **extra) -> Diffusion:
        _unexpected("Diffusion", "--cols and --stones", extra)
        return Diffusion(cols=cols, stones=stones, variant=variant)
    return build


def _overflow(size: str = "6x6", **extra) -> Overflow:
    _unexpected("Overflow", "--size", extra)
    rows, cols = parse_size(size)
    return Overflow(rows=rows, cols=cols)


def _zigzag(cols: int = 6, stones: int = 5, **extra) -> ZigZag:
    _unexpected("Zig Zag", "--cols and --stones", extra)
    return ZigZag(cols=cols, stones=stones)


GAMES = {
    "diffusion": _diffusion(1),
    "diffusion-v2": _diffusion(2),
    "overflow": _overflow,
    "zigzag": _zigzag,
}


def make_game(name: str, **parameters) -> Game:
    """The game `name` on the board the parameters describe; BadParameters when either is bad.
    Parameters given as None are left at the game's defaults (the standard board)."""
    parameters = {k: v for k, v in parameters.items() if v is not None}
    try:
        build = GAMES[name]
    except KeyError:
        raise BadParameters(f"unknown game {quote(name)}; known games: {', '.join(GAMES)}") from None
    return build(**parameters)
