"""What a table's blocks cost to code, on the blocks of a solved win/loss table, printed as
JSON (and written with --out): for every `--every`-th block of every tier, the block coded as
the table format codes it (a palette and a byte a record, zstd at PALETTE_ZSTD_LEVEL) and as
the alternatives (the palette at level 5, the level before; the 16-bit records as two byte
planes at ZSTD_LEVEL), each coding's bytes a record and its nanoseconds a record on one thread;
and the palette itself found by the compiled kernel (cext/blocks.pyx) and by numpy as the
format found it before (bincount, flatnonzero, a lookup).

    python bench/bench_block_coding.py --table T.sqlite [--every 8] [--out FILE]

The table is only read.  The store thread does this for every block while the solver's
threads solve the next tier, so its time is taken from the solve.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import zstandard

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import emit, machine  # noqa: E402

from sowsolve.cext import blocks  # noqa: E402
from sowsolve.tables import format as fmt  # noqa: E402
from sowsolve.tables.store import Table  # noqa: E402


def numpy_palette(records: np.ndarray):
    """The format's palette as numpy found it before the compiled kernel."""
    present = np.flatnonzero(np.bincount(records, minlength=1 << 16))
    if present.size > 256:
        return None
    lookup = np.zeros(1 << 16, dtype=np.uint8)
    lookup[present] = np.arange(present.size, dtype=np.uint8)
    return present.astype("<u2"), lookup[records]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", required=True, help="a solved win/loss table (read only)")
    parser.add_argument("--every", type=int, default=8, help="code every N-th block of each tier")
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args(argv)
    if args.every < 1:
        parser.error("--every must be at least 1")
    levels = {"palette": fmt.PALETTE_ZSTD_LEVEL, "palette_level_5": 5, "planes": fmt.ZSTD_LEVEL}
    compressors = {name: zstandard.ZstdCompressor(level=level, write_checksum=True)
                   for name, level in levels.items()}
    size = dict.fromkeys(levels, 0)
    seconds = dict.fromkeys(list(levels) + ["palette_kernel", "palette_numpy"], 0.0)
    records = blocks_coded = palettes = 0
    with Table(args.table) as table:
        description = table.meta.get("description")
        for tier in table.tiers:
            for number in range(0, table.blocks_of(tier), args.every):
                block = table.block(tier, number)
                records += block.size
                blocks_coded += 1
                start = time.perf_counter()
                coded = blocks.palette(block)
                seconds["palette_kernel"] += time.perf_counter() - start
                start = time.perf_counter()
                reference = numpy_palette(block)
                seconds["palette_numpy"] += time.perf_counter() - start
                if (coded is None) != (reference is None) or (
                        coded is not None and not (np.array_equal(coded[0], reference[0])
                                                   and np.array_equal(coded[1], reference[1]))):
                    raise SystemExit(f"block {number} of tier {tier}: the kernel's palette is not numpy's")
                planes = fmt._planes(np.ascontiguousarray(block, dtype="<u2"))
                for name in levels:
                    if name == "planes" or coded is None:
                        data, extra = planes, 0
                    else:
                        data, extra = coded[1].tobytes(), 2 * coded[0].size
                    start = time.perf_counter()
                    size[name] += len(compressors[name].compress(data)) + extra
                    seconds[name] += time.perf_counter() - start
                palettes += coded is not None
    if not records:
        raise SystemExit("the table holds no records")
    result = {
        "command": "python bench/bench_block_coding.py --table T --every " + str(args.every),
        "table": description, "machine": machine(),
        "blocks": blocks_coded, "palette_blocks": palettes, "records": records,
        "levels": levels,
        "bytes_per_record": {name: round(size[name] / records, 4) for name in levels},
        "ns_per_record": {name: round(seconds[name] / records * 1e9, 2) for name in seconds},
    }
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
