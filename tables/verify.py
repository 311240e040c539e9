"""`sowsolve check --table`: a whole table checked -- beside the self-check of a game
(solver/selfcheck.py), which checks the game against its rules.

Every block's checksum and bounds (read through the store's checks), the metadata against the
game, each tier's summary against its records, the layout's own structure (keys of a keyed
table), and stored values against their children's: every position with `full`, else a sample
per tier.  How values are verified is the solver's (Solver.verify: a kernel pass over each tier
in the tier manager's window, the Python rules, or a kernel pass over every key)."""
from __future__ import annotations

import numpy as np

from .store import Table


def check_table(table: Table, samples: int, full: bool, seed: int) -> dict:
    game = table.game
    failures: list[str] = []
    fail = failures.append
    consistent = table.layout.check_tiers(table, fail)
    if sorted(table.solved_tiers) != sorted(table.tiers):
        fail("the metadata marks the table finished but not every tier solved")
    blocks = 0
    structure_checked: set[int] = set()

    def load(tier: int) -> np.ndarray:
        """A tier's records, every block's checksum verified; its summary and layout checked
        the first time it is read."""
        nonlocal blocks
        records = table.tier_records(tier)
        if tier in structure_checked:
            return records
        structure_checked.add(tier)
        blocks += table.blocks_of(tier) + table.layout.check_tier(table, tier, records, fail)
        stored = table.tier_info(tier)
        computed = game.value_kind.summarize(records)
        for key in ("positions", "losses", "draws", "wins", "longest_win", "long"):
            if key in computed and stored.get(key, 0 if key == "long" else None) != computed[key]:
                fail(f"tier {tier}: the summary says {key} = {stored.get(key)}, the records "
                     f"give {computed[key]}")
        if computed["unsolved"]:
            fail(f"tier {tier}: {computed['unsolved']} records hold no value")
        return records

    checked = game.solver.verify(table, load, full, samples, seed, fail) if consistent else 0
    for tier in table.tiers:            # a tier no value check read still has its blocks checked
        if tier not in structure_checked:
            load(tier)
    return {"table": table.path, "tiers": len(table.tiers), "blocks": blocks,
            "positions_verified": checked, "full": full, "failures": failures[:100],
            "failure_count": len(failures)}
