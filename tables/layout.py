"""What a solver's indexing (solver/solvers.py: DENSE or KEYS) means for a table file.

- Dense: every tier of the game is listed before the solve, with the size the game gives it;
  a position's record is at the index the game's `locate` gives; tiers are solved in order.
- Keyed: tiers appear as the search finds them; each tier stores its sorted canonical packed
  positions beside its records (key blocks, with each block's first key in the tier summary),
  and a position's record is found by binary search; a position the search never reached is
  not in the table.

`LAYOUTS[name]` is the layout of the indexing a table's metadata names.  The store, the
verifier and the exporter ask the layout and never branch on the indexing themselves.
"""
from __future__ import annotations

import bisect
from typing import Callable

import numpy as np

from ..solver.contract import Game
from ..solver.errors import BadParameters
from .format import BeyondTable, CorruptTable, UnfinishedTable, keys_key


def endgame_tiers(game: Game, max_stones: int | None) -> list[int]:
    """The game's tiers with at most `max_stones` stones (all with None), in solving order;
    BadParameters where they are not closed under play (a tier kept reads one left out)."""
    order = [t for t in game.tiers() if max_stones is None or game.tier_stones(t) <= max_stones]
    kept = set(order)
    for tier in order:
        if not kept.issuperset(game.tier_dependencies(tier)):
            raise BadParameters(f"the tiers of {game.describe()} with at most {max_stones} {game.pieces} "
                                f"are not closed under play: no endgame table can stop there")
    if not order:
        raise BadParameters(f"{game.describe()} has no position with at most {max_stones} "
                            f"{game.pieces}")
    limit = game.value_kind.max_tier_stones
    if limit is not None and max(game.tier_stones(t) for t in order) > limit:
        raise BadParameters(f"{game.describe()}: a record holds the values of at most {limit} "
                            f"stones on the board; make an endgame table with --max-stones "
                            f"{limit} or less")
    return order


class DenseLayout:
    name = "dense"
    #: records per block of a new table (format version 3, tables/format.py): 2^17 keeps a
    #: block's decoding (what a probe of a block not cached pays) under a millisecond, where
    #: the first version-3 tables' 2^20 took 3.4 ms; those still read (readable_blocks)
    block_records = 1 << 17
    readable_blocks = (1 << 17, 1 << 20)

    def new_tiers(self, game: Game, max_stones: int | None = None) -> list[int]:
        return endgame_tiers(game, max_stones)

    def check_meta(self, game: Game, meta: dict, corrupt: Callable[[str], CorruptTable]) -> None:
        tiers, sizes, solved = meta["tiers"], meta["tier_sizes"], meta["solved_tiers"]
        try:
            order = endgame_tiers(game, meta.get("max_stones"))
        except BadParameters as exc:
            raise corrupt(f"its limit of {meta.get('max_stones')} stones is not valid ({exc})") from None
        if tiers != order:
            raise corrupt(f"its tier list is not that of {game.describe()}")
        if set(sizes) != {str(t) for t in order}:
            raise corrupt("its tier sizes do not name the game's tiers")
        for t in order:
            if sizes[str(t)] != game.tier_size(t):
                raise corrupt(f"it gives tier {t} {sizes[str(t)]} positions; the game has "
                              f"{game.tier_size(t)}")
        if solved != order[:len(solved)]:
            raise corrupt("its solved tiers are not the first tiers in solving order")

    def entries(self, table, tier: int) -> list[str]:
        """Entries a solved tier has beyond its summary and record blocks."""
        return []

    def key_blocks(self, table, tier: int) -> int | None:
        """Key blocks the summary of a solved tier indexes (None: no block index)."""
        return None

    def stored_positions(self, table, tier: int, start: int, stop: int) -> list:
        return table.game.stored_positions(tier, start, stop)

    def address(self, game: Game, position) -> tuple[int, int]:
        """Where the game puts a position: (tier, index)."""
        return game.locate(position)

    def find(self, table, where: tuple[int, int], position,
             bad_position: Callable[[], Exception]) -> tuple[int, int]:
        """(tier, index) of the record at address `where` in `table`."""
        tier, index = where
        if tier not in table._solved:
            if str(tier) in table.meta["tier_sizes"]:
                raise UnfinishedTable(f"tier {tier} of {table.path} is not solved yet")
            limit = table.meta.get("max_stones")
            if limit is not None and table.game.tier_stones(tier) > limit:
                raise BeyondTable(f"{table.game.format_position(position)} is beyond this table: "
                                  f"{table.path} is an endgame table of at most {limit} "
                                  f"{table.game.pieces} on the board")
            raise bad_position()
        return tier, index

    def check_tier(self, table, tier: int, records: np.ndarray, fail: Callable[[str], None]) -> int:
        """Checks of a stored tier beyond its records' (`check --table`); key blocks read."""
        return 0

    def check_tiers(self, table, fail: Callable[[str], None]) -> bool:
        """The metadata's tiers against the game's; False when values cannot be walked."""
        game = table.game
        if [int(t) for t in table.tiers] != endgame_tiers(game, table.meta.get("max_stones")):
            fail("the metadata's tier list differs from the game's")
            return False
        consistent = True
        for tier in table.tiers:
            if table.tier_size(tier) != game.tier_size(tier):
                fail(f"tier {tier} holds {table.tier_size(tier)} positions; the game has "
                     f"{game.tier_size(tier)}")
                consistent = False
        return consistent


class KeyedLayout:
    name = "keys"
    block_records = 1 << 16         # a key block takes 8 bytes a key
    readable_blocks = (1 << 16,)

    def new_tiers(self, game: Game, max_stones: int | None = None) -> list[int]:
        if max_stones is not None:
            raise BadParameters(f"{game.describe()} is solved by a search from the start: it "
                                f"makes no endgame tables (--max-stones)")
        return []                   # a search finds its tiers

    def check_meta(self, game: Game, meta: dict, corrupt: Callable[[str], CorruptTable]) -> None:
        tiers, sizes, solved = meta["tiers"], meta["tier_sizes"], meta["solved_tiers"]
        if meta.get("max_stones") is not None:
            raise corrupt("it names an endgame limit, which tables made by a search never have")
        if not getattr(game.kernel(), "keyable", False):
            raise corrupt(f"positions of {game.describe()} do not pack into keys")
        if any(not game.keyed_tier_possible(t) for t in tiers) or tiers != sorted(set(tiers)):
            raise corrupt("its tier list is not valid for the board")
        if set(sizes) != {str(t) for t in tiers}:
            raise corrupt("its tier sizes do not name its tiers")
        for t in tiers:
            if not 1 <= sizes[str(t)] <= game.keyed_tier_bound(t):
                raise corrupt(f"it gives tier {t} {sizes[str(t)]} positions, more than the board "
                              f"has (or none)")
        if not set(solved) <= set(tiers):
            raise corrupt("it marks tiers solved that it does not hold")

    def entries(self, table, tier: int) -> list[str]:
        return [keys_key(tier, b) for b in range(table.blocks_of(tier))]

    def key_blocks(self, table, tier: int) -> int | None:
        return table.blocks_of(tier)

    def stored_positions(self, table, tier: int, start: int, stop: int) -> list:
        positions = []
        for b in range(start // table.block_records, -(-stop // table.block_records)):
            first = b * table.block_records
            keys = table.block(tier, b, keys=True)[max(start - first, 0):stop - first]
            positions.extend(table.game.position_of_key(int(k)) for k in keys)
        return positions

    def address(self, game: Game, position) -> tuple[int, int]:
        """Where the game puts a position: (tier, canonical packed position)."""
        return game.key(position)

    def find(self, table, where: tuple[int, int], position,
             bad_position: Callable[[], Exception]) -> tuple[int, int]:
        """(tier, index) of the record of the packed position `where` in `table`."""
        tier, key = where
        if tier not in table._solved:
            raise table.not_in_table(position)
        first_keys = table.tier_info(tier)["first_keys"]
        block = bisect.bisect_right(first_keys, key) - 1
        keys = table.block(tier, max(block, 0), keys=True)   # checks the block index too
        if block < 0:
            raise table.not_in_table(position)
        offset = int(np.searchsorted(keys, np.uint64(key)))
        if offset == keys.size or int(keys[offset]) != key:
            raise table.not_in_table(position)
        return tier, block * table.block_records + offset

    def check_tier(self, table, tier: int, records: np.ndarray, fail: Callable[[str], None]) -> int:
        keys = table.tier_keys(tier)
        if keys.size > 1 and not bool(np.all(keys[1:] > keys[:-1])):
            fail(f"tier {tier}: its keys are not strictly increasing")
        if keys.size and not bool(np.all(table.game.tiers_of_keys(keys) == tier)):
            fail(f"tier {tier}: some keys hold another number of discs")
        if table.tier_info(tier).get("first_keys") != [int(k) for k in keys[::table.block_records]]:
            fail(f"tier {tier}: the block index disagrees with the keys")
        return table.blocks_of(tier)

    def check_tiers(self, table, fail: Callable[[str], None]) -> bool:
        return True                 # its tiers are checked against the board when it opens


LAYOUTS = {layout.name: layout for layout in (DenseLayout(), KeyedLayout())}


def layout_of(game: Game):
    """The layout of tables of `game` (its solver's indexing)."""
    return LAYOUTS[game.solver.indexing.name]
