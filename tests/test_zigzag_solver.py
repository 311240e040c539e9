"""Zig Zag tables: margins against a brute force written here (explicit graphs from the
reference rules, attractors by naive fixpoints), and Bellman consistency of margins and
remoteness over whole tables."""
import json
import math

import pytest
from typer.testing import CliRunner

from conftest import solve_to, vectors
from sowsolve.cli.app import app
from sowsolve.solver.games import make_game
from sowsolve.solver.errors import BadPosition
from sowsolve.solver.kernels import MARGIN_LAYOUT
from sowsolve.solver.games.zigzag import Position
from sowsolve.tables import open_table


def compositions(total, parts):
    if parts == 1:
        yield (total,)
        return
    for x in range(total + 1):
        for rest in compositions(total - x, parts - 1):
            yield (x,) + rest


def brute_force_margins(game, max_seeds=None):
    """P's margin of every position (with at most `max_seeds` seeds on the board): for each
    tier, thresholds t above the value of endless play that P can force an exit to reach
    (naive attractor fixpoints), and below it for p."""
    cols = game.cols
    values = {}
    for seeds in range(game.total + 1 if max_seeds is None else max_seeds + 1):
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

            before = {}                     # the positions a stay move leads from, per edge
            for x in nodes:
                for y in stay[x]:
                    before.setdefault(y, []).append(x)

            def attractor(forcing, good):
                """The positions from which `forcing` makes the game leave at a `good` exit:
                its own where one option gets there, the other side's where every option does
                (and there is one) -- grown from the exits back along the stay moves."""
                won, waiting, queue = set(), {}, []
                for x in nodes:
                    if not leave[x] and not stay[x]:
                        continue
                    goods = [good(v) for v in leave[x]]
                    if x.side == forcing:
                        if any(goods):
                            won.add(x)
                            queue.append(x)
                    elif all(goods):
                        waiting[x] = len(stay[x])          # stay moves still to be won
                        if waiting[x] == 0:
                            won.add(x)
                            queue.append(x)
                while queue:
                    y = queue.pop()
                    for x in before.get(y, ()):
                        if x in won:
                            continue
                        if x.side == forcing:
                            won.add(x)
                            queue.append(x)
                        elif x in waiting:
                            waiting[x] -= 1
                            if waiting[x] == 0:
                                won.add(x)
                                queue.append(x)
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


@pytest.mark.slow
@pytest.mark.parametrize("stones", [1, 2, 3])
def test_2x2_margins_equal_brute_force(tmp_path, stones):
    game = solve_to(tmp_path / "z.sqlite", "zigzag", cols=2, stones=stones)
    expected = brute_force_margins(game)
    # seeds leave the board only by captures: nobody has captured exactly while every seed is on it
    possible = {p: v for p, v in expected.items()
                if (p.last is None) == (sum(p.board) == game.total)}
    with open_table(tmp_path / "z.sqlite") as table:
        for position, p_margin in possible.items():
            margin = table.probe(position).margin
            assert margin == (p_margin if position.side == "P" else -p_margin), game.format_position(position)
        for position in set(expected) - set(possible):
            with pytest.raises(BadPosition, match="cannot arise"):
                table.probe(position)
    # one record per pair of positions turned half a turn into each other, one per start board
    stored = [p for p in possible if p.last != "p"]
    assert len(stored) == sum(game.tier_size(t) for t in game.tiers())
    # the start value and positions of the board in solver/games/zigzag/zigzag.json, by the brute force
    entry = next(e for e in vectors("zigzag")["solved"]
                 if e["parameters"] == {"cols": 2, "stones": stones} and e["position"] is None)
    assert (entry["value"], entry["positions"]) == (-expected[game.initial()], len(stored))


def plies(rem):
    return float("inf") if rem is None else rem


@pytest.mark.slow
@pytest.mark.parametrize("cols, stones", [(2, 1), (2, 2), (2, 3), (4, 1)])
def test_margins_and_remoteness_are_consistent_with_the_moves(tmp_path, cols, stones):
    game = solve_to(tmp_path / "z.sqlite", "zigzag", cols=cols, stones=stones)
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
                elif value.margin == endless:    # scored like endless play: it ends only if
                    keeping = [plies(v.remoteness) for v, _ in options if v.margin == value.margin]
                    assert plies(value.remoteness) == max(keeping)   # every such move ends
                else:       # forced away from endless play: the forcing side hurries, the other delays
                    p_view = value.margin if position.side == "P" else -value.margin
                    p_endless = endless if position.side == "P" else -endless
                    forcing = "P" if p_view > p_endless else "p"
                    # among the moves that keep the margin (already + 1 ply)
                    keeping = [plies(v.remoteness) for v, _ in options if v.margin == value.margin]
                    if position.side == forcing:
                        assert plies(value.remoteness) == min(keeping)
                    else:
                        assert plies(value.remoteness) == max(keeping)


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
                           "given": {"P": 0, "p": 0}, "unit": ["seed", "seeds"],
                           "final_stores": {"p": 2, "P": 6}}
    # the stores and the board always hold all 2 * 2 * 2 = 8 seeds; stores fill only by captures
    for stores, position, words in (("9,9", "22/22 p - -", f"make {9 + 9 + 8}"),
                                    ("0,0", "21/22 p - P", f"make {0 + 0 + 7}"),
                                    ("1,1", "22/11 p - -", "nobody has captured"),
                                    ("0,3", "21/11 p - P", "P's store cannot be empty"),
                                    ("1;0", "22/22 p - -", "two counts")):
        bad = runner.invoke(app, ["query", position, "--table", str(table), "--stores", stores])
        assert bad.exit_code == 2 and words in bad.stderr and len(bad.stderr.splitlines()) == 1, stores
    good = runner.invoke(app, ["query", "21/22 p - P", "--table", str(table), "--stores", "1,0", "--json"])
    assert good.exit_code == 0 and json.loads(good.stdout)["result"]["final_stores"]["P"] >= 1
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


def query_json(runner, table, position):
    result = runner.invoke(app, ["query", position, "--table", str(table), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_remoteness_of_a_position_is_that_of_a_best_move(tmp_path):
    """'10/13 p - p' (2x2, 3 seeds): p's move a keeps +1 and ends the game in 2 plies, b gives
    -1; the delaying side must not count b, so the position is worth +1 in 2 and `best` is a."""
    solve_to(tmp_path / "z.sqlite", "zigzag", cols=2, stones=3)
    runner = CliRunner()
    q = query_json(runner, tmp_path / "z.sqlite", "10/13 p - p")
    moves = {m["move"]: (m["value"], m["remoteness"]) for m in q["moves"]}
    assert moves["a"][0] == 1 and moves["b"][0] == -1
    assert (q["value"], q["remoteness"]) == moves["a"] and q["best"] == ["a"]


def test_best_is_never_empty_away_from_the_end(tmp_path):
    """Every position that is not final has a move that keeps its value and remoteness; and
    the 'longest win' that info reports is such a position."""
    game = solve_to(tmp_path / "z.sqlite", "zigzag", cols=4, stones=1)
    runner = CliRunner()
    with open_table(tmp_path / "z.sqlite") as table:
        for tier in table.tiers:
            size = table.tier_size(tier)
            for position in table.stored_positions(tier, 0, size)[::max(1, size // 200)]:
                q = table.query(game.format_position(position)) if hasattr(table, "query") else None
                q = q or query_json(runner, tmp_path / "z.sqlite", game.format_position(position))
                if not q["final"]:
                    assert q["best"], q["position"]
    info = json.loads(runner.invoke(app, ["info", "--table", str(tmp_path / "z.sqlite"), "--json"]).stdout)
    if "longest_win" in info:
        q = query_json(runner, tmp_path / "z.sqlite", info["longest_win"]["position"])
        assert q["best"] and q["remoteness"] == info["longest_win"]["remoteness"]


def test_full_check_catches_a_wrong_remoteness(tmp_path, monkeypatch):
    """check --full verifies remoteness, not only margins: one record with its remoteness
    changed (margin kept) is reported."""
    from sowsolve.tables import verify
    from sowsolve.tables.store import Table
    solve_to(tmp_path / "z.sqlite", "zigzag", cols=2, stones=2)
    original = Table.tier_records

    def tampered(self, tier):
        records = original(self, tier).copy()
        shift = MARGIN_LAYOUT["rem_shift"]
        rems = records >> shift
        finite = ((rems > 0) & (rems < 200)).nonzero()[0]
        if tier == max(self.tiers) - 2 and finite.size:
            records[finite[0]] += 1 << shift    # one ply more, same margin
        return records

    with open_table(tmp_path / "z.sqlite") as table:
        assert verify.check_table(table, 10, True, 0)["failures"] == []
        monkeypatch.setattr(Table, "tier_records", tampered)
        report = verify.check_table(table, 10, True, 0)
    assert report["failure_count"] >= 1 and "plies" in report["failures"][0]


def test_contract_check_of_zigzag_sees_a_wrong_score_tier(monkeypatch):
    """What the solver kernel reads of a tier is compared with the rules: moves whose same-tier
    children are shifted by one, captures valued one more, or un-moves missing one, are
    reported."""
    from sowsolve.solver.games.zigzag import ZigZag
    honest = ZigZag.score_tier

    class Damaged:
        def __init__(self, view, damage):
            self.view, self.damage = view, damage
            self.size, self.endless_value = view.size, view.endless_value

        def capsule(self):
            return self.view.capsule()

        def moves(self, index):
            moves = self.view.moves(index)
            if self.damage == "same":
                return [(t + 1 if t is not None else t, v, r) for t, v, r in moves]
            if self.damage == "capture":
                return [(t, v + 1 if v is not None else v, r) for t, v, r in moves]
            return moves

        def unmoves(self, index):
            return self.view.unmoves(index)[1:] if self.damage == "unmoves" else self.view.unmoves(index)

    for damage in ("same", "capture", "unmoves"):
        monkeypatch.setattr(ZigZag, "score_tier",
                            lambda self, tier, lower, damage=damage: Damaged(honest(self, tier, lower), damage))
        game = make_game("zigzag", cols=2, stones=2)
        report = game.solver.self_check(game, samples=200)
        assert report["failure_count"] > 0, damage


@pytest.mark.parametrize("entry", [e for e in vectors("zigzag")["solved"] if "positions" in e],
                         ids=lambda e: "2x{cols}-K{stones}".format(**e["parameters"]))
def test_solved_vectors_count_the_positions(entry):
    """Every board of fewer seeds than the start with P as the last capturer (p's are the same
    turned half a turn), and every board of all the seeds with nobody; either side to move,
    three ko states (none or one of the two centre pits of the mover's row)."""
    pits = 2 * entry["parameters"]["cols"]
    seeds = pits * entry["parameters"]["stones"]
    boards = sum(math.comb(s + pits - 1, pits - 1) for s in range(seeds + 1))
    assert entry["positions"] == boards * 2 * 3
