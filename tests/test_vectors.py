"""The vector files of the games (solver/games/<game>/<name>.json, one per registered game, format in docs/vectors.md),
checked through the Game contract (`make_game`) and the commands only: rule examples, perft counts
(also by a plain count written here), solved values (small boards solved here with `sowsolve
solve`, read with `sowsolve query`), the contract self-check of every game (`sowsolve check`),
and the README's result tables against the files."""
import json
import pathlib
import re

import pytest
from typer.testing import CliRunner

from conftest import documentation
from sowsolve.cli.app import app
from sowsolve.solver.games import GAMES, make_game, vector_file

HERE = pathlib.Path(__file__).parent
#: every vector file of the games' packages (solver/games/<game>/<name>.json)
GAME_PACKAGES = HERE.parent / "solver" / "games"
README = (HERE.parent / "README.md").read_text()
#: the result tables: docs/results.md
RESULTS = (HERE.parent / "docs" / "results.md").read_text()

#: section -> (required keys, optional keys) of its entries
FORMAT = {
    "moves": ({"parameters", "name", "position", "move", "after"}, {"extra"}),
    "perft": ({"parameters", "position", "counts"}, set()),
    "solved": ({"parameters", "position", "value", "remoteness", "solve_in_tests"},
               {"best", "moves", "winning_moves", "legal_moves", "positions"}),
    "check": ({"parameters"}, set()),
}
FILES = {path.stem: json.loads(path.read_text()) for path in sorted(GAME_PACKAGES.glob("*/*.json"))}
#: the plain perft below counts a depth only while it has at most this many move paths
PLAIN_PERFT_LIMIT = 25_000


def board_id(parameters: dict) -> str:
    return "-".join(f"{key}{value}" for key, value in parameters.items())


def entries(section: str) -> list:
    found = []
    for game, doc in FILES.items():
        for entry in doc.get(section, []):
            label = f"{game}-{board_id(entry['parameters'])}"
            if section != "check":
                label += "-" + (entry.get("name") or entry["position"] or "start")
            found.append(pytest.param(game, entry, id=label))
    return found


def options(parameters: dict) -> list[str]:
    """Command options of a board: {"cols": 4, "stones": 2} -> --cols 4 --stones 2."""
    return [arg for key, value in parameters.items() for arg in ("--" + key.replace("_", "-"), str(value))]


def sowsolve(*args: str) -> dict:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, f"sowsolve {' '.join(args)}: {result.output}"
    assert "Traceback" not in result.output
    return json.loads(result.stdout)


def start_of(game, position: str | None):
    return game.initial() if position is None else game.parse_position(position)


# --- the files -----------------------------------------------------------------------------

@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_registered_game_has_a_vector_file(game):
    assert game in FILES, f"{game} has no vector file {vector_file(game)}"
    assert FILES[game]["game"] == game
    for section in FORMAT:
        assert FILES[game].get(section), f"{vector_file(game)} has no {section} entries"


@pytest.mark.parametrize("name", sorted(FILES))
def test_vector_files_follow_the_format(name):
    doc = FILES[name]
    assert name in GAMES, f"the vector file {name}.json is not of a registered game"
    assert set(doc) == {"game", "source"} | set(FORMAT) and doc["game"] == name
    for section, (required, optional) in FORMAT.items():
        for entry in doc[section]:
            keys = set(entry)
            assert required <= keys <= required | optional, (section, sorted(keys - required - optional),
                                                            sorted(required - keys))
            assert isinstance(entry["parameters"], dict)
            make_game(name, **entry["parameters"])
    for entry in doc["perft"]:
        assert entry["counts"] and all(type(c) is int and c >= 0 for c in entry["counts"])
    for entry in doc["solved"]:
        assert entry["value"] in ("win", "loss", "draw") or type(entry["value"]) is int, entry
        assert entry["remoteness"] is None or (type(entry["remoteness"]) is int and entry["remoteness"] >= 0)
        assert type(entry["solve_in_tests"]) is bool
        assert all(type(entry[k]) is int for k in ("winning_moves", "legal_moves", "positions") if k in entry)
        assert all(type(m) is str for m in entry.get("best", []))
        for value in entry.get("moves", {}).values():
            assert "value" in value and set(value) <= {"value", "remoteness"}, entry
    boards = [json.dumps([e["parameters"], e["position"]], sort_keys=True) for e in doc["solved"]]
    assert len(boards) == len(set(boards)), "a position is solved twice"


# --- rule examples and perft ----------------------------------------------------------------

@pytest.mark.parametrize("name, entry", entries("moves"))
def test_move_vectors(name, entry):
    game = make_game(name, **entry["parameters"])
    position = game.parse_position(entry["position"])
    assert game.format_position(position) == entry["position"]
    move = game.parse_move(position, entry["move"])
    assert move in game.legal_moves(position)
    assert game.format_move(move) == entry["move"]
    assert game.format_position(game.play(position, move)) == entry["after"]


def plain_perft(game, position, depth: int) -> list[int]:
    """Move paths per depth, from legal_moves and play alone."""
    counts, frontier = [], [position]
    for _ in range(depth):
        frontier = [game.play(p, m) for p in frontier for m in game.legal_moves(p)]
        counts.append(len(frontier))
    return counts


@pytest.mark.slow
@pytest.mark.parametrize("name, entry", entries("perft"))
def test_perft_vectors(name, entry):
    game = make_game(name, **entry["parameters"])
    start = start_of(game, entry["position"])
    counts = entry["counts"]
    assert game.perft(start, len(counts)) == counts
    depth = 1
    while depth < len(counts) and counts[depth] <= PLAIN_PERFT_LIMIT:
        depth += 1
    assert plain_perft(game, start, depth) == counts[:depth]


# --- solved values --------------------------------------------------------------------------

@pytest.mark.parametrize("name, entry", entries("solved"))
def test_solved_vectors_name_legal_moves(name, entry):
    """Every solved entry, also of boards too big to solve here: its position and the moves it
    names exist, and it has as many moves as it says."""
    game = make_game(name, **entry["parameters"])
    position = start_of(game, entry["position"])
    legal = [game.format_move(m) for m in game.legal_moves(position)]
    assert set(entry.get("best", [])) | set(entry.get("moves", {})) <= set(legal)
    if "legal_moves" in entry:
        assert len(legal) == entry["legal_moves"]
    if entry["value"] == "loss":
        assert entry.get("winning_moves", 0) == 0


@pytest.fixture(scope="module")
def solved_table(tmp_path_factory):
    """(table path, solve --json) of a board, solved once per module with `sowsolve solve`."""
    tables = {}

    def solve(name: str, parameters: dict):
        key = (name, json.dumps(parameters, sort_keys=True))
        if key not in tables:
            path = str(tmp_path_factory.mktemp("vectors") / f"{name}-{board_id(parameters)}.sqlite")
            tables[key] = path, sowsolve("solve", name, *options(parameters), "--table", path, "--json")
        return tables[key]
    return solve


@pytest.mark.slow
@pytest.mark.parametrize("name, entry", [p for p in entries("solved") if p.values[1]["solve_in_tests"]])
def test_solved_vectors_equal_a_solve(name, entry, solved_table):
    game = make_game(name, **entry["parameters"])
    path, solved = solved_table(name, entry["parameters"])
    if "positions" in entry:
        assert solved["positions_per_side"] == entry["positions"]
    text = game.format_position(start_of(game, entry["position"]))
    query = sowsolve("query", text, "--table", path, "--json")
    assert (query["value"], query["remoteness"]) == (entry["value"], entry["remoteness"])
    if "best" in entry:
        assert sorted(query["best"]) == sorted(entry["best"])
    moves = {m["move"]: m for m in query["moves"]}
    for move, expected in entry.get("moves", {}).items():
        assert {key: moves[move][key] for key in expected} == expected, move
    if "winning_moves" in entry:
        assert sum(m["value"] == "win" for m in query["moves"]) == entry["winning_moves"]
    if "legal_moves" in entry:
        assert len(query["moves"]) == entry["legal_moves"]


# --- the contract self-check of every game --------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name, entry", entries("check"))
def test_contract_check_passes(name, entry):
    report = sowsolve("check", name, *options(entry["parameters"]), "--json")
    assert report["failures"] == [] and report["positions"] > 0


# --- the README's result tables are the vector files' figures --------------------------------

VARIANTS = {"Diffusion v1": "diffusion", "Diffusion v2": "diffusion-v2"}
STANDARD = {"cols": 6, "stones": 4}


def number(text: str) -> int:
    return int(text.replace(",", ""))


def section(title: str) -> str:
    start = RESULTS.index(f"\n## {title}")
    end = RESULTS.find("\n## ", start + 1)
    return RESULTS[start:end if end >= 0 else len(RESULTS)]


def table(text: str, header: str) -> list[list[str]]:
    """The data rows (cells) of the table whose header row starts with `header`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| " + header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def win_loss(cell: str) -> dict:
    match = re.search(r"\b(win|loss) in (\d+)", cell)
    assert match, cell
    return {"value": match[1], "remoteness": int(match[2])}


def diffusion_first_moves(cell: str) -> dict:
    """'**F** only (all 11 others lose)', '**F** (135), H (137), G (145)', '**L**'."""
    claims = {"best": re.findall(r"\*\*([A-L])\*\*", cell)}
    listed = re.findall(r"\b([A-L])\b(?: \((\d+)\))?", cell.replace("*", ""))
    assert claims["best"] and listed, cell
    if any(plies for _, plies in listed):
        claims["moves"] = {move: {"value": "win", "remoteness": int(plies)} for move, plies in listed}
    if " only" in cell:
        claims["winning_moves"] = len(listed)
    others = re.search(r"all (\d+) others lose", cell)
    if others:
        claims["legal_moves"] = len(listed) + int(others[1])
    return claims


def readme_claims() -> list[tuple[str, dict, str | None, dict]]:
    """(game, parameters, position or None for the start, {field: value}) of every figure of
    the README's result tables."""
    claims = []
    text = section("The result")
    positions = number(re.search(r"every one of the ([\d,]+) positions per side", text)[1])
    for variant, a_start, b_start, first_moves, longest in table(text, "variant"):
        game = VARIANTS[variant]
        for side, cell in (("A", a_start), ("B", b_start)):
            fields = win_loss(cell)
            moves = re.search(rf"{side} to move: ([^;]*)", first_moves)[1].strip()
            fields.update(diffusion_first_moves(moves))
            if side == "A":
                fields["positions"] = positions
            claims.append((game, STANDARD, f"444444/444444 {side}", fields))
        match = re.fullmatch(r"(\d+) plies, from `([^`]+)`", longest)
        assert match, longest
        claims.append((game, STANDARD, match[2], {"value": "win", "remoteness": int(match[1])}))

    for variant, board, positions, start, _ in table(section("Reduced Diffusion boards"), "game"):
        match = re.fullmatch(r"2x(\d+), k=(\d)(?:\.\.(\d))?", board)
        assert match, board
        stones = list(range(int(match[2]), int(match[3] or match[2]) + 1))
        counts = [number(c) for c in positions.split("..")]
        values = re.fullmatch(r"(win|loss) in ([\d, ]+)", start)
        assert values and len(counts) == min(len(stones), 2), (positions, start)
        plies = [int(p) for p in values[2].split(",")]
        assert len(plies) == len(stones), start
        for k, remoteness in zip(stones, plies):
            fields = {"value": values[1], "remoteness": remoteness}
            if k == stones[0] or k == stones[-1]:
                fields["positions"] = counts[0] if k == stones[0] else counts[-1]
            claims.append((VARIANTS[variant], {"cols": int(match[1]), "stones": k}, None, fields))

    for match in re.finditer(r"solve 2x(\d+) k=(\d), v([12]) \([^)]*start: (win|loss) in (\d+)\)",
                             section("Benchmarks")):
        game = "diffusion" if match[3] == "1" else "diffusion-v2"
        claims.append((game, {"cols": int(match[1]), "stones": int(match[2])}, None,
                       {"value": match[4], "remoteness": int(match[5])}))

    for board, positions, start, first_moves, *_ in table(section("Overflow"), "board | positions reachable"):
        fields = {"positions": number(positions), **win_loss(start)}
        if match := re.fullmatch(r"none \((\d+) moves, all lose\)", first_moves):
            fields.update(winning_moves=0, legal_moves=int(match[1]))
        else:
            match = re.match(r"(\d+) of (\d+), (e\.g\. (\S+)|fastest (.+))$", first_moves)
            assert match, first_moves
            fields.update(winning_moves=int(match[1]), legal_moves=int(match[2]))
            if match[4]:
                fields["moves"] = {match[4]: {"value": "win"}}
            else:
                fields["best"] = match[5].split(", ")
        for size in re.findall(r"\d+x\d+", board):
            claims.append(("overflow", {"size": size}, None, fields))

    for board, positions, start, _ in table(section("Zig Zag"), "board | positions | start"):
        match = re.fullmatch(r"2x(\d+), K=(\d)", board)
        assert match, board
        cols, stones = int(match[1]), int(match[2])
        margin = int(re.search(r"margin (-?\d+)", start)[1])
        ends = re.search(r"game over in (\d+) plies", start)
        assert ends or re.search(r"endless|forever", start), start
        fields = {"positions": number(positions), "value": margin,
                  "remoteness": int(ends[1]) if ends else None}
        if best := re.search(r"\((\w) or (\w);", start):
            fields["best"] = [best[1], best[2]]
        if worse := re.search(r"(\w) and (\w) lose (\d+), in (\d+) plies", start):
            fields["moves"] = {move: {"value": -int(worse[3]), "remoteness": int(worse[4])}
                               for move in (worse[1], worse[2])}
        if final := re.search(r"p loses (\d+) to (\d+)", start):      # the seeds at the end
            p_seeds, big_p_seeds = int(final[1]), int(final[2])
            assert p_seeds + big_p_seeds == 2 * cols * stones and p_seeds - big_p_seeds == margin, start
        claims.append(("zigzag", {"cols": cols, "stones": stones}, None, fields))
    return claims


GAME_NAMES = {"Diffusion v1": "diffusion", "Diffusion v2": "diffusion-v2", "Overflow": "overflow",
              "Zig Zag": "zigzag"}


def readme_summary_claims() -> list[tuple[str, dict, str | None, dict]]:
    """The README's own table of results, read the same way: each row's positions and the
    value of its start; an endgame table's row is checked against its bench result."""
    claims = []
    start = README.index("\n## Results")
    rows = table(README[start:README.find("\n## ", start + 1)], "game and board")
    for board, solved, value in rows:
        match = re.fullmatch(r"(Diffusion v[12]|Overflow|Zig Zag), (\d+)x(\d+)(?:, (\d+) (?:stones?|seeds?) a pit)?"
                             r"(?: \(standard\)| \(and \d+x\d+\))?", board)
        assert match, board
        name = GAME_NAMES[match[1]]
        parameters = ({"size": f"{match[2]}x{match[3]}"} if name == "overflow"
                      else {"cols": int(match[3]), "stones": int(match[4])})
        if solved.startswith("proved"):         # a proof, no table: its bench file (test_overflow_endgame)
            found = re.fullmatch(r"\*\*(win|loss)\*\* \((\S+)\)", value)
            assert found, value
            claims.append((name, parameters, "proved", {"value": found[1], "move": found[2]}))
            continue
        positions = number(re.search(r"every one of ([\d,]+) (?:reachable )?positions", solved)[1])
        if "endgame tables" in solved:
            limit = int(re.search(r"at most (\d+) seeds", solved)[1])
            claims.append((name, parameters, f"max-stones {limit}", {"positions": positions}))
            continue
        fields = {"positions": positions}
        if found := re.search(r"\b(win|loss) in (\d+)", value):
            fields.update(value=found[1], remoteness=int(found[2]))
        elif found := re.fullmatch(r"margin (-?\d+)(?: in (\d+)| \(endless\))", value):
            fields.update(value=int(found[1]), remoteness=int(found[2]) if found[2] else None)
        else:
            raise AssertionError(value)
        if only := re.search(r"only (\w+) wins", value):
            fields.update(winning_moves=1, best=[only[1]])
        claims.append((name, parameters, None, fields))
    return claims


SUMMARY = readme_summary_claims()
CLAIMS = readme_claims() + [c for c in SUMMARY if not (c[2] or "").startswith(("max-stones", "proved"))]


def test_the_readme_summary_was_read_and_its_endgame_tables_measured():
    """Every row of the README's table of results was parsed (ten boards), and the endgame
    table it names is the measured one (bench/results/zigzag-scale.json, or for the standard
    board solved out of core, out-of-core-zigzag-S.json)."""
    assert len(SUMMARY) == 10
    assert [c[:3] for c in SUMMARY if c[2] == "proved"] == [("overflow", {"size": "4x5"}, "proved")]
    scale = json.loads((HERE.parent / "bench" / "results" / "zigzag-scale.json").read_text())
    endgames = [c for c in SUMMARY if (c[2] or "").startswith("max-stones")]
    assert endgames
    for name, parameters, position, fields in endgames:
        limit = int(position.split()[1])
        runs = [r for r in scale["runs"] if r["max_stones"] == limit
                and (r["cols"], r["stones"]) == (parameters["cols"], parameters["stones"])]
        outside = HERE.parent / "bench" / "results" / f"out-of-core-zigzag-{limit}.json"
        if not runs and (parameters["cols"], parameters["stones"]) == (6, 5) and outside.exists():
            runs = [json.loads(outside.read_text())]
            assert runs[0]["exit"] == 0 and f"--max-stones {limit} " in runs[0]["solve"]
        (run,) = runs
        assert run["positions"] == fields["positions"], (position, run)


def position_key(name: str, parameters: dict, position: str | None) -> tuple:
    if position is None:
        game = make_game(name, **parameters)
        position = game.format_position(game.initial())
    return name, json.dumps(parameters, sort_keys=True), position


def test_readme_claims_are_of_registered_games():
    """The README's result tables were read (a parser that finds nothing would pass the test
    below vacuously), and every game they state figures of is registered."""
    assert CLAIMS and {name for name, *_ in CLAIMS} <= set(GAMES)


@pytest.mark.parametrize("name, parameters, position, fields", CLAIMS,
                         ids=[f"{c[0]}-{board_id(c[1])}-{c[2] or 'start'}" for c in CLAIMS])
def test_readme_figures_are_in_the_vector_files(name, parameters, position, fields):
    wanted = position_key(name, parameters, position)
    found = [e for e in FILES[name]["solved"] if position_key(name, e["parameters"], e["position"]) == wanted]
    assert found, f"the README states {fields} of {wanted}; {vector_file(name)} has no such entry"
    assert {key: found[0].get(key) for key in fields} == fields


@pytest.mark.parametrize("name, entry", [p for p in entries("solved") if not p.values[1]["solve_in_tests"]])
def test_vectors_not_solved_in_tests_are_the_readmes(name, entry):
    """An entry the tests cannot solve is only as good as its source: the README's tables."""
    key = position_key(name, entry["parameters"], entry["position"])
    claimed = [fields for n, p, pos, fields in CLAIMS if position_key(n, p, pos) == key]
    assert claimed and {"value", "remoteness"} <= set(claimed[0]), f"the README does not state {key}"


def test_the_2x6_two_seed_solve_is_the_measured_one():
    """docs/results.md's whole 2x6 board with 2 seeds a pit is bench/results/zigzag-2x6-k2.json:
    positions, time, memory, size, the start's value and moves, the check."""
    run = json.loads((HERE.parent / "bench" / "results" / "zigzag-2x6-k2.json").read_text())
    text = " ".join(documentation().split())
    found = re.search(r"\*\*2x6 with 2 seeds a pit, whole\*\* .*? ([\d,]+) positions in ([\d.]+) "
                      r"min .*? resident set ([\d.]+) GB at peak with them, the table ([\d.]+) GB "
                      r".*? \*\*a loss by (\d) for p, the first mover: game over in (\d+) plies\*\* "
                      r"\((\w) or (\w); .*? checksums of all ([\d,]+) blocks and checked ([\d,]+) "
                      r"positions", text)
    assert found, "docs/results.md gives the 2x6 solve with 2 seeds a pit"
    solve, start, check = run["solve"], run["start"]["result"], run["check"]["result"]
    assert int(found[1].replace(",", "")) == solve["result"]["positions_per_side"]
    hours, minutes, seconds = (float(x) for x in solve["wall"].split(":"))
    assert float(found[2]) == round(hours * 60 + minutes + seconds / 60, 1)
    assert float(found[3]) == round(solve["peak_rss_kb"] * 1024 / 1e9, 1)
    assert float(found[4]) == round(solve["result"]["size_on_disk"] / 1e9, 1)
    assert (-int(found[5]), int(found[6])) == (start["value"], start["remoteness"])
    assert [found[7], found[8]] == start["best"]
    assert int(found[9].replace(",", "")) == check["blocks"] and check["failure_count"] == 0
    assert int(found[10].replace(",", "")) == check["positions_verified"]
    assert solve["exit"] == 0 and run["check"]["exit"] == 0
