"""`export --every-orientation`: an Overflow table keeps one position per class of board
symmetries; the option writes every position of each class, as a player would type it."""
import csv
import io

from typer.testing import CliRunner

from conftest import reference_children, solve_to
from sowsolve.cli.app import app
from sowsolve.tables.store import open_table
import pytest

#: the whole module is left out of `pytest -m "not slow"` (processes, clusters, long solves)
pytestmark = pytest.mark.slow


def test_every_orientation_writes_each_class_whole(tmp_path):
    game = solve_to(tmp_path / "o.sqlite", "overflow", size="3x3")
    plain = CliRunner().invoke(app, ["export", "--table", str(tmp_path / "o.sqlite"), "--format", "csv",
                                     "--out", str(tmp_path / "plain.csv")])
    every = CliRunner().invoke(app, ["export", "--table", str(tmp_path / "o.sqlite"), "--format", "csv",
                                     "--out", str(tmp_path / "every.csv"), "--every-orientation"])
    assert plain.exit_code == 0 and every.exit_code == 0, (plain.output, every.output)
    classes = list(csv.DictReader(io.StringIO((tmp_path / "plain.csv").read_text())))
    rows = list(csv.DictReader(io.StringIO((tmp_path / "every.csv").read_text())))
    assert len(rows) > len(classes)
    positions = [row["position"] for row in rows]
    assert len(set(positions)) == len(positions)          # no position twice
    # each row's position is one of its class: the table answers it with the row's value
    with open_table(tmp_path / "o.sqlite") as table:
        for row in rows[::7]:
            value = table.probe(row["position"])
            assert (value.value, str(value.remoteness)) == (row["value"], row["remoteness"]), row
    # and (3x3: no reflection swaps the houses, an odd side) the rows are exactly the positions
    # reachable from the start, played out with the reference rules: a walk of every move
    children = reference_children(game)
    seen, todo = {game.initial()}, [game.initial()]
    while todo:
        position = todo.pop()
        for child in children(position):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    assert set(positions) == {game.format_position(p) for p in seen}
