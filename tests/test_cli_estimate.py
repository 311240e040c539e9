"""No surprise giant solves: `solve` estimates before it starts, `--dry-run` writes nothing, and
a solve over this machine's memory, disk or a day is refused unless --allow-large."""
import json
import math
import os

import pytest
from typer.testing import CliRunner

from sowsolve.cli.app import app
from sowsolve.solver import estimate as estimate_module
from sowsolve.tables.store import open_table

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def diffusion_boards(cols: int, stones: int) -> int:
    """Boards of 2*cols pits holding 0-5 stones each and 1..2*cols*stones stones in all,
    counted by the coefficients of (1 + x + ... + x^5)^(2 cols)."""
    poly = [1]
    for _ in range(2 * cols):
        poly = [sum(poly[j] for j in range(max(0, i - 5), min(i, len(poly) - 1) + 1))
                for i in range(len(poly) + 5)]
    return sum(poly[1:2 * cols * stones + 1])


def zigzag_positions(cols: int, stones: int) -> int:
    """Every board of fewer seeds than the start once P has captured (p's positions are the same
    turned half a turn), and every board of all of them before any capture; both sides to
    move, three ko states."""
    pits = 2 * cols
    return sum(math.comb(s + pits - 1, pits - 1) for s in range(pits * stones + 1)) * 2 * 3


def dry_run(tmp_path, *args):
    result = run("solve", *args, "--dry-run", "--json", "--table", tmp_path / "t" / "t.sqlite")
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "t").exists()            # a dry run writes nothing
    return json.loads(result.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("name, cols, stones", [("diffusion", 4, 2), ("diffusion-v2", 3, 5),
                                                ("diffusion", 6, 4), ("diffusion", 8, 5)])
def test_diffusion_estimate_counts_every_board(tmp_path, name, cols, stones):
    e = dry_run(tmp_path, name, "--cols", cols, "--stones", stones)
    assert e["positions"] == diffusion_boards(cols, stones) and e["positions_exact"]
    assert e["peak_memory"] > 2 * e["positions"] / 10 and e["table_bytes"] > 0 and e["seconds"] > 0


def test_diffusion_counts_match_the_readme():
    assert diffusion_boards(4, 2) == 399_266 and diffusion_boards(6, 4) == 2_175_504_513


@pytest.mark.parametrize("cols, stones", [(2, 1), (2, 3), (4, 2), (6, 5)])
def test_zigzag_estimate_counts_every_position(tmp_path, cols, stones):
    e = dry_run(tmp_path, "zigzag", "--cols", cols, "--stones", stones)
    assert e["positions"] == zigzag_positions(cols, stones)


def test_zigzag_counts_match_the_readme():
    assert zigzag_positions(2, 1) == 420 and zigzag_positions(4, 2) == 4_412_826
    assert f"{zigzag_positions(6, 5):.1e}" == "9.2e+13"


def test_overflow_estimate_of_a_solved_board_is_what_the_solve_stores(tmp_path):
    e = dry_run(tmp_path, "overflow", "--size", "3x3")
    path = tmp_path / "o.sqlite"
    assert run("solve", "overflow", "--size", "3x3", "--table", path).exit_code == 0
    with open_table(path) as table:
        assert e["positions"] == sum(table.tier_size(t) for t in table.tiers) and e["positions_exact"]


def test_overflow_estimate_of_an_unsolved_board_is_bounded_by_the_search_limit(tmp_path):
    e = dry_run(tmp_path, "overflow", "--size", "5x5", "--max-positions", 1000)
    assert e["positions"] == 1000 and not e["positions_exact"]
    text = run("solve", "overflow", "--size", "5x5", "--max-positions", 1000, "--dry-run",
               "--table", tmp_path / "x.sqlite")
    assert "at most 1,000" in text.stdout and not (tmp_path / "x.sqlite").exists()


@pytest.mark.parametrize("size", ["5x5", "4x5", "5x6"])
def test_overflow_beyond_the_solved_boards_is_refused_and_nothing_is_written(tmp_path, size):
    """More than 16 cells reach billions of positions (README: 5x5 about 10^10..10^11), far
    past what the search may hold: refused up front instead of failing after minutes."""
    result = run("solve", "overflow", "--size", size, "--table", tmp_path / "o.sqlite")
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--allow-large" in lines[0] and "--max-positions" in lines[0]
    assert os.listdir(tmp_path) == []


def test_the_standard_zigzag_board_is_refused_and_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SOWSOLVE_TABLES", raising=False)
    result = run("solve", "zigzag")
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output
    assert "9.2 x 10^13 positions" in lines[0] and "--allow-large" in lines[0]
    assert os.listdir(tmp_path) == []                # no directory, no table


def test_a_solve_over_the_memory_is_refused_unless_allowed(tmp_path, monkeypatch):
    monkeypatch.setattr(estimate_module, "available_memory", lambda: 1_000_000)
    path = tmp_path / "d.sqlite"
    refused = run("solve", "diffusion", "--cols", 2, "--stones", 2, "--table", path)
    assert refused.exit_code == 2 and "memory" in refused.stderr and not path.exists()
    assert "1.0 MB available" in refused.stderr
    allowed = run("solve", "diffusion", "--cols", 2, "--stones", 2, "--table", path, "--allow-large")
    assert allowed.exit_code == 0, allowed.output
    assert "estimate for Diffusion v1, 2x2, 2 stones per pit" in allowed.stderr
    with open_table(path) as table:
        assert table.finished


def test_solve_prints_its_estimate_before_it_starts(tmp_path):
    result = run("solve", "diffusion", "--cols", 2, "--stones", 1, "--table", tmp_path / "d.sqlite")
    assert result.exit_code == 0, result.output
    estimate_line = next(line for line in result.stderr.splitlines() if line.startswith("estimate"))
    assert f"{diffusion_boards(2, 1):,} positions" in estimate_line
    for word in ("peak memory", "on disk", "time"):
        assert word in estimate_line


@pytest.mark.parametrize("threads", [99999999999, 10 ** 30, -1, 100000])
def test_threads_out_of_range_is_one_sentence(tmp_path, threads):
    path = tmp_path / "d.sqlite"
    result = run("solve", "diffusion", "--cols", 2, "--stones", 1, "--threads", threads, "--table", path)
    assert result.exit_code == 2, result.output
    assert "--threads" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not path.exists()


def test_threads_within_range_solve(tmp_path):
    result = run("solve", "diffusion", "--cols", 2, "--stones", 1, "--threads", 1,
                 "--table", tmp_path / "d.sqlite", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["positions_per_side"] == diffusion_boards(2, 1)
