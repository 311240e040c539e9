"""What the commands' help says of each game, read from the games' declarations (a game's
`command_notes`, `command_examples`, `sides`, `evaluation`; solver/contract.py), so that the
command line names no game and a new game's help comes with its package."""
from __future__ import annotations

import inspect
from typing import Callable, Iterator

from ..solver import games
from ..solver.contract import proves_first

#: where a command's docstring takes the games' notes and its examples
NOTES_MARK = "[game notes]"
EXAMPLES_MARK = "[examples]"


def _classes() -> Iterator[games.GameEntry]:
    """One entry per game class (variants of one class share their declarations), in the
    registry's order."""
    seen = set()
    for entry in games.GAMES.values():
        if entry.cls not in seen:
            seen.add(entry.cls)
            yield entry


def families(predicate: Callable[[games.GameEntry], bool]) -> str:
    """The games (by family) the predicate holds for, in a phrase: 'A', 'A and B'."""
    names = list(dict.fromkeys(entry.family for entry in games.GAMES.values() if predicate(entry)))
    if not names:
        return "none of the games"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def notes(key: str) -> str:
    """'<family>: <note>  <family>: <note>' of every game with a note for `key` (a command,
    or a command and option: 'query --stores')."""
    return "  ".join(f"{entry.family}: {entry.cls.command_notes[key]}" for entry in _classes()
                     if key in entry.cls.command_notes)


def examples(command: str) -> list[str]:
    """Every game's example command lines for `command`."""
    return [f"sowsolve {command} {words}" for entry in _classes()
            for words in entry.cls.command_examples.get(command, ())]


def sides() -> str:
    """'<family> A or B, <family> L or D, ...': how each game names its players."""
    return ", ".join(f"{entry.family} {' or '.join(entry.cls.sides)}" for entry in _classes()
                     if entry.cls.sides)


def searches() -> str:
    """How the analysis engine searches each game, by the game's evaluation."""
    def how(entry):
        evaluation = entry.cls.evaluation_for(**entry.fixed)
        if evaluation is None:
            return None
        if evaluation.monte_carlo is None:
            return (f"alpha-beta with a transposition table, every table of the board at its "
                    f"leaves, estimates in {evaluation.unit}")
        return ("Monte Carlo trees (MCTS-Solver), its estimates the playouts' mean result from "
                "-1 (lost) to +1 (won)")
    # one line per class, or per variant where the variants of a class search apart
    found = {}
    for entry in games.GAMES.values():
        text = how(entry)
        same_class = [e for e in games.GAMES.values() if e.cls is entry.cls]
        alike = all(how(e) == text for e in same_class)
        found.setdefault(entry.family if alike else entry.title, text)
    return "  ".join(f"{name}: {text}." for name, text in found.items() if text)


def position_example() -> str:
    return next(iter(games.GAMES.values())).position_example()


def documented(command: str, *generic: str, notes_key: str | None = None):
    """A command whose docstring marks where the games' notes ([game notes]) and the examples
    ([examples]: the games' for `command`, then `generic`, each a line after `sowsolve`) go;
    Typer reads the docstring when the command line is built."""
    def fill(function):
        text = function.__doc__
        for mark, lines in ((NOTES_MARK, [notes(notes_key or command)]),
                            (EXAMPLES_MARK, ["\b", "Examples:",
                                             *("  " + line for line in examples(command)),
                                             *(f"  sowsolve {line}" for line in generic)])):
            if mark not in text:
                continue
            at = text.index(mark)
            indent = text[text.rindex("\n", 0, at) + 1:at]
            text = text.replace(mark, ("\n" + indent).join(lines), 1)
        text = text.replace("[provers]", families(lambda entry: entry.solver.proves))
        text = text.replace("[engine-provers]", families(lambda entry: proves_first(entry.cls, by_default=True)))
        text = text.replace("[searches]", searches())
        function.__doc__ = inspect.cleandoc(text)
        return function
    return fill
