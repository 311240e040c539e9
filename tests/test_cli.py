"""The command suite, through typer.testing."""
import csv
import json

import pytest
from typer.testing import CliRunner

from sowsolve.cli.app import app
from sowsolve.tables.store import open_table

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_solve_then_solve_again_does_nothing(tmp_path):
    path = tmp_path / "t.sqlite"
    first = run("solve", "diffusion-v2", "--cols", 3, "--stones", 2, "--table", path, "--json")
    assert first.exit_code == 0, first.output
    result = json.loads(first.stdout)
    assert result["solved_now"] and result["positions_per_side"] == 13034
    assert [s["position"] for s in result["start"]] == ["222/222 A", "222/222 B"]
    again = run("solve", "diffusion-v2", "--cols", 3, "--stones", 2, "--table", path)
    assert again.exit_code == 0 and "nothing to do" in again.stdout


def test_solve_writes_the_default_table(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SOWSOLVE_TABLES")      # the default: sowsolve-tables in this folder
    result = run("solve", "diffusion", "--cols", 2, "--stones", 2)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "sowsolve-tables" / "diffusion-cols2-stones2.sqlite").exists()
    assert "22/22 A: win" in result.stdout or "22/22 A: loss" in result.stdout


def test_query_json(table_2x4_k2):
    result = run("query", "2222/2222 A", "--table", table_2x4_k2, "--json")
    assert result.exit_code == 0, result.output
    q = json.loads(result.stdout)
    assert set(q) >= {"position", "value", "remoteness", "moves", "best"}
    assert len(q["moves"]) == 8
    with open_table(table_2x4_k2) as table:
        game = table.game
        position = game.parse_position(q["position"])
        for move in q["moves"]:
            child = game.play(position, game.parse_move(position, move["move"]))
            value = table.probe(child)
            assert move["value"] == {"win": "loss", "loss": "win"}[value.value]
            assert move["remoteness"] == value.remoteness + 1
    best = [m["move"] for m in q["moves"] if (m["value"], m["remoteness"]) == (q["value"], q["remoteness"])]
    assert q["best"] == best and best and q["moves"][0]["move"] == best[0]


def test_query_text_of_a_final_position(table_2x4_k2):
    result = run("query", "0000/0001 A", "--table", table_2x4_k2)
    assert result.exit_code == 0 and "game over" in result.stdout


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_parses_back(tmp_path, table_2x4_k2, fmt):
    out = tmp_path / f"e.{fmt}"
    result = run("export", "--table", table_2x4_k2, "--format", fmt, "--out", out, "--max-stones", 6)
    assert result.exit_code == 0, result.output
    if fmt == "csv":
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
    else:
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    with open_table(table_2x4_k2) as table:
        assert len(rows) == 2 * sum(table.tier_size(t) for t in range(1, 7))
        assert len({r["position"] for r in rows}) == len(rows)
        for row in rows[::37]:
            value = table.probe(row["position"])
            assert (row["value"], int(row["remoteness"])) == (value.value, value.remoteness)
        assert all(sum(int(c) for c in r["position"][:9] if c.isdigit()) <= 6 for r in rows)


def test_info_json(table_2x4_k2):
    result = run("info", "--table", table_2x4_k2, "--json")
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert info["finished"] and info["positions_per_side"] == 399266
    assert info["wins"] + info["losses"] + info["draws"] == 399266
    assert sum(t["positions"] for t in info["tiers"]) == 399266
    assert info["longest_win"]["remoteness"] == max(t["longest_win"] for t in info["tiers"])
    assert info["start"][0]["position"] == "2222/2222 A"


def test_perft_json():
    result = run("perft", "diffusion", "--cols", 6, "--stones", 4, "--depth", 4, "--json")
    assert result.exit_code == 0 and json.loads(result.stdout) == {"perft": [12, 132, 1372, 13786]}


def test_check_commands(table_2x4_k2):
    assert run("check", "diffusion", "--cols", 4, "--stones", 2, "--samples", 50).exit_code == 0
    result = run("check", "--table", table_2x4_k2, "--full", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["positions_verified"] == 399266


@pytest.mark.parametrize("args, fragment", [
    (["query", "2222/2222", "--table", "{t}"], "side to move"),
    (["query", "22222/2222 A", "--table", "{t}"], "top row has 5 pits"),
    (["query", "2222/2222 A", "--table", "{missing}"], "no table file"),
    (["info", "--table", "{missing}"], "no table file"),
    (["solve", "diffusion", "--cols", 3, "--stones", 2, "--table", "{new}"], "even number"),
    (["solve", "diffusion", "--cols", 4, "--stones", 6, "--table", "{new}"], "--stones"),
    (["solve", "go", "--cols", 4, "--stones", 2, "--table", "{new}"], "unknown game"),
    (["perft", "diffusion", "--depth", 0], "--depth"),
    (["export", "--table", "{t}", "--format", "csv", "--out", "{new}", "--max-stones", -1], "--max-stones"),
])
def test_bad_input_exits_2_with_one_sentence(tmp_path, table_2x4_k2, args, fragment):
    names = {"t": table_2x4_k2, "missing": tmp_path / "missing.sqlite", "new": tmp_path / "new.out"}
    result = run(*[str(a).format(**names) for a in args])
    assert result.exit_code == 2, result.output
    assert fragment in result.stderr and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "missing.sqlite").exists() and not (tmp_path / "new.out").exists()


# --- wording ----------------------------------------------------------------------------------
def test_one_stone_one_seed_and_one_ply_are_singular(tmp_path):
    result = run("solve", "diffusion", "--cols", 2, "--stones", 1, "--table", tmp_path / "d.sqlite")
    assert result.exit_code == 0 and "1 stone per pit" in result.stdout
    assert "1 stones" not in result.stdout
    result = run("solve", "zigzag", "--cols", 2, "--stones", 1, "--table", tmp_path / "z.sqlite")
    assert result.exit_code == 0 and "1 seed per pit" in result.stdout
    assert "1 seeds" not in result.stdout


def test_a_win_in_one_ply_is_singular(table_2x4_k2):
    with open_table(table_2x4_k2) as table:
        game = table.game
        position = game.parse_position("2222/2222 A")
        while table.probe(position).remoteness > 1:          # follow any move that keeps the value
            value = table.probe(position)
            for move in game.legal_moves(position):
                child = game.play(position, move)
                if table.probe(child).remoteness == value.remoteness - 1:
                    position = child
                    break
        text = game.format_position(position)
    result = run("query", text, "--table", table_2x4_k2)
    assert result.exit_code == 0
    assert "win in 1 ply" in result.stdout and "1 plies" not in result.stdout


def test_info_text_names_game_board_sizes_and_tiers(tmp_path):
    path = tmp_path / "z.sqlite"
    assert run("solve", "zigzag", "--cols", 2, "--stones", 2, "--table", path).exit_code == 0
    text = run("info", "--table", path).stdout
    assert "game       Zig Zag, 2x2, 2 seeds per pit\n" in text
    assert "{" not in text                                   # no Python dict on show
    size = path.stat().st_size
    size_line = next(line for line in text.splitlines() if line.startswith("size"))
    assert f"({size:,} bytes)" in size_line and "KB" in size_line
    lines = text.splitlines()
    for seeds in range(0, 8):               # 2x2, 2 seeds: 0..7 on the board after a capture
        noun = "seed" if seeds == 1 else "seeds"
        assert any(line.startswith(f"{seeds} {noun}, last capture P (and p's, turned) ") for line in lines)
    assert any(line.startswith("8 seeds, no capture yet ") for line in lines)


def test_info_text_of_diffusion_shows_the_game_line(table_2x4_k2):
    text = run("info", "--table", table_2x4_k2).stdout
    assert "game       Diffusion v1, 2x4, 2 stones per pit\n" in text and "{" not in text
    assert "longest    win in " in text


@pytest.mark.parametrize("position, stores", [("10/13 p - P", "2,1"), ("10/13 P - p", "1,2"),
                                              ("01/11 p - P", "3,2")])
def test_stores_are_echoed_in_the_order_given(tmp_path_factory, position, stores):
    path = tmp_path_factory.getbasetemp() / "zz22.sqlite"
    if not path.exists():
        assert run("solve", "zigzag", "--cols", 2, "--stones", 2, "--table", path).exit_code == 0
    result = run("query", position, "--table", path, "--stores", stores)
    assert result.exit_code == 0, result.output
    p_store, q_store = stores.split(",")
    assert f"stores     P {p_store}, p {q_store} (given)" in result.stdout
    result_line = next(line for line in result.stdout.splitlines() if line.startswith("result"))
    if "final stores" in result_line:
        finals = result_line.split("final stores ")[1]
        assert finals.startswith("P ") and ", p " in finals
