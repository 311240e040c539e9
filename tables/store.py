"""Reading and writing table files (format.py): the writer is the solver's TierStore; the
reader answers probes one block at a time.

Files are sqlitedict tables.  sqlitedict normally runs each connection in a worker thread that
turns synchronous writes off and logs (rather than raises) some errors; here its connection is
`_Connection`, which runs in the caller's thread, raises every SQLite error as a TableError
naming the file, opens readers with `query_only` and never changes a file's journal mode, and
gives writers `synchronous=FULL` with the rollback journal.

Everything read from a file is checked before use: the SQLite header (no WAL) and schema (one
table, nothing else), the metadata's checksum, every field's type and range, its tiers and tier
sizes against the game's own, each summary's checksum and fields, and each block's size (before
it is read), checksums, record values and (keyed tables) keys.  A writer holds an exclusive
flock on the file for its lifetime: one writer per table.
"""
from __future__ import annotations

import copy
import datetime as _dt
import errno
import fcntl
import logging
import os
import secrets
import sqlite3
import stat
import threading
import time
import urllib.parse
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata as _metadata
from typing import Any, Iterator

import numpy as np
from sqlitedict import SqliteDict

from ..solver.contract import Game
from ..solver.errors import BadParameters, BadPosition, quote, shown
from ..solver.games import GAMES, make_game
from .layout import layout_of
from .format import (TableChanged, FORMAT_NAME, FORMAT_VERSION, MAX_META_BYTES, READ_VERSIONS, TABLE_NAME,
                     VERSION_2_BLOCK_RECORDS,
                     BeyondTable, CorruptTable, DiskFull, ForeignTable, NotInTable, OutdatedTable, TableBusy,
                     TableClosed, TableError, TableIOError, TableMismatch, TableMissing,
                     UnfinishedTable, block_key, check_meta_fields, check_summary_fields,
                     decode_block, decode_value, encode_block, encode_value, identity, keys_context,
                     keys_key, load_json, long_context, long_key, open_json, seal_json,
                     stored_size_bound, summary_context, tier_key, KEYS_MAGIC, LONG_MAGIC)
from ..solver.tiers import last_solved, tier_label
from ..solver.values import NO_LONG, long_table_problem, widen

__all__ = ["Table", "TableWriter", "open_table", "TableBusy"]

BLOCK_CACHE = 16
SQLITE_MAGIC = b"SQLite format 3\x00"
LOCK_TIMEOUT = 30.0
SCHEMA = [("table", TABLE_NAME, TABLE_NAME,
           f'CREATE TABLE "{TABLE_NAME}" (key TEXT PRIMARY KEY, value BLOB)'),
          ("index", f"sqlite_autoindex_{TABLE_NAME}_1", TABLE_NAME, None)]
TEMP_PREFIX = ".sowsolve-new-"
#: the longest file name (bytes) the usual file systems take
NAME_MAX = 255
#: age after which an unlocked temporary table file is a leftover of a killed creation
STALE_SECONDS = 60

# sqlitedict logs from its worker thread; sowsolve reports errors itself, in one sentence.
_sqlitedict_log = logging.getLogger("sqlitedict")
_sqlitedict_log.addHandler(logging.NullHandler())
_sqlitedict_log.propagate = False


def software_version() -> str:
    """The installed sowsolve's version (tables record the software that wrote them; the
    command line's --version prints it)."""
    try:
        return _metadata.version("sowsolve")
    except _metadata.PackageNotFoundError:  # pragma: no cover - only without an install
        return "unknown"


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


# --- SQLite ----------------------------------------------------------------------------------

def _disk_full(message: str) -> DiskFull:
    exc = DiskFull(message)         # str() is the sentence alone, errno still says ENOSPC
    exc.errno = errno.ENOSPC
    return exc


def _table_error(exc: sqlite3.Error, path: str) -> TableError:
    """One sentence for an SQLite error on a table file."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    text = str(exc)
    lowered = text.lower()
    if code == 13 or "disk is full" in lowered:                          # SQLITE_FULL
        return _disk_full(f"disk full while writing {path}")
    if code in (5, 6) or "locked" in lowered or "busy" in lowered:       # BUSY, LOCKED
        return TableBusy(f"{path} is locked by another process (a solve committing a tier?); "
                         f"try again")
    if code in (3, 8, 10, 14, 23):        # PERM, READONLY, IOERR, CANTOPEN, AUTH
        return TableIOError(f"cannot use {path}: SQLite says {text}")
    if code == 26:                                                        # NOTADB
        return ForeignTable(f"{path} is not a sowsolve table (SQLite says: {text})")
    return CorruptTable(f"{path} is corrupt: SQLite says {text}")


class _Connection:
    """The connection sqlitedict's SqliteDict expects (the interface of its SqliteMultithread:
    execute, executemany, select, select_one, commit, close), run in the caller's thread, so
    that every error reaches the caller and no thread is left behind."""

    autocommit = False

    def __init__(self, path: str, writable: bool, create: bool = False):
        self.path = path
        mode = "rwc" if create else "rw"
        # the path's bytes, as the file system has them (a name need not be UTF-8)
        uri = f"file:{urllib.parse.quote(os.fsencode(os.path.abspath(path)))}?mode={mode}"
        self._lock = threading.RLock()
        try:
            self._db = sqlite3.connect(uri, uri=True, timeout=LOCK_TIMEOUT, check_same_thread=False)
        except sqlite3.Error as exc:
            raise _table_error(exc, path) from None
        try:
            self._run("PRAGMA trusted_schema = OFF")
            if writable:
                # The file's header said rollback journal (never WAL), so this changes nothing
                # in the file; it only fixes this connection's mode.
                mode = self._run("PRAGMA journal_mode = DELETE")
                if not mode or str(mode[0][0]).lower() != "delete":
                    raise TableIOError(f"cannot use a rollback journal for {path}")
                self._run("PRAGMA synchronous = FULL")
            else:
                self._run("PRAGMA query_only = ON")
        except BaseException:
            self._db.close()
            raise

    def _run(self, req: str, arg=None) -> list:
        with self._lock:
            if self._db is None:
                raise TableClosed(f"{self.path} is closed")
            try:
                return self._db.execute(req, arg or ()).fetchall()
            except sqlite3.Error as exc:
                raise _table_error(exc, self.path) from None

    # --- the SqliteMultithread interface ------------------------------------------------
    def execute(self, req, arg=None, res=None):
        rows = self._run(req, arg)
        if res is not None:       # not used by SqliteDict, kept for the interface
            for row in rows:
                res.put(row)

    def executemany(self, req, items):
        for item in items:
            self._run(req, item)

    def select(self, req, arg=None):
        return iter(self._run(req, arg))

    def select_one(self, req, arg=None):
        rows = self._run(req, arg)
        return rows[0] if rows else None

    def commit(self, blocking=True):
        with self._lock:
            try:
                self._db.commit()
            except sqlite3.Error as exc:
                raise _table_error(exc, self.path) from None

    def rollback(self):
        with self._lock:
            if self._db is not None:
                try:
                    self._db.rollback()
                except sqlite3.Error:
                    pass           # the connection's close rolls back what is left

    def close(self, force=False):
        with self._lock:
            db, self._db = self._db, None
            if db is not None:
                db.close()          # an uncommitted transaction is rolled back

    # --- sowsolve's own reads ----------------------------------------------------------
    def get_bounded(self, key: str, limit: int):
        """The value stored under `key` (None when there is none), refused unread when it is
        longer than `limit` bytes."""
        rows = self._run(f'SELECT length(value), CASE WHEN length(value) <= ? THEN value END '
                         f'FROM "{TABLE_NAME}" WHERE key = ?', (limit, key))
        if not rows:
            return None
        length, value = rows[0]
        if value is None and length is not None:
            raise CorruptTable(f"{self.path} is corrupt: its value {key!r} takes {length:,} "
                               f"bytes, more than it can")
        return decode_value(value)


class _TableDict(SqliteDict):
    """A SqliteDict over a `_Connection` that the caller opened and checked."""

    def __init__(self, path: str, conn: _Connection, flag: str):
        self._premade = conn
        try:
            super().__init__(path, tablename=TABLE_NAME, flag=flag, autocommit=False,
                             encode=encode_value, decode=decode_value)   # never pickle
        except sqlite3.Error as exc:
            conn.close()
            raise _table_error(exc, path) from None
        except BaseException:
            conn.close()
            raise

    def _new_conn(self):
        return self._premade


def _check_header(path: str) -> None:
    """An SQLite file in rollback-journal mode, judged from its first bytes before SQLite opens
    it: opening a WAL file (or letting sqlitedict set its journal mode) would change it."""
    try:
        # without waiting: a FIFO put in the file's place must not block the reader
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except IsADirectoryError:
        raise TableMissing(f"{path} is a directory, not a table file") from None
    except OSError as exc:
        raise TableIOError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ForeignTable(f"{path} is not a table file (not a regular file)")
        header = os.pread(fd, 100, 0)
    except OSError as exc:
        raise TableIOError(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        raise ForeignTable(f"{path} is not a sowsolve table (not an SQLite file)")
    if header[18:20] != b"\x01\x01":
        if 2 in header[18:20]:
            raise ForeignTable(f"{path} is in SQLite's WAL mode; sowsolve tables use the rollback "
                               f"journal (`sqlite3 {path} 'PRAGMA journal_mode=DELETE'` converts it)")
        raise ForeignTable(f"{path} is not a sowsolve table (an SQLite file format sowsolve "
                           f"does not write)")


def _check_schema(conn: _Connection) -> None:
    """Exactly the sqlitedict table, nothing else: no trigger, view, index or other table can
    run or hide anything."""
    rows = conn._run("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type DESC, name")
    if [tuple(r) for r in rows] == SCHEMA:
        return
    names = {r[1] for r in rows if r[0] == "table"}
    if TABLE_NAME not in names:
        raise ForeignTable(f"{conn.path} is not a sowsolve table (it has no {TABLE_NAME!r} table)")
    extra = [r for r in rows if (r[0], r[1]) not in {(s[0], s[1]) for s in SCHEMA}]
    if extra:
        kind, name = extra[0][0], str(extra[0][1])
        raise ForeignTable(f"{conn.path} is not a sowsolve table: it also holds the {kind} "
                           f"{quote(name)}, and sowsolve uses no file that holds more than its table")
    raise ForeignTable(f"{conn.path} is not a sowsolve table (its {TABLE_NAME!r} table is "
                       f"defined differently)")


def _open_dict(path: str, writable: bool) -> _TableDict:
    """An existing table file, header and schema checked, as a SqliteDict."""
    _check_header(path)
    conn = _Connection(path, writable)
    try:
        _check_schema(conn)
    except BaseException:
        conn.close()
        raise
    # flag "c" for readers too: their connection is query_only, and sqlitedict's CREATE TABLE IF
    # NOT EXISTS is a no-op on the checked schema; flag "r" would open a second connection
    # (sqlitedict's get_tablenames) that lingers until the garbage collector finds it.
    return _TableDict(path, conn, "c")


# --- what a file holds, checked against its game ----------------------------------------------

def _solve_options(meta: dict) -> str:
    """'GAME --cols 4 --stones 2 [--max-stones S]': what `sowsolve solve` takes to write the
    table this metadata describes ('...' where the metadata does not say)."""
    game, params = meta.get("game"), meta.get("parameters")
    if not (isinstance(game, str) and game in GAMES and isinstance(params, dict)):
        return "..."
    words = [game] + [f"--{str(k)[:10].replace('_', '-')} {shown(v)}" for k, v in params.items()]
    limit = meta.get("max_stones")
    if isinstance(limit, int) and not isinstance(limit, bool):
        words.append(f"--max-stones {limit}")
    return " ".join(words)


def _rebuild_hint(path: str, meta: dict) -> str:
    return f"`sowsolve solve {_solve_options(meta)} --table {path} --force`"


def _holds_sowsolve_table(path: str) -> bool:
    """Whether the file at `path` is an SQLite file with sowsolve's table and a metadata row in
    it (a sowsolve table, maybe unfinished, damaged or with objects added): what --force may
    empty.  Read only; runs none of the file's SQL."""
    try:
        _check_header(path)
        conn = _Connection(path, writable=False)
    except TableError:
        return False
    try:
        rows = conn._run("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
                         (TABLE_NAME,))
        if not rows or not rows[0][0]:
            return False
        rows = conn._run(f'SELECT count(*) FROM "{TABLE_NAME}" WHERE key = ?', ("meta",))
        return bool(rows and rows[0][0])
    except (TableError, sqlite3.Error):
        return False
    finally:
        conn.close()


def _check_game(meta: dict, path: str) -> Game:
    """The game the metadata names, with tiers, sizes and solved tiers that are the game's."""
    def corrupt(what: str) -> CorruptTable:
        return CorruptTable(f"{path} is corrupt: {what}")

    if meta["game"] not in GAMES:
        raise corrupt(f"it names the unknown game {quote(meta['game'])}")
    try:
        game = make_game(meta["game"], endgame=meta.get("max_stones") is not None,
                         **meta["parameters"])
    except (BadParameters, TypeError) as exc:
        raise corrupt(f"it names a board sowsolve cannot build ({exc})") from None
    if game.parameters() != meta["parameters"]:
        raise corrupt("its parameters are not those of the board they describe")
    layout = layout_of(game)
    if meta["indexing"] != layout.name:
        raise corrupt(f"its indexing {meta['indexing']!r} is not that of {game.describe()} "
                      f"({layout.name!r})")
    if meta["tiers"] in game.earlier_tiers(meta.get("max_stones")):
        raise OutdatedTable(f"{path} holds the tiers of an earlier layout of {game.describe()} "
                            f"(every tier, before positions that share a value shared a record); "
                            f"rebuild it with {_rebuild_hint(path, meta)}")
    layout.check_meta(game, meta, corrupt)
    tiers, solved = meta["tiers"], meta["solved_tiers"]
    if meta["finished"] and sorted(solved) != sorted(tiers):
        raise corrupt("it is marked finished but not every tier is solved")
    return game


class _TableFile:
    """What Table and TableWriter share: the open file, its checked metadata and game, and
    checked loads of summaries and blocks."""

    path: str
    _db: _TableDict | None

    def _get(self, key: str, limit: int) -> bytes | None:
        if self._db is None:
            raise TableClosed(f"{self.path}: the table is closed")
        return self._db.conn.get_bounded(key, limit)

    def _load_meta(self) -> None:
        raw = self._get("meta", MAX_META_BYTES)
        if raw is None:
            raise ForeignTable(f"{self.path} is not a sowsolve table (no metadata)")
        self._meta_raw = raw
        plain = load_json(raw, f"metadata of {self.path}", ForeignTable)
        if plain.get("format") != FORMAT_NAME:
            raise ForeignTable(f"{self.path} is not a sowsolve table")
        version = plain.get("format_version")
        if version not in READ_VERSIONS or type(version) is not int:
            if version == 1:
                raise OutdatedTable(
                    f"{self.path} is a table of format version 1, which predates checksummed "
                    f"metadata; rebuild it with {_rebuild_hint(self.path, plain)}")
            raise OutdatedTable(f"{self.path} has table format version {quote(str(version), 20)}; "
                                f"this sowsolve reads versions "
                                f"{' and '.join(map(str, READ_VERSIONS))}")
        try:
            meta = open_json(raw, "metadata", b"meta")
            check_meta_fields(meta)
        except CorruptTable as exc:
            raise CorruptTable(f"{self.path} is corrupt: {exc}") from None
        self.game: Game = _check_game(meta, self.path)
        self.meta = meta
        self.ident = identity(meta["game"], meta["parameters"])
        self.layout = layout_of(self.game)
        expected = ((VERSION_2_BLOCK_RECORDS,) if meta["format_version"] == 2
                    else self.layout.readable_blocks)
        if meta["block_records"] not in expected:
            raise CorruptTable(f"{self.path} is corrupt: the metadata's 'block_records' is not valid")
        self.block_records = meta["block_records"]
        self.palette = meta["format_version"] >= 3      # version 3 stores palette blocks
        self._solved = set(meta["solved_tiers"])
        self._summaries: dict[int, dict] = {}
        self._longs: dict[int, np.ndarray] = {}
        self._check_entries()

    def _check_entries(self) -> None:
        """Every solved tier has its summary and all its blocks (and keys): a table missing one
        is corrupt for every command alike, not only for those that happen to read it."""
        present = {row[0] for row in self._db.conn._run(f'SELECT key FROM "{TABLE_NAME}"')}
        for tier in sorted(self._solved):
            wanted = [tier_key(tier)] + [block_key(tier, b) for b in range(self.blocks_of(tier))]
            wanted += self.layout.entries(self, tier)
            missing = [key for key in wanted if key not in present]
            if missing:
                raise CorruptTable(f"{self.path} is corrupt: tier {tier} is marked solved but "
                                   f"{missing[0]!r} is missing")

    # --- structure ----------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        return bool(self.meta["finished"])

    @property
    def tiers(self) -> list[int]:
        return list(self.meta["tiers"])

    @property
    def solved_tiers(self) -> list[int]:
        return list(self.meta["solved_tiers"])

    def tier_size(self, tier: int) -> int:
        return self.meta["tier_sizes"][str(tier)]

    def blocks_of(self, tier: int) -> int:
        return -(-self.tier_size(tier) // self.block_records)

    def tier_info(self, tier: int) -> dict:
        """The checked summary of a solved tier."""
        info = self._summaries.get(tier)
        if info is not None:
            return info
        if tier not in self._solved:
            raise UnfinishedTable(f"tier {tier} of {self.path} is not solved yet")
        blocks = self.blocks_of(tier)
        raw = self._get(tier_key(tier), 4096 + 24 * blocks)
        if raw is None:
            raise CorruptTable(f"{self.path} is corrupt: it lacks the summary of tier {tier}")
        label = f"the summary of tier {tier}"
        try:
            info = open_json(raw, f"summary of tier {tier}", summary_context(self.ident, tier))
            check_summary_fields(info, label, self.tier_size(tier),
                                 self.game.value_kind.max_remoteness, self.layout.key_blocks(self, tier))
        except CorruptTable as exc:
            raise CorruptTable(f"{self.path} is corrupt: {exc}") from None
        self._summaries[tier] = info
        return info

    def long_table(self, tier: int) -> np.ndarray:
        """The long table of a solved tier (entries index << 16 | plies of the records whose
        remoteness passes a record's bits; empty where its summary counts none), checked."""
        return self._long_table(tier)

    def _long_table(self, tier: int) -> np.ndarray:
        """The long table of a solved tier (empty where its summary counts none), checked."""
        table = self._longs.get(tier)
        if table is not None:
            return table
        count = self.tier_info(tier).get("long", 0)
        if not count or not self.game.value_kind.has_long:
            table = NO_LONG
        else:
            where = f"the long table of tier {tier}"
            data = self._get(long_key(tier), stored_size_bound(count, True))
            if data is None:
                raise CorruptTable(f"{self.path} is corrupt: it lacks {where}")
            try:
                table = decode_block(data, tier, 0, count, True, long_context(self.ident, tier),
                                     LONG_MAGIC)
            except CorruptTable as exc:
                raise CorruptTable(f"{self.path} is corrupt: {exc}") from None
            problem = long_table_problem(table, self.tier_size(tier))
            if problem:
                raise CorruptTable(f"{self.path} is corrupt: {where} is not valid ({problem})")
        self._longs[tier] = table
        return table

    def _load_block(self, tier: int, block: int, keys: bool = False, full: bool = True) -> np.ndarray:
        """Records (or keys) of one block, every check passed: full records (solver/values.py:
        a long remoteness in bits 16 and up, uint32 where the block has one), or with
        full=False the 16-bit records as stored."""
        if tier not in self._solved:
            raise UnfinishedTable(f"tier {tier} of {self.path} is not solved yet")
        if not 0 <= block < self.blocks_of(tier):
            raise IndexError(f"tier {tier} has no block {block}")
        count = min(self.block_records, self.tier_size(tier) - block * self.block_records)
        what = "keys" if keys else "block"
        if keys:
            first_keys = self.tier_info(tier)["first_keys"]
            context = keys_context(self.ident, tier, first_keys)
        else:
            context = self.ident
        data = self._get(keys_key(tier, block) if keys else block_key(tier, block),
                         stored_size_bound(count, keys))
        if data is None:
            raise CorruptTable(f"{self.path} is corrupt: it lacks {what} {block} of tier {tier}")
        long = NO_LONG if keys else self._long_table(tier)     # its errors name the file already
        try:
            array = decode_block(data, tier, block, count, keys, context, palette=self.palette)
            if keys:
                _check_keys(self.game, tier, block, array, first_keys)
            else:
                records = widen(array, long, block * self.block_records)
                _check_records(self.game, tier, block, records)
                if full:
                    array = records
        except CorruptTable as exc:
            raise CorruptTable(f"{self.path} is corrupt: {exc}") from None
        return array

    def _tier_records(self, tier: int, keys: bool = False, full: bool = True) -> np.ndarray:
        parts = [self._load_block(tier, b, keys, full) for b in range(self.blocks_of(tier))]
        if not parts:
            return np.zeros(0, dtype=np.uint64 if keys else np.uint16)
        return np.concatenate(parts)

    def tier_data(self, tier: int):
        """A solved tier as the kernels read it (its value kind's tier_data: the 16-bit records,
        with a margin tier's long table), every check passed."""
        records = self._tier_records(tier, full=False)
        return self.game.value_kind.tier_data(records, self._long_table(tier))


def _check_records(game: Game, tier: int, block: int, records: np.ndarray) -> None:
    """Every record of a solved tier holds a value the game can have there."""
    if game.value_kind.invalid(game, tier, records).any():
        raise CorruptTable(f"block {block} of tier {tier} holds a record no position can have")


def _check_keys(game: Game, tier: int, block: int, keys: np.ndarray, first_keys: list) -> None:
    """Keys of a keyed tier: packings of `tier` discs on the board's cells (so the kernel can
    unpack them), strictly increasing across the tier, matching the summary's block index."""
    where = f"keys {block} of tier {tier}"
    if int(keys[0]) != first_keys[block] or (
            block + 1 < len(first_keys) and int(keys[-1]) >= first_keys[block + 1]):
        raise CorruptTable(f"{where} disagree with the tier's block index")
    if keys.size > 1 and not bool(np.all(keys[1:] > keys[:-1])):
        raise CorruptTable(f"{where} are not strictly increasing")
    if not game.keys_fit(tier, keys):
        raise CorruptTable(f"{where} hold positions that are not packings of the tier "
                           f"({tier} {'disc' if tier == 1 else 'discs'})")


# --- reading ---------------------------------------------------------------------------------

class Table(_TableFile):
    """A table file opened for reading.

    `probe(position)` and `table[position]` return the value of a position (text or position
    object) and raise BadPosition (malformed text, or a position of another board), NotInTable
    (a keyed table that does not hold it) or TableError (a damaged table); `get(position,
    default)` returns `default` instead of raising BadPosition or NotInTable; `position in
    table` is False where the table holds no record for a position of its board and raises
    BadPosition for malformed text; `query(position)` is what `sowsolve query --json` prints.
    After `close()` every read raises TableClosed (a ValueError)."""

    def __init__(self, path, allow_unfinished: bool = False):
        self.path = os.fspath(path)
        self._db = None
        if not os.path.isfile(self.path):
            if os.path.isdir(self.path):
                raise TableMissing(f"{self.path} is a directory, not a table file (the tables in "
                                   f"it are listed by `sowsolve tables`)")
            if os.path.exists(self.path):       # a FIFO, a device
                raise ForeignTable(f"{self.path} is not a table file (not a regular file)")
            if os.path.islink(self.path):
                raise TableMissing(f"{self.path} is a symbolic link to nowhere, not a table file")
            raise TableMissing(f"no table file at {self.path}")
        try:
            self._db = _open_dict(self.path, writable=False)
            self._load_meta()
            if not self.meta["finished"] and not allow_unfinished:
                command = f"`sowsolve solve {_solve_options(self.meta)} --table {self.path}`"
                if not self.game.solver.resumable:
                    raise UnfinishedTable(f"{self.path} is not finished: its search was stopped "
                                          f"before it stored its positions (a {self.game.solver.name} "
                                          f"solve starts over: {command} solves it again)")
                raise UnfinishedTable(f"{self.path} is not finished: its solve has stored "
                                      f"{len(self.meta['solved_tiers'])} of "
                                      f"{len(self.meta['tiers'])} tiers so far (resume it with "
                                      f"{command})")
        except BaseException:
            self.close()
            raise
        self._position_type = type(self.game.initial())
        self._blocks: OrderedDict[tuple[bool, int, int], np.ndarray] = OrderedDict()
        self._blocks_lock = threading.Lock()     # threads may read one table (serve)

    # --- a table rebuilt while it is read -------------------------------------------------
    def _check_unchanged(self) -> None:
        """TableChanged when the file's metadata is no longer what this reader loaded: another
        process emptied and rebuilt it (`solve --force`) meanwhile, so a block this reader
        misses is gone with the old table, not damaged."""
        try:
            now = self._get("meta", MAX_META_BYTES)
        except TableError:
            return
        if now != self._meta_raw:
            raise TableChanged(f"{self.path} changed while it was being read (another solve "
                               f"rebuilt it?); open it again once that solve has finished")

    def tier_info(self, tier: int) -> dict:
        try:
            return super().tier_info(tier)
        except CorruptTable:
            self._check_unchanged()
            raise

    def _long_table(self, tier: int) -> np.ndarray:
        try:
            return super()._long_table(tier)
        except CorruptTable:
            self._check_unchanged()
            raise

    def _load_block(self, tier: int, block: int, keys: bool = False, full: bool = True) -> np.ndarray:
        try:
            return super()._load_block(tier, block, keys, full)
        except CorruptTable:
            self._check_unchanged()
            raise

    # --- context manager ----------------------------------------------------------------
    def close(self) -> None:
        db, self._db = getattr(self, "_db", None), None
        if db is not None:
            db.close(do_log=False)

    @property
    def closed(self) -> bool:
        return self._db is None

    def __enter__(self) -> "Table":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- blocks --------------------------------------------------------------------------
    def block(self, tier: int, block: int, keys: bool = False) -> np.ndarray:
        """Records (or, in keyed tables, keys) of one block, every check passed (cached)."""
        key = (keys, tier, block)
        with self._blocks_lock:
            cached = self._blocks.get(key)
            if cached is not None:
                self._blocks.move_to_end(key)
                return cached
        records = self._load_block(tier, block, keys)
        with self._blocks_lock:
            self._blocks[key] = records
            if len(self._blocks) > BLOCK_CACHE:
                self._blocks.popitem(last=False)
        return records

    def iter_blocks(self, tier: int) -> Iterator[tuple[int, np.ndarray]]:
        """(first index, records) of every block of a tier, in order (not cached)."""
        for b in range(self.blocks_of(tier)):
            yield b * self.block_records, self._load_block(tier, b)

    def tier_records(self, tier: int) -> np.ndarray:
        """All full records of a tier (decompresses every block of it)."""
        return self._tier_records(tier)

    def tier_keys(self, tier: int) -> np.ndarray:
        """Keyed tables: the sorted packed positions of a tier."""
        return self._tier_records(tier, keys=True)

    def stored_positions(self, tier: int, start: int, stop: int) -> list:
        """Positions stored at indices start..stop-1 of a tier."""
        if not 0 <= start <= stop <= self.tier_size(tier):
            raise IndexError(f"indices {start}..{stop} are outside tier {tier}")
        return self.layout.stored_positions(self, tier, start, stop)

    # --- probing ---------------------------------------------------------------------------
    def _position(self, position):
        if self._db is None:
            raise TableClosed(f"{self.path}: the table is closed")
        if isinstance(position, str):
            return self.game.parse_position(position)
        if not isinstance(position, self._position_type):
            raise BadPosition(f"a position is text or a position object of "
                              f"{self.game.describe()}, not {type(position).__name__}")
        return position

    def locate(self, position) -> tuple[int, int]:
        """(tier, index) of a position's record; NotInTable where a keyed table lacks it."""
        def bad_position() -> BadPosition:
            return BadPosition(f"{quote(repr(position), 60)} is not a position of "
                               f"{self.game.describe()}")
        try:
            where = self.layout.address(self.game, position)
        except (ValueError, TypeError, IndexError, AttributeError) as exc:
            if isinstance(exc, (BadPosition, BadParameters)):
                raise
            raise bad_position() from None
        return self.layout.find(self, where, position, bad_position)

    def not_in_table(self, position) -> "NotInTable":
        """The error for a position this table does not hold (its readers raise it)."""
        return NotInTable(f"{self.game.format_position(position)} is not in {self.path}: it cannot "
                          f"be reached from the start")

    def record(self, position) -> int:
        tier, index = self.locate(self._position(position))
        block, offset = divmod(index, self.block_records)
        return int(self.block(tier, block)[offset])

    def probe(self, position):
        """Value of a position (object or text): a Value (win/loss games) or a Margin (score
        games); raises BadPosition / NotInTable / TableError."""
        return self.game.value_kind.decode(self.record(position))

    __getitem__ = probe

    def __contains__(self, position) -> bool:
        """True where the table holds the position's record (a position that cannot arise on
        its board is not held); BadPosition for malformed text."""
        position = self._position(position)
        try:
            self.game.check_position(position)
            self.record(position)
        except (NotInTable, BeyondTable, UnfinishedTable, BadPosition):
            return False
        return True

    def get(self, position, default=None):
        """Value of a position, or `default` where the position is bad or not in the table.
        A damaged table still raises: a default is never a stand-in for a corrupt block."""
        try:
            return self.probe(position)
        except (BadPosition, NotInTable, BeyondTable):
            return default

    def query(self, position, max_search: int | None = None) -> dict:
        """The value of a position and of each legal move, best first: the object `sowsolve
        query --json` prints (position, value, remoteness, final, moves, best, source, table,
        ...).
        A keyed table answers a position it does not hold by a search from it (up to
        `max_search` positions)."""
        from ..solver.search import DEFAULT_MAX_POSITIONS
        from .query import query
        position = self._position(position)
        text = position if isinstance(position, str) else self.game.format_position(position)
        return dict(query(self, text, max_search or DEFAULT_MAX_POSITIONS), table=self.path)

    def size_on_disk(self) -> int:
        return os.path.getsize(self.path)


def open_table(path, allow_unfinished: bool = False) -> Table:
    return Table(path, allow_unfinished=allow_unfinished)


# --- writing ---------------------------------------------------------------------------------

def _lock_existing(path: str) -> int | None:
    """An fd of the file at `path` holding its exclusive flock, or None when the path no
    longer names the file we opened (replaced meanwhile); TableBusy when another writer has it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise TableMissing(f"{path} is a directory, not a table file") from None
    except OSError as exc:
        raise TableIOError(f"cannot open {path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ForeignTable(f"{path} is not a regular file")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TableBusy(f"{path} is being written by another sowsolve process (a solve holds "
                            f"its lock); wait for it to finish or stop it first") from None
        except OSError:
            pass            # a file system without flock: SQLite's own locks still apply
        try:
            now = os.stat(path)
        except FileNotFoundError:
            now = None
        if now is None or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            os.close(fd)
            return None
        return fd
    except BaseException:
        try:
            os.close(fd)
        except OSError:
            pass
        raise


def make_directory(directory: str, path: str) -> None:
    """The directory a new table goes in, made if missing; BadParameters (a usage error) when a
    part of it is a file, not a directory."""
    try:
        os.makedirs(directory, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        part = directory
        while part and not os.path.lexists(part):     # the first existing part is the file
            part = os.path.dirname(part)
        what = ("a link that leads nowhere or round in a loop"
                if os.path.islink(part) and not os.path.exists(part) else "not a directory")
        raise BadParameters(f"cannot create {path}: {part or directory} is {what}") from None
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise _disk_full(f"disk full while creating {path}") from None
        raise TableIOError(f"cannot create {path}: {exc.strerror or exc}") from None


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def check_same_table(path: str, meta: dict, held: Game, game: Game, max_stones: int | None) -> None:
    """TableMismatch unless the table at `path` (its metadata, its game `held`) is the one a
    solve of `game` up to `max_stones` stones asks for: game, board and endgame limit."""
    if meta["game"] != game.name or meta["parameters"] != game.parameters():
        raise TableMismatch(f"{path} holds {held.describe()}, not {game.describe()}; use --force "
                            f"to overwrite it or choose another --table")
    if meta.get("max_stones") != max_stones:
        def limit(n):
            return "every position" if n is None else f"positions of at most {n} {game.pieces}"
        raise TableMismatch(f"{path} holds {limit(meta.get('max_stones'))}, not "
                            f"{limit(max_stones)}; use --force to overwrite it or choose another "
                            f"--table")


class TableWriter(_TableFile):
    """A table being solved: the solver's TierStore.  Each tier is one SQLite transaction
    (synchronous=FULL, rollback journal); the writer holds the file's exclusive flock until
    close(), so a second solve of the same table (with or without --force) is refused."""

    def __init__(self, path: str, game: Game, force: bool = False, threads: int | None = None,
                 max_stones: int | None = None):
        self.path = os.fspath(path)
        self.game = game
        self.max_stones = max_stones
        layout_of(game).new_tiers(game, max_stones)     # a limit the game cannot take: now
        if len(os.fsencode(os.path.basename(self.path))) > NAME_MAX:
            raise BadParameters(f"cannot create {quote(self.path, 60)}: its file name is longer "
                                f"than the {NAME_MAX} bytes a file name may have")
        self.threads = threads or os.cpu_count() or 1
        self._db = None
        self._fds: list[int] = []
        try:
            self._acquire(force)
            self._db = _open_dict(self.path, writable=True)
            self._load_meta()
            self._check_same(self.meta, self.game)
            self.game = game
        except BaseException:
            self.close()
            raise

    # --- taking the file ----------------------------------------------------------------
    def _acquire(self, force: bool) -> None:
        for _ in range(20):
            if not os.path.exists(self.path):
                if self._create_new():
                    return
                continue
            fd = _lock_existing(self.path)
            if fd is None:
                continue
            self._fds.append(fd)
            if force:
                self._reset()
            else:
                with open_table(self.path, allow_unfinished=True) as existing:
                    self._check_same(existing.meta, existing.game)
            return
        raise TableBusy(f"{self.path} keeps being replaced by another process; try again")

    def _check_same(self, meta: dict, held: Game) -> None:
        check_same_table(self.path, meta, held, self.game, self.max_stones)

    def tier_order(self) -> list[int]:
        """The tiers this table holds, in solving order (an endgame table: the first ones)."""
        return list(self.meta["tiers"])

    def _new_meta(self) -> dict:
        game = self.game
        layout = layout_of(game)
        tiers = layout.new_tiers(game, self.max_stones)
        limit = {} if self.max_stones is None else {"max_stones": self.max_stones}
        return {
            "format": FORMAT_NAME, "format_version": FORMAT_VERSION,
            "game": game.name, "parameters": game.parameters(),
            "description": game.describe(),
            "initial": game.format_position(game.initial()),
            "tiers": tiers,
            "tier_sizes": {str(t): game.tier_size(t) for t in tiers},
            "block_records": layout.block_records,
            "indexing": layout.name,
            "solved_tiers": [], "finished": False,
            "software": {"sowsolve": software_version()},
            "created": _now(),
            **limit,
        }

    @staticmethod
    def _remove_stale(directory: str) -> None:
        """Temporary files of creations killed before they were linked into place: no process
        holds their lock, and they are older than a minute (a creation in progress locks its
        file at once and links it within milliseconds)."""
        try:
            names = [n for n in os.listdir(directory) if n.startswith(TEMP_PREFIX)]
        except OSError:
            return
        for name in names:
            stale = os.path.join(directory, name)
            try:
                fd = os.open(stale, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
            except OSError:
                continue
            try:
                if time.time() - os.fstat(fd).st_mtime < STALE_SECONDS:
                    continue
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                _remove(stale)
            except OSError:
                pass                    # held by a living process, or already gone
            finally:
                os.close(fd)

    def _write_new(self, directory: str) -> tuple[int, str]:
        """A new table with its metadata in a temporary file of `directory`, flocked: (fd,
        temporary path)."""
        self._remove_stale(directory)
        tmp = os.path.join(directory, f"{TEMP_PREFIX}{secrets.token_hex(8)}.sqlite")
        try:
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except OSError as exc:          # name the user's path, not the temporary one
            if exc.errno == errno.ENOSPC:
                raise _disk_full(f"disk full while creating {self.path}") from None
            raise TableIOError(f"cannot create {self.path}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            db = _TableDict(tmp, _Connection(tmp, writable=True, create=True), "c")
            try:
                db["meta"] = seal_json(self._new_meta(), b"meta")
                db.commit()
            finally:
                db.close(do_log=False)
        except DiskFull:
            os.close(fd)
            _remove(tmp)
            raise _disk_full(f"disk full while creating {self.path}") from None
        except BaseException:
            os.close(fd)
            _remove(tmp)
            raise
        return fd, tmp

    def _create_new(self) -> bool:
        """Create the table: written beside the target, then linked into place (which fails if
        another process created it first: False).  The path never names a file without
        metadata, and the new file is locked before anyone can see it."""
        directory = os.path.dirname(os.path.abspath(self.path))
        make_directory(directory, self.path)
        fd, tmp = self._write_new(directory)
        try:
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                if os.path.islink(self.path) and not os.path.exists(self.path):
                    raise TableIOError(f"{self.path} is a symbolic link to nowhere") from None
                os.close(fd)
                return False
            except OSError:                 # no hard links here: rename (not atomic against
                if os.path.exists(self.path):   # a creator in the same instant)
                    os.close(fd)
                    return False
                os.rename(tmp, self.path)
        except BaseException:
            os.close(fd)
            raise
        finally:
            _remove(tmp)
            _remove(tmp + "-journal")
        self._fds.append(fd)
        return True

    def _reset(self) -> None:
        """--force, holding the lock: empty the table and write new metadata in one
        transaction; a file that is no sowsolve table (or too damaged for that) is replaced."""
        try:
            db = _open_dict(self.path, writable=True)
        except (ForeignTable, CorruptTable) as exc:
            if not _holds_sowsolve_table(self.path):    # the user's own file: never ours to empty
                raise ForeignTable(f"{exc}; --force empties only sowsolve tables, so it is left "
                                   f"as it is (remove it yourself or choose another --table)") from None
            db = None
        if db is not None:
            try:
                db.conn.execute(f'DELETE FROM "{TABLE_NAME}"')
                db["meta"] = seal_json(self._new_meta(), b"meta")
                db.commit()
                return
            except CorruptTable:
                pass
            finally:
                db.close(do_log=False)
        fd, tmp = self._write_new(os.path.dirname(os.path.abspath(self.path)))
        try:
            for sidecar in ("-journal", "-wal", "-shm"):
                _remove(self.path + sidecar)
            os.replace(tmp, self.path)
        except BaseException:
            os.close(fd)
            _remove(tmp)
            raise
        self._fds.append(fd)

    # --- writing ---------------------------------------------------------------------------
    def _commit_meta(self) -> None:
        check_meta_fields(self.meta)
        self._db["meta"] = seal_json(self.meta, b"meta")
        self._db.commit()

    def _kept(self) -> str:
        last = last_solved(self.tier_order(), self.meta["solved_tiers"])
        if last is None:
            return "the table keeps no solved tier yet"
        return f"the table keeps tiers up to {tier_label(self.game, last)}"

    # --- TierStore ---------------------------------------------------------------------
    def finished_tiers(self) -> set[int]:
        return set(self.meta["solved_tiers"])

    def load_tier(self, tier: int):
        return self.tier_data(tier)

    def save_tier(self, tier: int, records, summary: dict[str, Any],
                  keys: np.ndarray | None = None) -> None:
        """Store a solved tier (records, or a value kind's tier data such as a MarginTier; with
        its sorted keys in a keyed table) in one transaction."""
        before = copy.deepcopy(self.meta)
        try:
            self._save_tier(tier, records, summary, keys)
        except TableIOError as exc:
            self._restore(before)
            if isinstance(exc, DiskFull):
                raise _disk_full(f"disk full while writing {tier_label(self.game, tier)} "
                               f"of {self.path}; {self._kept()} and resumes when there is space") from None
            raise TableIOError(f"{exc}, while writing {tier_label(self.game, tier)}; "
                               f"{self._kept()} and resumes when it can be written") from None
        except BaseException:
            self._restore(before)
            raise

    def _restore(self, meta: dict) -> None:
        """Back to the last committed state, after a failed transaction."""
        self.meta = meta
        self._solved = set(meta["solved_tiers"])
        self._summaries.clear()
        self._longs.clear()
        if self._db is not None:
            self._db.conn.rollback()

    def _save_tier(self, tier, records, summary, keys) -> None:
        long = getattr(records, "long", NO_LONG)
        records = getattr(records, "records", records)
        block_records = self.meta["block_records"]
        starts = range(0, records.size, block_records)
        jobs = [(block_key(tier, b), b, records[s:s + block_records], self.ident, None)
                for b, s in enumerate(starts)]
        if long.size:
            jobs.append((long_key(tier), 0, long, long_context(self.ident, tier), LONG_MAGIC))
        if summary.get("long", 0) != long.size:
            raise RuntimeError(f"tier {tier}: {summary.get('long', 0)} records say their "
                               f"remoteness is long, and the long table holds {long.size}")
        if keys is not None:
            first_keys = [int(keys[s]) for s in starts]
            summary = dict(summary, first_keys=first_keys)
            context = keys_context(self.ident, tier, first_keys)
            jobs += [(keys_key(tier, b), b, keys[s:s + block_records], context, KEYS_MAGIC)
                     for b, s in enumerate(starts)]
            self.meta["tiers"] = sorted(set(self.meta["tiers"]) | {tier})
            self.meta["tier_sizes"][str(tier)] = int(records.size)
        stored = 0
        # zstd and numpy release the GIL: blocks compress on every core
        with ThreadPoolExecutor(max_workers=self.threads) as pool:
            encoded = pool.map(lambda job: encode_block(tier, job[1], job[2], job[3],
                                                        job[4] or KEYS_MAGIC, self.palette), jobs)
            for (key, *_), data in zip(jobs, encoded):
                self._db[key] = data
                stored += len(data)
        summary = dict(summary, stored_bytes=stored)
        self._db[tier_key(tier)] = seal_json(summary, summary_context(self.ident, tier))
        # in solving order, as the tier list (tier numbers need not rise along it)
        solved = set(self.meta["solved_tiers"]) | {tier}
        self.meta["solved_tiers"] = [t for t in self.meta["tiers"] if t in solved]
        self._solved = set(self.meta["solved_tiers"])
        self._summaries.pop(tier, None)
        self._longs.pop(tier, None)
        self._commit_meta()   # blocks, summary and the tier's mark land in one transaction

    def finish(self, extra: dict[str, Any]) -> None:
        before = copy.deepcopy(self.meta)
        try:
            self.meta.update(extra)
            self.meta["finished"] = True
            self.meta["finished_at"] = _now()
            self._commit_meta()
        except BaseException:
            self._restore(before)
            raise

    def close(self) -> None:
        db, self._db = getattr(self, "_db", None), None
        if db is not None:
            db.close(do_log=False)
        fds, self._fds = getattr(self, "_fds", []), []
        for fd in fds:      # after SQLite's connection: closing an fd of the file drops the
            os.close(fd)    # process's POSIX locks on it

    def __enter__(self) -> "TableWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
