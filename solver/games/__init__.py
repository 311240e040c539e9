"""The games, installed as sowsolve.solver.games (from the folder solver/games/): the rules of
each game in its own package (solver/games/<game>/; notation holds what they share), and
here the games sowsolve knows, by name, and how to build one from its parameters: a game's
two lines below (the import of its class, its entry) are the only place outside its package
that names it (tests/test_seams.py keeps it so).

A game class declares what the registry and the command line need to know of it:

- `parameters_spec`: its board's parameters (solver/params.py), checked here before the class
  is built; the command line makes an option of each (--cols, --size, ...);
- `from_parameters(**values)` (optional): builds the game from the checked values when the
  constructor takes other arguments (a size "RxC" that is ranks and files);
- `family`: the game as its position text shows it (variants may write alike);
- `boards_for_text(text)` (optional): the boards, as parameter dicts, smallest first, whose
  positions the text could be by its shape alone -- how a position finds its table;
- `looks_like(text)` (optional): whether the text is written in the game's notation at all;
- `position_example`: a position text, for messages;
- `table_phrase()` (optional): the tables holding this board's positions, in a phrase.

Each registered name is one GameEntry: the class, what the name fixes of its constructor
(a variant), its title in messages and the solver that solves it.
"""
from __future__ import annotations

import pathlib
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..contract import SOLVED_BY, Game
from ..errors import BadParameters, quote
from ..params import Parameter
from ..solvers import RETROGRADE, SCORE_TIERS, SEARCH, Solver
from .diffusion import Diffusion
from .overflow import Overflow, OverflowEndgame
from .zigzag import ZigZag


def _options(parameters) -> str:
    options = [p.option if isinstance(p, Parameter) else "--" + p.replace("_", "-")
               for p in parameters]
    return ", ".join(options[:-1]) + f" and {options[-1]}" if len(options) > 1 else options[0]


@dataclass(frozen=True, eq=False)
class GameEntry:
    """One registered game: the name it is known by, the class holding its rules, the solver
    that solves it (the one place where a game and a solver meet), the constructor arguments the
    name fixes, and its title in messages (the class's family when not given)."""
    name: str
    cls: type
    solver: Solver
    fixed: Mapping[str, Any] = field(default_factory=dict)
    title: str = ""
    #: (class, solver) of the game's endgame tables where they are made otherwise than its
    #: tables (tables of every position of few discs, by tiers, where its tables
    #: hold what a search reaches from the start); None: endgame tables are its own tiers
    endgame: tuple[type, Solver] | None = None

    def __post_init__(self):
        if not self.title:
            object.__setattr__(self, "title", self.cls.family or self.name)

    @property
    def parameters(self) -> tuple[Parameter, ...]:
        return tuple(self.cls.parameters_spec)

    @property
    def family(self) -> str:
        return self.cls.family or self.title

    def defaults(self) -> dict[str, Any]:
        """The parameters of the standard board."""
        return {p.name: p.default for p in self.parameters}

    def build(self, parameters: Mapping[str, Any], endgame: bool = False) -> Game:
        """The game on the board `parameters` describe, checked against the declarations (then
        by the constructor) and against what the solver needs; BadParameters when not.  With
        `endgame`, the game as its endgame tables hold it (the same game where they are its own
        tiers)."""
        declared = {p.name: p for p in self.parameters}
        unknown = [name for name in parameters if name not in declared]
        if unknown:
            takes = _options(self.parameters) if declared else "no board options"
            raise BadParameters(f"{self.title} takes {takes}, not {_options(unknown)}")
        values = {p.name: p.parse(parameters.get(p.name, p.default), self.title)
                  for p in self.parameters}
        cls, solver = self.endgame if endgame and self.endgame else (self.cls, self.solver)
        make = getattr(cls, "from_parameters", cls)
        game = make(**self.fixed, **values)
        if game.name != self.name:
            raise ValueError(f"{cls.__name__} built for {self.name!r} calls itself "
                             f"{game.name!r}: tables would name the wrong game")
        solver.require(game)
        game.solver = solver
        return game

    # --- what position text says (the contract's declarations, solver/contract.py) ----------
    def boards_for_text(self, text: str) -> list[dict]:
        return list(self.cls.boards_for_text(text))

    def looks_like(self, text: str) -> bool:
        return bool(self.cls.looks_like(text))

    def position_example(self) -> str:
        if self.cls.position_example is not None:
            return self.cls.position_example
        game = self.build({})
        return game.format_position(game.initial())

    def table_phrase(self, game: Game) -> str:
        return game.table_phrase()


#: the registered games by name, in the order commands list them
GAMES: dict[str, GameEntry] = {}


def register(entry: GameEntry) -> GameEntry:
    """Add a game under entry.name; ValueError when the entry cannot work (a name taken or not
    a command-line word, a class that is no Game or declares no parameters, or a parameter
    whose name another game declares with another kind, since they would share one option)."""
    if entry.name in GAMES:
        raise ValueError(f"a game named {entry.name!r} is registered already")
    if not re.fullmatch(r"[a-z][a-z0-9-]*", entry.name):
        raise ValueError(f"a game's name must be lower-case letters, digits and dashes, not "
                         f"{entry.name!r}")
    if not (isinstance(entry.cls, type) and issubclass(entry.cls, Game)):
        raise ValueError(f"{entry.name}: {entry.cls!r} is not a Game class")
    spec = getattr(entry.cls, "parameters_spec", None)
    if not isinstance(spec, tuple) or not all(isinstance(p, Parameter) for p in spec):
        raise ValueError(f"{entry.name}: {entry.cls.__name__}.parameters_spec must be a tuple "
                         f"of Parameter")
    for p in spec:
        for other in GAMES.values():
            for q in other.parameters:
                if q.name == p.name and q.kind is not p.kind:
                    raise ValueError(f"{entry.name}: parameter {p.option} has another kind than "
                                     f"{other.name}'s (they share one command-line option)")
    GAMES[entry.name] = entry
    SOLVED_BY[entry.name] = entry.solver
    return entry


def unregister(name: str) -> None:
    """Remove a registered game (a test's throwaway game)."""
    GAMES.pop(name)
    SOLVED_BY.pop(name)


register(GameEntry("diffusion", Diffusion, RETROGRADE, {"variant": 1}, "Diffusion v1"))
register(GameEntry("diffusion-v2", Diffusion, RETROGRADE, {"variant": 2}, "Diffusion v2"))
register(GameEntry("overflow", Overflow, SEARCH, endgame=(OverflowEndgame, RETROGRADE)))
register(GameEntry("zigzag", ZigZag, SCORE_TIERS))


def entry_of(game: Game) -> GameEntry:
    """The registry entry a game was built from."""
    return GAMES[game.name]


def make_game(name: str, *, endgame: bool = False, **parameters) -> Game:
    """The game `name` on the board the parameters describe, checked against the game's
    declared parameters and against what its solver needs; BadParameters when either is bad.
    Parameters given as None are left at the game's defaults (the standard board).  With
    `endgame`, the game as its endgame tables (--max-stones, --max-discs) hold it."""
    parameters = {k: v for k, v in parameters.items() if v is not None}
    try:
        entry = GAMES[name]
    except (KeyError, TypeError):
        raise BadParameters(f"unknown game {quote(name)}; known games: "
                            f"{', '.join(GAMES)}") from None
    return entry.build(parameters, endgame)


def vector_file(name: str) -> pathlib.Path:
    """The vector file of a registered game (docs/vectors.md): <name>.json in the package of
    its game, beside its rules."""
    entry = GAMES[name]
    return pathlib.Path(sys.modules[entry.cls.__module__].__file__).parent / f"{name}.json"
