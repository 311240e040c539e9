"""What proving Overflow 5x5 would take by the method that proved 4x5, projected from the
measured proofs: the growth of the expansions per cell from 4x4 to 4x5 carried on to 5x5, the
rate and the table of the 4x5 run.  Reads bench/results/prove-growth.json and
bench/results/prove-4x5-d16.json (4x5 proved in one run, the endgame table of 16 discs at the
leaves); writes bench/results/prove-projection.json.  Its `from_growth` redoes the projection
from the growth of the search as it is now (bench/results/prove-growth-lookahead.json) at the
rate of the 5x5 run (bench/results/prove-5x5-run.json).

    python bench/project_prove.py [--out FILE] [--hours H]
"""
import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")


def from_growth() -> dict:
    """The projection redone from the growth of the search as it is now (hints and lookahead,
    one thread, no endgame table: prove-growth-lookahead.json): the least-squares line of the
    log of the expansions against the cells, over the boards of 12 cells or more, carried to
    25 cells; the time at the rate of the 5x5 run itself (prove-5x5-run.json, one thread)."""
    import math
    growth = json.load(open(os.path.join(RESULTS, "prove-growth-lookahead.json")))
    long_run = json.load(open(os.path.join(RESULTS, "prove-5x5-run.json")))
    points = [(r["cells"], math.log(r["nodes"])) for r in growth["runs"] if r["cells"] >= 12]
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    slope = (sum((x - mean_x) * (y - mean_y) for x, y in points)
             / sum((x - mean_x) ** 2 for x, _ in points))
    nodes_5x5 = math.exp(mean_y + slope * (25 - mean_x))
    last = long_run["timeline"][-1]
    rate = last["nodes"] / last["search_seconds"]
    return {"boards": sorted(r["size"] for r in growth["runs"] if r["cells"] >= 12),
            "growth_per_cell": round(math.exp(slope), 2),
            "5x5_nodes": float(f"{nodes_5x5:.2g}"),
            "5x5_run_nodes_per_second": round(rate),
            "one_thread_days": round(nodes_5x5 / rate / 86400),
            "note": "a line through the boards of 12 to 18 cells carried to 25: an order of "
                    "magnitude; the 5x5 run's own root numbers say how far it got"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(RESULTS, "prove-projection.json"))
    parser.add_argument("--hours", type=float, default=24.0,
                        help="the wall time a cluster is sized for (default 24)")
    args = parser.parse_args()
    growth = json.load(open(os.path.join(RESULTS, "prove-growth.json")))
    run = json.load(open(os.path.join(RESULTS, "prove-4x5-d16.json")))
    said = run["prove"]["said"]
    proof = {"nodes_at_proof": said["nodes"],                  # the search's, to the proof
             "nodes_per_second": round(said["nodes"] / said["seconds"]),
             "entries_in_table_at_proof": run["entries_in_table_at_proof"]}
    small = next(r for r in growth["runs"] if r["size"] == "4x4")
    large_nodes = proof["nodes_at_proof"]
    per_cell = (large_nodes / small["nodes"]) ** (1 / (20 - small["cells"]))
    nodes_5x5 = large_nodes * per_cell ** 5
    rate = proof["nodes_per_second"]                 # two cores, one machine
    # the 4x5 search's table was full (it replaced entries): the entries it would have kept,
    # per expansion, at least the ones it held
    entries_per_node = proof["entries_in_table_at_proof"] / large_nodes
    entries = nodes_5x5 * entries_per_node
    machines = nodes_5x5 / (rate * args.hours * 3600)
    report = {
        "command": "python bench/project_prove.py",
        "method": "df-pn with an endgame table at the leaves, as proved 4x5 (prove-4x5-d16.json)",
        "measured": {"4x4_nodes": small["nodes"], "4x4_note": growth["command"] + ", no endgame table",
                     "4x5_nodes": large_nodes, "4x5_nodes_per_second": rate,
                     "4x5_entries_in_table": proof["entries_in_table_at_proof"]},
        "growth_per_cell": round(per_cell, 2),
        "5x5_nodes": float(f"{nodes_5x5:.2g}"),
        "one_machine_days": round(nodes_5x5 / rate / 86400),
        "table_entries": float(f"{entries:.2g}"),
        "table_terabytes": round(entries * 16 / 1e12, 1),
        "cluster_hours": args.hours,
        "cluster_machines_of_two_cores": round(machines),
        "cluster_table_gigabytes_per_machine": round(entries * 16 / machines / 1e9),
        "note": ("an extrapolation over one step of board size (4x4 proved without a table, 4x5 with "
                 "the table of 16 discs): an order of magnitude, not a forecast; the cluster figures "
                 "assume a perfectly shared table and no loss to communication"),
    }
    report["from_growth"] = from_growth()
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
