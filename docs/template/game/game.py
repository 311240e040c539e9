"""The template game's rules (RULES.md beside this file), notation and what its solver needs
of it: a complete game, small on purpose, to copy when adding one (docs/template/README.md).

The rules are written plainly in Python (legal_moves, play, outcome): the self-check
(`sowsolve check <game>`) compares the kernel's moves and children with them.  The solver is
the retrograde one (RETROGRADE.needs: DenseIndex and Compiled): tiers are the stones on the
board, every move lowers them, and a tier's positions are ranked densely by the kernel."""
from __future__ import annotations

from typing import NamedTuple

from ....cext import template as _template
from ...contract import Compiled, DenseIndex, Game
from ...errors import BadPosition, quote
from ...params import Parameter

MAX_PITS = 8
MAX_STONES_PER_PIT = 5


class Position(NamedTuple):
    board: tuple[int, ...]   # stones in each pit, left to right
    side: str                # who is to move: N or S


class Template(Game, DenseIndex, Compiled):
    """One row of `pits` pits with `stones` in each at the start."""

    name = "template"
    sides = ("N", "S")
    can_draw = False          # every move lowers the stones on the board: play ends
    family = "Template"
    position_example = "2,2,2 N"
    parameters_spec = (
        Parameter("pits", 3, range(1, MAX_PITS + 1), "pits in the row"),
        Parameter("stones", 2, range(1, MAX_STONES_PER_PIT + 1), "stones per pit at the start"),
    )
    command_examples = {"solve": ("template --pits 3 --stones 2",)}

    def __init__(self, pits: int = 3, stones: int = 2):
        self.pits, self.stones = pits, stones
        self.max_stones = pits * stones
        self._kernel = None

    def parameters(self) -> dict:
        return {"pits": self.pits, "stones": self.stones}

    def describe(self) -> str:
        return f"Template, {self.pits} pits, {self.stones} stones per pit"

    # --- the rules -------------------------------------------------------------------
    def initial(self) -> Position:
        return Position((self.stones,) * self.pits, "N")

    def parse_position(self, text: str) -> Position:
        fields = str(text).split()
        if len(fields) != 2 or fields[1] not in self.sides:
            raise BadPosition(f"{quote(text)} is no position of the template game: counts "
                              f"separated by commas, then N or S (like '{self.position_example}')")
        try:
            board = tuple(int(count) for count in fields[0].split(","))
        except ValueError:
            raise BadPosition(f"{quote(text)}: pit counts are whole numbers") from None
        if len(board) != self.pits or min(board) < 0 or sum(board) > self.max_stones:
            raise BadPosition(f"{quote(text)} is no position of {self.describe()}: {self.pits} "
                              f"pits, at most {self.max_stones} stones in all")
        return Position(board, fields[1])

    def format_position(self, position: Position) -> str:
        return ",".join(map(str, position.board)) + " " + position.side

    def legal_moves(self, position: Position) -> list[int]:
        return [pit for pit, stones in enumerate(position.board) if stones]

    def play(self, position: Position, pit: int) -> Position:
        """One stone of the pit leaves the game; the others go one by one into the pits to
        its right, and those sown past the last pit leave too."""
        board = list(position.board)
        stones, board[pit] = board[pit] - 1, 0
        for target in range(pit + 1, min(self.pits, pit + 1 + stones)):
            board[target] += 1
        return Position(tuple(board), self._other(position.side))

    def format_move(self, pit: int) -> str:
        return chr(ord("a") + pit)

    def outcome(self, position: Position) -> str | None:
        """Who cannot move has lost."""
        return None if any(position.board) else "loss"

    def _other(self, side: str) -> str:
        return "S" if side == "N" else "N"

    # --- what the retrograde solver needs: a kernel and a dense index per tier ----------
    def kernel(self):
        if self._kernel is None:
            self._kernel = _template.TemplateKernel(self.pits, self.max_stones)
        return self._kernel

    def kernel_moves(self, position: Position) -> list[tuple[int, Position]]:
        return [(pit, Position(child, self._other(position.side)))
                for pit, child in self.kernel().moves(position.board)]

    def tiers(self) -> range:
        """Stones on the board, fewest first (every move lowers them)."""
        return range(0, self.max_stones + 1)

    def tier_size(self, tier: int) -> int:
        return self.kernel().tier_size(tier)

    def tier_dependencies(self, tier: int) -> range:
        """A move may take a whole pit off the board: any lower tier."""
        return range(0, tier)

    def locate(self, position: Position) -> tuple[int, int]:
        """Both sides to move share a record: the game is the same for either."""
        return self.kernel().rank(position.board)

    def stored_positions(self, tier: int, start: int, stop: int) -> list[Position]:
        return [Position(self.kernel().unrank(tier, index), "N") for index in range(start, stop)]

    def images(self, position: Position) -> list[Position]:
        return [position, Position(position.board, self._other(position.side))]
