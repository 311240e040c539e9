"""The commands on tables and games: solve, query, export, info, tables, perft, check, prove."""
from __future__ import annotations

import os
import time
import contextlib
from typing import Optional

import typer

from ..solver.errors import BadParameters, shown
from ..solver.estimate import available_memory
from ..solver.games import make_game
from ..solver.cluster import DaskExecutor
from ..solver.tiers import IN_PROCESS
from ..solver import proof as proofs, proofcluster as proofclusters
from ..tables.format import BeyondTable, TableError, TableMissing
from ..tables import locate
from ..tables.store import make_directory, open_table
from ..tables import proving, query as queries, report as reports, solving, verify
from ..tables.solving import MAX_SEARCH, check_max_positions, check_threads
from ..tables.leaves import leaves_from
from ..tables.export import StdoutClosed, Terminated, export as export_table
from . import cluster as clusters, render
from .common import (GAME, GAME_HELP, GAME_OF_TEXT, MAX_POSITIONS, PROVE_GAME, PROVERS, READ_GAME, READ_TABLE, SAMPLES, WHOLE,
                     ExportFormat, app, clear_errors, complete_game, emit_json, fail, note,
                     parse_memory, scheduler_file_option, scheduler_option, show,
                     stop_on_terminate, tier_bar, workers_option)
from .gamehelp import documented, notes, position_example
from .options import BOARD, board_options


@app.command(short_help='Solve every position of a board into a table.')
@board_options
@documented("solve")
def solve(
    game: str = GAME,
    board: dict = BOARD,
    table: Optional[str] = typer.Option(None, "--table", help="Table file to write; left out, "
                                        "GAME-BOARD.sqlite in the tables directory "
                                        "($SOWSOLVE_TABLES, else sowsolve-tables)."),
    threads: Optional[int] = typer.Option(None, "--threads", **WHOLE, help="Solver threads; left out "
                                          "or 0, every core."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing table and start over."),
    max_positions: int = MAX_POSITIONS,
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the estimate (positions, "
                                 "memory, disk, time) and write nothing."),
    allow_large: bool = typer.Option(False, "--allow-large", help="Start a solve even when its "
                                     "estimate is over this machine's memory or disk, or a day."),
    max_stones: Optional[int] = typer.Option(None, "--max-stones", "--max-discs", **WHOLE,
                                             help="An endgame table: only the positions with at "
                                             "most this many stones (discs, seeds) on the board. "
                                             + notes("solve --max-stones")),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    workers: Optional[int] = workers_option("Solve"),
    scheduler: Optional[str] = scheduler_option("Solve"),
    scheduler_file: Optional[str] = scheduler_file_option("Solve"),
    shared_dir: Optional[str] = typer.Option(None, "--shared-dir", metavar="DIR", help="On a "
                                             "cluster: a directory the workers and this process "
                                             "all see; left out, the table's."),
    memory: Optional[str] = typer.Option(None, "--memory", metavar="SIZE", help="Keep the "
                                         "solve within this much memory (8G, 512M, ...): where "
                                         "the tiers it reads would not fit beside the tier being "
                                         "solved, they are kept on disk beside the table, "
                                         "memory-mapped. Left out: they stay in memory while "
                                         "the solve fits 60% of the available memory."),
):
    """Solve every position of a board into a table.

    [game notes]

    Before it starts, solve prints an estimate (positions, peak memory, table size, time, from
    rates measured on a 2-core machine) on stderr, and refuses a solve that does not fit this
    machine unless --allow-large is given.

    [examples]

    On a cluster (--workers, --scheduler, --scheduler-file) each task runs --threads kernel
    threads (left out or 0, 1); see docs/cluster.md.
    """
    with clear_errors(), stop_on_terminate():
        on_cluster = clusters.wanted(workers, scheduler, scheduler_file)
        if shared_dir is not None and not on_cluster:
            raise BadParameters("--shared-dir is for a solve on a cluster (--workers, "
                                "--scheduler, --scheduler-file)")
        task_threads = check_threads(threads or 1) if on_cluster else None
        threads = check_threads(None if on_cluster else threads)
        bound = parse_memory(memory, "--memory", allow_zero=False) if memory is not None else None
        work = solving.plan(game, table=table, threads=threads, max_stones=max_stones,
                            max_positions=max_positions, force=force, memory=bound, **board)
        g, path, estimate = work.game, work.path, work.estimate
        if dry_run:
            if work.finished:
                typer.echo(f"{path} is finished: solve would do nothing")
            else:
                show(estimate, as_json, render.estimate_text)
            return
        if estimate is not None and not estimate["fits"] and not allow_large:
            raise BadParameters(render.refusal_text(estimate))
        if on_cluster:
            solving.check_spreads(g, max_stones)          # before a cluster is started
        if on_cluster and shared_dir is not None and not os.path.isdir(shared_dir):
            raise BadParameters(f"--shared-dir {shared_dir[:200]} is not a directory")
        with contextlib.ExitStack() as cluster:
            executor = IN_PROCESS
            if on_cluster and not work.finished:
                client = cluster.enter_context(clusters.client_for(workers, scheduler,
                                                                   scheduler_file))
                shared = shared_dir
                if shared is None:      # the table's directory, made as the table would make it
                    shared = os.path.dirname(os.path.abspath(path))
                    make_directory(shared, path)
                clusters.check_shared_dir(client, shared)
                # entered by the solve once it holds the table
                executor = DaskExecutor(client, shared, path, threads=task_threads)
            # a stderr that cannot take the estimate stops nothing (note)
            solved = solving.solve(g, table=path, threads=threads, executor=executor,
                                   max_stones=max_stones, progress=tier_bar,
                                   max_positions=max_positions, force=force, allow_large=True,
                                   on_estimate=lambda e: note(render.estimate_text(e, max_stones)),
                                   work=work)
        result = solved.as_dict()
        if solved.solved_now and on_cluster:
            result["cluster"] = {"task_slots": executor.parts, "threads_per_task": task_threads,
                                 "tasks": executor.tasks, "rounds": executor.rounds,
                                 "split_score_tiers": executor.exchange_figures()}
        show(result, as_json, render.summary_text)


@app.command(short_help='Value of a position and of each of its moves.')
@board_options
@documented("query")
def query(
    position: str = typer.Argument(..., help=f"Position text, e.g. '{position_example()}'."),
    table: Optional[str] = typer.Option(None, "--table", help="Table file; left out, a table "
                                        "of the tables directory that holds the position on "
                                        "its board (see --game and the board options)."),
    game_name: Optional[str] = typer.Option(None, "--game", metavar="GAME", help=GAME_OF_TEXT,
                                            autocompletion=complete_game),
    board: dict = BOARD,
    max_positions: int = MAX_POSITIONS,
    max_nodes: Optional[int] = typer.Option(None, "--max-nodes", **WHOLE, help=notes("query --max-nodes")),
    stores: Optional[str] = typer.Option(None, "--stores", help=notes("query --stores")),
    show_line: bool = typer.Option(False, "--line", help="Also print the best line: each ply's "
                                   "move, the position after it and its value, to the end of "
                                   "the game (or until a position repeats)."),
    plies: Optional[int] = typer.Option(None, "--plies", **WHOLE, help="Stop the line after this many "
                                        "plies (implies --line)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
):
    """Value and remoteness of a position, and of every legal move, best first.

    Without --table, the position is read on its board (the board options', else the
    standard board where it fits, else the smallest that holds it), and a table of the
    tables directory ($SOWSOLVE_TABLES, else sowsolve-tables) of that board answers it -- or
    one of a board that holds its positions too (the same pits, fewer stones a pit at the
    start), which the answer names.

    [game notes]

    [examples]
    """
    with clear_errors():
        check_max_positions(max_positions)
        if max_nodes is not None and not 1 <= max_nodes <= MAX_SEARCH:
            raise BadParameters(f"--max-nodes must be from 1 to {MAX_SEARCH:,}, not {shown(max_nodes)}")
        if max_nodes is not None and (show_line or plies is not None):
            raise BadParameters("--line follows remoteness, which a proof (--max-nodes) does not give")
        if plies is not None and not 1 <= plies <= queries.MAX_LINE:
            raise BadParameters(f"--plies must be from 1 to {queries.MAX_LINE:,}, not "
                                f"{shown(plies)}")
        if table is not None and (game_name is not None or board):
            raise BadParameters("name a table with --table, or a game and board with --game "
                                "and the board options, not both")
        found = None
        try:
            if table is None:
                found = locate.find_table(position, game=game_name, board=board)
            path = table if table is not None else found.path
            with open_table(path) as t:
                locate.parse_for_table(t.game, position)
                result = queries.query(t, position, max_positions, progress=tier_bar,
                                       max_nodes=max_nodes)
                if found is not None:
                    found.annotate(result, t.game)
                if stores is not None:
                    result["result"] = queries.final_result(
                        t, result, stores, found.placed.game if found is not None else None)
                    result["stores"] = list(result["result"]["given"].values())
                if show_line or plies is not None:
                    walk = queries.line(t, position, plies, max_positions, progress=tier_bar)
                    result["line"], result["line_end"] = walk["line"], walk["end"]
        except (TableMissing, BeyondTable, queries.NotProved) as exc:
            if table is not None and isinstance(exc, TableMissing):
                raise                        # the --table file named is missing
            # no table holds it: the engine answers any position, each value labelled
            raise type(exc)(f"{exc}; `sowsolve analyse {locate.short(position, 60)}` analyses "
                            f"it with the engine (exact where it can, estimated elsewhere)") from None
        result["table"] = path
        show(result, as_json, render.query_text)


@app.command(short_help='Write every position of a table as CSV, JSON lines or Parquet.')
@board_options
@documented("export", "export --format csv --out t.csv --max-stones 6",
            "export --table T.sqlite --format jsonl --out -",
            "export --format parquet --out D --no-text")
def export(
    game: Optional[str] = READ_GAME,
    board: dict = BOARD,
    table: Optional[str] = READ_TABLE,
    fmt: ExportFormat = typer.Option(..., "--format", help="csv, jsonl or parquet (a folder "
                                     "of Parquet files, one a tier; needs sowsolve[parquet])."),
    out: str = typer.Option(..., "--out", help="Output file, written whole or not at all "
                            "(a pipe or device is written through; - for standard output); "
                            "parquet: a new folder, put in place once complete."),
    force: bool = typer.Option(False, "--force", help="parquet: replace the folder of a "
                               "previous export (never one holding anything else)."),
    no_text: bool = typer.Option(False, "--no-text", help="parquet: leave out the position "
                                 "text column (the pit or cell columns and the fields say the "
                                 "same; docs/export.md rebuilds it in DuckDB)."),
    threads: Optional[int] = typer.Option(None, "--threads", **WHOLE, help="Threads that make "
                                          "the rows; left out or 0, every core."),
    max_stones: Optional[int] = typer.Option(None, "--max-stones", **WHOLE,
                                             help="Only positions with at most this many "
                                             "stones (discs, seeds) on the board."),
    every_orientation: bool = typer.Option(False, "--every-orientation", help=notes("export --every-orientation")),
):
    """Write one row per position: position, value, remoteness (CSV with a header, or one
    JSON object per line).

    [game notes]

    A file is replaced only once complete (a link keeps pointing to it); --out naming the table is refused.  The table
    is named by GAME and board options (found in the tables directory), by --table, or left
    out when the tables directory holds one table.

    [examples]
    """
    try:
        with clear_errors():
            if max_stones is not None and max_stones < 0:
                raise BadParameters(f"--max-stones must be 0 or more, not {max_stones}")
            if threads is not None and not 0 <= threads <= 256:
                raise BadParameters(f"--threads must be 0 (every core) or from 1 to 256, not {threads}")
            if fmt.value != "parquet" and (force or no_text):
                raise BadParameters("--force and --no-text go with --format parquet")
            if fmt.value == "parquet":
                from ..tables.parquet import pyarrow_modules
                pyarrow_modules()                # its sentence before any table is opened
            path = locate.resolve_read_table(table, game, board)
            with open_table(path) as t:
                try:
                    if fmt.value == "parquet":
                        from ..tables.parquet import export_parquet
                        rows = export_parquet(t, out, max_stones, progress=tier_bar,
                                              every_orientation=every_orientation, force=force,
                                              text=not no_text, threads=threads or None)
                    else:
                        rows = export_table(t, out, fmt.value, max_stones, progress=tier_bar,
                                            every_orientation=every_orientation,
                                            threads=threads or None)
                except StdoutClosed:        # `... --out - | head`: stop quietly, as cat does
                    raise typer.Exit(128 + 13) from None
            typer.echo(f"wrote {rows:,} rows to {'standard output' if out == '-' else out}", err=True)
    except Terminated as exc:
        fail(exc.sentence, 128 + exc.signum)


@app.command(short_help='What a table holds: game, tiers, results, start value.')
@board_options
@documented("info")
def info(
    game: Optional[str] = READ_GAME,
    board: dict = BOARD,
    table: Optional[str] = READ_TABLE,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
):
    """Game, board, positions and results per tier, start value, longest win, size on disk.

    The table is named by GAME and board options (found in the tables directory), by --table,
    or left out when the tables directory holds one table.

    [examples]
    """
    with clear_errors():
        path = locate.resolve_read_table(table, game, board)
        with open_table(path, allow_unfinished=True) as t:
            result = reports.info(t)
        show(result, as_json, render.info_text)


@app.command(short_help='List the tables of the tables directory.')
def tables(
    directory: Optional[str] = typer.Option(None, "--dir", help="Directory to list; left out, "
                                            "$SOWSOLVE_TABLES, else sowsolve-tables."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
):
    """List the tables of the tables directory: file, game, board, finished, positions, size.

    Files that are not sowsolve tables, or are damaged, are listed with what is wrong with
    them.  Listing reads only: it creates and changes nothing.

    \b
    Examples:
      sowsolve tables
      sowsolve tables --json
    """
    with clear_errors():
        directory = directory or locate.tables_directory()
        locate.check_directory(directory)
        result = {"directory": directory, "exists": os.path.isdir(directory),
                  "tables": [locate.public(e) for e in locate.scan(directory)]}
        show(result, as_json, render.tables_text)


@app.command(short_help='Count the move paths from a position, depth by depth.')
@board_options
@documented("perft")
def perft(
    game: str = GAME,
    board: dict = BOARD,
    depth: int = typer.Option(..., "--depth", **WHOLE, help="Plies to count."),
    position: Optional[str] = typer.Option(None, "--position", help="Start from this position."),
    as_json: bool = typer.Option(False, "--json", help='Print {"perft": [n1, ..., nD]}.'),
):
    """Count move paths of each length from a position (no moves from a finished game).

    [examples]
    """
    with clear_errors(), stop_on_terminate():
        if not 1 <= depth <= 40:
            raise BadParameters(f"--depth must be from 1 to 40, not {shown(depth)}")
        g = make_game(game, **board)
        pos = g.initial() if position is None else locate.parse_for_game(g, position)
        started = time.perf_counter()
        counts = g.perft(pos, depth)
        seconds = time.perf_counter() - started
        if as_json:
            emit_json({"perft": counts})
        else:
            for d, n in enumerate(counts, 1):
                typer.echo(f"depth {d}: {n}")
            note(f"{sum(counts):,} nodes in {seconds:.3f} s")


@app.command(short_help="Self-check a game's contract or a table's values.")
@board_options
@documented("check", "check --table T.sqlite --full", "check --proof 3x4.proof")
def check(
    game: Optional[str] = typer.Argument(None, help=GAME_HELP + " Checks the game's contract, "
                                         "or with --stored the table of the game and board.",
                                         autocompletion=complete_game),
    board: dict = BOARD,
    table: Optional[str] = typer.Option(None, "--table", help="Check this table file."),
    stored: bool = typer.Option(False, "--stored", help="Check the table of GAME and board in "
                                "the tables directory (without GAME: its only table)."),
    samples: Optional[int] = typer.Option(None, "--samples", **WHOLE, help="Positions sampled per "
                                          "tier (a game checked along random games: in all; a "
                                          "proof: of the winner's, replayed with the reference "
                                          "rules too); left out, 1000. Not with --full, which "
                                          "checks every position."),
    full: bool = typer.Option(False, "--full", help="With a table: verify every position, not a "
                              "sample. With --proof: replay every position with the reference "
                              "rules alone (slow)."),
    seed: Optional[int] = typer.Option(None, "--seed", **WHOLE, help="Seed of the sampling; "
                                       "left out, 0. Not with --full."),
    proof: Optional[str] = typer.Option(None, "--proof", help="Verify this proof file (from "
                                        "`sowsolve prove --proof`): replayed whole with the "
                                        "compiled move generator, a sample with the reference "
                                        "rules."),
    tables: Optional[str] = typer.Option(None, "--tables", metavar="DIR", help="With --proof: "
                                         "where the endgame table a proof cites is (left out, "
                                         "the tables directory; else beside the proof)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
):
    """Self-check: a game against its rules (the checks its solver declares: the kernel's moves
    against the reference rules, and the solver's view -- ranking, children, un-moves, tier
    graphs, packing), or a whole table (block checksums, metadata, every sampled value against
    its children).

    [examples]
    """
    with clear_errors(), stop_on_terminate():
        if full and (samples is not None or seed is not None):
            given = " and ".join(name for name, value in (("--samples", samples), ("--seed", seed))
                                 if value is not None)
            raise BadParameters(f"--full checks every position, so it draws no sample: leave out "
                                f"{given} (they choose the sample a check without --full "
                                f"replays)")
        samples = SAMPLES if samples is None else samples
        seed = 0 if seed is None else seed
        if proof is not None:
            if table is not None or stored or game is not None:
                raise BadParameters("--proof verifies a proof file on its own: give no GAME or "
                                    "table with it")
            if tables is not None and not os.path.isdir(tables):
                raise BadParameters(f"--tables {locate.short(tables, 60)} is not a directory")
        if seed < 0:
            raise BadParameters(f"--seed must be 0 or more, not {shown(seed)}")
        if not 1 <= samples <= MAX_SEARCH:
            raise BadParameters(f"--samples must be from 1 to {MAX_SEARCH:,}, not {shown(samples)}")
        if proof is not None:
            report = proofs.verify_file(proof, tier_bar, samples, seed, full,
                                        leaves_for=proof_leaves(proof, tables, samples, seed))
            show(report, as_json, render.proof_check_text)
            if report["failures"]:
                fail(f"{proof} does not prove its claim: {report['failures'][0]}", 1)
            return
        if tables is not None:
            raise BadParameters("--tables names where a proof's endgame table is: it goes with --proof")
        if table is None and not stored and game is None:
            raise BadParameters("name a GAME to check its contract, or a table to check (--table "
                                "PATH, or --stored for the table of GAME in the tables directory)")
        if table is not None and stored:
            raise BadParameters("--table names the table to check; --stored finds it: give one")
        if full and table is None and not stored:
            raise BadParameters("--full verifies every position of a table: give --table PATH or "
                                "--stored (a game's self-check is always a sample)")
        if table is not None or stored:
            path = locate.resolve_read_table(table, game, board)
            with open_table(path) as t:
                report = verify.check_table(t, samples, full, seed)
        else:
            g = make_game(game, **board)
            report = g.solver.self_check(g, samples, seed)
        show(report, as_json, render.check_text)
    if report["failures"]:
        raise typer.Exit(1)


@app.command(short_help="Prove who wins a position, without solving every position.")
@board_options
@documented("prove", "check --proof 3x4.proof")
def prove(
    game: str = PROVE_GAME,
    board: dict = BOARD,
    position: Optional[str] = typer.Option(None, "--position", help="Position to prove; left out, "
                                           "the start."),
    memory: Optional[str] = typer.Option(None, "--memory", help="Memory for the whole search "
                                         "(512M, 8G, ...): 128M go to the process, the rest to "
                                         "the search's table (129M at least); when the table is "
                                         "full, the entries with the least work below them go. "
                                         "On a cluster, each worker's. Left out: two entries for "
                                         "every position the board can reach, at most 1G and half "
                                         "the memory available."),
    proof: Optional[str] = typer.Option(None, "--proof", help="Write the proof to this file "
                                        "(`sowsolve check --proof FILE` verifies it)."),
    checkpoint: Optional[str] = typer.Option(None, "--checkpoint", help="Save the search to this "
                                             "file every 2 minutes (longer for a large table: saving "
                                             "stays under a tenth of the run), when stopped, and "
                                             "once proved if saved before (drawing a large proof "
                                             "takes a while); a run started with it goes on from it."),
    max_nodes: Optional[int] = typer.Option(None, "--max-nodes", **WHOLE, help="Give up after "
                                            "the search expands this many positions (exit 1; with "
                                            "several threads, each may finish the expansion it "
                                            "began: up to one more a thread)."),
    threads: Optional[int] = typer.Option(None, "--threads", **WHOLE, help="Search threads, "
                                          "sharing one table; left out or 0, every core."),
    tables: Optional[str] = typer.Option(None, "--tables", metavar="DIR", help="End a line at a "
                                         "position the board's endgame table in DIR holds (the "
                                         "one of most discs, from `solve --max-discs`); left "
                                         "out, the tables directory's, if it has one."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    workers: Optional[int] = workers_option("Prove", ", each with a search table of --memory"),
    scheduler: Optional[str] = scheduler_option("Prove"),
    scheduler_file: Optional[str] = scheduler_file_option("Prove"),
    job_nodes: Optional[int] = typer.Option(None, "--job-nodes", **WHOLE, help="On a cluster: "
                                            "expansions a worker spends on a position before it "
                                            "answers with its children's numbers (left out: "
                                            f"{proofclusters.JOB_NODES:,})."),
):
    """Prove the value (win or loss for the side to move) of a position by df-pn proof-number
    search, in bounded memory: a proof needs one winning move at each of the winner's turns and
    every move at the loser's, not every position. It proves the win/loss games solved by
    search ([provers]).
    Remoteness is no part of a proof.

    [examples]

    With an endgame table of the board (`sowsolve solve GAME --max-discs D`), a line ends
    where the table holds the position, with the table's value; the proof cites the table by
    the checksum of its records, and `check --proof` needs the same table.

    On a cluster (--workers, --scheduler, --scheduler-file) this process keeps the top of the
    proof tree and hands its most-proving positions to the workers as jobs of --job-nodes
    expansions; a job proves its position or answers with its children's numbers. What is
    proved stays with this process (and its --checkpoint): a worker killed mid-job costs that
    job. The proof is replayed before it is reported. An endgame table must be at the same path
    on every worker.
    """
    with clear_errors():
        available = available_memory()
        if memory is not None:
            size = parse_memory(memory)
            proofs.memory_entries(size, typed=memory)      # too little is said as it was typed
        else:
            size = proofs.default_memory(make_game(game, **board), available)
            memory = f"{size >> 20}M"
        on_cluster = clusters.wanted(workers, scheduler, scheduler_file)
        if not on_cluster and available is not None and size > available:
            raise BadParameters(f"--memory {shown(memory.strip())} is more than this machine has "
                                f"available ({available / (1 << 30):.1f}G)")
        if on_cluster and threads is not None:
            raise BadParameters("--threads is for a proof in this process; on a cluster each "
                                "worker searches on one thread")
        if job_nodes is not None and not on_cluster:
            raise BadParameters("--job-nodes is for a proof on a cluster (--workers, --scheduler, "
                                "--scheduler-file)")
        if job_nodes is None:
            job_nodes = proofclusters.JOB_NODES
        if not 1 <= job_nodes <= MAX_SEARCH:
            raise BadParameters(f"--job-nodes must be from 1 to {MAX_SEARCH:,}, not {shown(job_nodes)}")
        threads = check_threads(threads)
        if max_nodes is not None and not 1 <= max_nodes <= MAX_SEARCH:
            raise BadParameters(f"--max-nodes must be from 1 to {MAX_SEARCH:,}, not {shown(max_nodes)}")
        g = make_game(game, **board)
        if not g.solver.proves:
            raise BadParameters(f"{g.describe()} is solved whole by `sowsolve solve`; the proof "
                                f"search is for games solved by search ({PROVERS})")
        pos = g.initial() if position is None else locate.parse_for_game(g, position)
        options = dict(memory=size, threads=threads, max_nodes=max_nodes, checkpoint=checkpoint,
                       tables=tables, proof=proof, progress=tier_bar, job_nodes=job_nodes)
        # every check and the endgame table before a cluster is started for the proof
        options["prepared"] = proving.prepare(g, pos, checkpoint=checkpoint, tables=tables,
                                              proof=proof)
        with stop_on_terminate():
            if on_cluster:
                with clusters.client_for(workers, scheduler, scheduler_file) as client:
                    report = proving.prove(g, pos, client=client, **options)
            else:
                report = proving.prove(g, pos, **options)
        if not report["proved"]:
            if as_json:     # a script still learns how far the search went
                emit_json(report)
            if "searched_value" in report:
                fail(f"the search proved a {report['searched_value']} for the side to move in "
                     f"{report['searched_nodes']:,} positions expanded, but drawing its proof "
                     f"takes more than --max-nodes {max_nodes}: no proof written", 1)
            fail(f"not proved within the budget: {render.plural(report['nodes'], 'position', 'positions')} expanded "
                 f"(--max-nodes {max_nodes})", 1)
        show(report, as_json, render.prove_text)


def proof_leaves(proof: str, directory: str | None, samples: int = SAMPLES, seed: int = 0):
    """For check --proof: the endgame table a proof cites, looked for by its file name in
    `directory` (None: the tables directory) and beside the proof, refused unless its records
    are the ones the proof cites, and unless it passes the check `check --table` makes (each
    tier's summary against its records, `samples` positions a tier against their children):
    the checksum says the table is the one the proof was drawn with, not that its values are
    right, and a forged table with its checksums made anew would otherwise carry a false
    proof.  (`check --table --full` checks every position.)"""
    def leaves_for(found):
        name = found.tables["file"]
        folders = [directory if directory is not None else locate.tables_directory(),
                   os.path.dirname(os.path.abspath(proof))]
        for folder in folders:
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                break
        else:
            raise proofs.ProofFails(f"the endgame table {name} its lines end in is not in "
                                    f"{locate.short(folders[0], 60)} nor beside the proof")
        try:
            # one opening for the leaves and the table's check: the file checked is the one read
            with open_table(path) as table:
                leaves = leaves_from(found.game, table)
                if leaves.citation != found.tables:
                    raise proofs.ProofFails(f"{name} is not the endgame table the proof cites (its "
                                            f"records' checksum or limit of discs differs)")
                checked = verify.check_table(table, samples, False, seed)
        except (TableError, BadParameters) as exc:
            raise proofs.ProofFails(f"the endgame table {name} it cites cannot be read: {exc}") from None
        if checked["failures"]:
            raise proofs.ProofFails(f"the endgame table {name} its lines end in fails its own check: "
                                    f"{checked['failures'][0]}")
        return leaves
    return leaves_for
