"""A table's rows at the table's scale: each block of records with its stored positions as
columns (the game's `Columnar` hooks, compiled), made into CSV or JSON lines by the compiled
row writer (cext/rows.pyx) or into Parquet columns (tables/parquet.py) -- no Python call a
row, and the blocks of a tier on every core.

Why: the largest tables hold billions of positions; written a position at a time through
Python (format_position, the csv module), such a table took hours.
"""
from __future__ import annotations

import concurrent.futures
import hashlib
from typing import Iterator, NamedTuple

import numpy as np

from ..cext import rows as _rows
from ..solver.contract import BoardColumns, Columnar
from .layout import KeyedLayout

#: blocks formatted at once ahead of the one being written, a thread each (memory: a few
#: blocks of rows, whatever the table's size)
AHEAD = 2


class BlockRows(NamedTuple):
    """One block's rows: counts, fields and owners (the game's stored_columns), and per
    stored position its value and remoteness (-1: none)."""
    tier: int
    first: int
    counts: np.ndarray
    fields: np.ndarray
    owners: np.ndarray
    values: np.ndarray
    remoteness: np.ndarray


def columnar(table) -> bool:
    """Whether a table's game writes its rows as columns (every game of sowsolve does)."""
    return isinstance(table.game, Columnar)


def block_rows(table, tier: int, first: int, records: np.ndarray, keys: np.ndarray | None,
               every_orientation: bool) -> BlockRows:
    game = table.game
    counts, fields, owners = game.stored_columns(tier, first, first + records.size, keys,
                                                 every_orientation)
    values, remoteness, _ = game.value_kind.column_arrays(records)
    return BlockRows(tier, first, np.ascontiguousarray(counts, dtype=np.uint8),
                     np.ascontiguousarray(fields, dtype=np.uint8),
                     np.ascontiguousarray(owners, dtype=np.int64),
                     np.ascontiguousarray(values, dtype=np.int32),
                     np.ascontiguousarray(remoteness, dtype=np.int32))


def blocks(table, tier: int, digest=None) -> Iterator[tuple[int, np.ndarray, np.ndarray | None]]:
    """(first index, records, keys or None) of every block of a tier, read in this thread
    (the table's reader is not shared between threads); `digest` takes each block's records
    (and keys) as they are read."""
    keyed = isinstance(table.layout, KeyedLayout)
    for first, records in table.iter_blocks(tier):
        keys = table.block(tier, first // table.block_records, keys=True) if keyed else None
        if digest is not None:
            digest.update(np.ascontiguousarray(records).tobytes())
            if keys is not None:
                digest.update(np.ascontiguousarray(keys).tobytes())
        yield first, records, keys


def text_rows(layout: BoardColumns, rows: BlockRows, value_texts, mode: int):
    """The block's rows as the compiled writer makes them (mode: rows.CSV, JSONL or TEXT)."""
    return _rows.format_rows(rows.counts, layout.ranks, rows.fields,
                             [alphabet for _, alphabet in layout.fields], rows.owners,
                             rows.values, rows.remoteness, value_texts, mode)


def value_texts(table) -> tuple | None:
    """The texts of the value codes of the table's value kind (None: values are numbers)."""
    return table.game.value_kind.column_arrays(np.zeros(1, dtype=np.uint32))[2]


def ordered(pool: concurrent.futures.Executor, jobs) -> Iterator:
    """The results of `jobs` (callables), in order, at most AHEAD of them run at once on
    `pool` ahead of the one being taken."""
    pending: list = []
    for job in jobs:
        pending.append(pool.submit(job))
        if len(pending) > AHEAD:
            yield pending.pop(0).result()
    for future in pending:
        yield future.result()


def new_digest():
    return hashlib.sha256()
