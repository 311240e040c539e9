"""A keyed game's endgame table as the leaves of the proof search: loaded through the table reader
(block checksums, record values checked) and cited by the checksum of its records."""
from __future__ import annotations

import os
from dataclasses import dataclass

from ..solver import proof as proofs
from ..solver.contract import Game
from .format import TableError
from .store import open_table


def leaves_of(game: Game, path: str) -> proofs.Leaves:
    """The proof search's leaves from the endgame table at `path` (of `game`'s board)."""
    with open_table(path) as t:
        return leaves_from(game, t)


def leaves_from(game: Game, table) -> proofs.Leaves:
    """The proof search's leaves from an open endgame table of `game`'s board."""
    solved = {int(tier) for tier in table.solved_tiers}
    tiers = ((tier, table.tier_records(tier), tier in solved)
             for tier in sorted(int(t) for t in table.tiers))
    return proofs.table_leaves(game, table.game, tiers, int(table.meta["max_stones"]), table.path)


@dataclass(frozen=True)
class CitedLeaves:
    """The same leaves for a worker of a proof on a cluster (pickled to it): the table at
    `path` (a path every worker sees), refused unless its records are the ones `citation` names,
    so that every worker ends its lines in the very table the proof cites."""
    game: str
    parameters: tuple
    path: str
    citation: tuple

    def __call__(self) -> proofs.Leaves:
        from ..solver.games import make_game
        game = make_game(self.game, **dict(self.parameters))
        try:
            leaves = leaves_of(game, self.path)
        except (TableError, OSError) as exc:
            raise proofs.DamagedProof(f"a worker cannot read the endgame table "
                                      f"{os.path.basename(self.path)[:60]}: {exc}") from None
        if leaves.citation != dict(self.citation):
            raise proofs.DamagedProof(f"a worker's endgame table {os.path.basename(self.path)[:60]} is "
                                      f"not the one the proof cites (its records' checksum differs)")
        return leaves
