"""sowsolve's games as OpenSpiel games, and two OpenSpiel bots: the perfect player of a table and
the analysis engine (docs/openspiel.md).

`import sowsolve.openspiel` registers every game of the registry (`sowsolve.GAMES`) that has a
play layer (the analysis engine's) and pictures as the OpenSpiel Python game
`sowsolve_<name>` (dashes as underscores), whose parameters are the board's (as the command
line names them, the standard board by default; a grid size as two whole numbers, `rows` and
`cols`):

    import pyspiel, sowsolve.openspiel
    game = pyspiel.load_game("sowsolve_<name>(cols=4,stones=2)")

The rules are the game's own (`make_game`), never restated here.  A state plays through the
game's play layer (`play_kernel`: every move of a position with its child and what the mover
banks by it, from the compiled kernel), and turns into sowsolve's position (`initial`, then
`kernel_moves` or `play` along the moves) only where a position is asked for: its text, its
observation, a bot's move.  So `clone`, `legal_actions` and `apply_action` stay cheap enough for
OpenSpiel's Monte Carlo tree search.

- Actions: the play kernel's move codes, 0 .. num_distinct_actions - 1: a fixed numbering of
  every move the board can have (the same move has the same code in every position);
  `action_to_string` is sowsolve's move text.
- Players: player 0 is the side to move at the start, player 1 the other; they alternate.
- Returns: win/loss games +1 / -1; score games the margin: what each side banked by its moves,
  the end's own count (the game's `leftover_margin`) to the side it goes to, zero-sum.
- Length: a game that cannot draw has no cycle, and `max_game_length` (ACYCLIC_PLIES) bounds
  every game of every board of it; a game that can go on for ever ends at the parameter
  `max_game_length` (ENDLESS_PLIES unless given) as its rules end infinite play (a score game
  by its `leftover_margin`, a win/loss game as a draw).
- Observation (and information state, the same in a game of perfect information): the position
  text, and planes over the game's picture grid (`Observer`).
"""
from __future__ import annotations

try:
    import pyspiel
except ImportError:
    raise ModuleNotFoundError("sowsolve.openspiel needs OpenSpiel "
                              "(pip install 'sowsolve[openspiel]')", name="pyspiel") from None

import threading
from typing import Any, Sequence

import numpy as np

from .cext import engine as _engine
from .solver.contract import Compiled, Drawable, Game, Playable, ScoreTiers
from .solver.errors import BadParameters, shown
from .solver.games import GAMES, GameEntry, make_game
from .solver.params import GRID, describe_values
from .solver.values import WIN_LOSS
from .tables.analysis import (DEFAULT_HASH_BYTES, Analyser, check_budget, check_tables,
                              table_answer)
from .tables.store import Table

__all__ = ["ACYCLIC_PLIES", "ENDLESS_PLIES", "REGISTERED", "EngineBot", "IllegalAction", "NotHeld",
           "Observer", "SowingGame", "SowingState", "TableBot", "openspiel_name"]

#: OpenSpiel's name of a registered game is this prefix and the game's name (dashes as
#: underscores)
PREFIX = "sowsolve_"
#: a bound on the plies of every game of every board of a game that cannot draw (its games
#: have no cycle, so every game ends): docs/openspiel.md proves it for each such game from
#: its rules, and tests/test_openspiel.py checks it on every board the parameters allow
ACYCLIC_PLIES = 1 << 15
#: where a game that can go on for ever is ended, unless its `max_game_length` parameter
#: says otherwise: bench/bench_match.py's --max-plies, where matches end infinite play
ENDLESS_PLIES = 600
#: the most plies the `max_game_length` parameter takes
MAX_ENDLESS_PLIES = 1 << 20
#: the play kernel's table (the bots' engines take their own): the least the engine takes
_ENGINE_TABLE_BYTES = 1 << 20
#: the grid size parameter (a GRID parameter) as OpenSpiel's two whole numbers
GRID_NAMES = ("rows", "cols")


class IllegalAction(ValueError):
    """An action that is no legal move of the state it is applied to."""


class NotHeld(ValueError):
    """A position the table handed to a TableBot does not hold."""


def openspiel_name(name: str) -> str:
    """OpenSpiel's name of the registered game `name`."""
    return PREFIX + name.replace("-", "_")


# --- a board: the game, its play kernel, its numbering and its end --------------------------

class _Board:
    """One board of one game as OpenSpiel plays it: the sowsolve game, the play kernel that
    makes every move, the observation's grid, and where play is ended.  Shared by every
    OpenSpiel game loaded with the same parameters; pickled as the parameters that rebuild it."""

    def __init__(self, name: str, parameters: dict, max_length: int):
        self.name, self.parameters, self.max_length = name, dict(parameters), max_length
        game = make_game(name, **parameters)
        self.game = game
        self.compiled = isinstance(game, Compiled)
        self.engine = _engine.Engine(game.play_kernel(), list(game.evaluation.weights),
                                     _ENGINE_TABLE_BYTES)
        self.actions = self.engine.max_moves
        self.margin = game.value_kind is not WIN_LOSS
        self.scale = _engine.SCORE_SCALE
        start = game.initial()
        first = game.side_to_move(start)
        self.sides = (first, next(side for side in game.sides if side != first))
        picture = game.picture(start)
        spots = [s for s in picture.spots if s.count is not None]
        self.shape = (max(int(s.row) for s in spots) + 1, max(int(s.col) for s in spots) + 1)
        self.planes = 7 if self.margin else 5
        #: what a margin can be at most: every piece of the start
        self.pieces = sum(s.count for s in spots)
        self.root = _Node(self, game.play_state(start), None, -1, 0, (0, 0), None)
        self.root._position = start

    def __reduce__(self):
        return _board_of, (self.name, tuple(sorted(self.parameters.items())), self.max_length)

    def __deepcopy__(self, memo):
        return self

    def child_position(self, position, code: int):
        """The position after the move of `position` whose play-kernel code is `code`."""
        game = self.game
        move = game.play_move(position, code)
        if self.compiled:
            for kernel_move, child in game.kernel_moves(position):
                if kernel_move == move:
                    return child
            raise RuntimeError(f"the kernel of {game.describe()} has no move "
                               f"{game.format_move(move)} in {game.format_position(position)}, "
                               f"which its play layer makes")
        return game.play(position, move)


_BOARDS: dict[tuple, _Board] = {}
_BOARDS_LOCK = threading.Lock()


def _board_of(name: str, parameters: tuple, max_length: int) -> _Board:
    """The board of a game's parameters, built once."""
    key = (name, parameters, max_length)
    with _BOARDS_LOCK:
        board = _BOARDS.get(key)
        if board is None:
            board = _BOARDS[key] = _Board(name, dict(parameters), max_length)
        return board


# --- a node: one position reached from the start --------------------------------------------

class _Node:
    """A position reached from the start by a line of moves: the play kernel's state, who
    banked what, and (made when first asked for) its moves and sowsolve's position.  Never
    changed once made, so a cloned OpenSpiel state shares it (a deep copy is the node itself);
    pickled as the moves that lead to it."""
    __slots__ = ("board", "state", "parent", "code", "ply", "banked", "last", "_moves",
                 "_actions", "_position", "_tensor")

    def __init__(self, board: _Board, state: bytes, parent, code: int, ply: int,
                 banked: tuple[int, int], last: int | None):
        self.board, self.state, self.parent, self.code, self.ply = board, state, parent, code, ply
        self.banked, self.last = banked, last
        self._moves = self._actions = self._position = self._tensor = None

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self

    def __reduce__(self):
        codes, node = [], self
        while node.parent is not None:
            codes.append(node.code)
            node = node.parent
        return _replay, (self.board, tuple(reversed(codes)))

    def moves(self) -> list[tuple[int, int, bytes]]:
        """[(code, what the mover banks, child state)] by code; none where play has ended."""
        if self._moves is None:
            if self.ply >= self.board.max_length:
                moves = []
            else:
                moves = self.board.engine.moves(self.state)
                moves.sort()            # by code (each code once)
            self._moves = moves
            self._actions = [move[0] for move in moves]
        return self._moves

    def actions(self) -> list[int]:
        """The codes of the legal moves, ascending."""
        if self._actions is None:
            self.moves()
        return self._actions

    def over(self) -> bool:
        return not (self._moves if self._moves is not None else self.moves())

    def child(self, code: int) -> "_Node":
        try:
            at = self.actions().index(code)
        except ValueError:
            raise IllegalAction(f"action {shown(code)} is no legal move of "
                                f"{self.text()}") from None
        _, gain, state = self._moves[at]
        banked, last = self.banked, self.last
        if self.board.margin and gain:
            mover = self.ply & 1
            banked = (banked[0] + gain, banked[1]) if mover == 0 else (banked[0], banked[1] + gain)
            last = mover
        return _Node(self.board, state, self, code, self.ply + 1, banked, last)

    def position(self):
        """sowsolve's position here, made from the nearest node that has it."""
        path, node = [], self
        while node._position is None:
            path.append(node)
            node = node.parent
        position = node._position
        for node in reversed(path):
            position = self.board.child_position(position, node.code)
            node._position = position
        return position

    def text(self) -> str:
        return self.board.game.format_position(self.position())

    def action_text(self, code: int) -> str:
        """sowsolve's text of a legal move, `action N` for any other action."""
        if code not in self.actions():
            return f"action {code}"
        game = self.board.game
        position = self.position()
        return game.format_move(game.play_move(position, code))

    def action_of(self, text: str) -> int:
        """The action of a legal move's text."""
        for code in self.actions():
            if self.action_text(code) == text:
                return code
        raise IllegalAction(f"{text!r} is no legal move of {self.text()}")

    def returns(self) -> list[float]:
        """[player 0's, player 1's]: zero until the game has ended."""
        if not self.over():
            return [0.0, 0.0]
        board = self.board
        capped = self.ply >= board.max_length
        if capped:
            # infinite play, ended as the rules end it: a score game gives the end's own count
            # to whom the rules give it, a win/loss game is drawn
            end = board.game.leftover_margin(self.position()) if board.margin else 0
        else:
            final = board.engine.final(self.state)
            end = final // board.scale if board.margin else (final > 0) - (final < 0)
        ahead = end if self.ply & 1 == 0 else -end      # for player 0
        if board.margin:
            ahead += self.banked[0] - self.banked[1]
        return [float(ahead), float(-ahead)]

    def tensor(self) -> np.ndarray:
        """The observation planes (see Observer), made once."""
        if self._tensor is None:
            board = self.board
            planes = np.zeros((board.planes, *board.shape), np.float32)
            picture = board.game.picture(self.position())
            for spot in picture.spots:
                if spot.count is None:
                    continue
                at = (int(spot.row), int(spot.col))
                planes[(0, *at)] = spot.count
                for player in (0, 1):
                    if spot.owner == board.sides[player]:
                        planes[(1 + player, *at)] = 1
                if spot.flag:
                    planes[(3, *at)] = 1
            planes[4] = self.ply & 1
            if board.margin and self.last is not None:
                planes[5 + self.last] = 1
            self._tensor = planes
        return self._tensor


def _replay(board: _Board, codes: Sequence[int]) -> _Node:
    """The node the moves `codes` reach from the start of `board`."""
    node = board.root
    for code in codes:
        node = node.child(code)
    return node


# --- OpenSpiel's game, state and observer ---------------------------------------------------

class SowingState(pyspiel.State):
    """An OpenSpiel state of a sowsolve game: the node it has reached (shared with its clones)."""

    def __init__(self, game: "SowingGame"):
        super().__init__(game)
        self._node = game.board.root

    def current_player(self):
        node = self._node
        return pyspiel.PlayerId.TERMINAL if node.over() else node.ply & 1

    def _legal_actions(self, player):
        return self._node.actions()

    # Answered here for Python callers (OpenSpiel's Python MCTS asks both every ply), as
    # OpenSpiel's own State answers them, without its round trips through current_player.
    def legal_actions(self, player=None):
        node = self._node
        if node.over() or (player is not None and player != node.ply & 1):
            return []
        return list(node.actions())         # a copy: a caller may shuffle it

    def is_chance_node(self):
        return False

    def _apply_action(self, action):
        self._node = self._node.child(action)

    def _action_to_string(self, player, action):
        return self._node.action_text(action)

    def is_terminal(self):
        return self._node.over()

    def returns(self):
        return self._node.returns()

    def __str__(self):
        return self._node.text()

    def position(self):
        """sowsolve's position of this state (its text: str(state))."""
        return self._node.position()

    def stores(self) -> tuple[int, int]:
        """Score games: what player 0 and player 1 have banked by their moves so far."""
        return self._node.banked


class Observer:
    """The observation of a state, the same for both players: `string_from` gives sowsolve's
    position text; `tensor` (and `dict["observation"]`, shaped planes x rows x columns of the
    game's picture grid) holds the planes

    0. the count (stones, discs, seeds) of each pit or cell;
    1. 1 where the pit or cell is player 0's (block, house or row), 2. the same for player 1;
    3. 1 where the position marks a pit or cell (a ko pit);
    4. 1 everywhere when player 1 is to move (0 when player 0 is);
    5. and 6. (score games) 1 everywhere when player 0, player 1, made the last capture."""

    def __init__(self, board: _Board, params=None):
        if params:
            raise ValueError(f"the observation takes no parameters, not {params}")
        shape = (board.planes, *board.shape)
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": np.reshape(self.tensor, shape)}

    def set_from(self, state: SowingState, player: int) -> None:
        self.dict["observation"][...] = state._node.tensor()

    def string_from(self, state: SowingState, player: int) -> str:
        return state._node.text()


class SowingGame(pyspiel.Game):
    """An OpenSpiel game of one sowsolve game on one board; each registered game is a subclass
    (`entry`, `game_type`: what the registry and OpenSpiel know of it)."""
    entry: GameEntry
    game_type: Any

    def __init__(self, params=None):
        params = dict(params or {})
        board = _board_of(self.entry.name, tuple(sorted(_sowsolve_parameters(self.entry, params)
                                                        .items())),
                          _max_length(self.entry, params))
        utility = float(board.pieces if board.margin else 1)
        info = pyspiel.GameInfo(num_distinct_actions=board.actions, max_chance_outcomes=0,
                                num_players=2, min_utility=-utility, max_utility=utility,
                                utility_sum=0.0, max_game_length=board.max_length)
        super().__init__(self.game_type, info, params)
        self.board = board

    def new_initial_state(self):
        return SowingState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        return Observer(self.board, params)

    def sowsolve_game(self) -> Game:
        """The sowsolve game (rules, notation) this OpenSpiel game plays."""
        return self.board.game


def _endless(entry: GameEntry) -> bool:
    """Whether the game's play can go on for ever (and so is ended at `max_game_length`): the
    contract's `can_draw`, False only where the rules rule out a draw, play that never ends."""
    return bool(entry.cls.can_draw)


def _parameter_specification(entry: GameEntry) -> dict:
    """OpenSpiel's parameters and their defaults: the standard board (and where an endless
    game is ended); ValueError where two would share a name."""
    pairs = []
    for p in entry.parameters:
        pairs += zip(GRID_NAMES, GRID.parse(p.default)) if p.kind is GRID else [(p.name, p.default)]
    if _endless(entry):
        pairs.append(("max_game_length", ENDLESS_PLIES))
    spec = dict(pairs)
    if len(spec) < len(pairs):
        raise ValueError(f"{entry.title}: two of its parameters would share one name in "
                         f"OpenSpiel ({', '.join(name for name, _ in pairs)})")
    return spec


def _sowsolve_parameters(entry: GameEntry, params: dict) -> dict:
    """make_game's parameters of OpenSpiel's; BadParameters (a ValueError) naming a value out
    of range, and the game's own sentence for a board it refuses."""
    name = openspiel_name(entry.name)
    board = {}
    for p in entry.parameters:
        names = GRID_NAMES if p.kind is GRID else (p.name,)
        for key in names:
            value = params[key]
            if isinstance(value, bool) or not isinstance(value, int) or value not in p.values:
                raise BadParameters(f"{key} of {name} must be {describe_values(p.values)}, "
                                    f"not {shown(value)}")
        board[p.name] = (f"{params[GRID_NAMES[0]]}x{params[GRID_NAMES[1]]}" if p.kind is GRID
                         else params[p.name])
    return board


def _max_length(entry: GameEntry, params: dict) -> int:
    if not _endless(entry):
        return ACYCLIC_PLIES
    value = params["max_game_length"]
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ENDLESS_PLIES:
        raise BadParameters(f"max_game_length of {openspiel_name(entry.name)} must be a whole "
                            f"number from 1 to {MAX_ENDLESS_PLIES}, not {shown(value)}")
    return value


def _playable(entry: GameEntry) -> bool:
    """Whether OpenSpiel can play the game: a play layer, pictures, and the end's own count
    where it keeps score."""
    cls = entry.cls
    return (issubclass(cls, Playable) and issubclass(cls, Drawable) and cls.evaluation is not None
            and (cls.value_kind is WIN_LOSS or issubclass(cls, ScoreTiers)))


def _register(entry: GameEntry) -> type:
    spec = _parameter_specification(entry)
    game_type = pyspiel.GameType(
        short_name=openspiel_name(entry.name), long_name=f"sowsolve {entry.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2, min_num_players=2,
        provides_information_state_string=True, provides_information_state_tensor=True,
        provides_observation_string=True, provides_observation_tensor=True,
        parameter_specification=spec)
    # a class, not a function, is handed to OpenSpiel: its registry outlives the interpreter,
    # and a function freed after it has ended takes the process down with it
    cls = type(f"SowingGame_{entry.name.replace('-', '_')}", (SowingGame,),
               {"entry": entry, "game_type": game_type, "__module__": __name__})
    pyspiel.register_game(game_type, cls)
    return cls


#: OpenSpiel's game class of each registered game, by OpenSpiel's name
REGISTERED: dict[str, type] = {openspiel_name(entry.name): _register(entry)
                               for entry in GAMES.values() if _playable(entry)}


# --- bots -----------------------------------------------------------------------------------

def _board_of_game(game) -> _Board:
    if not isinstance(game, SowingGame):
        raise BadParameters(f"the bots play the games sowsolve.openspiel registers "
                            f"({', '.join(REGISTERED)}), not {shown(game, 40)}")
    return game.board


def _node_of(state, board: _Board) -> _Node:
    """A state's node, checked: of the bot's board, and not over."""
    node = getattr(state, "_node", None)
    if not isinstance(node, _Node) or node.board is not board:
        raise BadParameters(f"the bot plays {board.game.describe()}, not {shown(state, 40)}")
    if node.over():
        raise IllegalAction(f"the game is over at {node.text()}: there is no move to make")
    return node


def _same_board(table: Table, board: _Board) -> bool:
    return (table.game.name == board.game.name
            and table.game.parameters() == board.game.parameters())


class TableBot(pyspiel.Bot):
    """The perfect player from an open table of the game's board (sowsolve.open_table): plays a
    best move of the table's answer (`query`'s first "best": it keeps the value, with the best
    remoteness); NotHeld (a ValueError) at a position the table does not hold."""

    def __init__(self, game: SowingGame, table: Table):
        pyspiel.Bot.__init__(self)
        self._board = _board_of_game(game)
        if not isinstance(table, Table):
            raise BadParameters(f"a TableBot needs an open table (sowsolve.open_table), not "
                                f"{shown(table, 40)}")
        if not _same_board(table, self._board):
            raise BadParameters(f"{table.path} is a table of {table.game.describe()}, not of "
                                f"{self._board.game.describe()}")
        self.table = table

    def step(self, state) -> int:
        node = _node_of(state, self._board)
        position = node.position()
        if position not in self.table:
            raise NotHeld(f"{self.table.path} does not hold {node.text()}")
        answer = self.table.query(position)
        best = answer["best"][0] if answer["best"] else answer["moves"][0]["move"]
        return node.action_of(best)

    def restart(self) -> None:
        """Nothing to forget: every move is read from the table."""

    def restart_at(self, state) -> None:
        """Nothing to forget: every move is read from the table."""

    def inform_action(self, state, player_id: int, action: int) -> None:
        """Nothing to follow: the bot reads the position from the state it is asked about."""


class EngineBot(pyspiel.Bot):
    """sowsolve's analysis engine (tables/analysis.py) as a player: one Analyser of the game's
    board, built once and kept from move to move (its tables at the leaves, its Monte Carlo
    trees reused), playing the first best move of its answer; a position one of `tables`
    holds is answered by that table.  `seconds` or `nodes` is the budget of each move (neither:
    the engine's default time), `threads` its threads, `hash_bytes` its memory."""

    def __init__(self, game: SowingGame, seconds: float | None = None, nodes: int | None = None,
                 threads: int = 1, tables: Sequence[Table] = (),
                 hash_bytes: int = DEFAULT_HASH_BYTES):
        pyspiel.Bot.__init__(self)
        self._board = _board_of_game(game)
        self.seconds, self.nodes, self.threads = check_budget(seconds, nodes, threads, None, 0)
        tables = check_tables(tables)
        for table in tables:
            if not _same_board(table, self._board):
                raise BadParameters(f"{table.path} is a table of {table.game.describe()}, not of "
                                    f"{self._board.game.describe()}")
        # the transposition table kept from move to move, as `sowsolve engine` keeps it
        self.analyser = Analyser(self._board.game, tables, hash_bytes=hash_bytes, keep_table=True)
        self.analyser.warm()            # as the engine's `isready`: not in the first move's time
        self.tables = [t for t in tables if _same_board(t, self._board)]

    def step(self, state) -> int:
        node = _node_of(state, self._board)
        position = node.position()
        for table in self.tables:
            answer = table_answer(table, position)
            if answer is not None:
                break
        else:
            # the best move alone, fully searched (as `go` asks): a player needs no other value
            answer = self.analyser.analyse(position, self.seconds, self.nodes, self.threads,
                                           multipv=1)
        best = answer["best"][0] if answer["best"] else answer["moves"][0]["move"]
        return node.action_of(best)

    def restart(self) -> None:
        """Nothing to forget: the engine searches the position of the state it is given (and
        keeps what it learnt where a later search reaches it)."""

    def restart_at(self, state) -> None:
        """Nothing to forget: the engine searches the position of the state it is given."""

    def inform_action(self, state, player_id: int, action: int) -> None:
        """Nothing to follow: the engine reads the position from the state it is asked about."""
