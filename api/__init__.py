"""sowsolve as a library: solve a board into a table, open the tables of a directory, ask
them about any position, prove an Overflow position, analyse any position.  The command line
parses its options, calls these and renders what they return.

    import sowsolve
    result = sowsolve.solve("diffusion", cols=4, stones=2, table="d42.sqlite")
    result.summary["start"]                        # what `sowsolve solve --json` prints
    with sowsolve.open_tables("tables-dir") as tables:
        tables.probe("2222/2222 A")                # Value(value='win', remoteness=45)
        tables.get("2222/2222 Q")                  # None: get never raises for a position
    sowsolve.analyse("555555/555555 p - -", sowsolve.make_game("zigzag"), seconds=1)
    sowsolve.prove(sowsolve.make_game("overflow", size="3x4"))["value"]   # 'win' 

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
