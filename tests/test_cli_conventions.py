"""CLI conventions: --version, -h, shell completion, help that fits the terminal with whole
examples, one "[default: ...]" per option, and one sentence for every error."""
import json
import os
import pathlib
import re
import subprocess
import sys
from importlib import metadata

import pytest
import typer
from typer import _click as click
from typer.testing import CliRunner

from sowsolve.cli.app import app
from sowsolve.tables import report as reports, verify
from sowsolve.tables.store import open_table

#: the whole module is left out of `pytest -m "not slow"` (processes, clusters, long solves)
pytestmark = pytest.mark.slow

runner = CliRunner()
COMMANDS = sorted(typer.main.get_command(app).commands)
SCRIPT = pathlib.Path(sys.executable).parent / "sowsolve"


def run(*args, env=None):
    return runner.invoke(app, [str(a) for a in args], env=env)


def test_every_command_is_listed():
    assert set(COMMANDS) >= {"solve", "query", "export", "info", "tables", "perft", "check"}


def test_version_comes_from_the_package_metadata():
    result = run("--version")
    assert result.exit_code == 0
    assert result.stdout == f"sowsolve {metadata.version('sowsolve')}\n"


@pytest.mark.parametrize("command", [[]] + [[c] for c in COMMANDS])
def test_short_help_is_the_long_help(command):
    short, long = run(*command, "-h"), run(*command, "--help")
    assert short.exit_code == 0 and long.exit_code == 0
    assert short.stdout == long.stdout and "Usage:" in short.stdout


def test_completion_options_are_offered():
    top = run("--help").stdout
    assert "--install-completion" in top and "--show-completion" in top


@pytest.mark.skipif(not SCRIPT.exists(), reason="the sowsolve script is not installed beside python")
def test_completion_completes_commands_and_games():
    def complete(words: str) -> list[str]:
        env = dict(os.environ, _SOWSOLVE_COMPLETE="complete_bash", COMP_WORDS=words,
                   COMP_CWORD=str(len(words.split()) - 1))
        out = subprocess.run([str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)
        return out.stdout.split()
    assert complete("sowsolve qu") == ["query"]
    assert complete("sowsolve solve diff") == ["diffusion", "diffusion-v2"]
    # the completion script is for the shell sowsolve runs under (found from the processes
    # above it): run from bash, as a user would (`; exit $?` keeps bash from exec'ing it)
    script = subprocess.run(["bash", "-c", f"'{SCRIPT}' --show-completion; exit $?"],
                            capture_output=True, text=True, timeout=60)
    assert script.returncode == 0 and "_SOWSOLVE_COMPLETE" in script.stdout


def examples(help_source: str) -> list[str]:
    """The example lines of a command's docstring: after 'Examples:' up to a blank line."""
    lines = help_source.splitlines()
    found = []
    for i, line in enumerate(lines):
        if line.strip().startswith("Examples:") or line.strip().startswith("Example:"):
            rest = line.strip().split(":", 1)[1].strip()
            block = ([rest] if rest else []) + [l.strip() for l in
                                                 _until_blank(lines[i + 1:])]
            found.extend(block)
    return found


def _until_blank(lines):
    for line in lines:
        if not line.strip():
            return
        yield line


def option_entries(help_text: str) -> list[str]:
    """Each option's help entry, continuation lines joined."""
    entries, inside = [], False
    for line in help_text.splitlines():
        if line.startswith("Options:"):
            inside = True
            continue
        if inside:
            if not line.strip() or not line.startswith(" "):
                inside = line.startswith(" ")
                continue
            if re.match(r"^\s{2}-", line):
                entries.append(line.strip())
            elif entries:
                entries[-1] += " " + line.strip()
    return entries


def help_at(width: int, monkeypatch, command: str | None = None) -> str:
    """The help text as a terminal of `width` columns shows it (CliRunner would force 80)."""
    monkeypatch.setenv("COLUMNS", str(width))
    group = typer.main.get_command(app)
    parent = click.Context(group, info_name="sowsolve")
    if command is None:
        return group.get_help(parent)
    sub = group.commands[command]
    return sub.get_help(click.Context(sub, info_name=command, parent=parent))


@pytest.mark.parametrize("width", [60, 200])
@pytest.mark.parametrize("command", COMMANDS)
def test_help_fits_the_terminal_with_whole_examples(command, width, monkeypatch):
    text = help_at(width, monkeypatch, command)
    too_long = [line for line in text.splitlines() if len(line) > width]
    assert not too_long, too_long
    source = typer.main.get_command(app).commands[command].help
    shown = examples(source)
    assert shown, f"{command} --help has no example"
    output_lines = [line.strip() for line in text.splitlines()]
    for example in shown:
        assert example.startswith("sowsolve "), example
        assert example in output_lines, f"example {example!r} is not on a line of its own"
    for entry in option_entries(text):
        assert entry.count("[default:") <= 1, entry


def test_top_level_help_fits_60_columns(monkeypatch):
    text = help_at(60, monkeypatch)
    assert "$SOWSOLVE_TABLES" in text
    assert all(len(line) <= 60 for line in text.splitlines())


def test_a_failing_check_ends_with_its_report_only(monkeypatch, table_2x4_k2):
    def failing(table, samples, full, seed):
        return {"table": table.path, "tiers": 1, "blocks": 1, "positions_verified": 1,
                "full": full, "failures": ["X: stored win, its children give loss"],
                "failure_count": 1}
    monkeypatch.setattr(verify, "check_table", failing)
    result = run("check", "--table", table_2x4_k2)
    assert result.exit_code == 1
    assert "1 FAILURES" in result.stdout and result.stderr == ""
    result = run("check", "--table", table_2x4_k2, "--json")
    assert result.exit_code == 1 and json.loads(result.stdout)["failure_count"] == 1
    assert result.stderr == ""


HUGE = 10 ** 30


@pytest.mark.parametrize("args, fragment", [
    (["solve", "diffusion", "--cols", 2, "--stones", 1, "--threads", 99999999999], "--threads"),
    (["solve", "diffusion", "--cols", 2, "--stones", 1, "--threads", HUGE], "--threads"),
    (["solve", "overflow", "--size", "3x3", "--max-positions", HUGE], "--max-positions"),
    (["solve", "diffusion", "--cols", HUGE, "--stones", 1], "--cols"),
    (["solve", "zigzag", "--cols", 2, "--stones", -HUGE], "--stones"),
    (["query", "2222/2222 A", "--table", "{t}", "--max-positions", HUGE], "--max-positions"),
    (["query", "2222/2222 A", "--table", "{t}", "--plies", HUGE], "--plies"),
    (["query", "9" * 5000 + " A", "--table", "{t}"], "position"),
    (["check", "--table", "{t}", "--samples", HUGE], "--samples"),
    (["perft", "diffusion", "--depth", HUGE], "--depth"),
    (["perft", "zigzag", "--cols", 2, "--stones", 1, "--depth", 1, "--position", "2222/2222 A"],
     "looks like Diffusion"),
    (["info", "--table", "{t}", "--cols", 4], "not both"),
])
def test_bad_numbers_and_texts_get_one_sentence(tmp_path, table_2x4_k2, args, fragment):
    result = run(*[str(a).format(t=table_2x4_k2) for a in args] + ["--table", tmp_path / "x.sqlite"]
                 if args[0] == "solve" else [str(a).format(t=table_2x4_k2) for a in args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sowsolve: ") and fragment in lines[0], lines
    assert len(lines[0]) < 400                       # bad input is quoted by a short prefix
    assert not (tmp_path / "x.sqlite").exists()


def test_an_unexpected_error_is_one_sentence(monkeypatch, table_2x4_k2):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")
    monkeypatch.setattr(reports, "info", broken)
    monkeypatch.delenv("SOWSOLVE_TRACEBACK", raising=False)
    result = run("info", "--table", table_2x4_k2)
    assert result.exit_code == 1 and "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "ZeroDivisionError" in lines[0]


@pytest.mark.parametrize("args, fragment", [
    (["query"], "Missing argument"),
    (["solve", "diffusion", "--threads", "abc"], "--threads"),
    (["perft", "diffusion", "--depth", "3", "--bogus"], "--bogus"),
    (["no-such-command"], "no-such-command"),
])
def test_usage_errors_are_one_sentence(args, fragment):
    result = run(*args)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sowsolve: ") and fragment in lines[0], lines
    assert "-h`" in lines[0]                         # where to read more


# --- standard output and error that cannot be written, names that are no UTF-8, odd paths ------

def sowsolve(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=None, env=None):
    """The command in a process of its own, as a shell runs it."""
    return subprocess.run([sys.executable, "-c", "from sowsolve.cli.entry import main; main()",
                           *[a if isinstance(a, bytes) else str(a) for a in args]],
                          stdout=stdout, stderr=stderr, cwd=cwd, env=env, timeout=600)


def printing_commands(table):
    return [["--help"], ["query", "-h"], ["--version"],
            ["info", "--table", table], ["query", "2222/2222 A", "--table", table],
            ["tables", "--dir", os.path.dirname(table)], ["check", "--table", table],
            ["perft", "diffusion", "--cols", 4, "--stones", 1, "--depth", 2],
            ["show", "2222/2222 A", "--game", "diffusion"]]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_standard_output_is_one_sentence(table_2x4_k2):
    """Help, version and every command's output into a full disk: the sentence export says,
    exit 1, no traceback."""
    for args in printing_commands(table_2x4_k2):
        with open("/dev/full", "w") as full:
            done = sowsolve(*args, stdout=full)
        said = done.stderr.decode(errors="replace").strip().splitlines()
        assert done.returncode == 1, (args, said)
        assert said == ["sowsolve: cannot write standard output: No space left on device"], (args, said)


def test_a_closed_pipe_on_standard_output_ends_quietly(table_2x4_k2):
    """A reader of standard output that left (`| head`): exit 141 and not a word, as
    `export --out -` and cat do."""
    for args in printing_commands(table_2x4_k2)[3:]:
        read, write = os.pipe()
        os.close(read)
        try:
            done = sowsolve(*args, stdout=write)
        finally:
            os.close(write)
        assert (done.returncode, done.stderr) == (141, b""), (args, done.stderr)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_standard_error_stops_no_solve(tmp_path):
    """The estimate a solve prints on stderr is not worth its table: a stderr that cannot be
    written leaves the solve to finish."""
    table = tmp_path / "t.sqlite"
    with open("/dev/full", "w") as full:
        done = sowsolve("solve", "diffusion", "--cols", 4, "--stones", 1, "--table", table,
                        stderr=full)
    assert done.returncode == 0
    with open_table(table) as solved:
        assert solved.finished


def test_a_tables_directory_that_is_a_file_is_named_so(tmp_path):
    file = tmp_path / "d.csv"
    file.write_text("a,b\n")
    env = {"SOWSOLVE_TABLES": str(file)}
    for args in (["tables"], ["solve", "diffusion", "--cols", 4, "--stones", 1],
                 ["info", "diffusion", "--cols", 4, "--stones", 1], ["query", "2222/2222 A"],
                 ["info"], ["solve", "diffusion", "--cols", 4, "--stones", 1, "--table",
                            file / "t.sqlite"], ["tables", "--dir", file]):
        result = run(*args, env=env)
        assert result.exit_code == 2, (args, result.output)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and str(file) in lines[0], (args, lines)
        assert "is not a directory" in lines[0], (args, lines)
    assert file.read_text() == "a,b\n" and os.listdir(tmp_path) == ["d.csv"]


def test_a_table_whose_name_is_not_utf8_is_solved_read_and_listed(tmp_path):
    directory = os.fsencode(tmp_path / "bad")
    os.mkdir(directory)
    table = directory + b"/\xff.sqlite"
    solved = sowsolve("solve", "diffusion", "--cols", 4, "--stones", 1, "--table", table)
    assert solved.returncode == 0, solved.stderr
    assert b"\xff.sqlite" in solved.stdout
    answered = sowsolve("query", "1111/1111 A", "--table", table, "--json")
    assert answered.returncode == 0 and json.loads(answered.stdout)["value"], answered.stderr
    listed = sowsolve("tables", "--dir", directory, "--json")
    assert listed.returncode == 0, listed.stderr
    [entry] = json.loads(listed.stdout)["tables"]
    assert entry["status"] == "table" and entry["problem"] is None
    served = sowsolve("serve", "--table", table, "--port", 1)
    said = served.stderr.decode(errors="replace").strip().splitlines()
    assert served.returncode == 2 and len(said) == 1 and "not valid UTF-8" in said[0], said
    assert os.listdir(directory) == [b"\xff.sqlite"]


def test_a_long_position_is_quoted_with_its_length(tmp_path):
    result = run("query", "1" * 2000, env={"SOWSOLVE_TABLES": str(tmp_path)})
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "(2,000 characters)" in lines[0] and len(lines[0]) < 400, lines


@pytest.mark.parametrize("target", ["proof", "table"])
def test_check_takes_one_range_of_samples_and_seeds(tmp_path, table_2x4_k2, target):
    """`check --proof` and `check --table` refuse the same --samples and --seed."""
    given = ["--proof", tmp_path / "none.proof"] if target == "proof" else ["--table", table_2x4_k2]
    for option, value in (("--samples", 0), ("--seed", -1)):
        result = run("check", *given, option, value)
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"sowsolve: {option} must be"), lines


def test_check_proof_names_a_fifo_or_a_directory(tmp_path):
    fifo, directory = tmp_path / "p.proof", tmp_path / "d.proof"
    os.mkfifo(fifo)
    directory.mkdir()
    for path, what in ((fifo, "is not a proof file (not a regular file)"),
                       (directory, "is a directory")):
        done = sowsolve("check", "--proof", path)
        said = done.stderr.decode().strip().splitlines()
        assert done.returncode == 2 and len(said) == 1 and what in said[0], said


def test_the_project_names_no_path_of_a_machine():
    """The project speaks only of itself: no home, root or work directory of the machine it was
    made on in its sources, docs or recorded results (a bench's command line records the path
    it was given: give it as a placeholder, or edit it out)."""
    root = pathlib.Path(__file__).resolve().parent.parent
    suffixes = {".py", ".pyx", ".pxd", ".pyi", ".h", ".md", ".json", ".toml", ".cfg", ".txt",
                ".yml", ".yaml", ".sh"}
    found = []
    paths = [p for p in root.iterdir() if p.is_file()]
    for folder in ("bench", "cext", "cli", "docs", "solver", "tables", "tests"):
        paths += (root / folder).rglob("*")
    for path in paths:
        parts = path.relative_to(root).parts
        if path.suffix not in suffixes or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        for marker in (f"/{name}/" for name in ("work", "root", "home")):
            if marker in text:
                found.append(f"{'/'.join(parts)}: {marker}")
    assert found == []


def test_an_empty_table_path_and_a_long_number_are_said_as_given(tmp_path):
    """An empty --table is a usage error, not the tables directory's table; a number too long to
    quote whole is cut with its length said, never silently."""
    result = run("solve", "diffusion", "--cols", "2", "--stones", "1", "--table", "", env={"SOWSOLVE_TABLES": str(tmp_path)})
    assert result.exit_code == 2 and "path is empty" in result.output
    assert os.listdir(tmp_path) == []
    digits = "9" * 30
    result = run("prove", "overflow", "--size", "3x3", "--max-nodes", digits)
    assert result.exit_code == 2
    assert "... (30 characters)" in result.output and "9" * 21 not in result.output


@pytest.mark.parametrize("text, words", [
    ("2222/222 A", "Diffusion v1, 2x6, 4 stones per pit: position '2222/222 A': the top row has "
                   "4 pits, this board has 6"),
    ("1111/1111/111 L", "Overflow, 6x6: position '1111/1111/111 L' has 3 rows separated by '/', "
                        "this board has 6"),
    ("55555/555555 p - -", "Zig Zag, 2x6, 5 seeds per pit: position '55555/555555 p - -': the "
                           "top row has 5 cells, this board has 6")])
def test_a_malformed_position_near_one_game_says_what_is_wrong(text, words):
    """Where the side to move names one game's players, that game's rules say what is wrong
    on its standard board (named), not the list of every game's example."""
    import subprocess
    import sys
    run = subprocess.run([sys.executable, "-c", "from sowsolve.cli.entry import main; main()",
                          "show", text], capture_output=True, text=True)
    assert run.returncode == 2 and run.stderr.count("\n") == 1
    assert words in run.stderr, run.stderr


def test_the_version_loads_no_kernel_and_no_numpy():
    """`sowsolve --version` answers without the command line's modules: no numpy, no kernel,
    no table reader (start-up is a figure of bench/bench_startup.py)."""
    code = ("import sys; from sowsolve.cli.entry import main\n"
            "sys.argv = ['sowsolve', '--version']\n"
            "try:\n    main()\nexcept SystemExit as leaving:\n    code = leaving.code\n"
            "heavy = [m for m in ('numpy', 'zstandard', 'sowsolve.cext.engine', 'sowsolve.tables.store', "
            "'typer') if m in sys.modules]\n"
            "print(code, heavy, file=sys.stderr)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.stdout == f"sowsolve {metadata.version('sowsolve')}\n"
    assert run.stderr.strip() == "0 []"
