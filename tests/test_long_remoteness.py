"""Margin tiers whose remoteness passes the 9 bits of a record (2x4 with 4 seeds per pit has
lines of more than 510 plies): the record says "long" and the tier's long table holds the plies.

Small boards have no such lines, so a tier of a real table is given them: every finite
remoteness of the tier of 5 seeds of 2x2 (2 seeds per pit) raised by 600 plies.  The solver then
solves the tiers above it from that tier; what it stores must be what the rules say (the Python
rules, MarginKind.expected, read through the table), the long tables must round-trip through the
file, and a table whose long table is forged (valid checksums, wrong content) is refused."""
import json
import sqlite3

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import solve_to
from sowsolve.cli.app import app
from sowsolve.solver.games import make_game
from sowsolve.solver.values import MARGIN, REM_LONG, Margin
from sowsolve.tables import format as fmt
from sowsolve.tables.format import CorruptTable
from sowsolve.tables.store import TableWriter, open_table

SHIFTED = 5 * 3 + 1          # the tier of 5 seeds where P captured last
RAISE = 600


def raised(data):
    """The tier's records with every finite, nonzero remoteness raised by RAISE plies."""
    full = [MARGIN.decode(int(r)) for r in data.records]
    records, long = data.records.copy(), []
    for index, value in enumerate(full):
        if value.remoteness:
            record = Margin(value.margin, value.remoteness + RAISE).to_record()
            records[index] = record & 0xFFFF
            long.append((index << 16) | (record >> 16))
    return MARGIN.tier_data(records, np.array(long, dtype=np.uint64))


@pytest.fixture(scope="module")
def long_table(tmp_path_factory):
    """2x2 K=2 solved up to the tier of 5 seeds (raised), the tiers above solved from it."""
    directory = tmp_path_factory.mktemp("long")
    plain = directory / "plain.sqlite"
    game = solve_to(plain, "zigzag", cols=2, stones=2)
    path = directory / "long.sqlite"
    with open_table(plain) as source, TableWriter(str(path), game) as writer:
        for tier in source.tiers:
            if tier > SHIFTED:
                break
            data = source.tier_data(tier)
            if tier == SHIFTED:
                data = raised(data)
            writer.save_tier(tier, data, MARGIN.summarize(data))
        game.solver.solve(game, writer, threads=2)      # resumes above the stored tiers
        writer.finish({})
    return game, path, plain


def test_lines_through_a_long_tier_are_long_and_exact(long_table):
    game, path, _ = long_table
    checked = long_seen = 0
    with open_table(path) as table:
        for tier in table.tiers:
            if tier <= SHIFTED:
                continue
            data = table.tier_data(tier)
            long_seen += data.long.size
            size = table.tier_size(tier)
            indices = sorted(set((data.long >> np.uint64(16)).astype(int).tolist())
                             | set(range(0, size, max(1, size // 300))))
            for index in indices:
                position = game.stored_positions(tier, index, index + 1)[0]
                expected = MARGIN.expected(game, position, table.record)
                assert table.probe(position) == expected, game.format_position(position)
                checked += 1
    assert long_seen > 0 and checked > long_seen


def test_the_long_table_round_trips_and_answers_queries(long_table):
    game, path, plain = long_table
    with open_table(path) as table, open_table(plain) as before:
        data = table.tier_data(SHIFTED)
        assert np.array_equal(data.long, raised(before.tier_data(SHIFTED)).long)
        index = int(data.long[-1] >> np.uint64(16))
        position = game.stored_positions(SHIFTED, index, index + 1)[0]
        old = before.probe(position)
        assert table.probe(position) == Margin(old.margin, old.remoteness + RAISE)
        text = game.format_position(position)
    answer = CliRunner().invoke(app, ["query", text, "--table", str(path), "--json"])
    assert answer.exit_code == 0, answer.output
    assert json.loads(answer.stdout)["remoteness"] == old.remoteness + RAISE
    checked = CliRunner().invoke(app, ["check", "--table", str(path), "--json"])
    report = json.loads(checked.stdout)
    # the raised tier itself disagrees with its children (nothing else does); its summary,
    # blocks and long table are whole
    assert all(f"tier {SHIFTED}" not in f or "stored margin" in f for f in report["failures"])


def forge(path, tier, entries=None, long_count=None):
    """Rewrite a tier's long table (and its summary's count) with valid checksums."""
    meta = json.loads(read(path, "meta"))
    ident = fmt.identity(meta["game"], meta["parameters"])
    with sqlite3.connect(path) as db:
        if entries is None:
            db.execute("DELETE FROM sowsolve WHERE key = ?", (fmt.long_key(tier),))
        else:
            array = np.array(entries, dtype=np.uint64)
            db.execute("REPLACE INTO sowsolve (key, value) VALUES (?, ?)",
                       (fmt.long_key(tier), fmt.encode_block(tier, 0, array, fmt.long_context(ident, tier),
                                                             fmt.LONG_MAGIC)))
        if long_count is not None:
            info = json.loads(read(path, fmt.tier_key(tier)))
            info.pop("checksum")
            info["long"] = long_count
            db.execute("REPLACE INTO sowsolve (key, value) VALUES (?, ?)",
                       (fmt.tier_key(tier), fmt.seal_json(info, fmt.summary_context(ident, tier))))
    db.close()


def read(path, key):
    with sqlite3.connect(path) as db:
        row = db.execute("SELECT value FROM sowsolve WHERE key = ?", (key,)).fetchone()
    db.close()
    return bytes(row[0])


@pytest.mark.parametrize("case", ["unsorted", "short plies", "past the longest", "outside the tier",
                                  "on a short record", "missing", "lost entry"])
def test_a_forged_long_table_is_refused(long_table, tmp_path, case):
    game, source, _ = long_table
    path = tmp_path / "forged.sqlite"
    path.write_bytes(source.read_bytes())
    with open_table(path) as table:
        long = [int(e) for e in table.tier_data(SHIFTED).long]
        records = table.tier_data(SHIFTED).records
        size = table.tier_size(SHIFTED)
    short_record = next(i for i in range(size) if (int(records[i]) >> 7) != REM_LONG)
    at = [e >> 16 for e in long]
    if case == "unsorted":
        forge(path, SHIFTED, long[::-1])
    elif case == "short plies":
        forge(path, SHIFTED, [(at[0] << 16) | (REM_LONG - 1)] + long[1:])
    elif case == "past the longest":
        forge(path, SHIFTED, long[:-1] + [(at[-1] << 16) | 0xFFFF])
    elif case == "outside the tier":
        forge(path, SHIFTED, long + [(size << 16) | 700], len(long) + 1)
    elif case == "on a short record":
        forge(path, SHIFTED, sorted(long[1:] + [(short_record << 16) | 700]))
    elif case == "missing":
        forge(path, SHIFTED, None)
    else:
        forge(path, SHIFTED, long[1:], len(long) - 1)
    position = game.stored_positions(SHIFTED, at[0], at[0] + 1)[0]
    with open_table(path) as table:
        with pytest.raises(CorruptTable):
            table.tier_data(SHIFTED)
        with pytest.raises(CorruptTable):
            table.probe(position)
    for command in (["query", game.format_position(position)], ["info"]):
        answer = CliRunner().invoke(app, [*command, "--table", str(path)])
        assert answer.exit_code == 1 and "corrupt" in answer.stderr, (command, answer.output)
        assert len(answer.stderr.strip().splitlines()) == 1 and "Traceback" not in answer.output


def test_info_reads_the_long_tables(long_table):
    """info counts, per tier, the records whose remoteness is in the long table, and their
    longest line, as probing every position of the table gives them."""
    game, path, _ = long_table
    answer = CliRunner().invoke(app, ["info", "--table", str(path), "--json"])
    assert answer.exit_code == 0, answer.output
    said = json.loads(answer.stdout)
    counted, longest = {}, 0
    with open_table(path) as table:
        for tier in table.tiers:
            size = table.tier_size(tier)
            for position in game.stored_positions(tier, 0, size):
                remoteness = table.probe(position).remoteness
                if remoteness is not None and remoteness >= REM_LONG:
                    counted[tier] = counted.get(tier, 0) + 1
                    longest = max(longest, remoteness)
    assert {row["tier"]: row["long"] for row in said["tiers"] if row["long"]} == counted
    assert said["long_remoteness"] == {"records": sum(counted.values()), "longest": longest}
    text = CliRunner().invoke(app, ["info", "--table", str(path)]).stdout
    assert f"{sum(counted.values()):,} records, the longest {longest} plies" in text
