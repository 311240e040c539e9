"""The games sowsolve knows, by name, and how to build one from its parameters."""
from __future__ import annotations

from ..contract import Game
from ..errors import BadParameters
from .diffusion import Diffusion


def _diffusion(variant):
    def build(cols: int = 4, stones: int = 2, **extra) -> Diffusion:
        if extra:
            raise BadParameters(f"Diffusion takes --cols and --stones, not {', '.join(extra)}")
        return Diffusion(cols=cols, stones=stones, variant=variant)
    return build


GAMES = {
    "diffusion": _diffusion(1),
    "diffusion-v2": _diffusion(2),
}


def make_game(name: str, **parameters) -> Game:
    """The game `name` on the board the parameters describe; BadParameters when either is bad."""
    try:
        build = GAMES[name]
    except KeyError:
        raise BadParameters(f"unknown game {name!r}; known games: {', '.join(GAMES)}") from None
    return build(**parameters)
