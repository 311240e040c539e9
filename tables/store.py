"""Reading and writing table files (format.py): the writer is the solver's TierStore; the
reader answers probes one block at a time."""
from __future__ import annotations

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
from ..solver.errors import BadParameters
from ..solver.games import make_game
from ..solver.values import Value
from .format import (BLOCK_RECORDS, FORMAT_NAME, FORMAT_VERSION, TABLE_NAME, CorruptTable,
                     ForeignTable, TableError, TableMismatch, TableMissing, UnfinishedTable, block_key,
                     decode_block, decode_value, dump_json, encode_block, encode_value, load_json,
                     tier_key)

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
        db = SqliteDict(path, tablename=TABLE_NAME, flag=flag, autocommit=False,
                        encode=encode_value, decode=decode_value)
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
                                      f"{len(self.meta.get('solved_tiers', []))} of "
                                      f"{len(self.meta['tiers'])} tiers (run `sowsolve solve` "
                                      f"again to resume)")
            self.game: Game = make_game(self.meta["game"], **self.meta["parameters"])
        except BadParameters as exc:
            self.close()
            raise ForeignTable(f"{self.path} names a game sowsolve cannot build: {exc}") from None
        except BaseException:
            self.close()
            raise
        self.block_records = int(self.meta["block_records"])
        self._blocks: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()

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
        try:
            return load_json(self._db[tier_key(tier)], f"summary of tier {tier} in {self.path}")
        except KeyError:
            raise UnfinishedTable(f"tier {tier} of {self.path} is not stored") from None

    def blocks_of(self, tier: int) -> int:
        return _blocks_of(self.meta, tier)

    def block(self, tier: int, block: int) -> np.ndarray:
        """Records of one block, checksum verified (cached)."""
        key = (tier, block)
        cached = self._blocks.get(key)
        if cached is not None:
            self._blocks.move_to_end(key)
            return cached
        if tier not in self.solved_tiers:
            raise UnfinishedTable(f"tier {tier} of {self.path} is not solved yet")
        records = _load_block(self._db, self.meta, self.path, tier, block)
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

    # --- probing ---------------------------------------------------------------------------
    def record(self, position) -> int:
        tier, index = self.game.locate(position)
        block, offset = divmod(index, self.block_records)
        return int(self.block(tier, block)[offset])

    def probe(self, position) -> Value:
        """Value of a position (object or text); raises BadPosition / TableError."""
        if isinstance(position, str):
            position = self.game.parse_position(position)
        return Value.from_record(self.record(position))

    def get(self, position, default=None):
        """Value of a position, or `default` where the position is bad or not in the table."""
        try:
            return self.probe(position)
        except (ValueError, UnfinishedTable):
            return default

    def size_on_disk(self) -> int:
        return os.path.getsize(self.path)


def _blocks_of(meta: dict, tier: int) -> int:
    return -(-int(meta["tier_sizes"][str(tier)]) // int(meta["block_records"]))


def _load_block(db: SqliteDict, meta: dict, path: str, tier: int, block: int) -> np.ndarray:
    block_records = int(meta["block_records"])
    count = min(block_records, int(meta["tier_sizes"][str(tier)]) - block * block_records)
    try:
        data = db[block_key(tier, block)]
    except KeyError:
        raise CorruptTable(f"{path} lacks block {block} of tier {tier}") from None
    try:
        return decode_block(data, tier, block, count)
    except CorruptTable as exc:
        raise CorruptTable(f"{path}: {exc}") from None


def _tier_records(db: SqliteDict, meta: dict, path: str, tier: int) -> np.ndarray:
    parts = [_load_block(db, meta, path, tier, b) for b in range(_blocks_of(meta, tier))]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint16)


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
            tiers = list(game.tiers())
            self.meta = {
                "format": FORMAT_NAME, "format_version": FORMAT_VERSION,
                "game": game.name, "parameters": game.parameters(),
                "description": game.describe(),
                "initial": game.format_position(game.initial()),
                "tiers": tiers,
                "tier_sizes": {str(t): game.tier_size(t) for t in tiers},
                "block_records": BLOCK_RECORDS,
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

    def save_tier(self, tier: int, records: np.ndarray, summary: dict[str, Any]) -> None:
        block_records = int(self.meta["block_records"])
        stored = 0
        starts = range(0, records.size, block_records)
        # zstd and numpy release the GIL: blocks compress on every core
        with ThreadPoolExecutor(max_workers=self.threads) as pool:
            encoded = pool.map(lambda b: encode_block(tier, b, records[starts[b]:starts[b] + block_records]),
                               range(len(starts)))
            for b, data in enumerate(encoded):
                self._db[block_key(tier, b)] = data
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
