"""The board options of the commands (--cols, --stones, --size, ...): one option per parameter
name that a registered game declares (solver/params.py), its help composed from the
declarations of every game that takes it.  A game with a parameter of its own adds its option
to every command here, without an edit of the command line."""
from __future__ import annotations

import inspect
import re
from typing import Any, Callable, Optional

import typer

from ..solver import games
from ..solver.params import Parameter


#: the default of a command's `board` parameter, which board_options replaces by the options
BOARD: dict = {}


def declared() -> dict[str, list[tuple[games.GameEntry, Parameter]]]:
    """Each parameter name, in the order the registry first declares it, with the games (and
    their declarations) that take it."""
    found: dict[str, list[tuple[games.GameEntry, Parameter]]] = {}
    for entry in games.GAMES.values():
        for parameter in entry.parameters:
            found.setdefault(parameter.name, []).append((entry, parameter))
    return found


def option_help(takers: list[tuple[games.GameEntry, Parameter]]) -> str:
    """'<family>: <help> (<values>; standard: <default>); <family>: ...' -- the games named by
    family, or by title where a family's games differ."""
    texts: dict[str, set[str]] = {}
    for entry, parameter in takers:
        texts.setdefault(entry.family, set()).add(parameter.help_text())
    groups: dict[str, list[str]] = {}
    for entry, parameter in takers:
        label = entry.family if len(texts[entry.family]) == 1 else entry.title
        labels = groups.setdefault(parameter.help_text(), [])
        if label not in labels:
            labels.append(label)
    return "; ".join(f"{', '.join(labels)}: {text}" for text, labels in groups.items()) + "."


def whole_number(text) -> int:
    """A whole number as typed: ASCII digits with an optional sign, nothing else (no '4.0',
    '2_2', full-width or other scripts' digits, which int() would take)."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    if not re.fullmatch(r"[-+]?[0-9]{1,30}", str(text), flags=re.ASCII):
        raise typer.BadParameter("expected a whole number")
    return int(text)


def _option(name: str, takers) -> inspect.Parameter:
    parameter = takers[0][1]
    strict = {"parser": whole_number, "metavar": "INTEGER"} if parameter.kind.cli_type is int else {}
    info = typer.Option(None, parameter.option, help=option_help(takers), show_default=False,
                        **strict)
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=info,
                             annotation=Optional[parameter.kind.cli_type])


class BoardCommand:
    """A command whose `board: dict` parameter stands for the board options: its signature, as
    Typer reads it, has one option per declared parameter name in place of `board`, and a call
    gets the options given (not left out) as the dict `board`.  The signature is made whenever
    Typer reads it, so a game registered before the command line is read brings its options."""

    def __init__(self, command: Callable[..., Any]):
        self._command = command
        self._own = inspect.signature(command, eval_str=True)
        if "board" not in self._own.parameters:
            raise TypeError(f"{command.__name__} has no `board` parameter")
        self.__name__ = command.__name__
        self.__qualname__ = command.__qualname__
        self.__module__ = command.__module__
        self.__doc__ = command.__doc__

    @property
    def __signature__(self) -> inspect.Signature:
        params = []
        for p in self._own.parameters.values():
            if p.name != "board":
                params.append(p)
                continue
            for name, takers in declared().items():
                if name in self._own.parameters:
                    raise TypeError(f"the board parameter {takers[0][1].option} of "
                                    f"{takers[0][0].name} is also an option of "
                                    f"`sowsolve {self.__name__}`")
                params.append(_option(name, takers))
        # keyword-only options may follow the command's own ones in any order
        params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params]
        return self._own.replace(parameters=params)

    @property
    def __annotations__(self) -> dict[str, Any]:
        return {p.name: p.annotation for p in self.__signature__.parameters.values()}

    def __call__(self, **options):
        board = {}
        for name in declared():
            value = options.pop(name, None)
            if value is not None:
                board[name] = value
        return self._command(board=board, **options)


def board_options(command: Callable[..., Any]) -> BoardCommand:
    """Decorator (below @app.command): the command's `board` parameter becomes the board
    options."""
    return BoardCommand(command)
