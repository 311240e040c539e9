"""Analysis of any position: the table's answer where a table holds it, else the engine's
(cext/engine.pyx) with every table of the board at its leaves, each value labelled exact or
estimated -- the way an analysis board shows tablebase values where a tablebase holds the
position and an engine's evaluation elsewhere, and never mixes the two up.

`analyse` returns the object `sowsolve analyse --json` prints: shaped like `query --json`
(position, value, remoteness, final, moves with move/value/remoteness/exact, best), plus
"exact" for the position's own value, the line, and "search" (depth, nodes, seconds, ...).
"""
from __future__ import annotations

import operator
import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence


from ..solver.contract import Compiled, Game, Playable, proves_first
from ..solver.values import WIN_LOSS
from ..solver.errors import BadParameters, BadPosition, quote, shown
from ..solver.games import make_game
from ..cext import engine as _engine, proofsearch as _proofsearch, uct as _uct
from ..solver.kernels import Control
from .format import BeyondTable, NotInTable
from .layout import KeyedLayout
from .store import Table


#: the transposition table's memory when none is given
DEFAULT_HASH_BYTES = 256 << 20
#: the most memory the tables at the leaves take when none is given (tiers load smallest first)
DEFAULT_LEAF_BYTES = 1 << 30
#: the budget when neither time nor nodes is given
DEFAULT_SECONDS = 5.0
MAX_SECONDS = 7 * 24 * 3600.0
MAX_NODES = 1 << 50
MAX_THREADS = 256
#: plies of the best line shown
LINE_PLIES = 24
#: in a game the proof search can prove, the share of the budget (time or nodes) it takes
#: first: a proof answers the position and its moves exactly, and the engine gets the rest
#: (all of it once the proof is done); measured on the 4x4 board of the game solved by
#: search (docs/analysis.md)
PROOF_SHARE = 0.5
#: expansions of the proof search between two looks at the clock (a few milliseconds)
PROOF_SLICE = 2048
#: the proof search's table is this share of the engine's (--hash), taken besides it
PROOF_TABLE_FRACTION = 0.25
#: the engine's searches: alpha-beta over the game's weighted features, or Monte Carlo trees
SEARCHES = ("alphabeta", "mcts")
#: the Monte Carlo search's estimates: the playouts' mean result for the side playing the move
MCTS_UNIT = "expected result (-1 lost .. +1 won)"
#: the Monte Carlo search's first-play urgency: an untried move is tried once every tried
#: move's UCB1 score falls below it (rewards 0..1), the evaluation's best untried move first;
#: instead of every move tried once before any twice, which where a position has ~150 moves
#: leaves the tree one ply deep (docs/analysis.md, measured by bench/bench_match.py)
MCTS_FPU = 1.0


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a search; `result` holds the best found so far."""

    def __init__(self, result: dict):
        super().__init__("interrupted")
        self.result = result


@dataclass
class Status:
    """What a running search has found so far (handed to the `on_status` callback)."""
    depth: int
    nodes: int
    seconds: float
    best: str | None
    value: str
    phase: str = "search"      # "proof" while the proof search runs first (nodes: expansions)
    search: str = "alphabeta"  # "mcts": nodes are playouts, depth 0
    #: the best line so far, move texts from the position (the Monte Carlo search: its best
    #: move alone, the trees below it still growing); filled where `on_status` asks for lines
    line: tuple[str, ...] = ()
    #: the best move's value as `value_of` shows it (None: none yet)
    score: dict | None = None


class Analyser:
    """The engine of one game board with its tables at the leaves: built once (the tables are
    read into memory then), asked about many positions (`play` and `serve` keep one)."""

    def __init__(self, game: Game, tables: Sequence[Table] = (), hash_bytes: int = DEFAULT_HASH_BYTES,
                 leaf_bytes: int = DEFAULT_LEAF_BYTES, weights: Sequence[int] | None = None,
                 proof_share: float | None = None, search: str | None = None,
                 exploration: float | None = None, reuse: bool = True,
                 fpu: float = MCTS_FPU, ordered: bool = True, keep_table: bool = False):
        if not isinstance(game, Playable) or game.evaluation is None:
            raise BadParameters(f"{game.describe()} has no analysis engine")
        tables = check_tables(tables)
        leaf_bytes = _whole(leaf_bytes, "leaf_bytes", "--leaf-memory")
        if leaf_bytes < 0:
            raise BadParameters(f"--leaf-memory (leaf_bytes) must be 0 or more, not {leaf_bytes:,}")
        # the game declares its search (Evaluation.monte_carlo); a bench may ask for the other
        if search is None:
            search = "alphabeta" if game.evaluation.monte_carlo is None else "mcts"
        if search not in SEARCHES:
            raise BadParameters(f"the search must be one of {', '.join(SEARCHES)}, not {shown(search)}")
        if search == "mcts" and game.value_kind is not WIN_LOSS:
            raise BadParameters(f"the Monte Carlo search plays win/loss games, not {game.describe()}")
        self.search = search
        self.hash_bytes = hash_bytes
        if proof_share is None:
            proof_share = (PROOF_SHARE if game.evaluation is None or game.evaluation.proof_share is None
                           else game.evaluation.proof_share)
        if not 0 <= proof_share < 1:
            raise BadParameters(f"the proof search's share of the budget must be from 0 to below 1, "
                                f"not {shown(proof_share)}")
        # a df-pn proof search from the position comes first in a win/loss game without draws
        # whose kernel packs and expands its positions (Provable), with one
        # table kept from position to position, so what one search proved (a game's later
        # positions) the next need not; an endgame table's game is its board's game under
        # another solver: the proof search is the board's game's (the game itself otherwise,
        # so its kernel is built once)
        plain = make_game(game.name, **game.parameters())
        self._proof_game = game if type(game) is type(plain) else plain
        self.proof_share = proof_share
        self.proves = (proof_share > 0 and proves_first(self._proof_game)
                       and self._proof_game.proof_capsule() is not None)
        # checked before any of it is taken; the proof's table is taken besides the engine's
        check_hash(hash_bytes, int(hash_bytes * PROOF_TABLE_FRACTION) if self.proves else 0)
        self._proof_entries = max(1024, int(hash_bytes * PROOF_TABLE_FRACTION) // _proofsearch.ENTRY_BYTES)
        self._prover = None
        self.game = game
        self.evaluation = game.evaluation
        # the alpha-beta engine also generates moves and finals for the rest of the module;
        # under the Monte Carlo search its table is the smallest and --hash holds the trees
        self.engine = _engine.Engine(game.play_kernel(), list(weights or self.evaluation.weights),
                                     hash_bytes if search == "alphabeta" else 1 << 20)
        self.mcts = None
        if search == "mcts":
            self.mcts = _uct.Searcher(game.play_kernel(), hash_bytes,
                                      exploration=(exploration if exploration is not None else
                                                   self.evaluation.monte_carlo or _uct.EXPLORATION),
                                      solver=True, informed=True, reuse=reuse,
                                      weights=self.evaluation.weights if ordered else None,
                                      fpu=fpu)
        # the play kernel locates positions as the board's own tables index them (the
        # board's game's, also where `game` is an endgame table's: an endgame table indexed
        # by tiers of its own is not one of them)
        board_tables = [t for t in tables if game.shares_tables_with(t.game)]
        self.tables = [t for t in board_tables if t.game.solver.indexing == plain.solver.indexing]
        # such an endgame table (every position of at most D discs) answers the moves to the
        # positions it holds, and ends the proof search's lines as `prove --tables` does
        self.endgame, self._proof_leaves, taken = self._endgame_leaves(
            [t for t in board_tables if t not in self.tables], leaf_bytes)
        leaf_bytes -= taken                     # one budget for the leaves of both searches
        # the Monte Carlo search reads no tables at its leaves: a position a board's table holds
        # is answered whole before any search (`analyse`), and a playout runs to the end
        self.leaves = self._load_leaves(leaf_bytes if search == "alphabeta" else 0)
        #: whether the transposition table is kept from one search to the next (a game's
        #: moves, as an engine does between moves); else cleared, so that a node budget on one
        #: thread gives the same answer every time (`analyse --nodes`)
        self.keep_table = keep_table
        self._lock = threading.Lock()
        self._proof: dict | None = None          # this search's proof phase, see _prove_first
        self._control = Control()              # this search's stop flag (the proof reads it)

    def _endgame_leaves(self, tables: Sequence[Table], budget: int):
        """(table, proof leaves, their bytes): the endgame table of the most stones among
        `tables` (it labels the moves to positions it holds), and the proof search's leaves from
        the one of the most stones whose records fit `budget` (None, 0 where the proof search
        does not run or takes no leaves, or none fits)."""
        from .leaves import leaves_from
        endgames = sorted((t for t in tables if t.meta.get("max_stones") is not None),
                          key=lambda t: (int(t.meta["max_stones"]), t.path), reverse=True)
        if not endgames:
            return None, None, 0
        if not self.proves or getattr(self._proof_game, "board_kernel", None) is None:
            return endgames[0], None, 0
        for table in endgames:
            size = sum((table.tier_size(tier) + 7) // 8 for tier in table.tiers)  # a bit each
            if size <= budget:
                return endgames[0], leaves_from(self._proof_game, table), size
        return endgames[0], None, 0

    def _load_leaves(self, budget: int) -> dict:
        """Every solved tier of the board's tables, fewest stones first, while they fit the
        budget: records as the table's reader checked them (and a keyed tier's keys), so no
        value reaches the kernel unchecked."""
        offered: dict[int, Table] = {}
        for table in self.tables:
            tiers = table.solved_tiers
            if table.game.parameters() != self.game.parameters():
                board_tiers = set(self.game.tiers())    # a table of more stones a pit has more
                tiers = [tier for tier in tiers if tier in board_tiers]
            for tier in tiers:
                offered.setdefault(tier, table)
        loaded, used, left_out = [], 0, 0
        for tier in sorted(offered, key=lambda t: (self.game.tier_stones(t), t)):
            table = offered[tier]
            size = table.tier_size(tier) * (10 if _keyed(table) else 2)
            if used + size > budget:
                left_out += 1
                continue
            data = table.tier_data(tier)
            records = data.records if hasattr(data, "records") else data
            keys = table.tier_keys(tier) if _keyed(table) else None
            self.engine.add_tier(tier, records, keys)
            loaded.append(tier)
            used += size
        return {"tiers": len(loaded), "bytes": used, "tiers_left_out": left_out,
                "most_stones": max((self.game.tier_stones(t) for t in loaded), default=None),
                "tables": [t.path for t in self.tables]}

    # --- one position -------------------------------------------------------------------------
    def analyse(self, position, seconds: float | None = None, nodes: int | None = None,
                threads: int = 1, multipv: int | None = None, seed: int = 0,
                on_status: Callable[[Status], None] | None = None,
                status_every: float = 0.25, depth: int | None = None,
                infinite: bool = False, lines: bool = False, started: float | None = None) -> dict:
        """The engine's answer for `position` (text, or a position object); see the module.
        A time budget runs from `started` (time.perf_counter(); left out, now): what was spent
        before the search (the table's memory taken and cleared) is part of it.
        `depth`: the alpha-beta search stops after that many plies (no proof search first,
        no time limit unless one is given); `infinite`: no limit but `stop` (the proof search
        first takes its share of the default time); `lines`: each Status carries the best line."""
        budget_from = time.perf_counter() if started is None else started
        seconds, nodes, threads = check_budget(seconds, nodes, threads, multipv, seed,
                                               depth=depth, infinite=infinite)
        if depth is not None and self.mcts is not None:
            raise BadParameters(f"a depth applies to the alpha-beta search; {self.game.describe()}'s "
                                f"engine searches by Monte Carlo: give a time or nodes (playouts)")
        game = self.game
        if isinstance(position, str):
            position = game.parse_position(position)
            game.check_position(position)
        state = game.play_state(position)
        if self.mcts is not None and not self.mcts.fits(threads):
            raise BadParameters(f"--hash of {self.hash_bytes:,} bytes holds no Monte Carlo tree "
                                f"for each of {threads} threads: give more, or fewer threads")
        with self._lock:                       # one search at a time on this table
            if not self.keep_table:
                self.engine.clear()
            if self.mcts is not None:
                # the trees keep what they learnt of this position where the last search
                # reached it (a game's next move), else start afresh: the live line never
                # reads the last position's moves
                self.mcts.reroot(state)
            self._control = Control()
            self._proof = None
            done = threading.Event()
            failure: list[BaseException] = []

            def run():
                try:
                    left_seconds, left_nodes = seconds or 0.0, nodes or 0
                    if left_seconds:          # the budget began before the memory was cleared
                        left_seconds = max(left_seconds - (time.perf_counter() - budget_from), 1e-3)
                    if infinite and self.mcts is not None:
                        left_seconds = MAX_SECONDS      # playouts need a limit: `stop` ends them
                    if self.proves and depth is None and game.outcome(position) is None:
                        # with no limit but `stop`, the proof gets its share of the default time
                        spent_seconds, spent_nodes = self._prove_first(
                            position, DEFAULT_SECONDS if infinite else left_seconds or None,
                            nodes, threads)
                        if left_seconds:
                            left_seconds = max(left_seconds - spent_seconds, 1e-3)
                        if left_nodes:
                            left_nodes = max(left_nodes - spent_nodes, 1)
                    if self._control.stopped:   # Ctrl-C while proving: the engine's first look
                        left_seconds, left_nodes = 1e-3, 0
                    if self.mcts is not None:
                        self.mcts.run(state, left_seconds, left_nodes, threads, seed)
                    else:
                        self.engine.run(state, left_seconds, left_nodes, threads, multipv or 0, seed,
                                        depth or 0)
                except BaseException as exc:  # noqa: BLE001 - handed to the caller below
                    failure.append(exc)
                finally:
                    done.set()

            worker = threading.Thread(target=run, name="sowsolve-analyse", daemon=True)
            interrupted = started = False
            try:
                worker.start()
                started = True
                while not done.wait(status_every):
                    if on_status is not None:
                        on_status(self._status(position, lines))
            except KeyboardInterrupt:
                if not started:
                    raise                        # nothing searched: nothing to report
                interrupted = True
            finally:
                # whatever ends the wait (Ctrl-C, an error of the callback), the search stops
                # and is waited for: the engine's memory is never freed under it (asked again
                # while it runs: the engine may have started after the first ask)
                while not done.is_set() and worker.is_alive():
                    self.stop()
                    done.wait(0.05)
            if failure:
                raise failure[0]
            result = self._result(position, state, threads)
        if interrupted:
            result["interrupted"] = True
            raise Interrupted(result)
        return result

    def stop(self) -> None:
        """Stop the search under way (from another thread): the proof, then the engine."""
        self._control.stop()
        self.engine.stop()
        if self.mcts is not None:
            self.mcts.stop()

    def _prove_first(self, position, seconds: float | None, nodes: int | None,
                     threads: int) -> tuple[float, int]:
        """The proof search from `position` for its share of the budget, or until it proves
        the position: (seconds, expansions) it took.  Ctrl-C ends it where it is."""
        root = self._proof_game.proof_key(position)
        if self._prover is None:
            capsule = (self._proof_game.proof_capsule() if self._proof_leaves is None
                       else self._proof_leaves.kernel.capsule())
            self._prover = _proofsearch.Prover(capsule, root, self._proof_entries)
        else:
            self._prover.aim(root)
        prover = self._prover
        first = prover.nodes
        started = time.perf_counter()
        deadline = started + seconds * self.proof_share if seconds else None
        budget = max(1, int(nodes * self.proof_share)) if nodes else None
        self._proof = {"root": root, "first": first, "started": started, "running": True}
        try:
            while prover.value() is None:
                used = prover.nodes - first
                if budget is not None and used >= budget:
                    break
                if deadline is not None and time.perf_counter() >= deadline:
                    break
                step = PROOF_SLICE * threads if budget is None else min(PROOF_SLICE * threads, budget - used)
                prover.run(step, self._control.words, threads)
        except KeyboardInterrupt:       # asked to stop: the table stays valid
            pass
        except RuntimeError as exc:
            # the proof search gave up on this position (a line deeper than it follows, no
            # memory for its stack): what it settled stays, and the engine gets the rest
            self._proof["gave_up"] = str(exc)[:200]
        finally:
            self._proof.update(expansions=prover.nodes - first, value=prover.value(),
                               seconds=round(time.perf_counter() - started, 3), running=False)
        return time.perf_counter() - started, prover.nodes - first

    def clear(self) -> None:
        """Forget what earlier searches learnt (a new game): the transposition table, the Monte
        Carlo trees; the proof search's table is kept (what it proved stays true)."""
        with self._lock:
            self.engine.clear()
            if self.mcts is not None:
                self.mcts.clear()

    def warm(self) -> None:
        """Touch the alpha-beta search's table now (a written one is cleared), so that the first
        search has its whole budget: an engine's `isready`, a bench before its first position.
        A fresh table's pages are zeroed by the system as they are first written (measured by
        hand: a 0.1 s search of the default 256 MB table took 0.4 s).  Nothing to do under
        the Monte Carlo search, whose trees are made per search."""
        with self._lock:
            if self.mcts is None:
                self.engine.warm()

    def _status(self, position, lines: bool = False) -> Status:
        proof = self._proof
        if proof is not None and proof.get("running"):
            return Status(0, self._prover.nodes - proof["first"],
                          time.perf_counter() - proof["started"], None, "", "proof")
        if self.mcts is not None:
            playouts, seconds, code, mean, proven = self.mcts.status()
            best = None if code is None else self.game.format_move(self.game.play_move(position, code))
            score = None if code is None else _mcts_value(mean, proven, 1)
            value = "" if code is None else describe_value(score, self.game, self.unit)
            return Status(0, playouts, seconds, best, value, search="mcts",
                          line=(best,) if best is not None and lines else (), score=score)
        depth, nodes, seconds, code, score, proven = self.engine.status()
        best = None if code is None else self.game.format_move(self.game.play_move(position, code))
        value = "" if score is None else self.value_text(score, proven)
        line: tuple[str, ...] = ()
        if lines and code is not None:
            # the table's line below the best move (entries are read under their locks, and
            # every step is checked against the moves the kernel generates)
            children = {c: child for c, _, child in self.engine.moves(self.game.play_state(position))}
            if code in children:
                codes = [code] + self.engine.principal_variation(children[code], LINE_PLIES - 1)
                line = tuple(_line_texts(self.game, position, codes))
        return Status(depth, nodes, seconds, best, value, line=line,
                      score=None if score is None else self.value_of(score, proven))

    @property
    def unit(self) -> str:
        """What an estimate counts: the game's unit, or the Monte Carlo search's mean result."""
        return self.evaluation.unit if self.mcts is None else MCTS_UNIT

    def value_text(self, score: int, exact: bool) -> str:
        v = self.value_of(score, exact)
        return describe_value(v, self.game, self.unit)

    def value_of(self, score: int, exact: bool, bound: bool = False) -> dict:
        """A score as the JSON shows it: exact values as `query` prints them (win/loss and
        remoteness, or a margin), estimates as a number of `unit`s with exact false."""
        margin_game = self.engine.margin
        mate, limit, scale = _engine.MATE_SCORE, _engine.MATE_LIMIT, _engine.SCORE_SCALE
        if not margin_game and abs(score) > limit:
            # a win or loss the search found: exact only where proven (else a faster win or a
            # longer defence may lie beyond what it searched)
            return {"value": "win" if score > 0 else "loss", "remoteness": mate - abs(score),
                    "exact": exact and not bound, "bound": "upper" if bound else None}
        if exact and not bound:
            if margin_game:
                # exact, but how long the game lasts the search does not say (a table's null
                # remoteness means play that never ends: this is not that)
                return {"value": score // scale, "remoteness": None, "remoteness_known": False,
                        "exact": True, "bound": None}
            return {"value": "draw", "remoteness": None, "exact": True, "bound": None}
        return {"value": round(score / 100.0, 2), "remoteness": None, "exact": False,
                "bound": "upper" if bound else None}

    def _proved_move(self, entry: dict, child) -> None:
        """Label a move the engine only estimated with what the proof search settled of the
        position it leads to (its table holds the children of a proved position)."""
        phi, delta = self._prover.numbers(self._proof_game.proof_key(child))
        if phi != 0 and delta != 0:
            return
        win = delta == 0                 # the opponent, to move there, is lost
        for key in ("bound", "depth", "visits"):
            entry.pop(key, None)
        # ranks below a win of known length, above a loss of known length
        limit = _engine.MATE_LIMIT + 1
        entry.update(value="win" if win else "loss", remoteness=None, exact=True, proved=True,
                     score=limit if win else -limit)

    def _endgame_move(self, entry: dict, position, move) -> None:
        """Label a move the engine only estimated or proved with the endgame table's value of
        the position it leads to, where the table holds it (remoteness included)."""
        table, game = self.endgame, self.game
        try:
            record = table.record(game.play(position, move))
        except (NotInTable, BeyondTable):
            return
        value = table.game.value_kind.decode(record).for_mover(game.move_gain(position, move))
        for key in ("bound", "depth", "visits", "proved"):
            entry.pop(key, None)
        score = _engine.MATE_SCORE - value.remoteness
        entry.update(value=value.value, remoteness=value.remoteness, exact=True, table=True,
                     score=score if value.value == "win" else -score)

    def _alphabeta_moves(self, position) -> tuple[list[dict], bool, dict]:
        """The alpha-beta engine's root moves as entries (with "score", best first within each
        rank), whether it proved every one, and its search figures."""
        game = self.game
        depth, nodes, seconds, _, _, _ = self.engine.status()
        report = self.engine.report()
        moves = []
        for code, gain, score, exact_value, proven, move_depth, _ in report:
            move = game.play_move(position, code)
            entry = {"move": game.format_move(move)}
            entry.update(self.value_of(score, proven, bound=not exact_value))
            if not entry["exact"]:
                entry["depth"] = move_depth
            if entry["bound"] is None:
                del entry["bound"]
            entry["score"] = score
            entry["_code"] = code
            entry["_proven"] = bool(proven)
            moves.append(entry)
        search = {"method": "alphabeta", "depth": depth, "nodes": nodes, "seconds": round(seconds, 3),
                  "nodes_per_second": int(nodes / seconds) if seconds > 0 else None}
        return moves, all(r[4] for r in report), search

    def _mcts_moves(self, position) -> tuple[list[dict], bool, dict]:
        """The Monte Carlo search's root moves as entries: a move its proofs settled is exact
        (won or lost, no remoteness), every other the playouts' mean result for the mover and
        the visits behind it; "score" orders them as the search ranks them (proven wins, the
        most visited, proven losses)."""
        game = self.game
        playouts, seconds, _, _, _ = self.mcts.status()
        report = self.mcts.report()
        moves = []
        for order, (code, gain, visits, mean, proven) in enumerate(report):
            entry = {"move": game.format_move(game.play_move(position, code))}
            entry.update(_mcts_value(mean, proven, visits))
            if proven:
                entry["proved"] = True
                entry["score"] = (_engine.MATE_LIMIT + 1) * proven
            else:
                entry["visits"] = visits
                entry["score"] = -order        # the search's own order
            entry["_code"] = code
            moves.append(entry)
        search = {"method": "mcts", "depth": None, "playouts": playouts, "seconds": round(seconds, 3),
                  "playouts_per_second": int(playouts / seconds) if seconds > 0 else None,
                  "playouts_kept": self.mcts.carried}
        return moves, bool(report) and all(r[4] for r in report), search

    def _result(self, position, state: bytes, threads: int) -> dict:
        game = self.game
        if self.mcts is not None:
            moves, every_proven, search = self._mcts_moves(position)
        else:
            moves, every_proven, search = self._alphabeta_moves(position)
        for entry in moves:
            move = game.play_move(position, entry["_code"])
            if self.endgame is not None and (not entry["exact"] or entry.get("proved")):
                self._endgame_move(entry, position, move)
            if self._proof is not None and not entry["exact"]:
                self._proved_move(entry, game.play(position, move))
        # best first within each rank (_rank); a proved win scores below a win of known length
        moves.sort(key=lambda m: (_rank(m), -m["score"]))
        final = not moves
        if final:
            score = self.engine.final(state)
            value = self.value_of(score, True)
            value.update(remoteness=0)            # over: its length is known, none
            value.pop("remoteness_known", None)
            best: list[str] = []
        else:
            top = moves[0]
            proved = self._proof["value"] if self._proof is not None else None
            # every move's value known (or, alpha-beta's --multipv, proven at most the best's)
            settled = all(m["exact"] or m.get("_proven") for m in moves)
            value = None
            if top["exact"] and top["value"] in ("win", "loss"):
                # the fastest win or the slowest loss comes first; its length is the position's
                # when every move is settled and no move that counts lacks its length
                lengths = [m["remoteness"] for m in moves if "bound" not in m
                           and (top["value"] == "loss" or m["value"] == "win")]
                if settled and top["remoteness"] is not None and None not in lengths:
                    value = {"value": top["value"], "remoteness": top["remoteness"], "exact": True}
                elif top["value"] == "win" or settled:
                    # a winning move shows a win, every move lost a loss: the length not known
                    value = {"value": top["value"], "remoteness": None, "exact": True,
                             "proved": True, "by": ("table" if top.get("table") else "proof"
                                                    if top.get("proved") else "search")}
            if value is None:
                if self.mcts is not None:
                    value = {k: top[k] for k in ("value", "remoteness", "exact")}
                else:
                    value = self.value_of(top["score"], settled and top["exact"])
                if proved is not None and not value["exact"]:
                    value = {"value": proved, "remoteness": None, "exact": True, "proved": True}
            best = [m["move"] for m in moves if m["score"] == top["score"] and "bound" not in m]
            if value.get("proved") and value["value"] == "win":   # every proved win is best
                best += [m["move"] for m in moves if m.get("proved") and m["value"] == "win"
                         and m["move"] not in best]
        line = []
        if moves:
            code = moves[0]["_code"]
            if self.mcts is not None:
                codes = [code] + self.mcts.principal_variation(code, LINE_PLIES - 1)
            else:
                children = {c: child for c, _, child in self.engine.moves(state)}
                codes = [code] + self.engine.principal_variation(children[code], LINE_PLIES - 1)
            line = _line_texts(game, position, codes)
        for m in moves:
            del m["_code"]
            m.pop("_proven", None)
            if self.mcts is not None:
                del m["score"]             # the search's order, shown by the order of the moves
        result = {
            "position": game.format_position(position), "value": value["value"],
            "remoteness": value["remoteness"], "exact": value["exact"], "final": final,
            "moves": moves, "best": best, "line": line,
            "side_to_move": game.side_to_move(position), "source": "engine",
            "value_kind": game.value_kind.name, "unit": self.unit,
            "game": game.name, "description": game.describe(), "parameters": game.parameters(),
            "search": {**search, "threads": threads, "leaf_tiers": self.leaves["tiers"],
                       "leaf_tables": self.leaves["tables"]},
        }
        if value.get("remoteness_known") is False:
            result["remoteness_known"] = False
        if value.get("proved"):
            result["proved"] = True
            result["proved_by"] = value.get("by", "proof")
        if self.endgame is not None:
            result["search"]["endgame_table"] = self.endgame.path
        if self._proof is not None:
            result["search"]["proof"] = {k: self._proof[k] for k in ("expansions", "seconds", "value")}
            if self._proof_leaves is not None:
                result["search"]["proof"]["leaves"] = self._proof_leaves.citation
            if "gave_up" in self._proof:
                result["search"]["proof"]["gave_up"] = self._proof["gave_up"]
        return result


def _mcts_value(mean: float, proven: int, visits: int) -> dict:
    """A Monte Carlo value as the JSON shows it: proven (+1 won, -1 lost for the side playing
    the move) exact without remoteness, else the playouts' mean result from -1 to +1; a move
    no playout tried has no value yet (null, "not searched")."""
    if proven:
        return {"value": "win" if proven > 0 else "loss", "remoteness": None, "exact": True}
    if not visits:
        return {"value": None, "remoteness": None, "exact": False}
    return {"value": round(2 * mean - 1, 2), "remoteness": None, "exact": False}


def _rank(move: dict) -> int:
    """Moves with a value first, then the moves the search only bounded (with --multipv a
    bound, "at most", may sit above the best value and is not a value), then the moves the
    proof showed lose, which every bound may beat."""
    if move.get("proved") and move["value"] == "loss":
        return 2
    return 1 if "bound" in move else 0


def _keyed(table: Table) -> bool:
    return isinstance(table.layout, KeyedLayout)


def _line_texts(game: Game, position, codes: list[int]) -> list[str]:
    """The texts of a line of play-kernel codes from `position`, played on by the game's
    compiled kernel where it has one (the rules in Python can take milliseconds a move on a
    large board; the self-check holds the two to the same children)."""
    line = []
    compiled = isinstance(game, Compiled)
    for code in codes:
        try:
            move = game.play_move(position, code)
            if compiled:
                position = dict(game.kernel_moves(position))[move]
            else:
                position = game.play(position, move)
            line.append(game.format_move(move))
        except Exception:  # noqa: BLE001 - a line stops where it stops being legal
            break
    return line


def describe_value(v: dict, game: Game, unit: str) -> str:
    """A value as text: 'win in 13', 'margin +4', or '~ +1.35 house cells (estimate)'."""
    if v["value"] is None:
        return "not searched"
    if isinstance(v["value"], str) and v["value"] in ("win", "loss"):
        if v["remoteness"] is None:          # proved: a proof gives no remoteness
            return f"{v['value']} (proved)"
        if v["remoteness"] == 0 and v["exact"]:
            return f"{v['value']} (game over)"
        text = f"{v['value']} in {v['remoteness']}"
        if v.get("bound"):
            return f"at most {text}"
        return text if v["exact"] else f"{text}?"
    if v["exact"]:
        return f"{v['value']}" if isinstance(v["value"], str) else f"margin {v['value']:+d}"
    prefix = "at most " if v.get("bound") else "~"
    return f"{prefix}{v['value']:+.2f}"


def _whole(value, name: str, option: str) -> int:
    """`value` as an int where it is a whole number (numpy's too; not a bool); else
    BadParameters naming it."""
    if not isinstance(value, bool):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise BadParameters(f"{option} ({name}) must be a whole number, not "
                        f"{quote(str(value), 20)} ({type(value).__name__})")


def check_budget(seconds, nodes, threads, multipv, seed, *, depth=None, infinite=False) -> tuple:
    """The budget checked: one sentence naming what is wrong (BadParameters), the option and
    the Python parameter alike.  Threads 0: every core (as every command's --threads 0).
    Neither time nor nodes: the default time, unless a `depth` or `infinite` bounds it."""
    from ..solver.tiers import default_threads
    if infinite and (seconds is not None or nodes is not None or depth is not None):
        raise BadParameters("an infinite search takes no time, nodes or depth: `stop` ends it")
    if depth is not None:
        depth = _whole(depth, "depth", "depth")
        if not 1 <= depth <= _engine.MAX_SEARCH_DEPTH:
            raise BadParameters(f"depth must be from 1 to {_engine.MAX_SEARCH_DEPTH}, not {shown(depth)}")
    if seconds is not None and nodes is not None:
        raise BadParameters("give a time (--time, seconds) or a node budget (--nodes, nodes), not both")
    if seconds is not None:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise BadParameters(f"--time (seconds) must be a number, not {quote(str(seconds), 20)}")
        if not 0 < seconds <= MAX_SECONDS:         # NaN fails too
            raise BadParameters(f"--time (seconds) must be more than 0 and at most {MAX_SECONDS:g} "
                                f"seconds, not {shown(seconds)}")
    if nodes is not None:
        nodes = _whole(nodes, "nodes", "--nodes")
        if not 1 <= nodes <= MAX_NODES:
            raise BadParameters(f"--nodes (nodes) must be from 1 to {MAX_NODES:,}, not {shown(nodes)}")
    threads = _whole(threads, "threads", "--threads")
    if threads == 0:
        threads = min(default_threads(), MAX_THREADS)
    if not 1 <= threads <= MAX_THREADS:
        raise BadParameters(f"--threads (threads) must be 0 (every core) or from 1 to {MAX_THREADS}, "
                            f"not {shown(threads)}")
    if multipv is not None and not 1 <= _whole(multipv, "multipv", "--multipv") <= 512:
        raise BadParameters(f"--multipv (multipv) must be from 1 to 512, not {shown(multipv)}")
    if not 0 <= _whole(seed, "seed", "--seed") < 1 << 63:
        raise BadParameters(f"--seed (seed) must be from 0 to 2^63-1, not {shown(seed)}")
    if seconds is None and nodes is None and depth is None and not infinite:
        seconds = DEFAULT_SECONDS
    return seconds, nodes, threads


def check_tables(tables) -> tuple:
    """`tables` as a tuple of open tables (sowsolve.open_table; None: none), else
    BadParameters."""
    if tables is None:
        return ()
    if isinstance(tables, (str, bytes, Table)) or not hasattr(tables, "__iter__"):
        raise BadParameters(f"tables must be a list of open tables (sowsolve.open_table), not "
                            f"{str(tables)[:40]!r}")
    tables = tuple(tables)
    if not all(isinstance(t, Table) for t in tables):
        raise BadParameters(f"tables must be a list of open tables (sowsolve.open_table), not "
                            f"{str(tables)[:40]!r}")
    return tables


def check_hash(hash_bytes: int, besides: int = 0) -> None:
    """The search's memory checked before any of it is taken: at least 1 MB, and with
    `besides` (the proof search's table, taken besides it) at most the memory available now
    (the whole table is cleared, so touched, per search)."""
    from ..solver.estimate import available_memory
    available = available_memory()
    hash_bytes = _whole(hash_bytes, "hash_bytes", "--hash")
    if hash_bytes < 1 << 20:
        raise BadParameters(f"--hash (hash_bytes) must be at least 1M, not {hash_bytes:,} bytes")
    if available is not None and hash_bytes + besides > available:
        also = (f" (and {besides / (1 << 30):.1f} GiB for the proof search's table besides it)"
                if besides else "")
        raise BadParameters(f"--hash of {hash_bytes / (1 << 30):.1f} GiB{also} is more than the "
                            f"{available / (1 << 30):.1f} GiB of memory available now")


def table_answer(table: Table, position, board: Game | None = None) -> dict | None:
    """The table's own answer for a position it holds (every value exact), shaped as the
    engine's; None where the table does not hold it.  `board`: the game the position is
    of, where the table is of another board that holds its positions (the answer names
    both)."""
    from .query import query
    game = table.game
    try:
        if board is not None and board.parameters() != game.parameters():
            game.check_position(position)   # a position of more stones than its start
        table.record(position)
    except (NotInTable, BeyondTable, BadPosition):
        return None         # (a table of fewer stones a pit: more than its start holds)
    result = query(table, game.format_position(position))
    if result.get("source") != "table":
        return None
    if board is not None and board.parameters() != game.parameters():
        result.update(description=board.describe(), parameters=board.parameters(),
                      table_description=game.describe())
    result["exact"] = True
    for move in result["moves"]:
        move["exact"] = True
    result["table"] = table.path
    return result


#: the last module-level analyse's engine, freed at the next call or at exit: freeing gigabytes
#: of table takes time, which the answer should not wait for
_LAST_ANALYSER: list = []


def analyse(position, game: Game | None = None, tables: Sequence[Table] = (), *,
            seconds: float | None = None, nodes: int | None = None, threads: int = 1,
            multipv: int | None = None, seed: int = 0, hash_bytes: int = DEFAULT_HASH_BYTES,
            leaf_bytes: int = DEFAULT_LEAF_BYTES,
            on_status: Callable[[Status], None] | None = None,
            started: float | None = None) -> dict:
    """The value of a position and of each of its moves, each labelled exact or estimated.

    `position` is text or a position object of `game`; text needs no game: the first of
    `tables` gives it, else the text itself (the standard board where it fits, else the
    smallest that holds it, as the command line reads it).  A table of `tables` that holds the position answers it whole (every value
    exact, "source": "table"); else the engine searches it for `seconds` (default 5) or
    `nodes`, on `threads` threads, with those tables' tiers at its leaves ("source": "engine").
    Ctrl-C raises Interrupted, whose `result` is the best found so far.  `seconds` bounds the
    whole answer from `started` (time.perf_counter(); left out, the call): the engine's memory
    taken and cleared counts, its release does not (it is kept until the next call)."""
    started = time.perf_counter() if started is None else started
    seconds, nodes, threads = check_budget(seconds, nodes, threads, multipv, seed)
    tables = check_tables(tables)
    if game is None and tables:
        game = tables[0].game
    elif game is None:
        # the game and board the text is a position of, as the command line reads it (the
        # standard board where it fits; variants written alike: the first)
        from .locate import place_position
        if not isinstance(position, str):
            raise BadParameters("name the game (a Game) of a position that is not text")
        game = place_position(position).game
    if isinstance(position, str):
        position = game.parse_position(position)
    game.check_position(position)
    for table in tables:
        if game.shares_tables_with(table.game):
            answer = table_answer(table, position, game)
            if answer is not None:
                return answer
    _LAST_ANALYSER.clear()
    analyser = Analyser(game, tables, hash_bytes=hash_bytes, leaf_bytes=leaf_bytes)
    _LAST_ANALYSER.append(analyser)
    return analyser.analyse(position, seconds, nodes, threads, multipv, seed, on_status,
                            started=started)
