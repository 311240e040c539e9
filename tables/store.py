"""Reading and writing table files (format.py): the writer is the solver's TierStore; the
reader answers probes one block at a time."""
from __future__ import annotations

import bisect
import contextlib
import datetime as _dt
import os
import sqlite3
import tempfile
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata as _metadata
from typing import Any, Iterator

import numpy as np
from sqlitedict import SqliteDict

from ..solver.contract import Game
from ..solver.errors import BadParameters, BadPosition
from ..solver.games import make_game
from ..solver.values import decode
from .format import (BLOCK_RECORDS, FORMAT_NAME, FORMAT_VERSION, TABLE_NAME, CorruptTable,
                     ForeignTable, NotInTable, TableError, TableMismatch, TableMissing, UnfinishedTable,
                     block_key, decode_block, decode_value, dump_json, encode_block, encode_value,
                     keys_key, load_json, tier_key)

BLOCK_CACHE = 16


def _version() -> str:
    try:
        return _metadata.version("sowsolve")
    except _metadata.PackageNotFoundError:  # pragma: no cover
        return "unknown"


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


SQLITE_MAGIC = b"SQLite format 3\x00"
LOCK_TIMEOUT = 30.0


class TableBusy(TableError, RuntimeError):
    """Another process holds the table's lock for longer than we wait."""


def _check_sqlite_file(path: str) -> None:
    """Refuse a file that is not an SQLite database holding our table, before sqlitedict's
    worker thread meets it (it would only log the error)."""
    with open(path, "rb") as f:
        if f.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
            raise ForeignTable(f"{path} is not a sowsolve table (not an SQLite file)")
    try:
        # Not read-only: a hot journal left by a killed writer must be rolled back, and only a
        # read-write connection can do that (the file exists, so nothing is created).
        with contextlib.closing(sqlite3.connect(path, timeout=LOCK_TIMEOUT)) as db:
            names = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise TableBusy(f"{path} is locked by another process (a solve committing a tier?); "
                            f"try again") from None
        raise ForeignTable(f"{path} is not a sowsolve table (SQLite says: {exc})") from None
    except sqlite3.DatabaseError as exc:
        raise ForeignTable(f"{path} is not a sowsolve table (SQLite says: {exc})") from None
    if TABLE_NAME not in names:
        raise ForeignTable(f"{path} is not a sowsolve table (it has no {TABLE_NAME!r} table)")


def _open_sqlitedict(path: str, flag: str) -> SqliteDict:
    if os.path.exists(path):
        _check_sqlite_file(path)
    try:
        db = SqliteDict(path, encode=encode_value, decode=decode_value,  # never pickle
                        tablename=TABLE_NAME, flag=flag, autocommit=False)
        "meta" in db  # noqa: B015 - touches the file, so a non-SQLite file fails here
        return db
    except sqlite3.DatabaseError as exc:
        raise ForeignTable(f"{path} is not a sowsolve table (SQLite says: {exc})") from None
    except RuntimeError as exc:  # sqlitedict: missing table in read mode
        raise ForeignTable(f"{path} is not a sowsolve table ({exc})") from None


class Table:
    """A table file opened for reading.  `probe()` raises; `get()` returns a default."""

    def __init__(self, path: str, allow_unfinished: bool = False):
        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise TableMissing(f"no table file at {self.path}")
        self._db = _open_sqlitedict(self.path, "r")
        try:
            self.meta = self._read_meta()
            if not self.meta.get("finished") and not allow_unfinished:
                raise UnfinishedTable(f"{self.path} is not finished: its solve has stored "
                                      f"{len(self.meta.get('solved_tiers', []))} tiers so far "
                                      f"(run `sowsolve solve` again to resume)")
            self.game: Game = make_game(self.meta["game"], **self.meta["parameters"])
        except BadParameters as exc:
            self.close()
            raise ForeignTable(f"{self.path} names a game sowsolve cannot build: {exc}") from None
        except BaseException:
            self.close()
            raise
        self.block_records = int(self.meta["block_records"])
        self.keyed = self.meta.get("indexing", "dense") == "keys"
        self._blocks: OrderedDict[tuple[bool, int, int], np.ndarray] = OrderedDict()
        self._tier_infos: dict[int, dict] = {}

    def _read_meta(self) -> dict:
        try:
            raw = self._db["meta"]
        except KeyError:
            raise ForeignTable(f"{self.path} is not a sowsolve table (no metadata)") from None
        except sqlite3.DatabaseError as exc:
            raise ForeignTable(f"{self.path} is not a sowsolve table (SQLite says: {exc})") from None
        meta = load_json(raw, f"metadata of {self.path}")
        if meta.get("format") != FORMAT_NAME:
            raise ForeignTable(f"{self.path} is not a sowsolve table")
        if meta.get("format_version") != FORMAT_VERSION:
            raise ForeignTable(f"{self.path} has table format version "
                               f"{meta.get('format_version')!r}; this sowsolve reads version "
                               f"{FORMAT_VERSION}")
        for key, kind in (("game", str), ("parameters", dict), ("tiers", list),
                          ("tier_sizes", dict), ("block_records", int)):
            if not isinstance(meta.get(key), kind):
                raise CorruptTable(f"the metadata of {self.path} lacks a valid {key!r}")
        return meta

    # --- context manager ----------------------------------------------------------------
    def close(self) -> None:
        db, self._db = getattr(self, "_db", None), None
        if db is not None:
            db.close(do_log=False)

    def __enter__(self) -> "Table":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- structure -------------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        return bool(self.meta.get("finished"))

    @property
    def tiers(self) -> list[int]:
        return [int(t) for t in self.meta["tiers"]]

    @property
    def solved_tiers(self) -> list[int]:
        return [int(t) for t in self.meta.get("solved_tiers", [])]

    def tier_size(self, tier: int) -> int:
        return int(self.meta["tier_sizes"][str(tier)])

    def tier_info(self, tier: int) -> dict:
        if tier not in self._tier_infos:
            try:
                info = load_json(self._db[tier_key(tier)], f"summary of tier {tier} in {self.path}")
            except KeyError:
                raise UnfinishedTable(f"tier {tier} of {self.path} is not stored") from None
            self._tier_infos[tier] = info
        return self._tier_infos[tier]

    def blocks_of(self, tier: int) -> int:
        return _blocks_of(self.meta, tier)

    def block(self, tier: int, block: int, keys: bool = False) -> np.ndarray:
        """Records (or, in keyed tables, keys) of one block, checksums verified (cached)."""
        key = (keys, tier, block)
        cached = self._blocks.get(key)
        if cached is not None:
            self._blocks.move_to_end(key)
            return cached
        if tier not in self.solved_tiers:
            raise UnfinishedTable(f"tier {tier} of {self.path} is not solved yet")
        records = _load_block(self._db, self.meta, self.path, tier, block, keys)
        self._blocks[key] = records
        if len(self._blocks) > BLOCK_CACHE:
            self._blocks.popitem(last=False)
        return records

    def iter_blocks(self, tier: int) -> Iterator[tuple[int, np.ndarray]]:
        """(first index, records) of every block of a tier, in order (not cached)."""
        for b in range(self.blocks_of(tier)):
            yield b * self.block_records, _load_block(self._db, self.meta, self.path, tier, b)

    def tier_records(self, tier: int) -> np.ndarray:
        """All records of a tier (decompresses every block of it)."""
        return _tier_records(self._db, self.meta, self.path, tier)

    def tier_keys(self, tier: int) -> np.ndarray:
        """Keyed tables: the sorted packed positions of a tier."""
        return _tier_records(self._db, self.meta, self.path, tier, keys=True)

    def stored_positions(self, tier: int, start: int, stop: int) -> list:
        """Positions stored at indices start..stop-1 of a tier."""
        if not self.keyed:
            return self.game.stored_positions(tier, start, stop)
        positions = []
        for b in range(start // self.block_records, -(-stop // self.block_records)):
            first = b * self.block_records
            keys = self.block(tier, b, keys=True)[max(start - first, 0):stop - first]
            positions.extend(self.game.position_of_key(int(k)) for k in keys)
        return positions

    # --- probing ---------------------------------------------------------------------------
    def locate(self, position) -> tuple[int, int]:
        """(tier, index) of a position's record; NotInTable where a keyed table lacks it."""
        if not self.keyed:
            return self.game.locate(position)
        tier, key = self.game.key(position)
        if str(tier) not in self.meta["tier_sizes"]:
            raise self._not_in_table(position)
        first_keys = self.tier_info(tier)["first_keys"]
        block = bisect.bisect_right(first_keys, key) - 1
        if block < 0:
            raise self._not_in_table(position)
        keys = self.block(tier, block, keys=True)
        offset = int(np.searchsorted(keys, np.uint64(key)))
        if offset == keys.size or int(keys[offset]) != key:
            raise self._not_in_table(position)
        return tier, block * self.block_records + offset

    def _not_in_table(self, position) -> "NotInTable":
        return NotInTable(f"{self.game.format_position(position)} is not in {self.path}: it cannot "
                          f"be reached from the start")

    def record(self, position) -> int:
        tier, index = self.locate(position)
        block, offset = divmod(index, self.block_records)
        return int(self.block(tier, block)[offset])

    def probe(self, position):
        """Value of a position (object or text): a Value (win/loss games) or a Margin (score
        games); raises BadPosition / TableError."""
        if isinstance(position, str):
            position = self.game.parse_position(position)
        return decode(self.game.value_kind, self.record(position))

    def get(self, position, default=None):
        """Value of a position, or `default` where the position is bad or not in the table.
        A damaged table still raises: a default is never a stand-in for a corrupt block."""
        try:
            return self.probe(position)
        except (BadPosition, NotInTable):
            return default

    def size_on_disk(self) -> int:
        return os.path.getsize(self.path)


def _blocks_of(meta: dict, tier: int) -> int:
    return -(-int(meta["tier_sizes"][str(tier)]) // int(meta["block_records"]))


def _load_block(db: SqliteDict, meta: dict, path: str, tier: int, block: int,
                keys: bool = False) -> np.ndarray:
    block_records = int(meta["block_records"])
    count = min(block_records, int(meta["tier_sizes"][str(tier)]) - block * block_records)
    try:
        data = db[keys_key(tier, block) if keys else block_key(tier, block)]
    except KeyError:
        raise CorruptTable(f"{path} lacks {'keys' if keys else 'block'} {block} of tier {tier}") from None
    try:
        return decode_block(data, tier, block, count, keys)
    except CorruptTable as exc:
        raise CorruptTable(f"{path}: {exc}") from None


def _tier_records(db: SqliteDict, meta: dict, path: str, tier: int, keys: bool = False) -> np.ndarray:
    parts = [_load_block(db, meta, path, tier, b, keys) for b in range(_blocks_of(meta, tier))]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64 if keys else np.uint16)


def open_table(path, allow_unfinished: bool = False) -> Table:
    return Table(path, allow_unfinished=allow_unfinished)


class TableWriter:
    """A table being solved: the solver's TierStore.  Each tier is one SQLite transaction."""

    def __init__(self, path: str, game: Game, force: bool = False, threads: int | None = None):
        self.path = os.fspath(path)
        self.game = game
        self.threads = threads or os.cpu_count() or 1
        self._db: SqliteDict | None = None
        if force:
            for leftover in (self.path, self.path + "-journal"):
                if os.path.exists(leftover):
                    os.remove(leftover)
        if os.path.exists(self.path):
            with open_table(self.path, allow_unfinished=True) as existing:
                if existing.meta["game"] != game.name or existing.meta["parameters"] != game.parameters():
                    raise TableMismatch(
                        f"{self.path} holds {existing.game.describe()}, not {game.describe()}; "
                        f"use --force to overwrite it or choose another --table")
        else:
            self._create()
        self._db = _open_sqlitedict(self.path, "c")
        self.meta = load_json(self._db["meta"], f"metadata of {self.path}")

    def _create(self) -> None:
        """Write a new table's metadata beside the target, then rename it into place: the path
        holds either nothing or a table with metadata, whenever the process dies."""
        game = self.game
        directory = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".sowsolve-new-", suffix=".sqlite")
        os.close(fd)
        os.remove(tmp)
        try:
            self._db = _open_sqlitedict(tmp, "c")
            keyed = game.indexing == "keys"
            tiers = [] if keyed else list(game.tiers())   # a search finds its tiers
            self.meta = {
                "format": FORMAT_NAME, "format_version": FORMAT_VERSION,
                "game": game.name, "parameters": game.parameters(),
                "description": game.describe(),
                "initial": game.format_position(game.initial()),
                "tiers": tiers,
                "tier_sizes": {str(t): game.tier_size(t) for t in tiers},
                "block_records": BLOCK_RECORDS,
                "indexing": game.indexing,
                "solved_tiers": [], "finished": False,
                "software": {"sowsolve": _version()},
                "created": _now(),
            }
            self._commit_meta()
            self.close()
            os.replace(tmp, self.path)
        finally:
            self.close()
            for leftover in (tmp, tmp + "-journal"):
                if os.path.exists(leftover):
                    os.remove(leftover)

    def _commit_meta(self) -> None:
        self._db["meta"] = dump_json(self.meta)
        self._db.commit()

    @property
    def finished(self) -> bool:
        return bool(self.meta.get("finished"))

    # --- TierStore ---------------------------------------------------------------------
    def finished_tiers(self) -> set[int]:
        return {int(t) for t in self.meta["solved_tiers"]}

    def load_tier(self, tier: int) -> np.ndarray:
        return _tier_records(self._db, self.meta, self.path, tier)

    def save_tier(self, tier: int, records: np.ndarray, summary: dict[str, Any],
                  keys: np.ndarray | None = None) -> None:
        """Store a solved tier (with its sorted keys in a keyed table) in one transaction."""
        block_records = int(self.meta["block_records"])
        starts = range(0, records.size, block_records)
        jobs = [(block_key(tier, b), b, records[s:s + block_records]) for b, s in enumerate(starts)]
        if keys is not None:
            jobs += [(keys_key(tier, b), b, keys[s:s + block_records]) for b, s in enumerate(starts)]
            summary = dict(summary, first_keys=[int(keys[s]) for s in starts])
            self.meta["tiers"] = sorted(set(self.meta["tiers"]) | {tier})
            self.meta["tier_sizes"][str(tier)] = int(records.size)
        stored = 0
        # zstd and numpy release the GIL: blocks compress on every core
        with ThreadPoolExecutor(max_workers=self.threads) as pool:
            encoded = pool.map(lambda job: encode_block(tier, job[1], job[2]), jobs)
            for (key, _, _), data in zip(jobs, encoded):
                self._db[key] = data
                stored += len(data)
        summary = dict(summary, stored_bytes=stored)
        self._db[tier_key(tier)] = dump_json(summary)
        self.meta["solved_tiers"] = sorted(set(self.meta["solved_tiers"]) | {tier})
        self._commit_meta()   # blocks, summary and the tier's mark land in one transaction

    def finish(self, extra: dict[str, Any]) -> None:
        self.meta.update(extra)
        self.meta["finished"] = True
        self.meta["finished_at"] = _now()
        self._commit_meta()

    def close(self) -> None:
        if self._db is not None:
            self._db.close(do_log=False)
            self._db = None
