"""The table file format (version 1).

One SQLite file, one sqlitedict table named ``sowsolve``, keys as text, values as raw bytes:

  meta              JSON: format, format_version, game, parameters, tiers, tier_sizes,
                    block_records, solved_tiers, finished, software versions, timestamps
  tier/<t>          JSON: the tier's summary (positions, wins, losses, draws, longest win...)
  block/<t>/<b>     one block of records of tier t: a header then a zstd frame

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


def encode_block(tier: int, block: int, records: np.ndarray) -> bytes:
    raw = np.ascontiguousarray(records, dtype="<u2")
    planes = raw.view(np.uint8).reshape(-1, 2).T.tobytes()
    payload = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True).compress(planes)
    header = BLOCK_HEADER.pack(BLOCK_MAGIC, tier, block, raw.size, zlib.crc32(raw.tobytes()),
                               zlib.crc32(payload))
    return header + payload


def decode_block(data: bytes, tier: int, block: int, expected_records: int) -> np.ndarray:
    where = f"block {block} of tier {tier}"
    if len(data) < BLOCK_HEADER.size:
        raise CorruptTable(f"{where} is truncated ({len(data)} bytes)")
    magic, htier, hblock, count, crc, payload_crc = BLOCK_HEADER.unpack_from(data)
    if magic != BLOCK_MAGIC:
        raise CorruptTable(f"{where} does not start with a sowsolve block header")
    if (htier, hblock, count) != (tier, block, expected_records):
        raise CorruptTable(f"{where} claims to be block {hblock} of tier {htier} with {count} "
                           f"records; expected {expected_records}")
    payload = data[BLOCK_HEADER.size:]
    if zlib.crc32(payload) != payload_crc:
        raise CorruptTable(f"{where} fails its checksum")
    try:
        planes = zstandard.ZstdDecompressor().decompress(payload, max_output_size=2 * expected_records)
    except zstandard.ZstdError as exc:
        raise CorruptTable(f"{where} does not decompress ({exc})") from None
    if len(planes) != 2 * expected_records:
        raise CorruptTable(f"{where} holds {len(planes)} bytes, expected {2 * expected_records}")
    raw = np.frombuffer(planes, dtype=np.uint8).reshape(2, -1).T.copy().view("<u2").ravel()
    if zlib.crc32(raw.tobytes()) != crc:
        raise CorruptTable(f"{where} fails its checksum")
    return raw.astype(np.uint16, copy=False)
