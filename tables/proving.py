"""Proving a position as a library call: `prove(game, position, ...)` is what `sowsolve prove`
runs (the command parses, calls it, renders) -- the df-pn search of solver/proof.py, in this
process or on a Dask cluster, with the board's endgame table at its leaves when there is one,
and the proof written to a file when asked.

    from sowsolve import make_game, prove
    report = prove(make_game(GAME, **board))       # a game its solver proves
    report["value"], report["winning_moves"]       # what `sowsolve prove --json` prints

Nothing here prints: progress goes to `progress` (a tier bar factory, solver/tiers.py)."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from ..solver import proof as proofs, proofcluster as proofclusters
from ..solver.contract import Game
from ..solver.errors import BadParameters
from ..solver.games import GAMES
from ..solver.tiers import Progress, no_progress
from .format import TableMissing
from .leaves import CitedLeaves, leaves_of
from .locate import short, solve_command, tables_directory, tables_of_board
from .store import open_table

#: what a proof says of remoteness, in every report
NO_REMOTENESS = "remoteness is no part of a proof: the moves proved win (or lose) in the end, not necessarily fastest (or slowest)"


def endgame_table(game: Game, directory: str | None = None, required: bool = False) -> str | None:
    """The board's endgame table of most discs in `directory` (None: the tables directory), for
    the proof search's leaves; None where it holds none (TableMissing when `required`)."""
    if getattr(GAMES.get(game.name), "endgame", None) is None:
        if required:
            raise BadParameters(f"{game.describe()} takes no endgame tables at the leaves of a proof")
        return None
    folder = directory if directory is not None else tables_directory()
    if directory is not None and not os.path.isdir(directory):
        raise BadParameters(f"--tables {short(directory, 60)} is not a directory")
    found = []
    for path in tables_of_board(game, folder):
        with open_table(path) as t:
            if t.meta.get("max_stones") is not None:
                found.append((t.meta["max_stones"], path))
    if not found:
        if required:
            raise TableMissing(f"no endgame table of {game.describe()} in {short(folder, 60)}; "
                               f"make one with `{solve_command(game)} --max-discs 8`")
        return None
    return max(found)[1]


@dataclass
class Prepared:
    """What a proof needs checked and read before it starts (before a cluster is started for
    it): the position, and the endgame table at its leaves (None: none)."""
    position: Any
    table_path: str | None
    leaves: Any


def prepare(game: Game, position=None, *, checkpoint: str | None = None,
            tables: str | None = None, use_tables: bool = True,
            proof: str | None = None) -> Prepared:
    """The checks of `prove` that need no search (the game proves, the position, the output
    files) and its endgame table read; BadParameters, TableMissing or BadPosition (one
    sentence) before any work."""
    if not game.solver.proves:
        raise BadParameters(f"{game.describe()} is solved whole by `sowsolve solve`; the proof "
                            f"search is for games solved by search")
    position = game.initial() if position is None else position
    if isinstance(position, str):
        position = game.parse_position(position)
    game.check_position(position)
    for output, option in ((proof, "--proof"), (checkpoint, "--checkpoint")):
        if output is not None:
            proofs.check_output(output, option)
    if proof is not None and checkpoint is not None and os.path.realpath(proof) == os.path.realpath(checkpoint):
        raise BadParameters("--proof and --checkpoint name the same file")
    table_path = endgame_table(game, tables, required=tables is not None) if use_tables else None
    leaves = None if table_path is None else leaves_of(game, table_path)
    return Prepared(position, table_path, leaves)


def prove(game: Game, position=None, *, memory: int = 1 << 30, threads: int | None = 1,
          max_nodes: int | None = None, checkpoint: str | None = None,
          tables: str | None = None, use_tables: bool = True, proof: str | None = None,
          progress: Progress = no_progress, client: Any = None,
          job_nodes: int = proofclusters.JOB_NODES, prepared: Prepared | None = None) -> dict:
    """Prove the value of `position` (left out: the start) of a game whose solver proves
    (`Solver.proves`): the report `sowsolve prove --json` prints, "proved" true (value, winning moves,
    positions expanded, ...) or false (within `max_nodes` expansions it did not).

    `memory`: bytes of the search's table; `threads`: searches over it (this process);
    `checkpoint`: a file the search is saved to and goes on from; `tables`: a directory whose
    endgame table of the board (of most discs) ends lines (left out: the tables directory's,
    if any; `use_tables=False`: none); `proof`: a file the proof is written to; `client`: a Dask
    client to prove on its workers in jobs of `job_nodes` expansions; `prepared`: what
    `prepare` returned for the same arguments (checked before the client was made)."""
    if prepared is None:
        prepared = prepare(game, position, checkpoint=checkpoint, tables=tables,
                           use_tables=use_tables, proof=proof)
    position, table_path, leaves = prepared.position, prepared.table_path, prepared.leaves
    cluster = None
    if client is not None:
        source = None
        if leaves is not None:
            source = CitedLeaves(game.name, tuple(sorted(game.parameters().items())),
                                 os.path.abspath(table_path), tuple(sorted(leaves.citation.items())))
            proofclusters.check_seen(client, source.path, "the endgame table")
        cluster = {"workers": len(client.scheduler_info().get("workers", {})), "job_nodes": job_nodes}
        result, expanded = proofclusters.prove_on_cluster(
            client, game, position, proofs.memory_entries(memory), leaves=leaves,
            leaves_source=source, job_nodes=job_nodes, max_nodes=max_nodes,
            checkpoint=checkpoint, progress=progress)
        threads = None
    else:
        result, prover = proofs.prove(game, position, memory, progress, max_nodes, checkpoint,
                                      threads=threads, leaves=leaves)
        expanded = prover.nodes - prover.walked     # a proof's walk is no search: not counted
    head = {"game": game.name, "description": game.describe(), "parameters": game.parameters(),
            "position": game.format_position(position)}
    # a restored checkpoint's proof is drawn (and the table freed) by prove itself; an empty
    # proof it drew (a loss whose every move ends at once) is drawn, not to be drawn again
    if (cluster is None and result is not None and proof is not None and not result.winner_choices
            and result.winner_choices.drawn_seconds is None):
        choices = proofs.extract(prover, game.key(position)[1], result.value, max_nodes, release=True)
        if choices is None:         # drawing the proof would take more than max_nodes
            return {**head, "proved": False, "nodes": prover.nodes - prover.walked,
                    "max_nodes": max_nodes, "searched_value": result.value,
                    "searched_nodes": result.nodes}
        result.winner_choices = choices
    if result is None:
        return {**head, "proved": False, "nodes": expanded, "max_nodes": max_nodes}
    report = {**head, "proved": True, "value": result.value,
              "winning_moves": result.winning_moves, "moves": result.moves,
              "nodes": result.nodes, "seconds": result.seconds, "threads": threads,
              "table_entries": result.table_entries, "table_bytes": result.table_bytes,
              "entries_replaced": result.replaced, "note": NO_REMOTENESS}
    if leaves is not None:
        report["tables"] = leaves.citation
    if cluster is not None:
        report["cluster"] = cluster
    if proof is not None:
        choices = result.winner_choices
        began = time.perf_counter()
        written = proofs.write_proof(proof, game, position, result.value, choices,
                                     None if leaves is None else leaves.citation)
        report["proof"] = {"file": proof, "winner_positions": len(choices), "bytes": written,
                           "written_seconds": round(time.perf_counter() - began, 3)}
        if choices.drawn_seconds is not None:       # drawn here from the search's table
            report["proof"].update({"drawn_seconds": choices.drawn_seconds,
                                    "positions_walked": choices.walked,
                                    "positions_searched_again": choices.searched_again})
    return report
