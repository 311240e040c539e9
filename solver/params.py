"""The parameters of a game's board, declared by the game: name, kind, default, allowed values
and help.  The registry (solver/games/__init__.py) checks every value against them before a
game is built, and the command line makes one option per declared name (--cols, --size, ...),
its help composed from the declarations of every game that takes it."""
from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from typing import Any, Sequence

from .errors import BadParameters, quote


def _shown(value) -> str:
    """A bad value as a message quotes it: a short number plainly, anything else by a prefix."""
    if isinstance(value, int) and not isinstance(value, bool) and len(str(value)) <= 20:
        return str(value)
    return quote(value, 20)


def _numbers(values: Sequence[int]) -> str:
    """Allowed values one by one: '2, 4, 6 or 8'."""
    shown = [str(v) for v in values]
    return ", ".join(shown[:-1]) + f" or {shown[-1]}" if len(shown) > 1 else shown[0]


def describe_values(values: Sequence[int], whole: str = "a whole number ") -> str:
    """What a sentence says a value must be: 'a whole number from 2 to 8', 'an even number
    from 2 to 8', 'one of 1, 3 or 9' (`whole` is the noun before the first)."""
    if isinstance(values, range) and values.step == 1:
        return f"{whole}from {values[0]} to {values[-1]}"
    if isinstance(values, range) and values.step == 2:
        parity = "an even" if values[0] % 2 == 0 else "an odd"
        return f"{parity} number from {values[0]} to {values[-1]}"
    return f"one of {_numbers(values)}"


def brief_values(values: Sequence[int]) -> str:
    """The allowed values as help shows them: '2-8', '2, 4, 6 or 8'."""
    if isinstance(values, range) and values.step == 1 and len(values) > 2:
        return f"{values[0]}-{values[-1]}"
    return _numbers(values)


class Kind:
    """How the values of a parameter are written and checked: what the command line reads
    (`cli_type`), how a value is turned into what the game's constructor takes (`parse`, a
    ValueError when it is not of the kind), and the whole numbers in it that must lie among the
    parameter's allowed values (`numbers`)."""
    cli_type: type = str

    def parse(self, value) -> Any:
        raise NotImplementedError

    def numbers(self, parsed) -> tuple[int, ...]:
        raise NotImplementedError

    def write(self, number: int) -> Any:
        """A value of the kind whose every number is `number` (what an edge case looks like)."""
        raise NotImplementedError

    def describe(self, values: Sequence[int], default) -> str:
        """What a value must be, for a sentence: '--cols ... must be <this>, not 9'."""
        raise NotImplementedError

    def brief(self, values: Sequence[int]) -> str:
        """The allowed values, for the help of an option."""
        raise NotImplementedError


class WholeNumber(Kind):
    """A whole number (a Python int, never a bool): --cols 6."""
    cli_type = int

    def parse(self, value) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("not a whole number")
        return value

    def numbers(self, parsed: int) -> tuple[int, ...]:
        return (parsed,)

    def write(self, number: int) -> int:
        return number

    def describe(self, values, default) -> str:
        return describe_values(values)

    def brief(self, values) -> str:
        return brief_values(values)


class GridSize(Kind):
    """Ranks x files as text, '4x4' (either x or X, spaces allowed around the numbers); the
    game's constructor gets (ranks, files), each of which must be an allowed value."""
    _PATTERN = re.compile(r" *([0-9]{1,9}) *[xX] *([0-9]{1,9}) *", re.ASCII)

    def parse(self, value) -> tuple[int, int]:
        match = self._PATTERN.fullmatch(value) if isinstance(value, str) else None
        if not match:
            raise ValueError("not ranks x files")
        return int(match.group(1)), int(match.group(2))

    def numbers(self, parsed: tuple[int, int]) -> tuple[int, ...]:
        return parsed

    def write(self, number: int) -> str:
        return f"{number}x{number}"

    def describe(self, values, default) -> str:
        return f"ranks x files like {default}, each {describe_values(values, whole='')}"

    def brief(self, values) -> str:
        return f"each {brief_values(values)}"


WHOLE = WholeNumber()
GRID = GridSize()


@dataclass(frozen=True)
class Parameter:
    """One parameter of a game's board, as the game declares it.

    `name` is the keyword of make_game and of the game's constructor, and the command line's
    option (--name, underscores as dashes); `default` is its value on the standard board, written
    as a user writes it (6, "6x6"); `values` are the whole numbers allowed (a range; for a grid
    size, each of ranks and files); `help` says what it counts, for the option's help."""
    name: str
    default: Any
    values: Sequence[int]
    help: str
    kind: Kind = WHOLE

    def __post_init__(self):
        name = self.name
        if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
            raise ValueError(f"a parameter's name must be a Python name, not {self.name!r}")
        if len(self.values) == 0:
            raise ValueError(f"parameter {self.name} allows no value")
        self.parse(self.default, "its game")       # a default that is refused is a typo

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")

    def parse(self, value, game: str) -> Any:
        """The value as the game's constructor takes it; BadParameters in one sentence naming
        the option and the game when it is not of the kind or not among the allowed values."""
        try:
            parsed = self.kind.parse(value)
        except ValueError:
            parsed = None
        if parsed is None or not all(n in self.values for n in self.kind.numbers(parsed)):
            raise BadParameters(f"{self.option} of {game} must be "
                                f"{self.kind.describe(self.values, self.default)}, "
                                f"not {_shown(value)}")
        return parsed

    def help_text(self) -> str:
        """What the option means for one game: 'pits per row (2-8; standard: 6)'."""
        return f"{self.help} ({self.kind.brief(self.values)}; standard: {self.default})"


#: the units of a size of memory, in bytes
MEMORY_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str, option: str = "--memory", allow_zero: bool = True) -> int:
    """A size of memory as the commands and the engine protocol take it: '512M', '8G', '1.5G'
    or a number of bytes (units of 1024); BadParameters naming `option` otherwise."""
    found = re.fullmatch(r"\s*(\d{1,15}(?:\.\d{1,6})?)\s*([KMGT]?)(?:i?B)?\s*", text or "",
                         re.IGNORECASE | re.ASCII)
    if not found:
        raise BadParameters(f"{option} must be a size such as 512M or 8G, not {quote(text, 20)}")
    size = int(float(found[1]) * MEMORY_UNITS[found[2].upper()])
    if size > 1 << 44:
        raise BadParameters(f"{option} {_shown(text)} is more than any machine here has")
    if size == 0 and not allow_zero:
        raise BadParameters(f"{option} must be more than 0, not {quote(text, 20)}")
    return size
