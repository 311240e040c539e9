"""Every example of the README runs: the `sowsolve ...` lines of its sh blocks, in the order
given (each solve before the queries that read it), with SOWSOLVE_TABLES pointed at a fresh
directory, and its Python block (```python), whose commented results are checked where they are
values.  A ```py block is a sketch for a machine the tests do not have (a SLURM cluster): it
is only compiled."""
import ast
import pathlib
import re
import shlex

import pytest
from typer.testing import CliRunner

from sowsolve.cli.app import app

#: the whole module is left out of `pytest -m "not slow"` (processes, clusters, long solves)
pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"^```(\w*)\n(.*?)^```", README, flags=re.S | re.M)
#: the pages of docs/ whose examples run too, after the README's (in this order: each solve
#: before what reads it)
PAGES = ["commands.md", "cluster.md"]
DOC_BLOCKS = [block for page in PAGES
              for block in re.findall(r"^```(\w*)\n(.*?)^```", (ROOT / "docs" / page).read_text(),
                                      flags=re.S | re.M)]

# Commands that would take longer than a few seconds; none today (make an example cheaper in the
# README rather than listing it here).
SLOW: dict[str, str] = {}


def readme_commands() -> list[str]:
    commands = []
    for lang, body in BLOCKS + DOC_BLOCKS:
        if lang != "sh":
            continue
        for line in body.splitlines():
            for part in line.split("&&"):
                part = part.split(" | ")[0].strip()        # a pipe's reader is the shell's
                if part.startswith("sowsolve "):
                    commands.append(part)
    return commands


COMMANDS = readme_commands()


def test_the_readme_has_examples():
    assert len(COMMANDS) >= 10
    assert any(lang == "python" for lang, _ in BLOCKS)


def test_the_readme_is_short_and_shows_every_command():
    """A newcomer reads the README in five minutes: under 200 lines, no line of a table or
    text longer than a screen, and one example of every command (the rest is in docs/)."""
    from sowsolve.cli.app import app as typer_app
    import typer.main
    lines = README.splitlines()
    assert len(lines) < 200
    assert max(len(line) for line in lines) <= 400
    readme_commands = {c.split()[1] for lang, body in BLOCKS if lang == "sh"
                       for c in (p.strip() for line in body.splitlines() for p in line.split("&&"))
                       if c.startswith("sowsolve ")}
    readme_commands |= set(re.findall(r"`sowsolve (\w+) [^`]*`", README))   # serve: it runs until stopped
    names = set(typer.main.get_command(typer_app).commands)
    assert names <= readme_commands, names - readme_commands
    for page in re.findall(r"\]\((docs/[\w.-]+\.md)(?:#[\w-]+)?\)", README):
        assert (ROOT / page).exists(), page


def test_readme_sketches_compile():
    sketches = [body for lang, body in BLOCKS + DOC_BLOCKS if lang == "py"]
    assert sketches
    for body in sketches:
        compile(body, "README.md", "exec")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("readme")


@pytest.fixture
def in_workdir(workdir, monkeypatch):
    monkeypatch.chdir(workdir)
    monkeypatch.setenv("SOWSOLVE_TABLES", str(workdir / "sowsolve-tables"))
    return workdir


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command_runs(in_workdir, command):
    if command in SLOW:
        pytest.skip(SLOW[command])
    result = CliRunner().invoke(app, shlex.split(command)[1:])
    assert result.exit_code == 0, f"{command}: {result.output}"
    assert "Traceback" not in result.output


class _Checked(ast.NodeTransformer):
    """Wrap every expression statement in _check(value, line) to compare its comment."""

    def visit_Expr(self, node: ast.Expr):
        call = ast.Call(func=ast.Name("_check", ast.Load()),
                        args=[node.value, ast.Constant(node.lineno)], keywords=[])
        return ast.copy_location(ast.Expr(call), node)


def test_readme_python_block_runs(in_workdir):
    # the tables it opens are the README's first solves, made here if the commands above
    # did not run first (pytest -k)
    for command in COMMANDS:
        if command.startswith("sowsolve solve diffusion --cols 4 --stones 2"):
            assert CliRunner().invoke(app, shlex.split(command)[1:]).exit_code == 0
    (source,) = [body for lang, body in BLOCKS if lang == "python"]
    lines = source.splitlines()
    checked = []

    def _check(value, lineno):
        comment = lines[lineno - 1].partition("#")[2].strip()
        # a comment that starts like a value (Value(...), None) must be that value
        if re.match(r"^(None\b|[A-Z]\w*\()", comment):
            assert comment.startswith(repr(value)), (lines[lineno - 1], value)
            checked.append(lineno)
        return value

    tree = ast.fix_missing_locations(_Checked().visit(ast.parse(source)))
    exec(compile(tree, "README.md", "exec"), {"_check": _check})
    assert checked                                     # at least one claimed value was compared


def test_license_matches_pyproject():
    import tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    license_text = (ROOT / "LICENSE").read_text()
    assert project["license"] == "MIT"
    assert license_text.startswith("MIT License")
    assert re.search(r"^Copyright \(c\) \d{4} the sowsolve authors$", license_text, flags=re.M)
    assert "THE SOFTWARE IS PROVIDED \"AS IS\"" in license_text


PATH_LIKE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]*|[\w-]+\.(?:txt|md|py|pyx|pxd|h|c|json|"
                       r"lud|pdf|html|csv|toml|sqlite))(?![\w/])")


def cited_paths(text: str) -> list[str]:
    """Things that look like files or folders: a/b/c, dir/, name.ext (not positions like
    444444/444444 or 1,12,0/..., which have no letters-only segment with an extension)."""
    found = []
    for match in PATH_LIKE.finditer(text):
        token = match.group(1)
        if re.fullmatch(r"[\d/.,-]+", token) or token.endswith("/..."):
            continue                                   # position text, "1/2", "0 .. n/2-1"
        if "/" in token and not (token.endswith("/") or re.search(r"\.\w+$", token)):
            continue                                   # board text like 565656/056565
        found.append(token)
    return found


def test_rules_cite_only_files_in_the_repository():
    """docs/RULES.md and every game's RULES.md (in its package) name only files that exist."""
    missing = []
    for page in [ROOT / "docs" / "RULES.md", *sorted((ROOT / "solver" / "games").glob("*/RULES.md"))]:
        for p in cited_paths(page.read_text()):
            if not any((base / p).exists() for base in (ROOT, ROOT / "docs", page.parent)):
                missing.append(f"{page.relative_to(ROOT)}: {p}")
    assert len(list((ROOT / "solver" / "games").glob("*/RULES.md"))) == 3
    assert not missing, missing


def test_the_path_finder_finds_paths():
    assert cited_paths("see `seeds/zigzag.txt` and `seeds/`, and Overflow.lud, not 444444/444444") \
        == ["seeds/zigzag.txt", "seeds/", "Overflow.lud"]


def test_the_layout_names_every_module():
    """docs/design.md's Layout names every module of the four code folders, so it cannot go
    stale unnoticed."""
    text = (ROOT / "docs" / "design.md").read_text()
    layout = text[text.index("## Layout"):]
    missing = [f"{folder}/{path.name}" for folder in ("api", "solver", "cext", "tables", "cli")
               for path in sorted((ROOT / folder).rglob("*"))
               if path.suffix in (".py", ".pyx", ".pxd", ".h")
               and (path.name != "__init__.py" or folder == "api")
               and path.name not in layout]
    assert not missing, missing


def test_every_link_of_the_docs_leads_somewhere():
    """A link or picture of the README or a docs page that names a file of the repository
    names one that exists, relative to the page (docs/images/x.svg from the README,
    images/x.svg from docs/)."""
    pages = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if "://" in target or target.startswith("#"):
                continue
            if not (page.parent / target.split("#")[0]).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, broken
