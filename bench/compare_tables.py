"""Compare two tables of one game record by record, tier by tier, and print JSON: the tiers,
the records compared, and the first tier that differs (none when identical).  For a new
version of the solver against a table the version before it wrote.

    python bench/compare_tables.py BEFORE.sqlite AFTER.sqlite [--out FILE]
"""
from __future__ import annotations

import argparse

import numpy as np

from report import emit
from sowsolve.tables.store import open_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--out")
    args = parser.parse_args()
    with open_table(args.before) as before, open_table(args.after) as after:
        if before.tiers != after.tiers:
            raise SystemExit("the two tables hold different tiers")
        compared, differing = 0, None
        for tier in before.tiers:
            a, b = before.tier_records(tier), after.tier_records(tier)
            if not np.array_equal(a, b):
                differing = tier
                break
            compared += a.size
        emit({"game": before.meta["description"], "tiers": len(before.tiers),
              "records_compared": compared, "identical": differing is None,
              "first_differing_tier": differing}, args.out)


if __name__ == "__main__":
    main()
