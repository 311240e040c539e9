"""The Game contract: what every game offers, so that solvers and commands never name a game.

Two layers.  The Python layer (required) is the readable reference: positions, notation, legal
moves, playing a move, the end.  The tier layer (optional, for games solved by tiers) exposes the
kernel: tiers in solving order, tier sizes, where a position is stored, and a Cython kernel
capsule that solver kernels call with integers only.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Hashable, Iterable, Mapping, Sequence

import numpy as np

from .errors import BadParameters
from .values import WIN_LOSS, ValueKind

if TYPE_CHECKING:
    from .drawing import Picture

#: the solver (solver/solvers.py) of each registered game name: the registry
#: (solver/games/__init__.py) fills it as it registers a game, and a game built by its class
#: directly reads its solver here -- so this module imports neither the registry nor a solver
SOLVED_BY: dict[str, Any] = {}


@dataclass(frozen=True)
class Rates:
    """What solving a game costs, measured on the reference machine (2-core AMD EPYC, 24 GiB),
    for the estimate `solve` prints before it starts (solver/estimate.py).  A game without
    measurements gets these defaults, which are guesses."""
    positions_per_second: float = 1e6
    #: threads the rate was measured on (tier solvers scale it up to the cores)
    threads: int = 1
    #: wall time over solver time (compression and writing)
    wall_over_kernel: float = 1.0
    table_bytes_per_position: float = 1.0
    #: memory per position: of the tier being solved (score tiers: its record and working bytes,
    #: the lower tiers' records counted apart), or of every position (a search's transposition
    #: table)
    memory_bytes_per_position: float = 2.0


@dataclass(frozen=True)
class Evaluation:
    """How the analysis engine scores a position no table or search end settles, declared by
    each game beside its rules: the features its play kernel computes (from the side to move)
    and their integer weights.  The score is their weighted sum; 100 points are one `unit`
    (margin games: one seed of margin, so an estimate reads like the exact margins)."""
    features: tuple[str, ...]
    weights: tuple[int, ...]
    unit: str
    #: how the weights were set (bench/tune_evaluation.py records the run)
    tuned: str = "by hand"
    #: the engine's search: None for alpha-beta over the weighted features; a number for a
    #: Monte Carlo tree search instead (MCTS-Solver: playouts that take a move winning at once
    #: and avoid one losing at once, proofs climbing the tree), the number its UCB1 constant.
    #: Its estimates are the playouts' mean result, -1 (lost) to +1 (won), not `unit`s.  For
    #: win/loss games where the features measured weaker than playouts (docs/analysis.md).
    monte_carlo: float | None = None
    #: where the game is Provable: the share of each search's budget the proof search takes
    #: first (0: none); None: the engine's default (tables/analysis.py PROOF_SHARE)
    proof_share: float | None = None


class Game(ABC):
    """One game on one board (name + parameters).

    A game never names a solver: the registry (solver/games/__init__.py) pairs each game with
    the solver that solves it, and building a game there checks that it offers every hook that
    solver needs (`Solver.needs`), so a missing hook is one sentence up front, not a traceback
    in the middle of a solve.  `solver` is set by that registry on every game it builds."""

    #: its name in the registry (solver/games/__init__.py)
    name: str
    #: what records hold (solver/values.py: WIN_LOSS or MARGIN); every reader of a record asks it
    value_kind: ValueKind = WIN_LOSS
    #: what the game calls the pieces its tiers count, for messages ("stones", "discs", "seeds")
    pieces: str = "stones"
    #: whether a draw can be a position's value (False where the rules rule it out: a table
    #: record saying "draw" is then refused as corrupt)
    can_draw: bool = True
    @property
    def solver(self):
        """The solver (a Solver of solver/solvers.py) this game was built for (set by the
        registry's make_game); a game built by its class directly gets the solver its name is
        registered with."""
        solver = self.__dict__.get("_solver")
        if solver is None:
            try:
                solver = SOLVED_BY[self.name]
            except KeyError:
                raise BadParameters(f"{self.describe()} is not a registered game: no solver "
                                    f"is known for it") from None
        return solver

    @solver.setter
    def solver(self, solver) -> None:
        self.__dict__["_solver"] = solver
    #: measured cost of solving it (for estimates)
    rates: Rates = Rates()

    # --- declarations (read by the registry and the command line) ------------------------
    #: the board's parameters (solver/params.py): checked before the game is built, one
    #: command-line option each
    parameters_spec: tuple = ()
    #: the game as its position text shows it (one family for variants written alike); None:
    #: the name
    family: str | None = None
    #: a position text, for messages (None: the start of the standard board)
    position_example: str | None = None
    #: what the commands do differently for this game, by command ("solve") or option ("query
    #: --stores"): a sentence for that help text, which lists each game's (cli/gamehelp.py), so
    #: the command line itself names no game
    command_notes: Mapping[str, str] = {}
    #: examples of commands, by command: the words after `sowsolve <command> `
    command_examples: Mapping[str, tuple[str, ...]] = {}

    @classmethod
    def boards_for_text(cls, text: str) -> list[dict]:
        """The boards (parameter dicts, smallest first) whose positions `text` could be by its
        shape alone: how a position finds its table."""
        return []

    @classmethod
    def looks_like(cls, text: str) -> bool:
        """Whether `text` is written in this game's notation at all."""
        return bool(cls.boards_for_text(text))

    def table_phrase(self) -> str:
        """The tables holding this board's positions, in a phrase."""
        return f"a table of {self.describe()}"

    # --- Python layer ---------------------------------------------------------------
    @abstractmethod
    def parameters(self) -> dict[str, Any]:
        """What, with `name`, rebuilds this game via solver.games.make_game."""

    def shares_tables_with(self, other: "Game") -> bool:
        """Whether a table of `other`'s board holds positions of this board, each at the index
        this board's own table gives it (and so the same value): true of the same game on the
        same board, and of boards that differ only where games begin (the stones a pit at the
        start), which a game says by overriding this."""
        return other.name == self.name and other.parameters() == self.parameters()

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

    #: the players' names as position text writes the side to move (first mover first)
    sides: tuple[str, ...] = ()

    def side_to_move(self, position) -> str:
        """Who is to move at `position`, as `sides` names the players."""
        return position.side

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
        from .games.notation import illegal_move
        raise illegal_move(self, position, text)

    # --- play layer (optional: the analysis engine, tables/analysis.py) ------------------
    #: the engine's evaluation (None: the game offers no play layer)
    evaluation: Evaluation | None = None

    @classmethod
    def evaluation_for(cls, **fixed) -> Evaluation | None:
        """The evaluation of the variant the registry's fixed arguments name (a class whose
        variants are evaluated apart overrides this); the default: the class's own."""
        return cls.evaluation

    def check_position(self, position) -> None:
        """BadPosition for a position its text allows that cannot arise in a game of this board
        (tables neither store nor answer it); the default: every parsed position can."""

    def earlier_tiers(self, max_stones: int | None) -> list[list[int]]:
        """Tier lists tables of an earlier sowsolve held for this board (with that stone
        limit), which this one no longer reads: they are refused with the command that
        rebuilds them rather than called corrupt."""
        return []

    def tier_name(self, tier: int) -> str:
        return str(tier)

    def tier_stones(self, tier: int) -> int:
        """Stones (discs, seeds) on the board in every position of a tier; the default suits
        games whose tier is that count."""
        return tier

    def move_gain(self, position, move) -> int:
        """What the mover banks by the move itself (captured seeds in score games)."""
        return 0

    def reachable_positions(self) -> int | None:
        """Keyed games: how many positions a solve from the start reaches, where measured."""
        return None

    def positions_bound(self) -> int | None:
        """Keyed games: at most how many positions the board has at all (None: not known)."""
        return None

    def beyond_measured(self) -> str | None:
        """Keyed games: why this board reaches more positions than any solve can hold, in a
        phrase ("boards beyond 16 cells reach billions"), or None where that is not known."""
        return None

    def final_result(self, position, stores: str, margin: int) -> dict:
        """Score games: the end of the game from the stores already filled (text as the user
        typed it) and the margin the side to move secures from `position` on, as {"side",
        "final_margin", "result": win/loss/tie, "given": {side: stores given}, "unit": (one,
        many) of what is counted, "final_stores": {side: count} where the end is known}."""
        raise BadParameters(f"--stores applies to games that keep score in stores; "
                            f"{self.describe()} has none")

    #: what a table of this game holds, in a phrase (for `info`)
    storage_note: str = "every position"

    def images(self, position) -> list:
        """The positions sharing a stored record with `position` (itself first)."""
        return [position]

    def orientations(self, position) -> list:
        """Every position a stored record stands for, as a player would type them (itself
        first): its images and, where a table keeps one position per class of board
        symmetries, every distinct symmetric image (`export --every-orientation`)."""
        return self.images(position)


# --- capabilities: what a solver (or a command) requires of a game, by type --------------------

class Capability(ABC):
    """A group of hooks beyond the rules that a solver requires of a game by type: a game
    offers one by deriving from it and filling its hooks, a solver lists what it needs
    (`Solver.needs`, `Indexing.needs`) and is checked against the game up front.  `purpose`
    says what the capability is for (the sentence of a game that lacks it)."""
    purpose: str = ""


class Compiled(Capability):
    """A compiled kernel (cext/<game>.pyx) the solver kernels call."""
    purpose = "a compiled kernel"

    @abstractmethod
    def kernel(self):
        """The Cython kernel object, whose capsule() feeds the solver kernels."""

    @abstractmethod
    def kernel_moves(self, position) -> list:
        """[(move, child)] as the kernel generates them (for the self-check)."""

    def kernel_children(self, tier: int, index: int):
        """The solver's view: [(tier, index)] of children, or the final record."""
        return self.kernel().children(tier, index)


class Tiered(Capability):
    """Tiers in solving order, each closed under play with the tiers before it."""
    purpose = "tiers in solving order"

    @abstractmethod
    def tiers(self) -> Sequence[int]:
        """Tiers in solving order (every child of a tier lies in it or in an earlier one)."""

    @abstractmethod
    def tier_size(self, tier: int) -> int: ...

    @abstractmethod
    def tier_dependencies(self, tier: int) -> Iterable[int]:
        """Earlier tiers that children of `tier` can lie in."""


class DenseIndex(Tiered):
    """A perfect index of the positions of each tier (tables indexed densely)."""
    purpose = "a dense index of positions"

    @abstractmethod
    def locate(self, position) -> tuple[int, int]:
        """(tier, index) of the stored position whose record is this position's record."""

    @abstractmethod
    def stored_positions(self, tier: int, start: int, stop: int) -> list:
        """Positions stored at indices start..stop-1 of a tier."""


class Unmoves(Capability):
    """Un-moves inside a tier in the kernel (the self-check compares them with the moves)."""
    purpose = "un-moves inside a tier"

    @abstractmethod
    def kernel_unmoves(self, position) -> list:
        """[(move, parent)]: kernel un-moves that lead to `position` inside its tier."""


class KeyedIndex(Capability):
    """Canonical packed positions as keys (tables of the positions a search reached)."""
    purpose = "packed positions"

    @abstractmethod
    def key(self, position) -> tuple[int, int]:
        """Keyed games: (tier, canonical packed position) under which the record is stored."""

    @abstractmethod
    def position_of_key(self, key: int):
        """Keyed games: the position a packed key stands for."""

    @abstractmethod
    def tiers_of_keys(self, keys: np.ndarray) -> np.ndarray:
        """Keyed games: the tier of each packed key (vectorised: a search stores its results
        tier by tier, and a table's keys are checked against their tier)."""

    @abstractmethod
    def keys_fit(self, tier: int, keys: np.ndarray) -> bool:
        """Keyed games: whether every key is a packing of a position of `tier` that the kernel
        can unpack (a table's keys are checked with it before any reaches the kernel)."""

    @abstractmethod
    def keyed_tier_bound(self, tier: int) -> int:
        """Keyed games: the most positions a tier can hold (a table claiming more is corrupt)."""

    @abstractmethod
    def keyed_tier_possible(self, tier: int) -> bool:
        """Keyed games: whether `tier` names a tier of the board at all."""


class ScoreTiers(Tiered):
    """Score games solved tier by tier in the kernel: a tier's moves and un-moves, what a
    move banks, the margin of a game that ends, who is to move."""
    purpose = "a tier's moves and un-moves in the kernel, and what a move banks"

    @abstractmethod
    def score_tier(self, tier: int, lower: dict):
        """Score games: one tier for cext/scoresolve.pyx's solve_tier -- an object whose
        `capsule()` is a ScoreTier of sowsolve_kernel.h (moves and un-moves in the kernel, the
        values of captures read from `lower`, tier -> solved tier as its value kind's
        `tier_data` gives it: a MarginTier of records and long table), and whose
        `moves(index)` and `unmoves(index)` show the same to the self-check."""

    @abstractmethod
    def move_gain(self, position, move) -> int:
        """What the mover banks by the move itself (captured seeds)."""

    @abstractmethod
    def side_index(self, position) -> int:
        """Score games: 0 when the first player (whose margin the score solver counts as positive)
        is to move, 1 for the other."""

    @abstractmethod
    def leftover_margin(self, position) -> int:
        """Score games: the margin the side to move gets when the game ends at `position`."""


@dataclass(frozen=True)
class BoardColumns:
    """How a game writes its positions as columns of small integers, and how its position text
    is made of them (exports at table scale: tables/rows.py, cext/rows.pyx): the counts (pits,
    cells) in the order the text writes them, grouped into the text's '/'-separated ranks
    (one digit a count while every count of the position is below 10, else commas between the
    counts of a rank, as solver/games/notation.py's format_grid), then the fields after a
    space each: a code a field, its text the code's entry in `alphabet` (the side to move
    first).  An entry "-" is a field's "none" (a Parquet export writes it as null)."""
    #: the name of each count's column, in the text's order; unique ignoring case (DuckDB)
    counts: tuple[str, ...]
    #: how many counts each rank of the text holds, top first
    ranks: tuple[int, ...]
    #: (column name, texts of its codes) of each field after the counts
    fields: tuple[tuple[str, tuple[str, ...]], ...]


class Columnar(Capability):
    """Stored positions as columns, a block at a time, with no Python call a position: what
    `export` writes at the size of the tables (CSV, JSON lines and Parquet)."""
    purpose = "positions as columns of small integers"

    @abstractmethod
    def board_columns(self) -> BoardColumns:
        """The columns of this board's positions and how its text is made of them."""

    @abstractmethod
    def stored_columns(self, tier: int, start: int, stop: int, keys: np.ndarray | None = None,
                       every_orientation: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(counts, fields, owners) of the rows an export writes for the stored positions
        start..stop-1 of `tier` (of `keys`, packed positions, where the table is keyed): each
        position's images (`images`, or `orientations` with `every_orientation`) in order,
        itself first, as `export` writes them.  counts: uint8 (rows, len(counts)) in the text's
        order; fields: uint8 (rows, len(fields)); owners: int64 (rows,), the stored position
        (0..stop-start-1) whose record each row's value is."""


class Drawable(Capability):
    """Pictures of positions (show, play and the web explorer draw them)."""
    purpose = "pictures of positions"

    @abstractmethod
    def picture(self, position) -> "Picture":
        """The board of `position` as a solver.drawing.Picture: pits or cells on a grid with
        their counts, whose block or house each is, and where each legal move starts (and which
        way it heads); drawing.svg and drawing.text draw it for every game alike."""


class Provable(Capability):
    """Positions packed into 64-bit keys and expanded in the kernel (GameKernel.expand_key, and
    optionally proof_hint): the df-pn proof search (cext/proofsearch.pyx) of a win/loss game
    without draws, which the analysis engine runs first on a position."""
    purpose = "packed positions for the proof search"

    @abstractmethod
    def proof_key(self, position) -> int:
        """The proof search's key of a position: one key for the positions a symmetry of the
        board maps onto each other (with their values)."""

    @abstractmethod
    def proof_capsule(self):
        """The GameKernel capsule whose expand_key the proof search calls, or None where this
        board's positions do not pack."""


def proves_first(game: "Game | type", by_default: bool = False) -> bool:
    """Whether the analysis engine can run the proof search first in a game (a Game or its
    class): a win/loss game without draws whose kernel packs and expands positions for it;
    `by_default`: and does unless asked not to (its evaluation gives the proof a share)."""
    cls = game if isinstance(game, type) else type(game)
    can = issubclass(cls, Provable) and cls.value_kind is WIN_LOSS and not cls.can_draw
    evaluation = getattr(game, "evaluation", None)        # a game's own (its variant's)
    share = evaluation.proof_share if evaluation else None
    return can and not (by_default and share == 0)


class Playable(Capability):
    """The play layer of the analysis engine (tables/analysis.py): a compact state, its moves
    in the kernel, and the evaluation declared beside the rules."""
    purpose = "a play layer for the analysis engine"

    @abstractmethod
    def play_kernel(self):
        """The PlayKernel capsule (sowsolve_kernel.h) of this board."""

    @abstractmethod
    def play_state(self, position) -> bytes:
        """The engine's state of a position."""

    @abstractmethod
    def play_move(self, position, code: int):
        """The move of `position` whose play-kernel code is `code`."""

