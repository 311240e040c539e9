"""The table file format (version 1).

One SQLite file, one sqlitedict table named ``sowsolve``, keys as text, values as raw bytes:

  meta              JSON: format, format_version, game, parameters, tiers, tier_sizes,
                    block_records, solved_tiers, finished, software versions, timestamps
  tier/<t>          JSON: the tier's summary (positions, wins, losses, draws, longest win...)
  block/<t>/<b>     one block of records of tier t: a header then a zstd frame
  keys/<t>/<b>      keyed tables only (games solved by search): the sorted canonical packed
                    positions whose records are in block/<t>/<b>, delta-coded the same way

A block holds up to `block_records` 16-bit records (solver/values.py) of consecutive indices,
stored as two byte planes (low bytes, then high bytes), which compress better than the
interleaved array.  Its header carries magic, tier, block number, record count, the CRC-32 of the
records and the CRC-32 of the compressed bytes, so a flipped byte anywhere is caught on read.  Nothing is ever
unpickled: the codecs below accept bytes and nothing else.
"""
from __future__ import annotations

import json
import sqlite3
import struct
import zlib

import numpy as np
import zstandard

FORMAT_NAME = "sowsolve-table"
FORMAT_VERSION = 1
TABLE_NAME = "sowsolve"
BLOCK_RECORDS = 1 << 16
BLOCK_MAGIC = b"SWB1"
KEYS_MAGIC = b"SWK1"
BLOCK_HEADER = struct.Struct("<4sHIIII")  # magic, tier, block, records, crc32 records, crc32 stored
ZSTD_LEVEL = 9


class TableError(Exception):
    """A table file that cannot be used; subclasses say why."""


class TableMissing(TableError, FileNotFoundError):
    pass


class ForeignTable(TableError, ValueError):
    """Not a sowsolve table (another file, another format, or another version)."""


class CorruptTable(TableError, ValueError):
    """A sowsolve table whose stored bytes fail their checks."""


class UnfinishedTable(TableError, RuntimeError):
    """A table whose solve has not finished."""


class NotInTable(TableError, LookupError):
    """A keyed table holds only the positions its search reached."""


class TableMismatch(TableError, ValueError):
    """A table of another game or board than the one asked for."""


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


def dump_json(obj) -> bytes:
    return json.dumps(obj, sort_keys=True).encode()


def load_json(data: bytes, what: str) -> dict:
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ForeignTable(f"the {what} is not JSON: not a sowsolve table, or altered") from None
    if not isinstance(obj, dict):
        raise ForeignTable(f"the {what} is not a JSON object: not a sowsolve table, or altered")
    return obj


def _planes(array: np.ndarray) -> bytes:
    """Byte planes (all low bytes, ..., all high bytes): they compress better than words."""
    return array.view(np.uint8).reshape(-1, array.itemsize).T.tobytes()


def _unplanes(data: bytes, dtype: str) -> np.ndarray:
    size = np.dtype(dtype).itemsize
    return np.frombuffer(data, dtype=np.uint8).reshape(size, -1).T.copy().view(dtype).ravel()


def encode_block(tier: int, block: int, array: np.ndarray) -> bytes:
    """A block of records (uint16) or of sorted keys (uint64, stored as deltas)."""
    if array.dtype == np.uint64:
        magic, raw = KEYS_MAGIC, np.ascontiguousarray(array, dtype="<u8")
        words = np.diff(raw, prepend=np.uint64(0)).astype("<u8")
    else:
        magic, raw = BLOCK_MAGIC, np.ascontiguousarray(array, dtype="<u2")
        words = raw
    payload = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True).compress(_planes(words))
    header = BLOCK_HEADER.pack(magic, tier, block, raw.size, zlib.crc32(raw.tobytes()),
                               zlib.crc32(payload))
    return header + payload


def decode_block(data: bytes, tier: int, block: int, expected: int, keys: bool = False) -> np.ndarray:
    """Records (or keys) of a stored block, every check passed; CorruptTable otherwise."""
    what = "keys" if keys else "block"
    where = f"{what} {block} of tier {tier}"
    magic_expected, dtype = (KEYS_MAGIC, "<u8") if keys else (BLOCK_MAGIC, "<u2")
    width = np.dtype(dtype).itemsize
    if len(data) < BLOCK_HEADER.size:
        raise CorruptTable(f"{where} is truncated ({len(data)} bytes)")
    magic, htier, hblock, count, crc, payload_crc = BLOCK_HEADER.unpack_from(data)
    if magic != magic_expected:
        raise CorruptTable(f"{where} does not start with a sowsolve {what} header")
    if (htier, hblock, count) != (tier, block, expected):
        raise CorruptTable(f"{where} claims to be {what} {hblock} of tier {htier} with {count} "
                           f"entries; expected {expected}")
    payload = data[BLOCK_HEADER.size:]
    if zlib.crc32(payload) != payload_crc:
        raise CorruptTable(f"{where} fails its checksum")
    try:
        planes = zstandard.ZstdDecompressor().decompress(payload, max_output_size=width * expected)
    except zstandard.ZstdError as exc:
        raise CorruptTable(f"{where} does not decompress ({exc})") from None
    if len(planes) != width * expected:
        raise CorruptTable(f"{where} holds {len(planes)} bytes, expected {width * expected}")
    words = _unplanes(planes, dtype)
    raw = np.cumsum(words, dtype="<u8") if keys else words
    if zlib.crc32(raw.tobytes()) != crc:
        raise CorruptTable(f"{where} fails its checksum")
    return raw.astype(np.uint64 if keys else np.uint16, copy=False)
