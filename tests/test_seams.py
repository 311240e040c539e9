"""The engine's seams hold: solvers, value kinds and indexings are objects that own every
difference between them, games never import a solver, and the engine never names a game.

Read from the source with `ast` (what `git grep` would find, without its false hits in
comments and docstrings)."""
import ast
import pathlib
import re
import sys

import pytest

from sowsolve.solver.contract import Capability, Compiled, DenseIndex, Game
from sowsolve.solver.games import GAMES, make_game
from sowsolve.solver.games.zigzag import ZigZag
from sowsolve.solver.solvers import INDEXINGS, SOLVERS, MissingHooks
from sowsolve.solver.values import VALUE_KINDS

ROOT = pathlib.Path(__file__).resolve().parent.parent
ENGINE = [p for folder in ("solver", "tables", "cli") for p in sorted((ROOT / folder).glob("*.py"))]
#: the games' modules: what they share (solver/games/*.py) and each game's package
GAME_MODULES = [p for p in sorted((ROOT / "solver" / "games").glob("*.py")) if p.name != "__init__.py"] \
    + sorted((ROOT / "solver" / "games").glob("*/*.py"))
#: the objects that own the names: where solvers, value kinds and indexings are defined
OWNERS = {"solver/solvers.py", "solver/values.py", "tables/layout.py"}
NAMES = set(SOLVERS) | set(VALUE_KINDS) | set(INDEXINGS)


def relative(path: pathlib.Path) -> str:
    return path.relative_to(ROOT).as_posix()


def code_strings(path: pathlib.Path):
    """(line, text) of every string constant that is not a docstring."""
    tree = ast.parse(path.read_text())
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value


def comparisons(path: pathlib.Path):
    """(line, constant) of every comparison or membership test against a string constant,
    and of every attribute read named method / indexing (the old string tags)."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                if isinstance(operand, ast.Constant) and isinstance(operand.value, str):
                    yield node.lineno, operand.value
                if isinstance(operand, (ast.Tuple, ast.List, ast.Set)):
                    for element in operand.elts:
                        if isinstance(element, ast.Constant) and isinstance(element.value, str):
                            yield node.lineno, element.value
        if isinstance(node, ast.Attribute) and node.attr in ("method", "value_kind_name", "keyed"):
            yield node.lineno, f".{node.attr}"


def test_no_branch_on_solver_value_kind_or_indexing_names_outside_their_owners():
    found = []
    for path in ENGINE + GAME_MODULES:
        if relative(path) in OWNERS:
            continue
        for line, value in comparisons(path):
            if value in NAMES or value in (".method", ".keyed", ".value_kind_name"):
                found.append(f"{relative(path)}:{line}: {value}")
    assert found == []


def game_words() -> set[str]:
    """Every word that names a registered game: its registry names, titles, families and
    classes (the endgame class too)."""
    words = set()
    for entry in GAMES.values():
        words |= {entry.name, entry.title, entry.family, entry.cls.__name__}
        if entry.endgame:
            words.add(entry.endgame[0].__name__)
    return words


def game_package(entry) -> pathlib.Path:
    """The game's package in this checkout (sowsolve.solver.games.<game> is solver/games/<game>/:
    the same whether the project is installed editable or as a copy in site-packages, which
    packagers run the tests against)."""
    return ROOT.joinpath(*entry.cls.__module__.split(".")[1:-1])


def kernel_files() -> set[pathlib.Path]:
    """The kernels the games import (from ....cext import <kernel>): cext/<kernel>.* and the
    kernel's own headers, cext/<kernel>_*.h, are theirs."""
    found = set()
    for entry in GAMES.values():
        for path in game_package(entry).glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("cext"):
                    for alias in node.names:
                        found |= set((ROOT / "cext").glob(alias.name + ".*"))
                        found |= set((ROOT / "cext").glob(alias.name + "_*.h"))
    return found


def test_no_game_is_named_outside_its_package():
    """A game is its package (solver/games/<game>/), its kernel (cext/<kernel>.pyx) and its two
    lines in the registry (the import of its class, its entry): no other line of the product --
    code, help text, comment or docstring -- names it, so adding a game touches nothing else
    and the command line's help comes from the games' declarations (cli/gamehelp.py)."""
    words = sorted(game_words(), key=len, reverse=True)
    pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, words)) + r")(?![\w-])")
    packages = {game_package(entry) for entry in GAMES.values()}
    kernels = kernel_files()
    assert kernels, "no game imports its kernel: the scan would miss them"
    product = [p for folder in ("solver", "tables", "cli", "api", "cext")
               for p in sorted((ROOT / folder).rglob("*"))
               if p.suffix in (".py", ".pyx", ".pxd", ".pyi", ".h", ".js", ".css", ".html")]
    product += [ROOT / "setup.py"]
    registry = ROOT / "solver" / "games" / "__init__.py"
    found = []
    for path in product:
        if path in kernels or any(package in path.parents for package in packages):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if path == registry and re.match(r"(from \.\w+ import |register\(GameEntry\()", line):
                continue
            if pattern.search(line):
                found.append(f"{relative(path)}:{number}: {line.strip()[:80]}")
    assert found == []


def test_the_registry_names_each_game_in_two_lines_at_most():
    """What the test above allows in the registry stays two lines a game class: its import and
    its entries (a variant of a class is one more entry)."""
    text = (ROOT / "solver" / "games" / "__init__.py").read_text()
    imports = re.findall(r"^from \.\w+ import .*$", text, flags=re.M)
    entries = re.findall(r"^register\(GameEntry\(.*$", text, flags=re.M)
    assert len(imports) == len({entry.cls.__module__.rsplit(".", 2)[-2] for entry in GAMES.values()})
    assert len(entries) == len(GAMES)


def test_games_never_import_a_solver():
    engine = {"solvers", "retrograde", "score", "search", "tiers", "selfcheck", "estimate"}
    found = []
    for path in GAME_MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                if engine & set(node.module.split(".")) or engine & {a.name for a in node.names}:
                    found.append(f"{relative(path)}:{node.lineno}")
    assert found == []


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_a_solver_needs_only_capabilities_of_the_contract(solver):
    """A solver requires capabilities by type (classes of the contract with abstract hooks),
    never hooks by name."""
    for need in (*SOLVERS[solver].needs, *SOLVERS[solver].indexing.needs):
        assert isinstance(need, type) and issubclass(need, Capability) and need.purpose, need
        assert need.__abstractmethods__, need


def test_a_game_missing_a_capability_is_refused_up_front_in_one_sentence():
    """A Zig Zag that is no ScoreTiers game (its rules and dense index only) cannot be solved
    by the score solver: one sentence naming what it lacks."""
    own = {k: v for k, v in vars(ZigZag).items()
           if k not in ("__dict__", "__weakref__", "__abstractmethods__", "_abc_impl")}
    NoGraph = type("NoGraph", (Game, DenseIndex, Compiled), own)
    game = NoGraph(cols=2, stones=1)
    with pytest.raises(MissingHooks) as refused:
        SOLVERS["score-tiers"].require(game)
    message = str(refused.value)
    assert "ScoreTiers" in message and "Zig Zag, 2x2" in message and "\n" not in message
    assert isinstance(refused.value, ValueError)        # a usage error: exit 2 in the CLI


def test_a_game_with_another_value_kind_is_refused_up_front():
    game = make_game("zigzag", cols=2, stones=1)
    with pytest.raises(MissingHooks) as refused:
        SOLVERS["retrograde"].require(game)
    assert "margin" in str(refused.value) and "winloss" in str(refused.value)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_registered_game_is_built_for_a_registered_solver(name):
    smallest = {p.name: p.kind.write(min(p.values)) for p in GAMES[name].parameters}
    game = make_game(name, **smallest)
    assert game.solver in SOLVERS.values() and game.value_kind in VALUE_KINDS.values()


def test_an_undeclared_tier_dependency_fails_the_self_check_and_the_solve(tmp_path):
    """A game whose tier leaves out a tier its children lie in: `check GAME` names the move,
    and a solve stops at that tier at once (the worker is handed only what the tier declares),
    instead of working from scratch and failing on a resume."""
    from sowsolve.solver.games.diffusion import Diffusion
    from sowsolve.tables.store import TableWriter

    class Forgetful(Diffusion):
        def tier_dependencies(self, tier):
            return [d for d in super().tier_dependencies(tier) if d != tier - 2]

    game = Forgetful(cols=4, stones=2)
    game.solver = SOLVERS["retrograde"]
    report = game.solver.self_check(game, samples=300)
    assert report["failure_count"] > 0
    assert all("does not declare it reads" in f for f in report["failures"])
    with TableWriter(str(tmp_path / "t.sqlite"), game) as writer:
        with pytest.raises(RuntimeError, match="not loaded"):
            game.solver.solve(game, writer, threads=1)


def test_every_games_help_declaration_reaches_its_commands_help():
    """Each game's command_notes and command_examples (cli/gamehelp.py) name a command (and an
    option of it) that exists, and that command's help shows them: a misspelt key would drop
    the game's text silently."""
    import typer
    from sowsolve.cli.app import app
    commands = typer.main.get_command(app).commands
    for entry in GAMES.values():
        for key, note in entry.cls.command_notes.items():
            command, _, option = key.partition(" ")
            assert command in commands, (entry.name, key)
            if option:
                [parameter] = [p for p in commands[command].params if option in p.opts]
                assert note in " ".join(parameter.help.split()), (entry.name, key)
            else:
                assert note in " ".join(commands[command].help.split()), (entry.name, key)
        for command, lines in entry.cls.command_examples.items():
            assert command in commands, (entry.name, command)
            for words in lines:
                assert f"sowsolve {command} {words}" in \
                    [line.strip() for line in commands[command].help.splitlines()], words


def test_the_project_names_no_directory_of_the_machine_it_was_measured_on():
    """Bench results, docs and sources speak of the project only: no absolute path of a
    machine (a scratch directory, a home) in a recorded command or a figure's note."""
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parent.parent
    machine_path = re.compile(r"(?<![\w.])/(?:tmp|root|home|work|Users|var/folders)/\w")
    found = []
    for folder, patterns in (("bench/results", ("*.json", "*.jsonl")), ("docs", ("*.md",)),
                             (".", ("README.md",))):
        for pattern in patterns:
            for path in sorted((root / folder).glob(pattern)):
                for number, line in enumerate(path.read_text().splitlines(), 1):
                    if machine_path.search(line):
                        found.append(f"{path.relative_to(root)}:{number}")
    assert found == []


def test_every_test_listed_slow_exists():
    """tests/slow-tests.txt names tests by node id: a renamed test would quietly rejoin the
    everyday subset, so each listed name must be a test function (and parameter id) of its file."""
    from conftest import SLOW_TESTS
    assert len(SLOW_TESTS) >= 20
    functions: dict = {}
    for nodeid in SLOW_TESTS:
        path, _, name = nodeid.partition("::")
        function, _, parameters = name.partition("[")
        if path not in functions:
            tree = ast.parse((ROOT / path).read_text())
            functions[path] = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert function in functions[path], nodeid
        if parameters:
            assert re.fullmatch(r"[^\[\]]+\]", parameters), nodeid


def test_the_test_suite_figures_are_the_measured_ones():
    """docs/testing.md's wall times are bench/results/test-suite.json's."""
    import json
    measured = json.loads((ROOT / "bench" / "results" / "test-suite.json").read_text())
    text = " ".join((ROOT / "docs" / "testing.md").read_text().split())
    for name in ("everyday", "full"):
        run = measured[name]
        assert run["exit"] == 0 or "note" in run     # a run with failures says why
        found = re.search(re.escape(f"`{run['command']}`") + r": ([\d,]+) passed, (\d+) skipped in "
                          r"([\d.]+) s \(load average ([\d.]+)", text)
        assert found, name
        assert int(found[1].replace(",", "")) == run["tests"]["passed"]
        assert run["tests"].get("failed", 0) == 0
        assert int(found[2]) == run["tests"].get("skipped", 0)
        assert float(found[3]) == run["wall_seconds"]
        assert float(found[4]) == run["load_average_before"][0]
