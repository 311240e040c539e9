"""Zig Zag tables: margins against a brute force written here (explicit graphs from the
reference rules, attractors by naive fixpoints), and Bellman consistency of margins and
remoteness over whole tables."""
import json

import pytest
from typer.testing import CliRunner

from conftest import solve_to
from sowsolve.cli.app import app
from sowsolve.solver.games import make_game
from sowsolve.solver.games.zigzag import Position
from sowsolve.tables import open_table


def compositions(total, parts):
    if parts == 1:
        yield (total,)
        return
    for x in range(total + 1):
        for rest in compositions(total - x, parts - 1):
            yield (x,) + rest


def brute_force_margins(game):
    """P's margin of every position: for each tier, thresholds t above the value of endless
    play that P can force an exit to reach (naive attractor fixpoints), and below it for p."""
    cols = game.cols
    values = {}
    for seeds in range(game.total + 1):
        for last in (None, "P", "p"):
            endless = 0 if last is None else (seeds if last == "P" else -seeds)
            nodes = [Position(board, side, ko, last)
                     for board in compositions(seeds, game.npits) for side in "Pp"
                     for ko in [None] + [(0 if side == "P" else cols) + c for c in (cols // 2 - 1, cols // 2)]]
            stay, leave = {}, {}
            for x in nodes:
                stay[x], leave[x] = [], []
                for _, turn in game.turns(x):
                    child = Position(turn.board, game.other(x.side), turn.ko, x.side if turn.captured else last)
                    if turn.captured:
                        sign = 1 if x.side == "P" else -1
                        leave[x].append(sign * turn.captured + values[child])
                    else:
                        stay[x].append(child)
            exits = sorted({v for x in nodes for v in leave[x]})

            def attractor(forcing, good):
                won, grew = set(), True
                while grew:
                    grew = False
                    for x in nodes:
                        if x in won:
                            continue
                        options = [good(v) for v in leave[x]] + [y in won for y in stay[x]]
                        if options and (any(options) if x.side == forcing else all(options)):
                            won.add(x)
                            grew = True
                return won

            value = {x: endless for x in nodes}
            for t in [v for v in exits if v > endless]:
                for x in attractor("P", lambda v, t=t: v >= t):
                    value[x] = max(value[x], t)
            for t in reversed([v for v in exits if v < endless]):
                for x in attractor("p", lambda v, t=t: v <= t):
                    value[x] = min(value[x], t)
            values.update(value)
    return values


@pytest.mark.parametrize("stones", [1, 2, 3])
def test_2x2_margins_equal_brute_force(tmp_path, stones):
    game = solve_to(tmp_path / "z.sqlite", "zigzag", 2, stones)
    expected = brute_force_margins(game)
    with open_table(tmp_path / "z.sqlite") as table:
        for position, p_margin in expected.items():
            margin = table.probe(position).margin
            assert margin == (p_margin if position.side == "P" else -p_margin), game.format_position(position)
    assert len(expected) == sum(game.tier_size(t) for t in game.tiers())


def plies(rem):
    return float("inf") if rem is None else rem


@pytest.mark.parametrize("cols, stones", [(2, 2), (2, 3), (4, 1)])
def test_margins_and_remoteness_are_consistent_with_the_moves(tmp_path, cols, stones):
    game = solve_to(tmp_path / "z.sqlite", "zigzag", cols, stones)
    with open_table(tmp_path / "z.sqlite") as table:
        for tier in table.tiers:
            for position in table.stored_positions(tier, 0, table.tier_size(tier)):
                value = table.probe(position)
                options = [(table.probe(game.play(position, m)).for_mover(game.move_gain(position, m)),
                            game.move_gain(position, m)) for m in game.legal_moves(position)]
                endless = game.leftover_margin(position)
                if not options:
                    assert value.margin == endless and value.remoteness == 0
                    continue
                assert value.margin == max(v.margin for v, _ in options)     # Bellman
                if value.remoteness == 0:                                      # final: no capture
                    assert value.margin == endless and all(gain == 0 for _, gain in options)
                elif value.margin == endless:                                  # endless play
                    assert value.remoteness is None
                else:       # forced away from endless play: the forcing side hurries, the other delays
                    p_view = value.margin if position.side == "P" else -value.margin
                    p_endless = endless if position.side == "P" else -endless
                    forcing = "P" if p_view > p_endless else "p"
                    rems = [plies(v.remoteness) for v, _ in options]            # already + 1
                    if position.side == forcing:
                        best = [r for (v, _), r in zip(options, rems) if v.margin == value.margin]
                        assert plies(value.remoteness) == min(best)
                    else:
                        assert plies(value.remoteness) == max(rems)


def test_zigzag_through_the_commands(tmp_path):
    runner = CliRunner()
    table = tmp_path / "z.sqlite"
    solved = runner.invoke(app, ["solve", "zigzag", "--cols", "2", "--stones", "2", "--table", str(table), "--json"])
    assert solved.exit_code == 0, solved.output
    assert json.loads(solved.stdout)["start"][0] == {"position": "22/22 p - -", "value": -4, "remoteness": 5}
    q = json.loads(runner.invoke(app, ["query", "22/22 p - -", "--table", str(table), "--stores", "0,0",
                                       "--json"]).stdout)
    assert q["value"] == -4 and q["best"] == ["a", "b"]
    assert q["result"] == {"side": "p", "final_margin": -4, "result": "loss",
                           "final_stores": {"p": 2, "P": 6}}
    bad = runner.invoke(app, ["query", "22/22 p - -", "--table", str(table), "--stores", "9,9"])
    assert bad.exit_code == 2 and "more than the 8" in bad.stderr
    out = tmp_path / "z.csv"
    assert runner.invoke(app, ["export", "--table", str(table), "--format", "csv", "--out", str(out)]).exit_code == 0
    rows = out.read_text().splitlines()
    assert rows[0] == "position,value,remoteness" and len(rows) > 1000
    with open_table(table) as t:
        for row in rows[1::53]:
            position, value, rem = row.rsplit(",", 2)
            probed = t.probe(position)
            assert (int(value), None if rem == "" else int(rem)) == (probed.margin, probed.remoteness)
    check = runner.invoke(app, ["check", "--table", str(table), "--full", "--json"])
    assert check.exit_code == 0 and json.loads(check.stdout)["failures"] == []
    info = json.loads(runner.invoke(app, ["info", "--table", str(table), "--json"]).stdout)
    assert info["wins"] + info["losses"] + info["draws"] == info["positions_per_side"]
