import json
import pathlib

import pytest

from sowsolve.solver.games import make_game, vector_file


def vectors(game: str) -> dict:
    """The vector file of a registered game, in its package (format: docs/vectors.md)."""
    return json.loads(vector_file(game).read_text())


def solve_to(path, name: str, **parameters):
    """Solve the game `name` on the board its parameters (keywords, as the game declares them:
    cols=4, stones=2, size="3x3") describe into a finished table at `path`."""
    import sowsolve
    sowsolve.solve(name, table=str(path), threads=2, allow_large=True, **parameters)
    return make_game(name, **parameters)


@pytest.fixture(scope="session")
def table_2x4_k2(tmp_path_factory):
    path = tmp_path_factory.mktemp("tables") / "d-2x4-k2.sqlite"
    solve_to(path, "diffusion", cols=4, stones=2)
    return str(path)


@pytest.fixture(scope="module")
def client():
    """A local Dask cluster of two worker processes (one thread each) and its client, for a
    module's tests of work on a cluster."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def end_gain(game, position, move) -> int:
    """The gain a win/loss game's play kernel gives `move`, from the reference rules: the end
    the move makes at once, +1 its mover has won, -1 it has lost, 0 the game goes on."""
    return {None: 0, "win": -1, "loss": 1}[game.outcome(game.play(position, move))]


def documentation() -> str:
    """The README and every page of docs/ as one text: a test of a stated figure finds it
    wherever the documentation states it."""
    import pathlib
    root = pathlib.Path(__file__).resolve().parent.parent
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    return "\n\n".join(page.read_text() for page in pages)


#: one memo per board of the reference rules' children, shared by the tests that walk or
#: search a board's positions with those rules (on 3x3 the walk takes seconds each time)
_CHILDREN: dict = {}


def reference_children(game):
    """position -> the children the reference rules give it (game.play of each legal move, in
    the order of game.legal_moves), memoised per board for the whole test session."""
    board = (game.name, tuple(sorted(game.parameters().items())))
    if board not in _CHILDREN:
        import functools

        @functools.lru_cache(maxsize=None)
        def children(position):
            return tuple(game.play(position, move) for move in game.legal_moves(position))
        _CHILDREN[board] = children
    return _CHILDREN[board]


def random_walk(game, rng, plies: int):
    """The position after up to `plies` uniformly random legal moves from the start (fewer
    where the game ends first)."""
    position = game.initial()
    for _ in range(plies):
        moves = game.legal_moves(position)
        if not moves:
            break
        position = game.play(position, rng.choice(moves))
    return position


#: node ids of tests/slow-tests.txt: moved to `slow` by measurement (see the file)
SLOW_TESTS = frozenset(line.strip() for line in
                       (pathlib.Path(__file__).parent / "slow-tests.txt").read_text().splitlines()
                       if line.strip() and not line.startswith("#"))


def pytest_collection_modifyitems(config, items):
    """Mark `slow` the tests tests/slow-tests.txt lists (by node id from the repository; a
    parametrized test's name without parameters: every one of them)."""
    for item in items:
        nodeid = item.nodeid if item.nodeid.startswith("tests/") else "tests/" + item.nodeid
        if nodeid in SLOW_TESTS or nodeid.split("[", 1)[0] in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


def pytest_configure(config):
    """The tests never read the user's tables: $SOWSOLVE_TABLES (else sowsolve-tables in the
    folder the tests run from, where the README's first solve puts a table) is an empty folder
    of the run's own, unless a test names another."""
    import os
    import tempfile
    config._sowsolve_tables = tempfile.TemporaryDirectory(prefix="sowsolve-test-tables-")
    os.environ["SOWSOLVE_TABLES"] = config._sowsolve_tables.name


def pytest_unconfigure(config):
    held = getattr(config, "_sowsolve_tables", None)
    if held is not None:
        held.cleanup()


@pytest.fixture(autouse=True)
def _own_tables_directory(monkeypatch, tmp_path_factory):
    """Each test starts with $SOWSOLVE_TABLES an empty folder of its own (a test that names
    another, or none, says so itself): no test reads tables another test left behind."""
    monkeypatch.setenv("SOWSOLVE_TABLES", str(tmp_path_factory.mktemp("sowsolve-tables")))
