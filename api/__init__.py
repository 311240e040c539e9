"""sowsolve as a library: solve a board into a table, open the tables of a directory, ask
them about any position, prove a position of a game solved by search, analyse any position.
The command line parses its options, calls these and renders what they return.  Games are
named as the command line names them (`sowsolve.GAMES`), boards by their options:

    import sowsolve
    result = sowsolve.solve(GAME, table="t.sqlite", **board)   # board: cols=4, stones=2, ...
    result.summary["start"]                        # what `sowsolve solve --json` prints
    with sowsolve.open_tables("tables-dir") as tables:
        tables.probe(POSITION)                     # Value(value='win', remoteness=45)
        tables.get(POSITION)                       # None where no table holds it: never raises
    sowsolve.analyse(POSITION, seconds=1)          # any position: exact or estimated values
    sowsolve.prove(sowsolve.make_game(GAME, **board))["value"]

README.md (Python) shows them on real games and positions.

Errors subclass built-in ones (BadPosition and BadParameters are ValueErrors, TableMissing a
FileNotFoundError, NotInTable a LookupError), each one sentence quoting the bad input."""
from .solver.errors import BadMove, BadParameters, BadPosition
from .solver.games import GAMES, make_game
from .tables.proving import prove
from .tables.analysis import Analyser, Interrupted, analyse
from .tables.format import BeyondTable, NotInTable, TableError, TableMissing
from .tables.locate import Tables, open_tables
from .tables.solving import Plan, SolveResult, TooLarge, plan, solve
from .tables.store import open_table

__all__ = ["BadMove", "BadParameters", "BadPosition", "GAMES", "make_game", "prove", "Analyser",
           "Interrupted", "analyse", "BeyondTable", "NotInTable", "TableError", "TableMissing", "Tables",
           "open_tables", "Plan", "SolveResult", "TooLarge", "plan", "solve", "open_table"]
