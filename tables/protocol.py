"""The engine protocol: a long-lived engine that other programs drive with one line of text a
command, modelled on chess's UCI and Go's GTP (docs/engine.md has every command and a
transcript).  `sowsolve engine` reads the lines from stdin; a program can also hold an
`EngineProtocol` and hand it lines itself (bench/bench_protocol.py drives the command from
another process).

Why a process that stays: a match program asking `sowsolve analyse` for every move pays the
start-up, the imports, the tables opened again and the engine's memory made anew each time,
and the search tree is thrown away.  Here the game's `Analyser` is built once (at `isready`,
or the first search), its transposition table and Monte Carlo trees kept from move to move,
and the board's tables stay open at its leaves.

Every reply is one line: `info ...` while a search runs, then `bestmove MOVE`; `error <one
sentence>` for anything that cannot be done (the engine goes on); `readyok`; one line of JSON
for `analyse`.  A search runs on a thread of its own, so `stop`, `isready` and `quit` are
read while it thinks.
"""
from __future__ import annotations

import json
import math
import re
import threading
import time
from typing import Callable

from ..solver.errors import BadMove, BadParameters, BadPosition, quote, shown
from ..solver.games import GAMES, make_game
from ..solver.params import parse_size as _parse_size
from ..solver.tiers import default_threads
from . import analysis
from .directory import tables_directory, tables_of_board
from .format import TableError
from .store import open_table, software_version

#: the protocol's version, for programs that check what they talk to (`protocol`)
PROTOCOL_VERSION = 1
#: the longest line read (a longer one is refused whole)
MAX_LINE = 1 << 16
#: how often a running search is looked at (a `stop` that came before the search began is
#: repeated then), and the most time between two `info` lines that say nothing new
POLL_SECONDS = 0.02
INFO_SECONDS = 1.0
#: of `go time T`, the time kept back for answering (the search's report, the best line,
#: the reply read by the other process): the search gets T less this
MOVE_OVERHEAD = 0.01
#: the least time between two `info` lines (a new depth or best move is shown then)
INFO_EVERY = 0.1
#: options `setoption` takes: name -> (what it is, its default as text)
OPTIONS = {
    "threads": "search threads (0: every core)",
    "hash": "memory of the transposition table or Monte Carlo trees (64M, 1G, ...)",
    "tables": "the tables directory: the board's finished tables answer the positions they "
              "hold and sit at the search's leaves",
    "leaf-memory": "at most this much of the tables is read into memory for the leaves",
}
COMMANDS = ("protocol", "game", "newgame", "position", "legal", "show", "go", "analyse", "stop",
            "setoption", "isready", "help", "quit")
#: the commands that take nothing after them
BARE = ("protocol", "newgame", "legal", "show", "stop", "isready", "help", "quit")


class ProtocolError(ValueError):
    """A command the engine cannot carry out; its text is the `error` line's sentence."""


class OutputClosed(OSError):
    """The program reading the engine's answers has gone (its end of the pipe closed)."""


def parse_size(text: str, name: str) -> int:
    """'256M', '1G', '1.5G' or a number of bytes (units of 1024), as the commands' --hash."""
    return _parse_size(text, name, allow_zero=False)


def _whole(text: str, name: str) -> int:
    if not re.fullmatch(r"[-+]?[0-9]{1,30}", text, flags=re.ASCII):
        raise ProtocolError(f"{name} must be a whole number, not {quote(text, 20)}")
    return int(text)


def _number(text: str, name: str) -> float:
    # ASCII digits only (float() would take other scripts' digits, and "nan" or "inf")
    if not re.fullmatch(r"[-+]?(\d{1,20}(\.\d{0,20})?|\.\d{1,20})([eE][-+]?\d{1,4})?", text,
                        flags=re.ASCII):
        raise ProtocolError(f"{name} must be a number of seconds, not {quote(text, 20)}")
    value = float(text)
    if not math.isfinite(value):
        raise ProtocolError(f"{name} must be a number of seconds, not {quote(text, 20)}")
    return value


def board_of(name: str, words: list[str]) -> dict:
    """The board options after `game NAME` (as the command line writes them: `--size 6x6`,
    `--cols 4 --stones 2`, or `--cols=4`) as make_game's parameters."""
    entry = GAMES.get(name)
    if entry is None:
        raise ProtocolError(f"unknown game {quote(name, 20)}; known games: {', '.join(GAMES)}")
    declared = {p.option: p for p in entry.parameters}
    board, i = {}, 0
    while i < len(words):
        word = words[i]
        option, _, value = word.partition("=")
        if not value:
            if i + 1 >= len(words):
                raise ProtocolError(f"{quote(word, 20)} needs a value (e.g. "
                                    f"{' '.join(p.option + ' ' + str(p.default) for p in entry.parameters)})")
            value = words[i + 1]
            i += 1
        i += 1
        parameter = declared.get(option)
        if parameter is None:
            takes = ", ".join(declared) or "no board options"
            raise ProtocolError(f"{entry.title} takes {takes}, not {quote(option, 20)}")
        if parameter.name in board:
            raise ProtocolError(f"{option} is given twice")
        board[parameter.name] = (_whole(value, option) if parameter.kind.cli_type is int
                                 else value)
    return board


def _value_words(result: dict) -> str:
    """A value as `info` gives it: `value win remoteness 13 exact`, `value +4 exact` (a
    margin), `value +1.35 estimated` (an estimate in the result's unit); a proved value that
    gives no remoteness says `proved`."""
    value = result.get("value")
    if value is None:
        return ""
    if isinstance(value, str):
        words = f"value {value}"
    elif isinstance(value, int) and not isinstance(value, bool):
        words = f"value {value:+d}"
    else:
        words = f"value {value:+.2f}"
    if result.get("remoteness") is not None:
        words += f" remoteness {result['remoteness']}"
    words += " exact" if result.get("exact") else " estimated"
    if result.get("proved"):
        words += " proved"
    return words


class EngineProtocol:
    """One engine session: the game and board, the position, the options, and the `Analyser`
    built for them (kept between searches).  `handle(line)` carries out one command; `write`
    receives each reply line (without its newline) and may be called from the search's thread.
    """

    def __init__(self, write: Callable[[str], None], *, threads: int | None = None,
                 hash_bytes: int = analysis.DEFAULT_HASH_BYTES, tables: str | None = None,
                 leaf_bytes: int = analysis.DEFAULT_LEAF_BYTES):
        self._write_line = write
        self._write_lock = threading.Lock()
        self.threads = default_threads() if not threads else threads
        self.hash_bytes = hash_bytes
        self.tables_directory = tables if tables is not None else tables_directory()
        self.leaf_bytes = leaf_bytes
        self.game = None
        self.position = None
        self.analyser: analysis.Analyser | None = None
        self.tables: list = []
        self._search: threading.Thread | None = None
        self._stop = threading.Event()      # asked to stop the search under way
        self._infinite = False              # the search under way has no limit but stop
        self.closed = False                 # the reader of the replies has gone

    # --- replies -------------------------------------------------------------------------
    def send(self, line: str) -> None:
        with self._write_lock:
            if self.closed:
                return
            try:
                self._write_line(line)
            except (BrokenPipeError, OutputClosed):
                self.closed = True

    # --- the loop ------------------------------------------------------------------------
    def run(self, readline: Callable[[int], str]) -> None:
        """Read and carry out commands until `quit`, the end of input or a closed output.
        `readline(limit)` is a stream's readline.  Commands are carried out in order, so a
        script can be piped in: one that comes while a search runs waits for its end -- but
        `stop` and `quit` that come while it runs stop it at once, and `isready` is answered
        at once (as UCI has it); those behind a waiting command wait their turn, except that
        they stop an infinite search (nothing else would).  At the end of input a search
        under way finishes (an infinite one is stopped) and is answered."""
        import queue
        lines: "queue.Queue[str | None]" = queue.Queue()

        def read() -> None:
            try:
                while True:
                    line = readline(MAX_LINE + 1)
                    if not line:
                        break
                    if len(line) > MAX_LINE and not line.endswith("\n"):
                        while line and not line.endswith("\n"):     # the rest of it
                            line = readline(MAX_LINE + 1)
                        line = _TOO_LONG
                    lines.put(line)
            except (OSError, ValueError):
                pass
            finally:
                lines.put(None)

        threading.Thread(target=read, name="sowsolve-engine-input", daemon=True).start()
        pending: list = []
        ended = False
        while not self.closed:
            if not pending:
                if ended:
                    break
                try:
                    pending.append(lines.get(timeout=0.1))
                except queue.Empty:
                    continue
            line = pending.pop(0)
            if line is None:
                ended = True
                if self._infinite:
                    self.stop()            # no one is left to send the stop it waits for
                continue
            word = _first_word(line)
            if self.thinking() and word not in ("stop", "quit", "isready"):
                # in order: this command after the search; meanwhile stop and quit still stop it
                while self.thinking() and not self.closed:
                    # a stop, quit or the end of input behind the waiting command is its own
                    # turn's, except where the search has no other end
                    if self._infinite and any(more is None or _first_word(more) in ("stop", "quit")
                                              for more in pending):
                        self.stop()
                    try:
                        pending.append(lines.get(timeout=POLL_SECONDS))
                    except queue.Empty:
                        continue
                if self._search is not None:
                    self._search.join()
            if line is _TOO_LONG:
                self.send(f"error a line of more than {MAX_LINE:,} characters is no command")
                continue
            if not self.handle(line):
                return                     # quit: close() stops a search under way
        if self._search is not None and not self.closed:
            self._search.join()            # the end of input: the last search is answered

    def handle(self, line: str) -> bool:
        """Carry out one command line; False once the engine should end (`quit`)."""
        words = line.split()
        if not words:
            return True
        command, args = words[0], words[1:]
        handler = getattr(self, "_cmd_" + command.replace("-", "_"), None)
        if command not in COMMANDS or handler is None:
            self.send(f"error unknown command {quote(command, 20)}; commands: {', '.join(COMMANDS)}")
            return True
        if command in BARE and args:
            if command == "quit":
                return False                # whatever follows it, quit ends the engine
            self.send(f"error {command} takes nothing after it, not {quote(' '.join(args), 20)}")
            if command == "isready":
                self.send("readyok")        # answered all the same: a driver waits for it
            return True
        try:
            return handler(args, line) is not False
        except ProtocolError as exc:
            self.send(f"error {exc}")
        except (BadParameters, BadPosition, BadMove, TableError, MemoryError) as exc:
            self.send(f"error {exc or type(exc).__name__}")
        except OSError as exc:              # a tables directory that cannot be read
            self.send(f"error {exc.strerror or exc}{': ' + str(exc.filename) if exc.filename else ''}")
        return True

    def thinking(self) -> bool:
        return self._search is not None and self._search.is_alive()

    def _idle(self, command: str) -> None:
        if self.thinking():
            raise ProtocolError(f"the engine is thinking: send stop before {command}")

    def close(self) -> None:
        """Stop the search under way, wait for it, close the tables."""
        self.stop()
        if self._search is not None:
            self._search.join()
        self._drop_analyser()

    def stop(self) -> None:
        self._stop.set()
        if self.thinking() and self.analyser is not None:
            self.analyser.stop()

    # --- commands ------------------------------------------------------------------------
    def _cmd_protocol(self, args, line):
        self.send(f"id name sowsolve {software_version()}")
        self.send(f"id protocol {PROTOCOL_VERSION}")
        self.send(f"id games {' '.join(GAMES)}")
        defaults = {"threads": str(self.threads), "hash": f"{self.hash_bytes >> 20}M",
                    "tables": self.tables_directory, "leaf-memory": f"{self.leaf_bytes >> 20}M"}
        for name in OPTIONS:
            self.send(f"option {name} value {defaults[name]}")
        self.send("protocolok")

    def _cmd_help(self, args, line):
        self.send("help commands: " + ", ".join(COMMANDS) + "; budgets of go and analyse: time "
                  "SECONDS, nodes N, depth D, infinite; options: " + ", ".join(OPTIONS))

    def _cmd_quit(self, args, line):
        return False

    def _cmd_isready(self, args, line):
        try:
            if not self.thinking() and self.game is not None:
                self._prepare(warm=True)
        finally:
            self.send("readyok")            # after the error line, where building failed

    def _cmd_stop(self, args, line):
        self.stop()              # no search under way: nothing to stop, nothing to say

    def _cmd_game(self, args, line):
        self._idle("game")
        if not args:
            raise ProtocolError(f"game needs a game: {', '.join(GAMES)} (and board options)")
        self.choose_game(make_game(args[0], **board_of(args[0], args[1:])))

    def choose_game(self, game) -> None:
        """Play `game` (a Game) from its start; its engine is built when next needed."""
        self._idle("game")
        self._drop_analyser()
        self.game, self.position = game, game.initial()

    def _cmd_newgame(self, args, line):
        self._idle("newgame")
        game = self._need_game()
        if self.analyser is not None:
            self.analyser.clear()
        self.position = game.initial()

    def _cmd_position(self, args, line):
        self._idle("position")
        game = self._need_game()
        if not args:
            raise ProtocolError("position needs a position: start, or its text (then moves ...)")
        cut = args.index("moves") if "moves" in args else len(args)
        text, moves = " ".join(args[:cut]), args[cut + 1:]
        if text in ("start", "startpos"):
            position = game.initial()
        else:
            from .locate import parse_for_game
            position = parse_for_game(game, text)
            game.check_position(position)
        for i, word in enumerate(moves):
            if not game.legal_moves(position):
                raise ProtocolError(f"move {i + 1}, {quote(word, 20)}: the game is over at "
                                    f"{game.format_position(position)}")
            try:
                move = game.parse_move(position, word)
            except BadMove:
                raise ProtocolError(f"move {i + 1}, {quote(word, 20)}, is not legal in "
                                    f"{game.format_position(position)}; legal: "
                                    f"{_listed(game, position)}") from None
            position = game.play(position, move)
        self.position = position

    def _cmd_legal(self, args, line):
        game = self._need_game()
        self.send(" ".join(["legal"] + [game.format_move(m) for m in game.legal_moves(self.position)]))

    def _cmd_show(self, args, line):
        game = self._need_game()
        self.send(f"position {game.format_position(self.position)}")

    def _cmd_setoption(self, args, line):
        self._idle("setoption")
        if args[:1] == ["name"] and "value" in args:        # UCI's spelling
            cut = args.index("value")
            args = [" ".join(args[1:cut])] + args[cut + 1:]
        if len(args) < 2:
            raise ProtocolError(f"setoption needs a name and a value; options: {', '.join(OPTIONS)}")
        name, value = args[0].lower(), " ".join(args[1:])
        if name == "threads":
            threads = _whole(value, "threads")
            if not 0 <= threads <= analysis.MAX_THREADS:
                raise ProtocolError(f"threads must be 0 (every core) or from 1 to "
                                    f"{analysis.MAX_THREADS}, not {shown(threads)}")
            self.threads = threads or default_threads()
            return
        if name == "hash":
            size = parse_size(value, "hash")
            try:
                # the proof search's table besides it, where the game has one, as isready takes it
                analysis.check_hash(size, int(size * analysis.PROOF_TABLE_FRACTION))
            except BadParameters as exc:
                raise ProtocolError(str(exc).replace("--hash (hash_bytes)", "hash")
                                    .replace("--hash of", "hash of")) from None
            self.hash_bytes = size
        elif name == "tables":
            import os
            if not os.path.isdir(value):
                raise ProtocolError(f"tables must name a folder (of tables), not {quote(value, 40)}")
            self.tables_directory = value
        elif name == "leaf-memory":
            self.leaf_bytes = parse_size(value, "leaf-memory")
        else:
            raise ProtocolError(f"unknown option {quote(args[0], 20)}; options: {', '.join(OPTIONS)}")
        self._drop_analyser()                # built anew with the new option when next needed

    def _cmd_go(self, args, line):
        self._start(args, "go")

    def _cmd_analyse(self, args, line):
        self._start(args, "analyse")

    # --- searching -----------------------------------------------------------------------
    def _need_game(self):
        if self.game is None:
            raise ProtocolError(f"no game chosen: send game GAME [board options] first "
                                f"(games: {', '.join(GAMES)})")
        return self.game

    def _budget(self, args: list[str], command: str) -> dict:
        budget: dict = {}
        i = 0
        while i < len(args):
            word = args[i]
            if word == "infinite":
                budget["infinite"] = True
                i += 1
                continue
            if word not in ("time", "nodes", "depth"):
                raise ProtocolError(f"{command} takes time SECONDS, nodes N, depth D or infinite, "
                                    f"not {quote(word, 20)}")
            if i + 1 >= len(args):
                raise ProtocolError(f"{word} needs a value")
            if word in budget:
                raise ProtocolError(f"{word} is given twice")
            value = args[i + 1]
            budget[word] = _number(value, "time") if word == "time" else _whole(value, word)
            i += 2
        try:
            analysis.check_budget(budget.get("time"), budget.get("nodes"), self.threads, None, 0,
                                  depth=budget.get("depth"), infinite=budget.get("infinite", False))
        except BadParameters as exc:
            # the library names the command line's options; the protocol's words are these
            raise ProtocolError(str(exc).replace("--time (seconds)", "time").replace(
                "--nodes (nodes)", "nodes").replace("a time (--time, seconds)", "a time").replace(
                "a node budget (--nodes, nodes)", "nodes")) from None
        return budget

    def _start(self, args: list[str], command: str) -> None:
        self._idle(command)
        game = self._need_game()
        budget = self._budget(args, command)
        analyser = self._prepare()
        if "depth" in budget and analyser.mcts is not None:
            raise ProtocolError(f"depth applies to the alpha-beta search; the engine of "
                                f"{game.describe()} searches by Monte Carlo: give time or nodes")
        self._stop.clear()
        self._infinite = bool(budget.get("infinite"))
        self._search = threading.Thread(target=self._think, name="sowsolve-engine-search",
                                        args=(analyser, self.position, budget, command),
                                        daemon=True)
        self._search.start()

    def _prepare(self, warm: bool = False) -> analysis.Analyser:
        """The game's Analyser with the board's tables at its leaves, built once for the
        options in force; with `warm` (isready) its search table's memory touched now rather
        than in the first search (a search asked for first pays only what it touches)."""
        if self.analyser is None:
            game = self._need_game()
            opened = []
            try:
                try:
                    if self.tables_directory and _is_directory(self.tables_directory):
                        for path in tables_of_board(game, self.tables_directory):
                            opened.append(open_table(path))
                    analyser = analysis.Analyser(game, opened, hash_bytes=self.hash_bytes,
                                                 leaf_bytes=self.leaf_bytes, keep_table=True)
                except TableError as exc:
                    # a damaged table is said once; the engine goes on without the tables
                    for table in opened:
                        table.close()
                    opened = []
                    self.send(f"error {exc}; the engine searches without the tables of "
                              f"{quote(self.tables_directory, 40)}")
                    analyser = analysis.Analyser(game, (), hash_bytes=self.hash_bytes,
                                                 leaf_bytes=self.leaf_bytes, keep_table=True)
            except BaseException:
                for table in opened:
                    table.close()
                raise
            self.analyser, self.tables = analyser, opened
        if warm:
            self.analyser.warm()
        return self.analyser

    def _drop_analyser(self) -> None:
        self.analyser = None
        for table in self.tables:
            table.close()
        self.tables = []

    def _think(self, analyser: analysis.Analyser, position, budget: dict, command: str) -> None:
        """The search's thread: the table's answer where a table holds the position, else the
        engine's; `info` lines while it runs; then `bestmove` (go) or the JSON (analyse)."""
        last = {"at": 0.0, "key": None}

        def status(s: analysis.Status) -> None:
            if self._stop.is_set():
                analyser.stop()             # a stop that came before the search began
            if command != "go":
                return
            key = (s.phase, s.depth, s.best)
            now = time.perf_counter()
            if now - last["at"] < (INFO_SECONDS if key == last["key"] else INFO_EVERY):
                return
            last.update(at=now, key=key)
            self.send(_status_info(s))

        try:
            result = None
            for table in self.tables:
                result = analysis.table_answer(table, position, self.game)
                if result is not None:
                    _table_line(table, position, result)
                    break
            if result is None:
                seconds = budget.get("time")
                if seconds is not None:             # the answer's own time kept back
                    seconds = max(seconds - MOVE_OVERHEAD, seconds / 2)
                result = analyser.analyse(
                    position, seconds=seconds, nodes=budget.get("nodes"),
                    threads=self.threads, on_status=status, status_every=POLL_SECONDS,
                    # a move needs the best alone, fully searched (as a match plays); analyse
                    # values every move, as `sowsolve analyse` does
                    multipv=1 if command == "go" else None,
                    depth=budget.get("depth"), infinite=budget.get("infinite", False),
                    lines=True)
            if command == "analyse":
                self.send(json.dumps(result, separators=(",", ":")))
                return
            self.send(_result_info(result))
            if budget.get("infinite"):
                self._stop.wait()           # an infinite search answers when told to stop
            best = result["best"][0] if result["best"] else (
                result["moves"][0]["move"] if result["moves"] else "none")
            self.send(f"bestmove {best}")
        except Exception as exc:  # noqa: BLE001 - the search's failure is a line, not a traceback
            self.send(f"error the search failed: {str(exc)[:200] or type(exc).__name__}")
            if command == "go":
                self.send("bestmove none")


#: what the input reader hands on in place of a line longer than MAX_LINE
_TOO_LONG = "a line too long"


def _first_word(line) -> str:
    words = line.split() if isinstance(line, str) and line is not _TOO_LONG else []
    return words[0] if words else ""


def _is_directory(path: str) -> bool:
    import os
    return os.path.isdir(path)


def _listed(game, position, limit: int = 12) -> str:
    moves = [game.format_move(m) for m in game.legal_moves(position)]
    if len(moves) > limit:
        return " ".join(moves[:limit]) + f" ... ({len(moves)} moves)"
    return " ".join(moves)


def _table_line(table, position, result: dict) -> None:
    """The table's best line from a position it holds (the first best move, again and again)."""
    from .query import line
    try:
        steps = line(table, position, plies=analysis.LINE_PLIES)["line"]
    except Exception:  # noqa: BLE001 - a line is a courtesy: the answer stands without it
        steps = []
    result["line"] = [step["move"] for step in steps]


def _status_info(s: analysis.Status) -> str:
    """An `info` line of a running search."""
    if s.phase == "proof":
        return f"info proof expansions {s.nodes} time {s.seconds:.3f}"
    rate = int(s.nodes / s.seconds) if s.seconds > 0 else 0
    words = (f"info playouts {s.nodes} time {s.seconds:.3f} pps {rate}" if s.search == "mcts"
             else f"info depth {s.depth} nodes {s.nodes} time {s.seconds:.3f} nps {rate}")
    if s.score is not None:
        words += " " + _value_words(s.score)
    if s.line:
        words += " pv " + " ".join(s.line)
    return words


def _result_info(result: dict) -> str:
    """The `info` line of a finished search (or of a table's answer): its figures, the value
    and the best line."""
    search = result.get("search") or {}
    if result.get("source") == "table":
        words = "info source table"
    elif search.get("method") == "mcts":
        words = (f"info source engine playouts {search.get('playouts', 0)} "
                 f"time {search.get('seconds', 0):.3f}")
    else:
        words = (f"info source engine depth {search.get('depth', 0)} nodes {search.get('nodes', 0)} "
                 f"time {search.get('seconds', 0):.3f}")
    if result.get("final"):
        words += " final"
    value = _value_words(result)
    if value:
        words += " " + value
    if result.get("line"):
        words += " pv " + " ".join(result["line"])
    return words
