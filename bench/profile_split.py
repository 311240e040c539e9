"""Where a Diffusion solve spends its CPU, from a `perf` profile of it, split into the parts
the solver has, printed as JSON.

    perf record -e cpu-clock -F 999 -o P -- sowsolve solve diffusion --cols 6 --stones 4 \\
        --max-stones 19 --threads 2 --table T
    perf report -i P --no-children --sort dso,symbol -n --stdio | python bench/profile_split.py

(`cpu-clock` samples: machines without hardware counters have it.)  Parts: the children of
each position (unranking, moves, the children's indices), the sweep (folding the children's
records: the reads from memory land here, and storing), ordering a tier by level, the store
thread's compression (zstd, the palette, checksums) and summary, the system clearing fresh
pages, and the rest (Python, SQLite, ...).
"""
from __future__ import annotations

import json
import re
import sys

PARTS = [
    ("children", re.compile(r"diffusion_(expand|expand_member|expand_codes|unrank|half_codes)\b")),
    ("level_order", re.compile(r"diffusion_level\b|diffusion_level_members|retrograde_level_order")),
    ("sweep_fold_and_reads", re.compile(r"retrograde_(sweep|solve_range|solve_root)")),
    ("store_compression", re.compile(r"ZSTD|HUF_|FSE_|crc32|arr_bincount|mapiter|_aligned_contig_cast|"
                                     r"memmove|LONG_nonzero|PyArray_Nonzero")),
    ("store_summary", re.compile(r"tier_summary")),
    ("page_clearing", re.compile(r"clear_page")),
]


def split(lines) -> dict:
    samples = {name: 0 for name, _ in PARTS} | {"other": 0}
    for line in lines:
        found = re.match(r"\s*([\d.]+)%\s+(\d+)\s+\S+\s+\[[.k]\]\s+(\S+)", line)
        if not found:
            continue
        count, symbol = int(found[2]), found[3]
        part = next((name for name, pattern in PARTS if pattern.search(symbol)), "other")
        samples[part] += count
    total = sum(samples.values())
    return {"samples": total,
            "share": {name: round(count / total, 3) for name, count in samples.items()} if total else {}}


if __name__ == "__main__":
    print(json.dumps(split(sys.stdin), indent=2))
