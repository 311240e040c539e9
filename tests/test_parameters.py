"""Board parameters as the games declare them: the registry builds and refuses boards from the
declarations, and the command line makes its board options and their help from them -- also
for a game registered here, which no module of the command line names."""
import json

import pytest
import typer
from typer.testing import CliRunner

from sowsolve.cli.app import app
from sowsolve.solver import games as registry
from sowsolve.solver.contract import Game
from sowsolve.solver.errors import BadParameters, BadPosition
from sowsolve.solver.games import GAMES, SOLVED_BY, GameEntry, make_game
from sowsolve.solver.params import GRID, Parameter
from sowsolve.solver.solvers import Indexing, Solver
from sowsolve.solver.values import WIN_LOSS

runner = CliRunner()

# The standard boards of the rule sheet: Diffusion n = 6 with 4 stones per pit, Overflow 6x6
# (Ludii's default) with one disc per cell, Zig Zag n = 6 with 5 seeds per pit.
STANDARD = {
    "diffusion": ({"cols": 6, "stones": 4}, "444444/444444"),
    "diffusion-v2": ({"cols": 6, "stones": 4}, "444444/444444"),
    "overflow": ({"size": "6x6"}, "/".join(["111111"] * 6)),
    "zigzag": ({"cols": 6, "stones": 5}, "555555/555555"),
}


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def one_sentence(result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sowsolve: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def declarations():
    return [(name, p) for name, entry in GAMES.items() for p in entry.parameters]


def edges(parameter: Parameter) -> tuple[list, list]:
    """(allowed, refused) values at the edges of the declared values: the first and the last;
    one below the first, one above the last, and the first gap (where values skip numbers)."""
    values = sorted(parameter.values)
    inside = [values[0], values[-1]]
    outside = [values[0] - 1, values[-1] + 1]
    gaps = [n for n in range(values[0], values[-1]) if n not in parameter.values]
    write = parameter.kind.write
    return [write(n) for n in inside], [write(n) for n in outside + gaps[:1]]


def test_the_games_of_the_rule_sheet_are_registered_each_with_its_solver():
    assert set(STANDARD) <= set(GAMES)
    assert set(SOLVED_BY) == set(GAMES)
    assert all(SOLVED_BY[name] is entry.solver for name, entry in GAMES.items())


@pytest.mark.parametrize("name", sorted(STANDARD))
def test_the_declared_defaults_are_the_standard_board(name):
    board, start = STANDARD[name]
    assert GAMES[name].defaults() == board
    game = make_game(name)
    assert game.parameters() == board
    assert game.format_position(game.initial()).split()[0] == start
    assert make_game(name, **board).parameters() == board


@pytest.mark.slow
@pytest.mark.parametrize("name, parameter", declarations(), ids=lambda x: getattr(x, "name", x))
def test_the_edges_of_each_declared_range(name, parameter):
    allowed, refused = edges(parameter)
    title = GAMES[name].title
    for value in allowed:
        game = make_game(name, **{parameter.name: value})
        assert game.parameters()[parameter.name] == value
        result = run("perft", name, parameter.option, value, "--depth", 1, "--json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["perft"][0] > 0
    for value in refused:
        with pytest.raises(BadParameters, match=parameter.option):
            make_game(name, **{parameter.name: value})
        line = one_sentence(run("perft", name, parameter.option, value, "--depth", 1))
        assert parameter.option in line and title in line and str(value) in line


@pytest.mark.parametrize("name, parameter", declarations(), ids=lambda x: getattr(x, "name", x))
def test_a_value_of_another_type_is_refused_naming_option_and_game(name, parameter):
    wrong = [True, 2.0, None if isinstance(parameter.default, str) else str(parameter.default)]
    for value in [w for w in wrong if w is not None]:
        with pytest.raises(BadParameters, match=f"{parameter.option} of {GAMES[name].title}"):
            make_game(name, **{parameter.name: value})


@pytest.mark.parametrize("name", sorted(GAMES))
def test_options_of_other_games_are_refused_naming_the_game(name):
    own = {p.name for p in GAMES[name].parameters}
    others = {(p.name, p.default) for _, p in declarations() if p.name not in own}
    assert others, f"{name} takes every declared option: there is none to refuse"
    for other, value in sorted(others):
        option = "--" + other.replace("_", "-")
        with pytest.raises(BadParameters, match=f"{GAMES[name].title} takes .*not {option}"):
            make_game(name, **{other: value})
        line = one_sentence(run("perft", name, option, value, "--depth", 1))
        assert GAMES[name].title in line and option in line


def board_commands():
    """The commands that name a GAME, with their click options by name."""
    group = typer.main.get_command(app)
    found = {}
    for name, command in group.commands.items():
        params = {p.name: p for p in command.params}
        if "game" in params:
            found[name] = {opt: p for p in command.params for opt in p.opts}
    return found


def test_every_command_naming_a_game_offers_every_declared_parameter_with_its_help():
    commands = board_commands()
    assert {"solve", "export", "info", "perft", "check"} <= set(commands)
    for command, options in commands.items():
        for name, p in declarations():
            assert p.option in options, (command, p.option)
            shown = " ".join(options[p.option].help.split())
            entry = GAMES[name]
            assert entry.family in shown and p.help in shown
            assert f"standard: {p.default}" in shown
        help_text = run(command, "-h").stdout
        assert all(p.option in help_text for _, p in declarations())


# --- a fourth game, registered here: one pile of Nim, take 1, 2 or 3 stones ---------------------
class Nim(Game):
    """A pile of stones; a move takes 1, 2 or 3 of them; who cannot move has lost."""
    name = "one-pile-nim-test"
    family = "Nim"
    parameters_spec = (Parameter("pile", 5, range(1, 21), "stones in the pile"),)

    def __init__(self, pile: int):
        assert 1 <= pile <= 20, "the registry checks the declared range first"
        self.pile = pile

    def parameters(self):
        return {"pile": self.pile}

    def describe(self):
        return f"Nim, one pile of {self.pile}"

    def initial(self):
        return (self.pile, "A")

    def parse_position(self, text):
        fields = str(text).split()
        if len(fields) != 2 or not fields[0].isdigit() or fields[1] not in ("A", "B"):
            raise BadPosition(f"{text[:20]!r} is no Nim position")
        return (int(fields[0]), fields[1])

    def format_position(self, position):
        return f"{position[0]} {position[1]}"

    def legal_moves(self, position):
        return [take for take in (1, 2, 3) if take <= position[0]]

    def play(self, position, move):
        return (position[0] - move, "B" if position[1] == "A" else "A")

    def format_move(self, move):
        return str(move)

    def outcome(self, position):
        return "loss" if position[0] == 0 else None


def walk_piles(game, samples, rng, report):
    """The test solver's self-check: every pile from the start down, each move taking 1-3."""
    for stones in range(game.pile, -1, -1):
        position = (stones, "A")
        report.count("positions")
        for move in game.legal_moves(position):
            report.count("moves")
            if not 1 <= stones - game.play(position, move)[0] <= 3:
                report.fail(position, f"move {move} takes a number of stones other than 1-3")


class PythonOnly(Solver):
    """A solver that needs nothing of a game: it only self-checks it."""
    name = "python-only"
    indexing = Indexing("none", (), resumable=False)
    value_kind = WIN_LOSS
    needs = ()
    kernel_needs = ()
    checks = (walk_piles,)


@pytest.fixture
def nim():
    entry = registry.register(GameEntry("one-pile-nim-test", Nim, PythonOnly()))
    try:
        yield entry
    finally:
        registry.unregister("one-pile-nim-test")
    assert "one-pile-nim-test" not in GAMES and "one-pile-nim-test" not in SOLVED_BY


def paths(pile: int, depth: int) -> int:
    """Move paths of length `depth` from a pile, by the rule: take 1, 2 or 3."""
    if depth == 0:
        return 1
    return sum(paths(pile - take, depth - 1) for take in (1, 2, 3) if take <= pile)


def test_a_game_registered_later_brings_its_option(nim):
    assert make_game("one-pile-nim-test").parameters() == {"pile": 5}
    assert make_game("one-pile-nim-test", pile=7).solver.name == "python-only"
    with pytest.raises(BadParameters, match="--pile of Nim must be a whole number from 1 to 20"):
        make_game("one-pile-nim-test", pile=21)
    result = run("perft", "one-pile-nim-test", "--pile", 6, "--depth", 4, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["perft"] == [paths(6, d) for d in range(1, 5)]
    result = run("check", "one-pile-nim-test", "--pile", 4, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["positions"], report["moves"], report["failures"]) == (5, 0 + 1 + 2 + 3 + 3, [])
    line = one_sentence(run("perft", "one-pile-nim-test", "--pile", 0, "--depth", 1))
    assert "--pile of Nim" in line
    line = one_sentence(run("perft", "diffusion", "--pile", 3, "--depth", 1))
    assert "Diffusion v1 takes --cols and --stones, not --pile" in line
    help_text = " ".join(run("perft", "-h").stdout.split())
    assert "--pile" in help_text and "Nim: stones in the pile (1-20; standard: 5)" in help_text


def test_an_unregistered_game_takes_its_option_along(nim):
    registry.unregister("one-pile-nim-test")
    try:
        assert "--pile" not in run("perft", "-h").stdout
        line = one_sentence(run("perft", "diffusion", "--pile", 3, "--depth", 1))
        assert "no such option" in line.lower()
    finally:
        registry.register(nim)


def test_a_registration_that_cannot_work_is_refused(nim):
    with pytest.raises(ValueError, match="registered already"):
        registry.register(GameEntry("one-pile-nim-test", Nim, PythonOnly()))

    class Pile(Nim):
        parameters_spec = (Parameter("cols", "4x4", range(1, 5), "ranks x files", kind=GRID),)
    with pytest.raises(ValueError, match="--cols"):
        registry.register(GameEntry("pile", Pile, PythonOnly()))
    assert "pile" not in GAMES
    with pytest.raises(ValueError):
        Parameter("pile", 0, range(1, 21), "a default outside its own range")
