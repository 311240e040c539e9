"""The table file format (version 3; version 2 is read too).

One SQLite file (rollback journal, never WAL) holding exactly one table, the sqlitedict table
``sowsolve``: keys as text, values as raw bytes.

  meta              JSON: format, format_version, game, parameters, tiers, tier_sizes,
                    block_records, indexing, solved_tiers, finished, software version,
                    timestamps, and `checksum`
  tier/<t>          JSON: the tier's summary (positions, wins, losses, draws, longest win...,
                    keyed tables: each block's first key) and `checksum`
  block/<t>/<b>     one block of records of tier t: a header then a zstd frame
  keys/<t>/<b>      keyed tables only (games solved by search): the sorted canonical packed
                    positions whose records are in block/<t>/<b>, delta-coded the same way
  long/<t>          margin tables, where the tier's summary counts `long` > 0: the tier's long
                    table (uint64 entries index << 16 | plies of the records whose remoteness
                    passes their 9 bits, sorted), stored as a key block is

A block holds up to `block_records` 16-bit records (solver/values.py) of consecutive indices
(version 3: 2^17, or 2^20 in its first tables; version 2: 2^16).  Version 3 stores a block of at most 256 distinct records
as a palette (magic SWP3): the count of values (uint16), the values ascending (uint16 each),
then a zstd frame of one byte per record, the position of its value.  Other blocks, and every
block of version 2, are stored as two byte planes (low bytes, then high bytes, magic SWB2),
which compress better than the interleaved array.  A header carries magic, tier, block number,
record count, the CRC-32 of the records and the CRC-32 of the stored bytes.

Every checksum is seeded with the bytes of what the value belongs to, so a value that is intact
but sits in the wrong place fails too:

  meta              CRC-32 of b"meta" and the canonical JSON of the other fields
  tier/<t>          CRC-32 of the game's identity (canonical JSON of game name and parameters),
                    the tier, and the canonical JSON of the other fields
  block/<t>/<b>     both CRC-32s seeded with the identity (and the tier and block in the header)
  keys/<t>/<b>      seeded with the identity and the tier's list of first keys, so that the
                    block index in the summary cannot change without every key block failing
  long/<t>          seeded with the identity and the tier

Version 1 had no checksums on metadata and summaries; its tables are refused (rebuild them with
`sowsolve solve ... --force`).  Nothing is ever unpickled: the codecs below accept bytes and
nothing else, and no block is decompressed beyond its expected size.
"""
from __future__ import annotations

import json
import math
import sqlite3
import struct
import threading
import zlib

import numpy as np
import zstandard

from ..cext import blocks as _blocks
from ..solver.solvers import INDEXINGS

FORMAT_NAME = "sowsolve-table"
FORMAT_VERSION = 3
#: versions this sowsolve reads; a table keeps its version when a solve resumes it
READ_VERSIONS = (2, 3)
TABLE_NAME = "sowsolve"
#: records per block: version 2, 2^16; version 3, as the table's layout says (tables/layout.py:
#: 2^17 in dense tables written now, 2^20 in the first ones -- larger blocks compress better,
#: at the cost of decoding all of one to answer a position not cached -- and 2^16 in keyed
#: tables, whose key blocks take 8 bytes a key)
VERSION_2_BLOCK_RECORDS = 1 << 16
BLOCK_RECORDS_CHOICES = (1 << 16, 1 << 17, 1 << 20)
BLOCK_MAGIC = b"SWB2"
PALETTE_MAGIC = b"SWP3"
PALETTE_MIN_RECORDS = 4096     # smaller blocks stay byte planes (a palette would not pay)
KEYS_MAGIC = b"SWK2"
LONG_MAGIC = b"SWL2"
BLOCK_HEADER = struct.Struct("<4sHIIII")  # magic, tier, block, records, crc32 records, crc32 stored
PALETTE_COUNT = struct.Struct("<H")       # a palette block's number of values, 1..256
ZSTD_LEVEL = 9
#: level 3: the codes of the largest table benchmarked (2.2 x 10^9 records) take 3% more than at
#: level 5 (0.335 against 0.325 bytes a record) in less than half its time (6.2 ns a record
#: against 13.6; bench/results/block-coding.json): a solve's blocks are compressed while the next
#: tier is solved, so that time is taken from the solve
PALETTE_ZSTD_LEVEL = 3
MAX_META_BYTES = 1 << 20
MAX_TEXT = 200                 # description, initial position, timestamps, versions


class TableError(Exception):
    """A table file that cannot be used; subclasses say why."""


class TableMissing(TableError, FileNotFoundError):
    pass


class ForeignTable(TableError, ValueError):
    """Not a sowsolve table (another file, another format, a WAL-mode or altered schema)."""


class CorruptTable(TableError, ValueError):
    """A sowsolve table whose stored bytes fail their checks."""


class OutdatedTable(TableError, RuntimeError):
    """A sowsolve table of another format version: rebuild it."""


class UnfinishedTable(TableError, RuntimeError):
    """A table whose solve has not finished."""


class NotInTable(TableError, LookupError):
    """A keyed table holds only the positions its search reached."""


class BeyondTable(TableError, LookupError):
    """An endgame table (solved with --max-stones S) holds no position with more stones."""


class TableChanged(TableError, RuntimeError):
    """The table was replaced or rebuilt (`solve --force`) while it was being read: what was
    read no longer matches the file; open it again."""


class TableMismatch(TableError, ValueError):
    """A table of another game or board than the one asked for."""


class TableBusy(TableError, RuntimeError):
    """Another process writes the table (or holds SQLite's lock longer than we wait)."""


class TableClosed(TableError, ValueError):
    """A Table used after close()."""


class TableIOError(TableError, OSError):
    """The file could not be read or written (permissions, I/O errors)."""


class DiskFull(TableIOError):
    """The file system ran out of space while writing."""


def encode_value(value: bytes) -> sqlite3.Binary:
    if not isinstance(value, bytes):
        raise TypeError(f"table values are bytes, not {type(value).__name__}")
    return sqlite3.Binary(value)


def decode_value(stored) -> bytes:
    """Accept only BLOBs: a foreign file's text, number or pickle never turns into an object."""
    if isinstance(stored, (bytes, memoryview)):
        return bytes(stored)
    raise ForeignTable(f"a stored value is of SQLite type {type(stored).__name__}, not a blob")


def block_key(tier: int, block: int) -> str:
    return f"block/{tier}/{block}"


def keys_key(tier: int, block: int) -> str:
    return f"keys/{tier}/{block}"


def tier_key(tier: int) -> str:
    return f"tier/{tier}"


def long_key(tier: int) -> str:
    return f"long/{tier}"


def dump_json(obj) -> bytes:
    """Canonical JSON: what checksums are computed over."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number")


def load_json(data: bytes, what: str, error=ForeignTable) -> dict:
    try:
        obj = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise error(f"the {what} is not JSON: not a sowsolve table, or altered") from None
    if not isinstance(obj, dict):
        raise error(f"the {what} is not a JSON object: not a sowsolve table, or altered")
    return obj


def identity(game: str, parameters: dict) -> bytes:
    """What a table is a table of, as bytes: bound into every summary and block checksum."""
    return dump_json({"game": game, "parameters": parameters})


def summary_context(ident: bytes, tier: int) -> bytes:
    return ident + b"/tier/%d" % tier


def long_context(ident: bytes, tier: int) -> bytes:
    return summary_context(ident, tier) + b"/long"


def keys_context(ident: bytes, tier: int, first_keys: list[int]) -> bytes:
    return summary_context(ident, tier) + b"/first_keys/" + dump_json(first_keys)


def _json_crc(obj: dict, context: bytes) -> int:
    return zlib.crc32(dump_json(obj), zlib.crc32(context + b"\0"))


def seal_json(obj: dict, context: bytes) -> bytes:
    """The stored form of a metadata or summary object: canonical JSON with its checksum."""
    body = {k: v for k, v in obj.items() if k != "checksum"}
    return dump_json(dict(body, checksum=_json_crc(body, context)))


def open_json(data: bytes, what: str, context: bytes, error=CorruptTable) -> dict:
    """A sealed object whose checksum matches; CorruptTable otherwise (checksum removed)."""
    obj = load_json(data, what, error)
    checksum = obj.pop("checksum", None)
    if checksum is None:
        raise CorruptTable(f"the {what} has no checksum")
    if type(checksum) is not int or checksum != _json_crc(obj, context):
        raise CorruptTable(f"the {what} fails its checksum (altered, or of another table)")
    return obj


def _planes(array: np.ndarray) -> bytes:
    """Byte planes (all low bytes, ..., all high bytes): they compress better than words."""
    return array.view(np.uint8).reshape(-1, array.itemsize).T.tobytes()


def _unplanes(data: bytes, dtype: str) -> np.ndarray:
    size = np.dtype(dtype).itemsize
    return np.frombuffer(data, dtype=np.uint8).reshape(size, -1).T.copy().view(dtype).ravel()


def stored_size_bound(expected: int, keys: bool = False) -> int:
    """The most bytes a stored block of `expected` entries can take (zstd's compress bound of
    the planes, plus frame and block headers): anything larger is refused unread."""
    n = expected * (8 if keys else 2)
    bound = n + (n >> 8) + (((128 << 10) - n) >> 11 if n < (128 << 10) else 0)
    return BLOCK_HEADER.size + bound + 64


_local = threading.local()    # per thread: compressors, a decompressor


def _palette(records: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(the distinct values ascending, each record's position among them as a byte), or None
    where a block holds more than 256 distinct values (cext/blocks.pyx: it runs for every block
    a solve stores, beside the solve)."""
    coded = _blocks.palette(np.ascontiguousarray(records, dtype=np.uint16))
    return None if coded is None else (coded[0].astype("<u2", copy=False), coded[1])


def _compressor(level: int) -> zstandard.ZstdCompressor:
    """This thread's compressor of `level` (a compressor serves one thread at a time)."""
    kept = getattr(_local, "compressors", None)
    if kept is None:
        kept = _local.compressors = {}
    if level not in kept:
        kept[level] = zstandard.ZstdCompressor(level=level, write_checksum=True)
    return kept[level]


def encode_block(tier: int, block: int, array: np.ndarray, context: bytes,
                 magic: bytes = KEYS_MAGIC, palette: bool = False) -> bytes:
    """A block of records (uint16) or of sorted keys (uint64, stored as deltas, under `magic`:
    a long table's is LONG_MAGIC); `context` (identity, and for keys the tier's first keys)
    seeds both checksums.  With `palette` (format version 3), a block of records holding at
    most 256 distinct values is stored as those values and one byte per record naming one:
    a win/loss block is remoteness with the outcome nearly always its parity, so this codes the
    same information in half the symbols: on the largest table benchmarked it compresses 8%
    smaller than byte planes, in an eighth of their time (bench/results/block-coding.json)."""
    if array.dtype == np.uint64:
        raw = np.ascontiguousarray(array, dtype="<u8")
        words = np.diff(raw, prepend=np.uint64(0)).astype("<u8")
    else:
        magic, raw = BLOCK_MAGIC, np.ascontiguousarray(array, dtype="<u2")
        words = raw
    seed = zlib.crc32(context)
    coded = _palette(raw) if palette and magic == BLOCK_MAGIC and raw.size >= PALETTE_MIN_RECORDS else None
    if coded is not None:
        values, codes = coded
        magic = PALETTE_MAGIC
        payload = (PALETTE_COUNT.pack(values.size) + values.tobytes()
                   + _compressor(PALETTE_ZSTD_LEVEL).compress(codes.tobytes()))
    else:
        payload = _compressor(ZSTD_LEVEL).compress(_planes(words))
    header = BLOCK_HEADER.pack(magic, tier, block, raw.size, zlib.crc32(raw.tobytes(), seed),
                               zlib.crc32(payload, seed))
    return header + payload


def _decompressor() -> zstandard.ZstdDecompressor:
    dctx = getattr(_local, "dctx", None)
    if dctx is None:
        dctx = _local.dctx = zstandard.ZstdDecompressor()
    return dctx


def bounded_decompress(payload: bytes, size: int, where: str) -> bytes:
    """The content of one zstd frame that must hold exactly `size` bytes: never more than
    size + 1 bytes are produced, whatever the frame declares or holds."""
    try:
        declared = zstandard.frame_content_size(payload)
    except zstandard.ZstdError:
        raise CorruptTable(f"{where} is not a zstd frame") from None
    if declared != size:
        said = "does not declare its size" if declared < 0 else f"declares {declared} bytes"
        raise CorruptTable(f"{where} {said}; expected {size} bytes")
    parts, got = [], 0
    try:
        with _decompressor().stream_reader(payload, read_across_frames=False) as reader:
            while got <= size:
                part = reader.read(size + 1 - got)
                if not part:
                    break
                parts.append(part)
                got += len(part)
    except zstandard.ZstdError as exc:
        raise CorruptTable(f"{where} does not decompress ({exc})") from None
    if got != size:
        raise CorruptTable(f"{where} holds {'more' if got > size else got} bytes; expected {size}")
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _unpalette(payload: bytes, expected: int, where: str) -> np.ndarray:
    """The records of a palette block's payload, every count and code checked."""
    if len(payload) < PALETTE_COUNT.size:
        raise CorruptTable(f"{where} is truncated")
    (count,) = PALETTE_COUNT.unpack_from(payload)
    end = PALETTE_COUNT.size + 2 * count
    if not 1 <= count <= 256 or len(payload) < end:
        raise CorruptTable(f"{where} declares a palette of {count} values; a palette holds 1 to 256")
    values = np.frombuffer(payload, dtype="<u2", count=count, offset=PALETTE_COUNT.size)
    if count > 1 and not np.all(values[1:] > values[:-1]):
        raise CorruptTable(f"{where} has a palette that is not strictly ascending")
    codes = np.frombuffer(bounded_decompress(payload[end:], expected, where), dtype=np.uint8)
    if codes.size and int(codes.max()) >= count:
        raise CorruptTable(f"{where} names a value beyond its palette of {count}")
    return values.take(codes)       # half the time of values[codes], which widens the codes first


def decode_block(data: bytes, tier: int, block: int, expected: int, keys: bool = False,
                 context: bytes = b"", magic: bytes = KEYS_MAGIC, palette: bool = False) -> np.ndarray:
    """Records (or keys, stored under `magic`) of a stored block, every check passed;
    CorruptTable otherwise.  `palette`: the table's version stores palette blocks."""
    what = ("keys" if magic == KEYS_MAGIC else "long table") if keys else "block"
    where = f"{what} {block} of tier {tier}" if what != "long table" else f"the long table of tier {tier}"
    magic_expected, dtype = (magic, "<u8") if keys else (BLOCK_MAGIC, "<u2")
    width = np.dtype(dtype).itemsize
    if len(data) < BLOCK_HEADER.size:
        raise CorruptTable(f"{where} is truncated ({len(data)} bytes)")
    if len(data) > stored_size_bound(expected, keys):
        raise CorruptTable(f"{where} takes {len(data):,} bytes, more than {expected} entries can")
    magic, htier, hblock, count, crc, payload_crc = BLOCK_HEADER.unpack_from(data)
    palette_block = palette and not keys and magic == PALETTE_MAGIC
    if magic != magic_expected and not palette_block:
        raise CorruptTable(f"{where} does not start with a sowsolve {what} header")
    if (htier, hblock, count) != (tier, block, expected):
        raise CorruptTable(f"{where} claims to be {what} {hblock} of tier {htier} with {count} "
                           f"entries; expected {expected}")
    seed = zlib.crc32(context)
    payload = data[BLOCK_HEADER.size:]
    if zlib.crc32(payload, seed) != payload_crc:
        raise CorruptTable(f"{where} fails its checksum (altered, or of another table)")
    if palette_block:
        raw = _unpalette(payload, expected, where)
    else:
        planes = bounded_decompress(payload, width * expected, where)
        words = _unplanes(planes, dtype)
        raw = np.cumsum(words, dtype="<u8") if keys else words
    if zlib.crc32(raw.tobytes(), seed) != crc:
        raise CorruptTable(f"{where} fails its checksum (altered, or of another table)")
    return raw.astype(np.uint64 if keys else np.uint16, copy=False)


# --- metadata and summaries: every field type- and range-checked ---------------------------

def _is_int(x) -> bool:
    return type(x) is int


def _is_number(x) -> bool:
    return (type(x) is int or type(x) is float) and math.isfinite(x)


def _short_text(x) -> bool:
    return isinstance(x, str) and len(x) <= MAX_TEXT


def _int_list(x, limit: int = 100_000) -> bool:
    return isinstance(x, list) and len(x) <= limit and all(_is_int(v) for v in x)


#: field -> (required, check).  Tier lists and sizes are checked against the game in store.py.
#: A field not named here must be a scalar (a later sowsolve may add one).
META_FIELDS = {
    "format": (True, lambda v: v == FORMAT_NAME),
    "format_version": (True, lambda v: _is_int(v) and v in READ_VERSIONS),
    "game": (True, _short_text),
    "parameters": (True, lambda v: isinstance(v, dict) and len(v) <= 8 and all(
        isinstance(x, (int, str)) and not isinstance(x, bool) and len(str(x)) <= 20
        for x in v.values())),
    "description": (True, _short_text),
    "initial": (True, _short_text),
    "tiers": (True, lambda v: _int_list(v) and all(0 <= t < 1 << 16 for t in v)),
    "tier_sizes": (True, lambda v: isinstance(v, dict) and len(v) <= 100_000 and all(
        _is_int(n) and 0 <= n < 1 << 48 for n in v.values())),
    "block_records": (True, lambda v: _is_int(v) and v in BLOCK_RECORDS_CHOICES),
    "indexing": (True, lambda v: isinstance(v, str) and v in INDEXINGS),
    "solved_tiers": (True, lambda v: _int_list(v) and len(set(v)) == len(v)),
    "finished": (True, lambda v: type(v) is bool),
    "software": (True, lambda v: isinstance(v, dict) and len(v) <= 8 and all(
        _short_text(x) for x in v.values())),
    "created": (True, _short_text),
    "finished_at": (False, _short_text),
    "solve_seconds": (False, lambda v: v is None or (_is_number(v) and 0 <= v < 1e10)),
    "threads": (False, lambda v: _is_int(v) and 0 < v < 1 << 20),
    "max_stones": (False, lambda v: _is_int(v) and 0 <= v < 1 << 16),
}


def _scalar(v) -> bool:
    return v is None or type(v) is bool or _is_number(v) or _short_text(v)


def check_meta_fields(meta: dict) -> None:
    """Types and ranges of every metadata field; CorruptTable naming the first bad one."""
    for key, (required, check) in META_FIELDS.items():
        if key not in meta:
            if required:
                raise CorruptTable(f"the metadata lacks {key!r}")
            continue
        if not check(meta[key]):
            raise CorruptTable(f"the metadata's {key!r} is not valid")
    for key in sorted(set(meta) - set(META_FIELDS)):
        if len(key) > 40 or not _scalar(meta[key]):
            raise CorruptTable(f"the metadata's field {key[:40]!r} is not valid")


def check_summary_fields(info: dict, label: str, positions: int, max_remoteness: int,
                         blocks: int | None) -> None:
    """Types and ranges of a tier summary (`label` names it in the error); `max_remoteness` is
    the value kind's longest line; `blocks` is the number of key blocks of a keyed tier
    (first_keys required), None for a dense one."""
    counts = ("losses", "draws", "wins", "unsolved")
    fields = {"positions": lambda v: v == positions,
              **{k: (lambda v: 0 <= v <= positions) for k in counts},
              "longest_win": lambda v: 0 <= v <= max_remoteness,
              "longest_win_index": lambda v: -1 <= v < positions,
              "stored_bytes": lambda v: 0 <= v < 1 << 48}
    optional = {"seconds": lambda v: _is_number(v) and v >= 0, "endless": lambda v: _is_int(v) and 0 <= v <= positions,
                "final": lambda v: _is_int(v) and 0 <= v <= positions,
                "long": lambda v: _is_int(v) and 0 <= v <= positions}
    for key, check in fields.items():
        value = info.get(key)
        if not _is_int(value) or not check(value):
            raise CorruptTable(f"{label}'s {key!r} is missing or not valid")
    for key, check in optional.items():
        if key in info and not check(info[key]):
            raise CorruptTable(f"{label}'s {key!r} is not valid")
    if info["unsolved"] or sum(info[k] for k in counts) != positions:
        raise CorruptTable(f"{label}'s counts do not add up to its positions")
    known = set(fields) | set(optional) | {"first_keys"}
    if blocks is not None:
        first = info.get("first_keys")
        if (not _int_list(first, blocks) or len(first) != blocks
                or not all(0 < k < 1 << 64 for k in first)
                or any(a >= b for a, b in zip(first, first[1:]))):
            raise CorruptTable(f"{label}'s block index (first_keys) is not valid")
    elif "first_keys" in info:
        raise CorruptTable(f"{label} has a block index, but the table is not keyed")
    for key in sorted(set(info) - known):
        if len(key) > 40 or not _scalar(info[key]):
            raise CorruptTable(f"{label}'s field {key[:40]!r} is not valid")
