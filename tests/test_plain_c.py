"""The second plain C solver of bench/ (an independent check of the records, not the yardstick
of the speed figures) solves the game sowsolve solves: compiled here, its record of every position of 2x4 with 2 stones per pit
(every board of 1 to 16 stones, A to move) equals the table's."""
import os
import shutil
import subprocess

import numpy as np
import pytest

from sowsolve.tables.store import open_table
from conftest import documentation

#: the whole module is left out of `pytest -m "not slow"` (processes, clusters, long solves)
pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_plain_c_solver_gives_every_position_the_table_s_record(tmp_path, table_2x4_k2):
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        pytest.skip(f"no C compiler ({cc}) to build bench/plain_diffusion.c")
    program = tmp_path / "plain_diffusion"
    subprocess.run([cc, "-O2", "-fopenmp", os.path.join(ROOT, "bench", "plain_diffusion.c"), "-o",
                    str(program)], check=True)
    records = tmp_path / "records.bin"
    said = subprocess.run([str(program), "4", "2", str(records)], capture_output=True, text=True, check=True)
    plain = np.fromfile(records, dtype="<u2")
    assert plain.size == 6 ** 8 and '"positions": 1679616' in said.stdout
    powers = 6 ** np.arange(8, dtype=np.int64)
    compared = 0
    with open_table(table_2x4_k2) as table:
        for tier in table.tiers:
            size = table.tier_size(tier)
            boards = np.array([p.board for p in table.stored_positions(tier, 0, size)], dtype=np.int64)
            assert np.array_equal(plain[boards @ powers], table.tier_records(tier)), f"tier {tier}"
            compared += size
    indices = np.arange(6 ** 8, dtype=np.int64)
    stones = sum((indices // power) % 6 for power in powers)
    # every board of 1 to 16 stones (the empty board never arises: a game ends before)
    assert compared == int(np.count_nonzero((stones >= 1) & (stones <= 16)))


def test_the_readme_against_plain_c_is_the_measured_one():
    """The README's figures against plain C are bench/results/plain-c.json's: a run of the
    yardstick and sowsolve alternating, at least two runs each, each with its load average
    before and after, both giving the start the same record; the ratio is the median of
    sowsolve's wall times over the median of the yardstick's solve times, and it is the only
    figure the README gives against plain C (the second plain C program's 0.17 is gone)."""
    import json
    import pathlib
    import re
    import statistics
    root = pathlib.Path(ROOT)
    result = json.loads((root / "bench/results/plain-c.json").read_text())
    runs = result["runs"]
    ours = [r for r in runs if r["program"] == "sowsolve"]
    theirs = [r for r in runs if r["program"] == "yardstick"]
    # two runs each, alternating; a run stopped early (result["stopped"]) may lack the last
    assert len(ours) >= 2 and (len(theirs) >= 2 or result.get("stopped"))
    assert len(theirs) >= 1
    assert [r["program"] for r in runs] == (["sowsolve", "yardstick"] * len(ours))[:len(runs)]
    assert all(len(r["load_before"]) == 3 and len(r["load_after"]) == 3 for r in runs)
    assert result["same_start"] and len({(r["start"]["value"], r["start"]["remoteness"]) for r in runs}) == 1
    ours_wall = statistics.median(r["wall_seconds"] for r in ours)
    their_solve = statistics.median(r["solve_wall_seconds"] for r in theirs)
    assert result["sowsolve_wall_seconds_median"] == round(ours_wall, 2)
    assert result["yardstick_solve_seconds_median"] == round(their_solve, 2)
    assert result["sowsolve_over_yardstick"] == round(ours_wall / their_solve, 2)
    assert ours[0]["positions_per_side"] == 2175504513
    text = " ".join(documentation().split())
    assert "0.17" not in text
    found = re.search(r"\*\*Against plain C, sowsolve takes ([\d.]+) of the yardstick's wall time\*\*", text)
    assert found and float(found[1]) == result["sowsolve_over_yardstick"]
    assert len(re.findall(r"against plain C", text, re.I)) == 2      # the heading and that sentence
    row = re.search(r"\| wall time, median \| (\d+) s \(its \"solve:\" line; (\d+) runs?\) \| (\d+) s "
                    r"\(the whole process; (\d+) runs\) \|", text)
    assert row and (int(row[2]), int(row[4])) == (len(theirs), len(ours))
    assert (int(row[1]), int(row[3])) == (round(their_solve), round(ours_wall))
    assert ("a run stopped before the yardstick's second run" in text) == (len(theirs) < 2)
    cpu = re.search(r"\| CPU time \(user \+ system\), median \| (\d+) s \| (\d+) s \|", text)
    assert cpu and (int(cpu[1]), int(cpu[2])) == (round(result["yardstick_cpu_seconds_median"]),
                                                  round(result["sowsolve_cpu_seconds_median"]))
    memory = re.search(r"\| peak memory \| ([\d.]+) GB \| ([\d.]+) GB \|", text)
    assert memory and (float(memory[1]), float(memory[2])) == (
        round(result["yardstick_peak_rss_kb_max"] * 1024 / 1e9, 1),
        round(result["sowsolve_peak_rss_kb_max"] * 1024 / 1e9, 1))
    table = re.search(r"\| table \| none \| (\d+) MB \(([\d.]+) bytes/position\) \|", text)
    assert table and int(table[1]) == round(ours[0]["table_bytes"] / 1e6)
    assert float(table[2]) == round(ours[0]["table_bytes"] / ours[0]["positions_per_side"], 3)


def test_the_bench_says_when_the_yardstick_is_absent(tmp_path):
    """No yardstick at the path given: one sentence naming it, exit 1, nothing run."""
    import sys
    run = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_plain_c.py"), "--yardstick",
                          str(tmp_path / "none.c")], capture_output=True, text=True)
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.strip() == f"no yardstick at {tmp_path / 'none.c'}: give the C source with --yardstick FILE"


def test_the_readme_s_profile_is_the_measured_one():
    """The README's CPU seconds by part of the solve, before and after, are
    bench/results/profile-diffusion.json's (shares of the samples times their seconds)."""
    import json
    import pathlib
    import re
    root = pathlib.Path(ROOT)
    profile = json.loads((root / "bench/results/profile-diffusion.json").read_text())
    text = " ".join(documentation().split())
    for when in ("before", "after"):
        part = profile[when]
        assert part["cpu_seconds"] == round(part["samples"] / 999, 1)
        for name, share in part["share"].items():
            assert part["cpu_seconds_by_part"][name] == round(share * part["samples"] / 999, 1)
    b, a = profile["before"]["cpu_seconds_by_part"], profile["after"]["cpu_seconds_by_part"]
    found = re.search(r"before this version, ([\d.]+) of its ([\d.]+) CPU seconds went to working out "
                      r"each position's children .*?, ([\d.]+) to the sweep itself .*?, ([\d.]+) to "
                      r"sorting each tier by level, ([\d.]+) to the store thread's compression", text)
    assert found
    assert [float(found[i]) for i in range(1, 6)] == [b["children"], profile["before"]["cpu_seconds"],
                                                      b["sweep_fold_and_reads"], b["level_order"],
                                                      b["store_compression"]]
    found = re.search(r"children ([\d.]+), sweep ([\d.]+), level order ([\d.]+), compression ([\d.]+), "
                      r"([\d.]+) CPU seconds in all", text)
    assert found
    assert [float(found[i]) for i in range(1, 6)] == [a["children"], a["sweep_fold_and_reads"],
                                                      a["level_order"], a["store_compression"],
                                                      profile["after"]["cpu_seconds"]]


def test_the_readme_s_identical_standard_table_is_the_compared_one():
    import json
    import pathlib
    import re
    root = pathlib.Path(ROOT)
    identity = json.loads((root / "bench/results/standard-v1-identity.json").read_text())
    assert identity["identical"] and identity["first_differing_tier"] is None
    assert identity["records_compared"] == 2175504513 and identity["tiers"] == 48
    text = " ".join(documentation().split())
    found = re.search(r"on the standard board, all ([\d,]+) records of the v1 table, tier by tier", text)
    assert found and int(found[1].replace(",", "")) == identity["records_compared"]
    sweep = json.loads((root / "bench/results/standard-v1-identity-sweep.json").read_text())
    assert sweep["identical"] and sweep["first_differing_tier"] is None and sweep["tiers"] == 48
    found = re.search(r"of that version and of the version before it are the same, all ([\d,]+) records of the v1 "
                      r"table compared", text)
    assert found and int(found[1].replace(",", "")) == sweep["records_compared"]
    pointers = json.loads((root / "bench/results/standard-v1-identity-pointers.json").read_text())
    assert pointers["identical"] and pointers["first_differing_tier"] is None and pointers["tiers"] == 48
    found = re.search(r"records identical tier by tier, all ([\d,]+) of the standard v1 table", text)
    assert found and int(found[1].replace(",", "")) == pointers["records_compared"] == 2175504513
    side = json.loads((root / "bench/results/sweep-pointers-before-after.json").read_text())["runs"]
    standard = side[2]["user_seconds"]
    found = re.search(r"the standard board in (\d+) CPU seconds instead of (\d+) \(([\d.]+)\), 2x6 k=2 in ([\d.]+) "
                      r"of the time, 2x4 k=5 in ([\d.]+) of it", text)
    assert found
    assert (int(found[1]), int(found[2])) == (round(standard["after"]), round(standard["before"]))
    assert float(found[3]) == side[2]["after_over_before_user"] == round(standard["after"] / standard["before"], 2)
    assert float(found[4]) == round(side[1]["after_over_before_wall_median_of_pairs"], 2)
    assert float(found[5]) == round(side[0]["after_over_before_wall_median_of_pairs"], 2)


def test_the_docs_cores_of_the_standard_solve_are_the_measured_ones():
    """results.md's figures of the cores the standard solve keeps busy are
    bench/results/cores-standard.json's and cores-standard-passive.json's, and each file's
    totals are the sums of its tiers."""
    import json
    import pathlib
    import re
    root = pathlib.Path(ROOT)
    text = " ".join((root / "docs/results.md").read_text().split())
    spinning = json.loads((root / "bench/results/cores-standard.json").read_text())
    passive = json.loads((root / "bench/results/cores-standard-passive.json").read_text())
    said = re.search(r"keeps ([\d.]+) of the 2 cores busy from end to end \((\d+) s, (\d+) CPU seconds; "
                     r"(\d+) core-seconds idle in all, the most, ([\d.]+), in (tier \d+)\)", text)
    assert said
    assert (float(said[1]), int(said[2]), int(said[3])) == (
        spinning["cores"], round(spinning["wall_seconds"]), round(spinning["cpu_seconds"]))
    assert int(said[4]) == round(spinning["idle_core_seconds"])
    most = spinning["most_idle"][0]
    assert (float(said[5]), said[6]) == (round(most["idle_core_seconds"], 1), most["tier"])
    said = re.search(r"\(`cores-standard-passive.json`: (\d+) s, (\d+) CPU seconds, ([\d.]+) cores\)", text)
    assert said and "OMP_WAIT_POLICY=passive" in passive["command"]
    assert (int(said[1]), int(said[2]), float(said[3])) == (
        round(passive["wall_seconds"]), round(passive["cpu_seconds"]), passive["cores"])
    for result in (spinning, passive):
        tiers = result["tiers"]
        assert abs(sum(t["wall_seconds"] for t in tiers) - result["wall_seconds"]) < 1
        assert abs(sum(t["cpu_seconds"] for t in tiers) - result["cpu_seconds"]) < 1


def test_the_docs_profile_of_the_pointer_sweep_is_the_measured_one():
    """results.md's CPU seconds of the children and the sweep, before and after this version's
    sweep, are bench/results/profile-diffusion-sweep.json's (shares of the samples times their
    seconds)."""
    import json
    import pathlib
    import re
    root = pathlib.Path(ROOT)
    profile = json.loads((root / "bench/results/profile-diffusion-sweep.json").read_text())
    for when in ("before", "after"):
        part = profile[when]
        assert part["cpu_seconds"] == round(part["samples"] / 999, 1)
        for name, share in part["share"].items():
            assert part["cpu_seconds_by_part"][name] == round(share * part["samples"] / 999, 1)
    text = " ".join((root / "docs/results.md").read_text().split())
    found = re.search(r"the children ([\d.]+) CPU seconds before, ([\d.]+) now; the sweep ([\d.]+) before, "
                      r"([\d.]+) now", text)
    assert found
    b, a = profile["before"]["cpu_seconds_by_part"], profile["after"]["cpu_seconds_by_part"]
    assert [float(found[i]) for i in range(1, 5)] == [b["children"], a["children"],
                                                      b["sweep_fold_and_reads"], a["sweep_fold_and_reads"]]


def test_the_docs_history_of_the_comparison_is_the_measured_one():
    """The ratios of the versions before, this run's pairs, the yardstick's times in this run and
    the run before, the load around the runs and the records' identity, as results.md gives
    them, are the JSON files'."""
    import json
    import pathlib
    import re
    root = pathlib.Path(ROOT)
    text = " ".join((root / "docs/results.md").read_text().split())
    now = json.loads((root / "bench/results/plain-c.json").read_text())
    store = json.loads((root / "bench/results/plain-c-store.json").read_text())
    pointers = json.loads((root / "bench/results/plain-c-pointers.json").read_text())
    oldest = json.loads((root / "bench/results/plain-c-before.json").read_text())
    found = re.search(r"The version before took ([\d.]+) \(`bench/results/plain-c-store.json`, pairs ([\d.]+), "
                      r"([\d.]+) and ([\d.]+)\), the one before it ([\d.]+) \(`bench/results/plain-c-pointers.json`, "
                      r"pairs ([\d.]+), ([\d.]+) and ([\d.]+)\), and ([\d.]+) before that", text)
    assert found and float(found[1]) == store["sowsolve_over_yardstick"]
    assert [float(found[i]) for i in (2, 3, 4)] == store["sowsolve_over_yardstick_pairs"]
    assert float(found[5]) == pointers["sowsolve_over_yardstick"]
    assert [float(found[i]) for i in (6, 7, 8)] == pointers["sowsolve_over_yardstick_pairs"]
    assert float(found[9]) == oldest["sowsolve_over_yardstick"]
    found = re.search(r"pair by pair ([\d.]+), ([\d.]+) and ([\d.]+)\)", text)
    assert found and [float(found[i]) for i in (1, 2, 3)] == now["sowsolve_over_yardstick_pairs"]
    theirs = [r["solve_wall_seconds"] for r in now["runs"] if r["program"] == "yardstick"]
    earlier = [r["solve_wall_seconds"] for r in store["runs"] if r["program"] == "yardstick"]
    found = re.search(r"the yardstick took (\d+) to (\d+) s in this run and (\d+) to (\d+) s in the version "
                      r"before's", text)
    assert found and [int(found[i]) for i in range(1, 5)] == [
        round(min(theirs)), round(max(theirs)), round(min(earlier)), round(max(earlier))]
    loads = [x for r in now["runs"] for x in r["load_before"] + r["load_after"]]
    found = re.search(r"\(load average ([\d.]+) to ([\d.]+) around the runs", text)
    assert found and (float(found[1]), float(found[2])) == (min(loads), max(loads))
    for variant in ("v1", "v2"):
        identity = json.loads((root / f"bench/results/standard-{variant}-identity-lanes.json").read_text())
        assert identity["identical"] and identity["first_differing_tier"] is None
        assert identity["records_compared"] == 2175504513 and identity["tiers"] == 48
        assert f"all 2,175,504,513{' of the v1 table' if variant == 'v1' else ''} " \
               f"(`bench/results/standard-{variant}-identity-lanes.json`)" in text


def test_the_docs_figures_of_the_lanes_are_the_measured_ones():
    """results.md's figures of the sweep with and without the vector lanes, and of the smaller
    boards side by side with the version before, are bench/results/lanes-tier.json's and
    lanes-small-boards.json's."""
    import json
    import pathlib
    import re
    import statistics
    root = pathlib.Path(ROOT)
    text = " ".join((root / "docs/results.md").read_text().split())
    tier = json.loads((root / "bench/results/lanes-tier.json").read_text())
    ratios = [round(a / b, 3) for a, b in zip(tier["cpu_seconds"]["lanes"], tier["cpu_seconds"]["scalar"])]
    assert ratios == tier["lanes_over_scalar_by_round"] and len(ratios) >= 3
    assert tier["lanes_over_scalar_median"] == round(statistics.median(ratios), 2)
    assert tier["records"] == "identical to the table's, every sweep"
    found = re.search(r"Tier (\d+) of the standard board \(([\d.]+) M positions\) swept with and without the "
                      r"lanes, in one process, alternating \(`python bench/bench_lanes.py --table T --tier (\d+) "
                      r"--rounds (\d+)`, `bench/results/lanes-tier.json`\): ([\d.]+) of the CPU time", text)
    assert found and int(found[1]) == int(found[3]) == 26 and int(found[4]) == len(ratios)
    assert float(found[5]) == tier["lanes_over_scalar_median"]
    assert re.search(r"tier 26 \(116,5\d\d,\d{3} positions\)", tier["board"])
    small = {run["board"]: run for run in
             json.loads((root / "bench/results/lanes-small-boards.json").read_text())["runs"]}
    big, little = small["diffusion 2x6 k=2"], small["diffusion 2x4 k=5"]
    found = re.search(r"2x6 k=2 in ([\d.]+) of the wall time \(([\d.]+) s against ([\d.]+) s, records "
                      r"identical\) and 2x4 k=5 in ([\d.]+)", text)
    assert found and float(found[1]) == round(big["after_over_before_wall_median_of_pairs"], 2)
    assert (float(found[2]), float(found[3])) == (round(big["wall_seconds_median"]["after"], 1),
                                                  round(big["wall_seconds_median"]["before"], 1))
    assert float(found[4]) == round(little["after_over_before_wall_median_of_pairs"], 2)
    assert all(run["after_over_before_wall_median_of_pairs"] <= 1 for run in small.values())
    assert all(run["records"].startswith("identical") for run in small.values())


def test_the_docs_figures_of_the_store_thread_are_the_measured_ones():
    """results.md's and tables.md's figures of coding a block, and of the whole solve before and
    after the store's changes, are bench/results/block-coding.json's, store-before-after.json's
    and standard-v1-identity-store.json's."""
    import json
    import pathlib
    import re
    root = pathlib.Path(ROOT)
    results = " ".join((root / "docs/results.md").read_text().split())
    tables = " ".join((root / "docs/tables.md").read_text().split())
    coding = json.loads((root / "bench/results/block-coding.json").read_text())
    size, speed = coding["bytes_per_record"], coding["ns_per_record"]
    assert coding["levels"]["palette"] == 3 and coding["blocks"] == coding["palette_blocks"] > 1000
    found = re.search(r"the palette in ([\d.]+) ns a record instead of ([\d.]+), the compression in ([\d.]+) "
                      r"instead of ([\d.]+), for ([\d.]+) bytes a record instead of ([\d.]+) \(the table (\d+)% "
                      r"larger\)", results)
    assert found and [float(found[i]) for i in range(1, 7)] == [
        speed["palette_kernel"], speed["palette_numpy"], speed["palette"], speed["palette_level_5"],
        size["palette"], size["palette_level_5"]]
    assert int(found[7]) == round(100 * (size["palette"] / size["palette_level_5"] - 1))
    found = re.search(r"the blocks compress (\d+)% smaller than the 16-bit records do, in an eighth of the time "
                      r"\(`bench/results/block-coding.json`: ([\d.]+) against ([\d.]+) bytes a record, ([\d.]+) "
                      r"against ([\d.]+) ns a record", tables)
    assert found and [float(found[i]) for i in range(2, 6)] == [
        size["palette"], size["planes"], speed["palette"], speed["planes"]]
    assert int(found[1]) == round(100 * (1 - size["palette"] / size["planes"]))
    assert round(speed["planes"] / speed["palette"]) == 8
    side = json.loads((root / "bench/results/store-before-after.json").read_text())
    found = re.search(r"\(`bench/results/store-before-after.json`\): (\d+) s against (\d+) s, median wall time "
                      r"\(([\d.]+); CPU (\d+) against (\d+) s\)", results)
    assert found and [int(found[i]) for i in (1, 2, 4, 5)] == [
        round(side["A"]["wall_seconds"]["median"]), round(side["B"]["wall_seconds"]["median"]),
        round(side["A"]["cpu_seconds"]["median"]), round(side["B"]["cpu_seconds"]["median"])]
    assert float(found[3]) == round(side["A_over_B_pairs_median"]["wall"], 2)
    identity = json.loads((root / "bench/results/standard-v1-identity-store.json").read_text())
    assert identity["identical"] and identity["first_differing_tier"] is None and identity["tiers"] == 48
    found = re.search(r"records identical, all ([\d,]+) of the v1 table \(`bench/results/standard-v1-identity-store.json`\)",
                      results)
    assert found and int(found[1].replace(",", "")) == identity["records_compared"] == 2175504513


def test_the_docs_v2_against_the_yardstick_is_the_measured_one():
    """results.md's v2 figures against the yardstick are bench/results/plain-c-v2.json's: runs
    alternating, the ratio of the medians, the same start, a table within the issue's 0.35 bytes
    a position."""
    import json
    import pathlib
    import re
    import statistics
    root = pathlib.Path(ROOT)
    text = " ".join((root / "docs/results.md").read_text().split())
    result = json.loads((root / "bench/results/plain-c-v2.json").read_text())
    before = json.loads((root / "bench/results/plain-c-v2-store.json").read_text())
    ours = [r for r in result["runs"] if r["program"] == "sowsolve"]
    theirs = [r for r in result["runs"] if r["program"] == "yardstick"]
    assert [r["program"] for r in result["runs"]] == ["sowsolve", "yardstick"] * len(ours)
    assert len(ours) >= 2 and result["same_start"]
    wall = statistics.median(r["wall_seconds"] for r in ours)
    solve = statistics.median(r["solve_wall_seconds"] for r in theirs)
    assert result["sowsolve_over_yardstick"] == round(wall / solve, 2)
    found = re.search(r"sowsolve (\d+) s \(the whole process, median of (\d+) runs\) against the yardstick's "
                      r"(\d+) s \(its \"solve:\" line, median of (\d+)\): ([\d.]+) of its time \(pairs ([\d., ]+) and "
                      r"([\d.]+); the version before, ([\d.]+)\), CPU (\d+) against (\d+) s, the table (\d+) MB "
                      r"\(([\d.]+) bytes/position\), both giving the start a win in (\d+)", text)
    assert found
    assert [int(found[i]) for i in (1, 2, 3, 4)] == [round(wall), len(ours), round(solve), len(theirs)]
    assert float(found[5]) == result["sowsolve_over_yardstick"]
    assert [float(x) for x in found[6].split(", ")] + [float(found[7])] == result["sowsolve_over_yardstick_pairs"]
    assert float(found[8]) == before["sowsolve_over_yardstick"]
    assert (int(found[9]), int(found[10])) == (round(result["sowsolve_cpu_seconds_median"]),
                                               round(result["yardstick_cpu_seconds_median"]))
    assert int(found[11]) == round(ours[0]["table_bytes"] / 1e6)
    assert float(found[12]) == round(ours[0]["table_bytes"] / ours[0]["positions_per_side"], 3) < 0.35
    assert int(found[13]) == ours[0]["start"]["remoteness"] and ours[0]["start"]["value"] == "win"
