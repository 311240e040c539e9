import json
import pathlib

import pytest

from sowsolve.solver.games import make_game
from sowsolve.solver.search import solve
from sowsolve.tables.store import TableWriter

DATA = pathlib.Path(__file__).parent / "data"


def load_vectors(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def solve_to(path, name: str, cols: int | None = None, stones: int | None = None,
             size: str | None = None):
    game = make_game(name, cols=cols, stones=stones, size=size)
    writer = TableWriter(str(path), game)
    solve(game, writer, threads=2)
    writer.finish({})
    writer.close()
    return game


@pytest.fixture(scope="session")
def table_2x4_k2(tmp_path_factory):
    path = tmp_path_factory.mktemp("tables") / "d-2x4-k2.sqlite"
    solve_to(path, "diffusion", 4, 2)
    return str(path)
