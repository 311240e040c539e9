"""The Game contract: what every game offers, so that solvers and commands never name a game.

Two layers.  The Python layer (required) is the readable reference: positions, notation, legal
moves, playing a move, the end.  The tier layer (optional, for games solved by tiers) exposes the
kernel: tiers in solving order, tier sizes, where a position is stored, and a Cython kernel
capsule that solver kernels call with integers only.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Hashable, Iterable, Sequence


class Game(ABC):
    """One game on one board (name + parameters), e.g. Diffusion v1 on 2x4 with 2 stones."""

    #: registry name, e.g. "diffusion"
    name: str
    #: how tables index positions: "dense" (a perfect index per tier: locate/stored_positions)
    #: or "keys" (canonical packed positions found by search: key/position_of_key)
    indexing: str = "dense"
    #: how it is solved: "tiers" (acyclic win/loss, cext/retrograde.pyx), "search" (cext/ttsolve.pyx)
    #: or "score-tiers" (margins with cycles inside tiers, cext/scoresolve.pyx via tier_graph)
    method: str = "tiers"
    #: what records hold: "winloss" (outcome + remoteness) or "margin" (score + remoteness)
    value_kind: str = "winloss"
    #: whether a draw can be a position's value (False where the rules rule it out: a table
    #: record saying "draw" is then refused as corrupt)
    can_draw: bool = True

    # --- Python layer ---------------------------------------------------------------
    @abstractmethod
    def parameters(self) -> dict[str, Any]:
        """What, with `name`, rebuilds this game via solver.games.make_game."""

    @abstractmethod
    def describe(self) -> str:
        """A short human description of game and board."""

    @abstractmethod
    def initial(self) -> Hashable:
        """The start position."""

    def initial_positions(self) -> list:
        """The start with each side to move, where the rules leave the first mover open."""
        return [self.initial()]

    @abstractmethod
    def parse_position(self, text: str) -> Hashable:
        """Position from text; raises BadPosition naming what is wrong."""

    @abstractmethod
    def format_position(self, position) -> str:
        ...

    @abstractmethod
    def legal_moves(self, position) -> list:
        """Moves of a position, empty when it is final."""

    @abstractmethod
    def play(self, position, move) -> Hashable:
        ...

    @abstractmethod
    def format_move(self, move) -> str:
        ...

    @abstractmethod
    def outcome(self, position) -> str | None:
        """'win'/'loss'/'draw' for the side to move when the position is final, else None."""

    def perft(self, position, depth: int) -> list[int]:
        """Move-path counts for depths 1..depth (games that have a kernel count there)."""
        counts, frontier = [], [position]
        for _ in range(depth):
            frontier = [self.play(p, m) for p in frontier for m in self.legal_moves(p)]
            counts.append(len(frontier))
        return counts

    def parse_move(self, position, text: str):
        """Move from text; the default matches the texts of the legal moves."""
        from .errors import BadMove
        for move in self.legal_moves(position):
            if self.format_move(move) == text.strip():
                return move
        raise BadMove(f"{text!r} is not a legal move in {self.format_position(position)}")

    # --- tier layer (optional) --------------------------------------------------------
    def tiers(self) -> Sequence[int]:
        """Tiers in solving order (every child of a tier lies in it or in an earlier one)."""
        raise NotImplementedError(f"{self.name} is not solved by tiers")

    def tier_size(self, tier: int) -> int:
        raise NotImplementedError

    def tier_dependencies(self, tier: int) -> Iterable[int]:
        """Earlier tiers that children of `tier` can lie in."""
        raise NotImplementedError

    def tier_graph(self, tier: int, lower: dict) -> dict:
        """Score games: the move graph of a tier for cext/scoresolve.pyx, with the values of
        its exits read from `lower` (tier -> solved records)."""
        raise NotImplementedError

    def tier_name(self, tier: int) -> str:
        return str(tier)

    def tier_stones(self, tier: int) -> int:
        """Stones (discs, seeds) on the board in every position of a tier; the default suits
        games whose tier is that count."""
        return tier

    def move_gain(self, position, move) -> int:
        """What the mover banks by the move itself (captured seeds in score games)."""
        return 0

    def kernel(self):
        """The Cython kernel object, whose capsule() feeds the solver kernels."""
        raise NotImplementedError

    def locate(self, position) -> tuple[int, int]:
        """(tier, index) of the stored position whose record is this position's record."""
        raise NotImplementedError

    def key(self, position) -> tuple[int, int]:
        """Keyed games: (tier, canonical packed position) under which the record is stored."""
        raise NotImplementedError

    def position_of_key(self, key: int):
        """Keyed games: the position a packed key stands for."""
        raise NotImplementedError

    def stored_positions(self, tier: int, start: int, stop: int) -> list:
        """Positions stored at indices start..stop-1 of a tier."""
        raise NotImplementedError

    def kernel_moves(self, position) -> list:
        """[(move, child)] as the kernel generates them (for the self-check)."""
        raise NotImplementedError

    def kernel_unmoves(self, position) -> list:
        """[(move, parent)]: kernel un-moves that lead to `position` inside its tier."""
        raise NotImplementedError

    def kernel_children(self, tier: int, index: int):
        """The solver's view: [(tier, index)] of children, or the final record."""
        return self.kernel().children(tier, index)

    #: what a table of this game holds, in a phrase (for `info`)
    storage_note: str = "every position"

    def images(self, position) -> list:
        """The positions sharing a stored record with `position` (itself first)."""
        return [position]
