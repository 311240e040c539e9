"""Endgame tables: `solve --max-stones S` solves the positions with at most S stones (discs,
seeds) on the board -- tiers closed under play, since no move adds stones -- and answers
positions with more as beyond the table (exit 1), never with a guess."""
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import solve_to, documentation
from sowsolve.cli.app import app
from sowsolve.solver.games import make_game
from sowsolve.tables import open_table
from test_zigzag_solver import brute_force_margins

BOARDS = [("diffusion", {"cols": 4, "stones": 2}, 5), ("diffusion-v2", {"cols": 3, "stones": 2}, 7),
          ("zigzag", {"cols": 2, "stones": 3}, 6), ("zigzag", {"cols": 4, "stones": 1}, 4)]


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def options(parameters):
    return [word for name, value in parameters.items() for word in (f"--{name}", value)]


@pytest.mark.parametrize("name, parameters, limit", BOARDS)
def test_an_endgame_table_holds_the_full_tables_records_of_its_tiers(tmp_path, name, parameters,
                                                                    limit):
    full = tmp_path / "full.sqlite"
    solve_to(full, name, **parameters)
    endgame = tmp_path / "endgame.sqlite"
    solved = run("solve", name, *options(parameters), "--max-stones", limit, "--table", endgame,
                 "--json")
    assert solved.exit_code == 0, solved.output
    game = make_game(name, **parameters)
    kept = [t for t in game.tiers() if game.tier_stones(t) <= limit]
    with open_table(endgame) as part, open_table(full) as whole:
        assert part.tiers == kept and part.meta["max_stones"] == limit
        for tier in kept:
            assert np.array_equal(part.tier_records(tier), whole.tier_records(tier)), tier
        # a position of the next tier up is beyond the table: exit 1, one sentence
        beyond = next(t for t in game.tiers() if game.tier_stones(t) > limit)
        text = game.format_position(whole.stored_positions(beyond, 0, 1)[0])
    answer = run("query", text, "--table", endgame)
    assert answer.exit_code == 1
    assert "beyond this table" in answer.stderr and len(answer.stderr.strip().splitlines()) == 1
    info = json.loads(run("info", "--table", endgame, "--json").stdout)
    assert info["max_stones"] == limit and info["positions_solved"] == sum(
        game.tier_size(t) for t in kept)
    checked = run("check", "--table", endgame, "--full", "--json")
    assert checked.exit_code == 0, checked.output


def test_an_endgame_table_is_not_taken_for_a_whole_one(tmp_path):
    path = tmp_path / "t.sqlite"
    assert run("solve", "diffusion", "--cols", 4, "--stones", 2, "--max-stones", 4,
               "--table", path).exit_code == 0
    for other in ([], ["--max-stones", 5]):
        refused = run("solve", "diffusion", "--cols", 4, "--stones", 2, *other, "--table", path)
        assert refused.exit_code == 2 and "--force" in refused.stderr, refused.output
    again = run("solve", "diffusion", "--cols", 4, "--stones", 2, "--max-stones", 4,
                "--table", path, "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["solved_now"] is False


def test_a_search_makes_no_endgame_table():
    """Tables made by a search from the start hold no limit; Overflow's endgame tables are
    made by tiers instead (tests/test_overflow_endgame.py)."""
    from sowsolve.solver.errors import BadParameters
    from sowsolve.tables.layout import KeyedLayout
    with pytest.raises(BadParameters, match="endgame"):
        KeyedLayout().new_tiers(make_game("overflow", size="3x3"), 4)


@pytest.mark.slow
def test_the_standard_zigzag_board_up_to_5_seeds_equals_a_brute_force(tmp_path):
    """Zig Zag's standard board (2x6, 5 seeds per pit) with at most 5 seeds on the board (and
    so at most 4), every position, against the brute force written from the rule text."""
    path = tmp_path / "z.sqlite"
    solved = run("solve", "zigzag", "--max-stones", 5, "--table", path)
    assert solved.exit_code == 0, solved.output
    game = make_game("zigzag")
    expected = brute_force_margins(game, max_seeds=5)
    # with at most 5 of the 60 seeds on the board, someone has captured; the table holds the
    # positions where P captured last, those where p did are the same turned half a turn
    possible = {p: v for p, v in expected.items() if p.last is not None}
    with open_table(path) as table:
        assert len([p for p in possible if p.last == "P"]) == sum(table.tier_size(t) for t in table.tiers)
        for position, p_margin in possible.items():
            margin = table.probe(position).margin
            assert margin == (p_margin if position.side == "P" else -p_margin), \
                game.format_position(position)


def readme_zigzag_section() -> str:
    import pathlib
    text = documentation()
    return text[text.index("## Zig Zag"):text.index("\n## ", text.index("## Zig Zag") + 5)]


def measured_runs() -> list[dict]:
    import pathlib
    path = pathlib.Path(__file__).resolve().parent.parent / "bench/results/zigzag-scale.json"
    return [r for r in json.loads(path.read_text())["runs"] if "failed" not in r]


def size_text(size: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}" if size < 10 * scale else f"{size / scale:.0f} {unit}"
    return f"{size} B"


def test_the_readme_endgame_figures_are_the_measured_ones():
    """The README's endgame table of the standard board and its figures for the boards too
    large for the tests are those of bench/results/zigzag-scale.json."""
    import re
    section = readme_zigzag_section()
    runs = measured_runs()
    rows = re.findall(r"^\| (\d+) \| ([\d,]+) \| (\d+) s \| ([\d.]+ GB) \| ([\d.]+ [KMG]B) \|$",
                      section, re.M)
    assert len(rows) >= 3, "the README lists the endgame tables measured"
    for limit, positions, seconds, peak, table in rows:
        run_ = next(r for r in runs if r["max_stones"] == int(limit) and r["cols"] == 6 and r["stones"] == 5)
        assert int(positions.replace(",", "")) == run_["positions"]
        assert int(seconds) == round(run_["solve_seconds"])
        assert peak == f"{run_['peak_rss_kb'] * 1024 / 1e9:.1f} GB"
        assert table == size_text(run_["table_bytes"])
    for cols, stones in ((4, 3), (4, 4), (4, 5), (6, 1)):
        run_ = next(r for r in runs if (r["cols"], r["stones"], r["max_stones"]) == (cols, stones, None))
        row = re.search(rf"^\| 2x{cols}, K={stones} \| ([\d,]+) \| [^|]+ \| ([^|]+) \|$", section, re.M)
        assert row, (cols, stones)
        assert int(row[1].replace(",", "")) == run_["positions"]
        assert row[2].strip() == size_text(run_["table_bytes"])
    # 2x4 with 4 and 5 seeds per pit: lines past the record's 9 bits, whole solves measured
    flat = " ".join(section.split())
    for stones, words in ((4, "with 4 seeds per pit"), (5, "with 5 seeds per pit")):
        run_ = next(r for r in runs if (r["cols"], r["stones"], r["max_stones"]) == (4, stones, None))
        found = re.search(rf"{words} ([\d,]+) positions in (\d+) s(?: \(\d+ min\))?, peak ([\d.]+ GB)", flat)
        assert found and int(found[1].replace(",", "")) == run_["positions"], words
        assert int(found[2]) == round(run_["solve_seconds"])
        assert found[3] == f"{run_['peak_rss_kb'] * 1024 / 1e9:.1f} GB"
        longest = re.search(rf"{words} is (\d+) plies" if stones == 4 else rf"{words} (\d+) \(", flat)
        assert longest and int(longest[1]) == run_["longest_win"]["remoteness"] > 509, words
    # the top tier of 2x4 with 5 seeds per pit and the positions below it, as the README says
    game = make_game("zigzag", cols=4, stones=5)
    top = max(game.tiers())
    below = sum(game.tier_size(t) for t in game.tiers() if t != top)
    found = re.search(r"the 2-byte records of all ([\d.]+) x 10\^9 positions below it are held "
                      r"beside the 5 bytes of each of its own ([\d.]+) x 10\^8", flat)
    assert found and float(found[1]) == round(below / 1e9, 1)
    assert float(found[2]) == round(game.tier_size(top) / 1e8, 1)
    # the estimate's rate is the measured one of the largest endgame table, rounded
    largest = max((r for r in runs if r["max_stones"]), key=lambda r: r["positions"])
    rates = make_game("zigzag").rates
    assert abs(rates.positions_per_second - largest["positions"] / largest["solve_seconds"]) < 0.1e6


def test_a_board_whose_margins_do_not_fit_a_record_asks_for_an_endgame_table(tmp_path):
    """A margin record holds margins of up to 63 seeds: 2x6 with 6 seeds per pit (72) is
    refused up front, and its endgame tables of at most 63 seeds or fewer are not."""
    path = tmp_path / "z.sqlite"
    refused = run("solve", "zigzag", "--cols", 6, "--stones", 6, "--dry-run", "--table", path)
    assert refused.exit_code == 2 and "--max-stones 63 or less" in refused.stderr, refused.output
    assert "Traceback" not in refused.output and not path.exists()
    small = run("solve", "zigzag", "--cols", 6, "--stones", 6, "--max-stones", 3, "--table", path)
    assert small.exit_code == 0, small.output
    with open_table(path) as table:
        assert table.probe(table.game.parse_position("000000/000201 P - P")).margin == 3


def test_an_endgame_limit_that_keeps_every_position_is_refused(tmp_path):
    """--max-stones at or above the start's seeds is the whole table: refused, nothing written
    (an 'endgame table' of everything would sit beside the whole one and make queries
    ambiguous)."""
    for limit in (8, 9, 100):
        path = tmp_path / f"z{limit}.sqlite"
        result = run("solve", "zigzag", "--cols", 2, "--stones", 2, "--max-stones", limit, "--table", path)
        assert result.exit_code == 2 and "leave it out for the whole table" in result.stderr, result.output
        assert not path.exists()


def test_table_choice_skips_tables_where_a_position_cannot_arise(tmp_path, monkeypatch):
    """Zig Zag: with tables of 2x2 with 1, 2 and 3 seeds per pit in the tables directory, a
    position is answered by a table where it can arise: nobody has captured exactly while
    every seed of the start is on the board, and after a capture fewer are.  A position is
    on the smallest board that holds it (2x2 is not the standard board's shape), answered by
    that board's table."""
    monkeypatch.setenv("SOWSOLVE_TABLES", str(tmp_path))
    for stones in (1, 2, 3):
        assert run("solve", "zigzag", "--cols", 2, "--stones", stones).exit_code == 0
    for text, board, stones in (("11/11 p - -", 1, 1), ("22/22 p - -", 2, 2), ("22/22 p - P", 3, 3),
                                ("31/22 p - p", 3, 3), ("10/10 p - P", 1, 1)):
        answer = run("query", text, "--json")
        assert answer.exit_code == 0, (text, answer.output)
        q = json.loads(answer.stdout)
        assert q["parameters"] == {"cols": 2, "stones": board}, text
        assert q["table"] == str(tmp_path / f"zigzag-cols2-stones{stones}.sqlite"), text
    nowhere = run("query", "00/00 p - -")
    assert nowhere.exit_code == 2 and "cannot arise" in nowhere.stderr, nowhere.output
    with open_table(tmp_path / "zigzag-cols2-stones2.sqlite") as table:
        assert "22/22 p - -" in table and "22/22 p - P" not in table and "11/11 p - p" in table


def test_the_readme_estimates_are_the_estimator_s():
    """The README's figures for S + 4 and for 2x4 with 5 seeds per pit are what
    `solve --dry-run` says, and its bytes per position held at S = 20 the measured ones."""
    import re
    section = " ".join(readme_zigzag_section().split())
    run_20 = next(r for r in measured_runs() if r["max_stones"] == 20 and r["cols"] == 6)
    held = re.search(r"the memory is ([\d.]+) bytes per position of the tiers held", section)
    assert held and float(held[1]) == round(run_20["peak_rss_kb"] * 1024 / run_20["positions"], 1)

    def dry_run(*args):
        result = run("solve", "zigzag", *args, "--dry-run", "--json", "--table", "unused.sqlite")
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    plus4 = dry_run("--max-stones", 24, "--memory", "16G")
    found = re.search(r"S \+ 4 = 24\*\* stores ([\d.]+) x 10\^9 positions: .*? estimates ~(\d+) min "
                      r"and ~([\d.]+) GB at peak", section)
    assert found, "the README gives the estimate of S + 4"
    assert float(found[1]) == round(plus4["positions"] / 1e9, 1)
    assert int(found[2]) == round(plus4["seconds"] / 60)
    assert float(found[3]) == round(plus4["peak_memory"] / 1e9, 1)
    k5 = dry_run("--cols", 4, "--stones", 5)
    found = re.search(r"2x4 with 5 seeds per pit \(([\d.]+) x 10\^9 positions to store; ~([\d.]+) GB "
                      r"at peak and ~(\d+) min", section)
    assert found, "the README gives the estimate of 2x4 with 5 seeds per pit"
    assert float(found[1]) == round(k5["positions"] / 1e9, 1)
    assert float(found[2]) == round(k5["peak_memory"] / 1e9, 1)
    assert int(found[3]) == round(k5["seconds"] / 60)


def test_the_readme_counts_the_standard_board_up_to_4_seeds():
    """10,920 records (fewer than 60 seeds: P captured last), answering twice as many."""
    section = " ".join(readme_zigzag_section().split())
    from math import comb
    stored = sum(comb(s + 11, 11) * 6 for s in range(5))
    import pathlib
    text = " ".join(documentation().split())
    assert f"at most 4 seeds ({stored:,} positions stored, answering {2 * stored:,})" in text
    assert section


def test_in_and_get_on_an_endgame_table_do_not_raise_beyond_it(tmp_path):
    """`in` says False and `get` gives the default for a position with more stones than an
    endgame table holds (probe raises BeyondTable)."""
    path = tmp_path / "z.sqlite"
    assert run("solve", "zigzag", "--max-stones", 2, "--table", path).exit_code == 0
    with open_table(path) as table:
        assert "555555/555555 p - -" not in table
        assert table.get("555555/555555 p - -", "none") == "none"
        assert "000000/000011 p - P" in table and table.get("000000/000011 p - P") is not None


def test_the_readme_speed_of_zig_zag_is_the_measured_one():
    """The README's Zig Zag rates: 2x4 with 3 seeds per pit and the endgame table of at most 20
    seeds, as bench/results/zigzag-scale.json measured them, and the 2x4 rate counted over
    every ko and last-capturer state (three per record)."""
    import re
    import pathlib
    text = documentation()
    found = re.search(r"\| ([\d.]+) / ([\d.]+) million positions/s \((\d+) s / (\d+) s\); 2x4 K=3 "
                      r"answers its ([\d.]+) M positions of every ko and last capturer at ([\d.]+) "
                      r"million/s \|", text)
    assert found
    runs = measured_runs()
    small = next(r for r in runs if (r["cols"], r["stones"], r["max_stones"]) == (4, 3, None))
    large = next(r for r in runs if (r["cols"], r["stones"], r["max_stones"]) == (6, 5, 20))
    for rate, seconds, run_ in ((found[1], found[3], small), (found[2], found[4], large)):
        assert float(rate) == round(run_["positions"] / run_["solve_seconds"] / 1e6, 1)
        assert int(seconds) == round(run_["solve_seconds"])
    every_state = 3 * small["positions"]
    assert float(found[5]) == round(every_state / 1e6, 1)
    assert float(found[6]) == round(every_state / small["solve_seconds"] / 1e6, 1)


def test_the_readme_speed_up_of_zig_zag_is_the_measured_one():
    """The README's 'in 0.63 of the time of the version before' is the side-by-side run of
    bench/results/zigzag-scale.json: the median of the ratios of its pairs of runs, which lies
    in their range and is no better than the ratio of the two medians."""
    import pathlib
    root = pathlib.Path(__file__).resolve().parent.parent
    text = " ".join(documentation().split())
    side = json.loads((root / "bench/results/zigzag-scale.json").read_text())["side_by_side"]
    walls = side["wall_seconds_median"]
    assert side["wall_ratio_of_medians"] == round(walls["this"] / walls["before"], 3)
    low, high = side["wall_ratio_range_of_pairs"]
    assert low <= side["wall_ratio_median_of_pairs"] <= high
    assert side["wall_ratio_median_of_pairs"] >= side["wall_ratio_of_medians"]
    quoted = f"{side['wall_ratio_median_of_pairs']:.2f}"
    assert f"2x4 with 3 seeds per pit in {quoted} of the time of the version before" in text


def test_the_resume_hint_of_an_unfinished_endgame_table_names_its_limit(tmp_path):
    """An endgame table stopped before it finished: reading it says to resume it with every
    parameter it was solved with (--max-stones too), and that command resumes it."""
    import re
    from sowsolve.tables.store import TableWriter
    path = tmp_path / "z.sqlite"
    game = make_game("zigzag", cols=4, stones=2)
    TableWriter(str(path), game, max_stones=4).close()      # stopped before its first tier
    refused = run("query", "0000/0011 p - P", "--table", path)
    assert refused.exit_code == 1 and "not finished" in refused.stderr, refused.output
    hint = re.search(r"`sowsolve (solve [^`]*)`", refused.stderr)
    assert hint and "--max-stones 4" in hint[1], refused.stderr
    resumed = run(*hint[1].split())
    assert resumed.exit_code == 0, resumed.output
    with open_table(path) as table:
        assert table.finished and table.meta["max_stones"] == 4
