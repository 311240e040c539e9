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
import importlib

#: where each name of the library lives: imported the first time it is asked for, so that
#: `import sowsolve` (which the `sowsolve` command's entry point does first of all) loads
#: nothing heavy, and a Ctrl-C while the command starts reaches its handler (cli/entry.py)
_FROM = {
    "BadMove": ".solver.errors", "BadParameters": ".solver.errors", "BadPosition": ".solver.errors",
    "GAMES": ".solver.games", "make_game": ".solver.games",
    "prove": ".tables.proving",
    "Analyser": ".tables.analysis", "Interrupted": ".tables.analysis", "analyse": ".tables.analysis",
    "BeyondTable": ".tables.format", "NotInTable": ".tables.format", "TableError": ".tables.format",
    "TableMissing": ".tables.format",
    "Tables": ".tables.locate", "open_tables": ".tables.locate",
    "Plan": ".tables.solving", "SolveResult": ".tables.solving", "TooLarge": ".tables.solving",
    "plan": ".tables.solving", "solve": ".tables.solving",
    "open_table": ".tables.store",
}

__all__ = list(_FROM)


def __getattr__(name: str):
    where = _FROM.get(name)
    if where is None:
        raise AttributeError(f"module 'sowsolve' has no attribute {name!r}")
    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
