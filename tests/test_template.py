"""The template game (docs/template/) is a whole game that works: its kernel builds, it
registers, its self-check passes, its vectors hold and its table equals a brute force written
here from its RULES.md -- so copying it is a start that runs, not a sketch.

The template is no registered game: this test builds its kernel in a temporary folder, loads
its package as solver/games/template/ would be loaded, registers it for the test's span and
removes it after."""
import importlib.util
import json
import pathlib
import re
import subprocess
import sys
from functools import lru_cache

import pytest
from typer.testing import CliRunner

import sowsolve
from sowsolve.solver import games as registry
from sowsolve.solver.solvers import RETROGRADE

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "docs" / "template"

# -O0: the test proves the template compiles and is right; optimising it would triple its build
BUILD = """
from Cython.Build import cythonize
from setuptools import Extension, setup
setup(ext_modules=cythonize([Extension({name!r}, [{name!r} + ".pyx"], include_dirs=[{cext!r}],
                                       extra_compile_args=["-O0"])],
                            include_path=[{cext!r}], compiler_directives={{"language_level": 3}}),
      script_args=["build_ext", "--inplace"])
"""


def _load(name: str, location: pathlib.Path, package: bool = False):
    spec = importlib.util.spec_from_file_location(
        name, location / "__init__.py" if package else location,
        submodule_search_locations=[str(location)] if package else None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def renames() -> list[tuple[str, str]]:
    """The renames docs/template/README.md's `sed` line makes of a copy."""
    text = (TEMPLATE / "README.md").read_text()
    [command] = [line for line in text.splitlines() if line.startswith("sed -i ")]
    return re.findall(r"s/(\w+)/(\w+)/g", command)


@pytest.fixture(scope="module", params=["template", "copy"])
def template(request, tmp_path_factory):
    """The template game as it stands (`template`), or copied as its README says with its
    renames (`copy`), registered while the module's tests run."""
    pairs = renames() if request.param == "copy" else []
    assert pairs or request.param == "template", "the README's sed line renames nothing"

    def renamed(text: str) -> str:
        for old, new in pairs:
            text = text.replace(old, new)
        return text
    name = renamed("template")
    build = tmp_path_factory.mktemp("kernel")
    (build / f"{name}.pyx").write_text(renamed((TEMPLATE / "template.pyx").read_text()))
    (build / "build.py").write_text(BUILD.format(cext=str(ROOT / "cext"), name=name))
    package_dir = tmp_path_factory.mktemp("package") / name
    package_dir.mkdir()
    for path in (TEMPLATE / "game").iterdir():
        if path.is_file():
            (package_dir / renamed(path.name)).write_text(renamed(path.read_text()))
    done = subprocess.run([sys.executable, "build.py"], cwd=build, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    [built] = build.glob(f"{name}*.so")
    names = [f"sowsolve.cext.{name}", f"sowsolve.solver.games.{name}",
             f"sowsolve.solver.games.{name}.game"]
    try:
        _load(names[0], built)
        package = _load(names[1], package_dir, package=True)
        [cls] = [value for key, value in vars(package).items() if key == renamed("Template")]
        registry.register(registry.GameEntry(name, cls, RETROGRADE))
        yield name, package_dir
    finally:
        registry.GAMES.pop(name, None)
        registry.SOLVED_BY.pop(name, None)
        for module in names:
            sys.modules.pop(module, None)


def vectors(template) -> dict:
    name, package_dir = template
    return json.loads((package_dir / f"{name}.json").read_text())


# --- the rules, written again from docs/template/game/RULES.md -------------------------------
def sow(board: tuple, pit: int) -> tuple:
    board = list(board)
    stones, board[pit] = board[pit] - 1, 0
    target = pit + 1
    while stones and target < len(board):
        board[target] += 1
        stones -= 1
        target += 1
    return tuple(board)


@lru_cache(maxsize=None)
def brute(board: tuple) -> tuple[str, int]:
    """(value, remoteness) for the side to move: who cannot move has lost."""
    children = [brute(sow(board, pit)) for pit, stones in enumerate(board) if stones]
    if not children:
        return "loss", 0
    lost = [r for v, r in children if v == "loss"]
    if lost:
        return "win", min(lost) + 1
    return "loss", max(r for _, r in children) + 1


def test_the_rule_examples_and_perft_counts_hold(template):
    for entry in vectors(template)["moves"]:
        game = sowsolve.make_game(template[0], **entry["parameters"])
        position = game.parse_position(entry["position"])
        after = game.play(position, game.parse_move(position, entry["move"]))
        assert game.format_position(after) == entry["after"], entry["name"]
        assert sow(position.board, game.parse_move(position, entry["move"])) == after.board
    for entry in vectors(template)["perft"]:
        game = sowsolve.make_game(template[0], **entry["parameters"])
        assert game.perft(game.initial(), len(entry["counts"])) == entry["counts"]


def test_its_self_check_passes(template):
    from sowsolve.cli.app import app
    for entry in vectors(template)["check"]:
        options = [f"--{key}={value}" for key, value in entry["parameters"].items()]
        result = CliRunner().invoke(app, ["check", template[0], *options, "--json"])
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        assert report["failures"] == [] and report["positions"] > 0 and report["moves"] > 0


def test_its_tables_equal_the_brute_force_and_its_vectors(template, tmp_path):
    for entry in vectors(template)["solved"]:
        path = tmp_path / f"t-{entry['parameters']['pits']}-{entry['parameters']['stones']}.sqlite"
        result = sowsolve.solve(template[0], table=str(path), **entry["parameters"])
        if "positions" in entry:
            assert result.summary["positions_per_side"] == entry["positions"]
        with sowsolve.open_table(str(path)) as table:
            answer = table.query(entry["position"])
            assert (answer["value"], answer["remoteness"]) == (entry["value"], entry["remoteness"])
            assert brute(table.game.parse_position(entry["position"]).board) == \
                (entry["value"], entry["remoteness"])
            if "best" in entry:
                assert sorted(answer["best"]) == sorted(entry["best"])
            for tier in table.game.tiers():
                for position in table.game.stored_positions(tier, 0, table.game.tier_size(tier)):
                    stored = table.probe(position)
                    assert (stored.value, stored.remoteness) == brute(position.board), position


def test_a_game_without_pictures_is_refused_by_the_commands_that_draw(template, tmp_path):
    """The template offers no Drawable: show, play and serve say so in one sentence (exit 2)
    instead of failing inside."""
    from sowsolve.cli.app import app
    path = tmp_path / "t.sqlite"
    sowsolve.solve(template[0], table=str(path), pits=3, stones=2)
    for args in (["show", "2,2,2 N", "--table", str(path)], ["play", "--table", str(path)],
                 ["serve", "--table", str(path), "--port", "1"]):
        result = CliRunner().invoke(app, args, input="quit\n")
        assert result.exit_code == 2, (args, result.output)
        assert "offers no pictures" in result.output and "Traceback" not in result.output
