"""Tables you can trust: crafted tables never crash sowsolve or reach a kernel unchecked,
checksummed metadata and summaries bound to the game, bombs and hogs, durability (disk full,
synchronous writes, no leaks, no foreign schema, no WAL), one writer, and the Python API."""
import gc
import json
import os
import random
import shutil
import sqlite3
import struct
import subprocess
import sys
import textwrap
import threading
import zlib

import numpy as np
import pytest
import zstandard
from typer.testing import CliRunner

from conftest import solve_to
from sowsolve.cli.app import app
from sowsolve.solver.errors import BadPosition
from sowsolve.solver.games import make_game
from sowsolve.solver.kernels import MARGIN_LAYOUT
from sowsolve.solver.values import MARGIN, WIN_LOSS
from sowsolve.tables import format as fmt
from sowsolve.tables.format import (CorruptTable, ForeignTable, OutdatedTable, TableBusy,
                                    TableClosed, TableError, TableMismatch)
from sowsolve.tables.store import TableWriter, open_table

#: the whole module is left out of `pytest -m "not slow"` (processes, clusters, long solves)
pytestmark = pytest.mark.slow

runner = CliRunner()


def cli(*args):
    return runner.invoke(app, [str(a) for a in args])


def sowsolve(*args, **kwargs):
    """The command in a process of its own (real stderr, real signals)."""
    return subprocess.run([sys.executable, "-c", "from sowsolve.cli.app import main; main()",
                           *map(str, args)], capture_output=True, text=True, **kwargs)


def one_sentence(result, allow_check_report=False) -> None:
    """Exit 0/1/2, no traceback, no exception escaping; a failure says one sentence."""
    out = result.stdout + result.stderr
    assert "Traceback" not in out, out
    assert result.exit_code in (0, 1, 2), (result.exit_code, out, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "a bug in sowsolve" not in result.stderr, result.stderr    # the CLI's catch-all
    if result.exit_code:
        errors = [line for line in result.stderr.splitlines() if line.startswith("sowsolve:")]
        assert len(errors) <= 1 and (errors or allow_check_report), result.stderr
        assert len(result.stderr.strip().splitlines()) <= 2, result.stderr   # solve's estimate


# --- crafting tables (checksums recomputed with the format's own functions) -------------------

def read_value(path, key):
    with sqlite3.connect(path) as db:
        row = db.execute("SELECT value FROM sowsolve WHERE key = ?", (key,)).fetchone()
    return None if row is None else bytes(row[0])


def write_value(path, key, value):
    with sqlite3.connect(path) as db:
        db.execute("REPLACE INTO sowsolve (key, value) VALUES (?, ?)", (key, value))
    db.close()


def delete_key(path, key):
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM sowsolve WHERE key = ?", (key,))
    db.close()


def meta_of(path) -> dict:
    meta = json.loads(read_value(path, "meta"))
    meta.pop("checksum", None)
    return meta


def put_meta(path, meta):
    write_value(path, "meta", fmt.seal_json(meta, b"meta"))


def ident(meta) -> bytes:
    return fmt.identity(meta["game"], meta["parameters"])


def summary_of(path, tier) -> dict:
    info = json.loads(read_value(path, f"tier/{tier}"))
    info.pop("checksum", None)
    return info


def put_summary(path, meta, tier, info):
    write_value(path, f"tier/{tier}", fmt.seal_json(info, fmt.summary_context(ident(meta), tier)))


def block_of(path, meta, tier, block, keys=False) -> np.ndarray:
    count = min(meta["block_records"], meta["tier_sizes"][str(tier)] - block * meta["block_records"])
    context = ident(meta)
    if keys:
        context = fmt.keys_context(context, tier, summary_of(path, tier)["first_keys"])
    data = read_value(path, f"{'keys' if keys else 'block'}/{tier}/{block}")
    return fmt.decode_block(data, tier, block, count, keys, context,
                            palette=meta["format_version"] >= 3)


def put_block(path, meta, tier, block, array, first_keys=None):
    context = ident(meta)
    if first_keys is not None:
        context = fmt.keys_context(context, tier, first_keys)
    key = f"{'keys' if first_keys is not None else 'block'}/{tier}/{block}"
    write_value(path, key, fmt.encode_block(tier, block, array, context,
                                            palette=meta["format_version"] >= 3))


def pack(heights, side: int) -> int:
    """Overflow's packing, from its description: each cell's height in unary (h one-bits, then
    a zero), the side to move in bit 63."""
    key, pos = 0, 0
    for h in heights:
        key |= ((1 << h) - 1) << pos
        pos += h + 1
    return key | (side << 63)


def file_state(path):
    return open(path, "rb").read(), os.stat(path).st_mtime_ns


# --- small tables of all three games ------------------------------------------------------------

GAMES = {
    "diffusion": ("diffusion", {"cols": 2, "stones": 2}, "22/22 A", ["--cols", 2, "--stones", 2]),
    "overflow": ("overflow", {"size": "3x3"}, "111/111/111 L", ["--size", "3x3"]),
    "zigzag": ("zigzag", {"cols": 2, "stones": 1}, "11/11 p - -", ["--cols", 2, "--stones", 1]),
}


@pytest.fixture(scope="module")
def small_tables(tmp_path_factory):
    directory = tmp_path_factory.mktemp("small")
    paths = {}
    for name, (game, params, _, _) in GAMES.items():
        paths[name] = directory / f"{name}.sqlite"
        solve_to(paths[name], game, **params)
    return paths


def copy_of(source, tmp_path, name="t.sqlite"):
    path = tmp_path / name
    shutil.copy(source, path)
    return path


def read_commands(name, path, out, samples=1000):
    position = GAMES[name][2]
    return [("query", ["query", position, "--table", path]),
            ("info", ["info", "--table", path]),
            ("export", ["export", "--table", path, "--format", "csv", "--out", out]),
            ("check", ["check", "--table", path, "--samples", samples]),
            ("check --full", ["check", "--table", path, "--full"])]


def solve_command(name, path):
    game, _, _, options = GAMES[name]
    return ["solve", game, *options, "--table", path, "--threads", 1]


# --- A: crafted tables -----------------------------------------------------------------------

def shrink_lower_tier(path):
    """An unfinished table whose tier 2 is one position short, consistently re-encoded (block,
    summary, metadata): the kernel would read past its array on resume."""
    meta = meta_of(path)
    records = block_of(path, meta, 2, 0)[:-1]
    meta["tier_sizes"]["2"] -= 1
    meta["finished"] = False
    meta["solved_tiers"] = meta["solved_tiers"][:4]
    put_block(path, meta, 2, 0, records)
    put_summary(path, meta, 2, dict(summary_of(path, 2), **WIN_LOSS.summarize(records)))
    put_meta(path, meta)


def test_resume_with_a_shrunk_lower_tier_is_refused(tmp_path, small_tables):
    path = copy_of(small_tables["diffusion"], tmp_path)
    shrink_lower_tier(path)
    result = sowsolve(*solve_command("diffusion", path), timeout=120)
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "tier 2" in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("sowsolve:")


def add_zigzag_tier(path):
    """A finished Zig Zag table with one more tier than the game has, consistently encoded."""
    meta = meta_of(path)
    extra = max(meta["tiers"]) + 1
    records = np.full(6, MARGIN_LAYOUT["bias"], dtype=np.uint16)     # margin 0, remoteness 0
    meta["tiers"].append(extra)
    meta["solved_tiers"].append(extra)
    meta["tier_sizes"][str(extra)] = 6
    put_block(path, meta, extra, 0, records)
    put_summary(path, meta, extra, dict(MARGIN.summarize(records), stored_bytes=10))
    put_meta(path, meta)


def test_an_extra_zigzag_tier_is_refused(tmp_path, small_tables):
    path = copy_of(small_tables["zigzag"], tmp_path)
    add_zigzag_tier(path)
    out = tmp_path / "out.csv"
    for _, args in read_commands("zigzag", path, out):
        result = cli(*args)
        one_sentence(result)
        assert result.exit_code == 1 and "tier list" in result.stderr, result.output
    assert not out.exists()


def test_keys_that_are_not_packings_of_their_tier_are_refused(tmp_path, small_tables):
    """A key block (checksums and block index consistent) holding keys of another disc count
    or with bits past the packing never reaches the kernel's unpacking."""
    for bad_key in (lambda tier: pack([tier + 1] + [0] * 8, 0),          # a disc too many
                    lambda tier: pack([tier - 1] + [0] * 8, 0) | (1 << 40)):  # past the end
        path = copy_of(small_tables["overflow"], tmp_path)
        meta = meta_of(path)
        tier = meta["tiers"][0]
        keys = block_of(path, meta, tier, 0, keys=True)
        keys[-1] = bad_key(tier)
        keys.sort()
        first = [int(keys[0])]
        put_summary(path, meta, tier, dict(summary_of(path, tier), first_keys=first))
        put_block(path, meta, tier, 0, keys, first_keys=first)
        out = tmp_path / "out.csv"
        for name, args in read_commands("overflow", path, out):
            result = cli(*args)
            one_sentence(result)
            if name not in ("query", "info"):     # these read only the tiers they need
                assert result.exit_code == 1 and "packings" in result.stderr, (name, result.output)
        assert not out.exists()


# --- the fuzz: every command on every kind of crafted table -----------------------------------

BAD_VALUES = [None, "x", -1, 1 << 70, [], {}, True, 1.5, [1, "a"], {"1": "2"}]


#: alterations every command must refuse (they change what the table is), and those that
#: `export` and `check --full` (which read every block) must refuse
REFUSED_BY_ALL = ("tiers ", "a tier ", "largest tier", "tier size huge", "a solved tier",
                  "unfinished, a hole", "finished, a tier", "indexing", "block_records",
                  "another board", "game ", "format version", "a trigger", "a view", "an index",
                  "another table", "WAL", "meta tiers", "meta tier_sizes", "meta game",
                  "meta parameters", "meta format", "meta indexing", "meta finished ",
                  "meta solved_tiers", "meta block_records")
REFUSED_BY_FULL_READS = ("random words", "descending", "unsolved records", "one record short",
                         "a block deleted", "a block of garbage", "a huge block", "first key")
#: alterations that leave well-formed data with wrong values: `check --full` finds them
REFUSED_BY_CHECK = ("other packings", "plausible records")


def mutations(name, path):
    """(label, function altering a copy of the table at `path`), checksums recomputed."""
    meta = meta_of(path)
    tiers = meta["solved_tiers"]
    rng = random.Random(f"mutations-{name}")
    keyed = meta["indexing"] == "keys"
    result = []

    def meta_change(label, change):
        def apply(p):
            m = meta_of(p)
            change(m)
            put_meta(p, m)
        result.append((label, apply))

    for key in sorted(meta):
        meta_change(f"meta {key} removed", lambda m, key=key: m.pop(key))
        for value in rng.sample(BAD_VALUES, 2):
            meta_change(f"meta {key} = {value!r}", lambda m, key=key, value=value: m.update({key: value}))
    big = str(max(tiers))
    meta_change("tiers reversed", lambda m: m["tiers"].reverse())
    meta_change("a tier dropped", lambda m: m["tiers"].pop(0))
    meta_change("a tier added", lambda m: (m["tiers"].append(max(m["tiers"]) + 1),
                                           m["tier_sizes"].update({str(max(m["tiers"])): 7})))
    meta_change("largest tier grown", lambda m: m["tier_sizes"].update({big: m["tier_sizes"][big] + 1}))
    meta_change("largest tier shrunk", lambda m: m["tier_sizes"].update({big: m["tier_sizes"][big] - 1}))
    meta_change("tier size huge", lambda m: m["tier_sizes"].update({big: 1 << 40}))
    meta_change("a solved tier unknown", lambda m: m["solved_tiers"].append(999))
    meta_change("unfinished, half solved", lambda m: m.update(
        finished=False, solved_tiers=m["solved_tiers"][:len(m["solved_tiers"]) // 2]))
    meta_change(("keyed tables allow " if keyed else "") + "unfinished, a hole",
                lambda m: m.update(
        finished=False, solved_tiers=m["solved_tiers"][:1] + m["solved_tiers"][2:]))
    meta_change("finished, a tier unsolved", lambda m: m["solved_tiers"].pop())
    meta_change("indexing swapped", lambda m: m.update(indexing="dense" if keyed else "keys"))
    meta_change("an endgame limit added", lambda m: m.update(max_stones=2))
    meta_change("an endgame limit of true", lambda m: m.update(max_stones=True))
    meta_change("an endgame limit beyond the board", lambda m: m.update(max_stones=999))
    meta_change("block_records 1", lambda m: m.update(block_records=1))
    meta_change("another board", lambda m: m["parameters"].update(
        {k: ("4x4" if k == "size" else v + 1) for k, v in m["parameters"].items()}))
    for game in ("diffusion", "diffusion-v2", "overflow", "zigzag", "othello"):
        if game != meta["game"]:
            meta_change(f"game {game}", lambda m, game=game: m.update(game=game))
    meta_change("format version 1", lambda m: m.update(format_version=1))
    meta_change("format version 4", lambda m: m.update(format_version=4))
    if not keyed:       # dense version-3 blocks hold 2^20 records; version 2's, 2^16
        meta_change("format version 2 of version 3 blocks", lambda m: m.update(format_version=2))
    meta_change("unknown field, a list", lambda m: m.update(extra=[1, 2]))

    for tier in (tiers[0], tiers[len(tiers) // 2]):
        info = summary_of(path, tier)

        def summary_change(label, change, tier=tier):
            def apply(p):
                m, s = meta_of(p), summary_of(p, tier)
                change(s)
                put_summary(p, m, tier, s)
            result.append((label, apply))

        for key in sorted(info):
            summary_change(f"tier {tier} {key} removed", lambda s, key=key: s.pop(key))
            for value in rng.sample(BAD_VALUES, 1):
                summary_change(f"tier {tier} {key} = {value!r}",
                               lambda s, key=key, value=value: s.update({key: value}))
        summary_change(f"tier {tier} longest_win_index past the end",
                       lambda s: s.update(longest_win_index=s["positions"]))
        if keyed:
            summary_change(f"tier {tier} first key flipped",
                           lambda s: s["first_keys"].__setitem__(0, s["first_keys"][0] ^ 1 << 3))
            summary_change(f"tier {tier} first keys doubled",
                           lambda s: s.update(first_keys=s["first_keys"] * 2))
        # blocks re-encoded with valid checksums but other contents
        count = meta["tier_sizes"][str(tier)]

        def block_change(label, make, tier=tier, count=count):
            def apply(p):
                m = meta_of(p)
                put_block(p, m, tier, 0, make(np.random.default_rng(tier), count))
            result.append((label, apply))

        block_change(f"tier {tier} random records",
                     lambda g, n: g.integers(0, 1 << 16, n, dtype=np.uint16))
        block_change(f"tier {tier} plausible records",
                     lambda g, n: (g.integers(1, 4, n) | (g.integers(0, 40, n) << 2)).astype(np.uint16)
                     if not name == "zigzag" else (MARGIN_LAYOUT["bias"] + g.integers(-1, 2, n)
                                                   | g.integers(0, 512, n) << MARGIN_LAYOUT["rem_shift"])
                     .astype(np.uint16))
        block_change(f"tier {tier} unsolved records", lambda g, n: np.zeros(n, dtype=np.uint16))
        block_change(f"tier {tier} one record short",
                     lambda g, n: np.ones(max(n - 1, 1), dtype=np.uint16) * 3)
        if keyed:
            def keys_change(label, make, tier=tier, count=count):
                def apply(p):
                    m = meta_of(p)
                    keys = np.array(make(random.Random(tier), tier, count), dtype=np.uint64)
                    first = [int(keys[0])]
                    put_summary(p, m, tier, dict(summary_of(p, tier), first_keys=first))
                    put_block(p, m, tier, 0, keys, first_keys=first)
                result.append((label, apply))

            def random_packings(r, t, n):
                keys = set()
                while len(keys) < n:
                    cuts = sorted(r.randrange(t + 1) for _ in range(8))
                    heights = [b - a for a, b in zip([0] + cuts, cuts + [t])]
                    keys.add(pack(heights, r.randrange(2)))
                return sorted(keys)

            keys_change(f"tier {tier} keys: other packings of the tier", random_packings)
            keys_change(f"tier {tier} keys: random words",
                        lambda r, t, n: sorted({r.randrange(1, 1 << 64) for _ in range(n)}))
            keys_change(f"tier {tier} keys: descending",
                        lambda r, t, n: sorted(random_packings(r, t, n), reverse=True))

    def raw_change(label, sql, args=()):
        def apply(p):
            with sqlite3.connect(p) as db:
                db.execute(sql, args)
            db.close()
        result.append((label, apply))

    t = tiers[len(tiers) // 2]
    raw_change("a block deleted", "DELETE FROM sowsolve WHERE key = ?", (f"block/{t}/0",))
    raw_change("a summary deleted", "DELETE FROM sowsolve WHERE key = ?", (f"tier/{t}",))
    raw_change("a summary as text", "UPDATE sowsolve SET value = '{}' WHERE key = ?", (f"tier/{t}",))
    raw_change("a block of garbage", "UPDATE sowsolve SET value = randomblob(300) WHERE key = ?",
               (f"block/{t}/0",))
    raw_change("a huge block", "UPDATE sowsolve SET value = zeroblob(5000000) WHERE key = ?",
               (f"block/{t}/0",))
    raw_change("a trigger", "CREATE TRIGGER t AFTER UPDATE ON sowsolve BEGIN SELECT 1; END")
    raw_change("a view", "CREATE VIEW v AS SELECT * FROM sowsolve")
    raw_change("an index", "CREATE INDEX i ON sowsolve (value)")
    raw_change("another table", "CREATE TABLE other (x)")
    raw_change("WAL mode", "PRAGMA journal_mode = WAL")
    return result


@pytest.mark.parametrize("name", list(GAMES))
def test_fuzz_crafted_tables_end_every_command_cleanly(tmp_path, small_tables, monkeypatch, name):
    """Metadata, summaries, blocks and the SQLite schema altered (checksums recomputed): every
    command ends with exit 0, 1 or 2, and a failure is one sentence."""
    import typer.testing
    click_command = typer.main.get_command(app)      # built once, not per invocation (speed)
    monkeypatch.setattr(typer.testing, "_get_command", lambda _: click_command, raising=False)
    cases = mutations(name, small_tables[name])
    assert len(cases) > 60
    refused = 0
    for label, mutate in cases:
        path = copy_of(small_tables[name], tmp_path)
        mutate(path)
        out = tmp_path / "out.csv"
        codes = []
        for command, args in read_commands(name, path, out, 20) + [
                ("solve", solve_command(name, path))]:
            result = cli(*args)
            try:
                one_sentence(result, allow_check_report=command.startswith("check"))
            except AssertionError as exc:
                raise AssertionError(f"{label}: {command}: {exc}") from None
            codes.append(result.exit_code)
        refused += any(codes)
        if label.startswith(REFUSED_BY_ALL):
            assert all(codes), (label, codes)
        if any(words in label for words in REFUSED_BY_FULL_READS):
            assert codes[2] and codes[4], (label, codes)     # export, check --full
        if any(words in label for words in REFUSED_BY_CHECK):
            assert codes[4], (label, codes)
        for leftover in (out, path):
            if leftover.exists():
                leftover.unlink()
    assert refused >= len(cases) * 3 // 4     # the rest are optional fields, or valid values


# --- B: checksummed metadata bound to the game -------------------------------------------------

def test_a_relabelled_table_is_reported_as_corrupt(tmp_path, table_2x4_k2):
    """Diffusion v1 relabelled v2 (same board, same tier sizes), metadata checksum recomputed:
    the identity in every block's and summary's checksum no longer matches."""
    path = copy_of(table_2x4_k2, tmp_path)
    meta = meta_of(path)
    meta["game"] = "diffusion-v2"
    put_meta(path, meta)
    out = tmp_path / "out.csv"
    for command, args in read_commands("diffusion", path, out):
        args[1] = "2222/2222 A" if command == "query" else args[1]
        result = cli(*args)
        one_sentence(result)
        assert result.exit_code == 1 and "corrupt" in result.stderr, (command, result.output)
    with open_table(path) as table, pytest.raises(CorruptTable):
        table.probe("2222/2222 A")


@pytest.mark.parametrize("reseal", [False, True])
def test_a_flipped_first_key_is_reported_as_corrupt(tmp_path, small_tables, reseal):
    path = copy_of(small_tables["overflow"], tmp_path)
    meta = meta_of(path)
    game = make_game("overflow", size="3x3")
    tier, _ = game.key(game.initial())
    raw = json.loads(read_value(path, f"tier/{tier}"))
    raw["first_keys"][0] ^= 1 << 30            # now above the start's key
    if reseal:
        raw.pop("checksum")
        put_summary(path, meta, tier, raw)
    else:
        write_value(path, f"tier/{tier}", json.dumps(raw).encode())
    result = cli("query", "111/111/111 L", "--table", path, "--json")
    one_sentence(result)
    assert result.exit_code == 1 and "corrupt" in result.stderr, result.output
    with open_table(path) as table, pytest.raises(CorruptTable):
        table.probe("111/111/111 L")


@pytest.mark.parametrize("key", ["meta", "tier/5"])
def test_metadata_and_summaries_carry_checksums(tmp_path, table_2x4_k2, key):
    path = copy_of(table_2x4_k2, tmp_path)
    text = read_value(path, key).decode()
    altered = text.replace('"wins":', '"wins":1') if key != "meta" else text.replace(
        '"finished":true', '"finished":false')
    assert altered != text
    write_value(path, key, altered.encode())
    result = cli("info", "--table", path)
    one_sentence(result)
    assert result.exit_code == 1 and "checksum" in result.stderr, result.output


def test_a_version_1_table_is_refused_with_how_to_rebuild_it(tmp_path, table_2x4_k2):
    path = copy_of(table_2x4_k2, tmp_path)
    meta = meta_of(path)
    meta["format_version"] = 1
    write_value(path, "meta", json.dumps(meta).encode())     # version 1 had no checksum
    result = cli("query", "2222/2222 A", "--table", path)
    one_sentence(result)
    assert result.exit_code == 1
    assert "predates checksummed metadata" in result.stderr
    assert "sowsolve solve diffusion --cols 4 --stones 2" in result.stderr and "--force" in result.stderr
    with pytest.raises(OutdatedTable):
        open_table(path)
    rebuilt = cli("solve", "diffusion", "--cols", 4, "--stones", 2, "--table", path, "--force")
    assert rebuilt.exit_code == 0, rebuilt.output
    with open_table(path) as table, open_table(table_2x4_k2) as reference:
        assert table.meta["format_version"] == fmt.FORMAT_VERSION
        assert table.probe("2222/2222 A") == reference.probe("2222/2222 A")


# --- C: bombs and hogs -------------------------------------------------------------------------

def test_a_huge_position_gets_a_short_message(table_2x4_k2):
    huge = "1" * 100_000_000
    for game in (make_game("diffusion", cols=4, stones=2), make_game("overflow", size="3x3"),
                 make_game("zigzag", cols=2, stones=1)):
        for text in (huge, huge[:50_000_000] + " A", "1111/1111 " + huge):
            with pytest.raises(BadPosition) as caught:
                game.parse_position(text)
            assert len(str(caught.value)) < 300
    with open_table(table_2x4_k2) as table:
        with pytest.raises(BadPosition) as caught:
            table.probe(huge)
        assert len(str(caught.value)) < 300
        assert table.get(huge, "default") == "default"
    result = cli("query", huge, "--table", table_2x4_k2)
    assert result.exit_code == 2 and len(result.stderr) < 300, result.stderr[:300]


def rle_frame(declared: int, content: int) -> bytes:
    """A zstd frame of `content` zero bytes in RLE blocks of 128 KiB (4 bytes each) whose header
    declares `declared` bytes (zstd format, RFC 8878)."""
    block = 128 * 1024
    n = content // block
    header = b"\x28\xb5\x2f\xfd" + bytes([(3 << 6) | 0]) + bytes([7 << 3]) + struct.pack("<Q", declared)
    blocks = bytearray()
    for i in range(n):
        blocks += struct.pack("<I", int(i == n - 1) | (1 << 1) | (block << 3))[:3] + b"\x00"
    return header + bytes(blocks)


MEMORY_PROBE = textwrap.dedent("""
    import json, resource, sys
    from sowsolve.tables.store import open_table
    from sowsolve.tables.format import CorruptTable
    try:
        with open_table(sys.argv[1]) as table:
            table.record(table.stored_positions(int(sys.argv[2]), 0, 1)[0])
        error = None
    except CorruptTable as exc:
        error = str(exc)
    try:        # the peak of this process alone: ru_maxrss can include the parent's before exec
        status = open("/proc/self/status").read()
        peak = int(status.split("VmHWM:")[1].split()[0]) / 1024
    except (OSError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"error": error, "max_rss_mb": peak}))
""")


def palette_block(meta, tier, count, values, codes) -> bytes:
    """A palette block as a hostile writer would make it: any palette and codes, both
    checksums valid (the records' checksum over what the codes would name, where they can)."""
    seed = zlib.crc32(ident(meta))
    values = np.asarray(values, dtype="<u2")
    codes = np.asarray(codes, dtype=np.uint8)
    named = values[np.minimum(codes.astype(np.int64), values.size - 1)] if values.size else codes.astype("<u2")
    payload = (struct.pack("<H", values.size) + values.tobytes()
               + zstandard.ZstdCompressor().compress(codes.tobytes()))
    return fmt.BLOCK_HEADER.pack(fmt.PALETTE_MAGIC, tier, 0, count, zlib.crc32(named.tobytes(), seed),
                                 zlib.crc32(payload, seed)) + payload


def test_hostile_palette_blocks_are_corrupt(tmp_path, table_2x4_k2):
    """Version 3 stores a block of at most 256 distinct records as a palette and a byte per
    record: a palette of 0 or 257 values, one out of order, or a code beyond the palette is
    refused with one sentence (valid checksums do not make it a table), and so is a palette
    block in a version-2 table, which never held one."""
    meta = meta_of(table_2x4_k2)
    tier = max(meta["tiers"], key=lambda t: meta["tier_sizes"][str(t)])
    count = min(meta["block_records"], meta["tier_sizes"][str(tier)])
    assert count >= fmt.PALETTE_MIN_RECORDS
    stored = read_value(table_2x4_k2, f"block/{tier}/0")
    assert stored[:4] == fmt.PALETTE_MAGIC          # the solve wrote a palette block
    good = block_of(table_2x4_k2, meta, tier, 0)
    assert good.size == count and np.count_nonzero(good) == count
    zeros = np.zeros(count, dtype=np.uint8)
    cases = {"a palette of 0 values": palette_block(meta, tier, count, [], zeros),
             "a palette of 257 values": palette_block(meta, tier, count, np.arange(1, 258), zeros),
             "a palette out of order": palette_block(meta, tier, count, [7, 5], zeros),
             "a code beyond the palette": palette_block(meta, tier, count, [5, 7],
                                                        np.full(count, 2, dtype=np.uint8))}
    for label, value in cases.items():
        with pytest.raises(CorruptTable):
            fmt.decode_block(value, tier, 0, count, context=ident(meta), palette=True)
        path = copy_of(table_2x4_k2, tmp_path, label.replace(" ", "-") + ".sqlite")
        write_value(path, f"block/{tier}/0", value)
        result = cli("check", "--table", path, "--full")
        one_sentence(result, allow_check_report=True)
        assert result.exit_code == 1 and "corrupt" in result.output, (label, result.output)
    with pytest.raises(CorruptTable, match="header"):
        fmt.decode_block(stored, tier, 0, count, context=ident(meta), palette=False)


def test_bombs_are_corrupt_in_bounded_memory(tmp_path_factory):
    """A frame that holds 4 GiB (declaring 4 GiB, or the block's size), and a stored value of
    256 MB: each is reported as corrupt and the reader's memory stays small."""
    directory = tmp_path_factory.mktemp("bomb")
    source = directory / "d.sqlite"
    solve_to(source, "diffusion", cols=4, stones=3)
    meta = meta_of(source)
    tier = max(meta["tiers"], key=lambda t: meta["tier_sizes"][str(t)])
    count = min(meta["block_records"], meta["tier_sizes"][str(tier)])
    expected = 2 * count
    payloads = {"declares 4 GiB": rle_frame(4 << 30, 4 << 30),
                "declares the block's size": rle_frame(expected, 4 << 30)}
    cases = {}
    for label, payload in payloads.items():
        seed = zlib.crc32(ident(meta))
        header = fmt.BLOCK_HEADER.pack(fmt.BLOCK_MAGIC, tier, 0, count, 0,
                                       zlib.crc32(payload, seed))
        cases[label] = header + payload
    for label, value in cases.items():
        path = directory / f"{len(label)}.sqlite"
        shutil.copy(source, path)
        write_value(path, f"block/{tier}/0", value)
        cases[label] = path
    huge = directory / "huge.sqlite"
    shutil.copy(source, huge)
    with sqlite3.connect(huge) as db:
        db.execute("UPDATE sowsolve SET value = zeroblob(256000000) WHERE key = ?", (f"block/{tier}/0",))
    db.close()
    cases["256 MB value"] = huge
    for label, path in cases.items():
        run = subprocess.run([sys.executable, "-c", MEMORY_PROBE, str(path), str(tier)],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, (label, run.stderr[-2000:])
        report = json.loads(run.stdout)
        assert report["error"] and "corrupt" in report["error"], (label, report)
        assert report["max_rss_mb"] < 300, (label, report)


# --- D: durability and faults -----------------------------------------------------------------

def test_writers_commit_with_synchronous_full_and_a_rollback_journal(tmp_path):
    writer = TableWriter(str(tmp_path / "t.sqlite"), make_game("diffusion", cols=2, stones=1))
    try:
        assert writer._db.conn.select_one("PRAGMA synchronous")[0] == 2          # FULL
        assert writer._db.conn.select_one("PRAGMA journal_mode")[0] == "delete"
    finally:
        writer.close()


DISK_FULL_SOLVE = ["solve", "diffusion", "--cols", 4, "--stones", 3, "--threads", 1]


def _mount_tmpfs(directory, size) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    directory.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)],
                          capture_output=True)
    return done.returncode == 0


def test_disk_full_during_a_solve_is_one_sentence_and_resumes(tmp_path, tmp_path_factory):
    reference = tmp_path_factory.mktemp("ref") / "ref.sqlite"
    solve_to(reference, "diffusion", cols=4, stones=3)
    full = tmp_path / "full"
    mounted = _mount_tmpfs(full, "160k")
    try:
        if mounted:
            limit = {}
        elif hasattr(os, "setrlimit"):
            import resource
            full.mkdir()
            limit = {"preexec_fn": lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (150_000, 150_000))}
        else:
            pytest.skip("neither a tmpfs mount (needs root) nor RLIMIT_FSIZE is available")
        path = full / "t.sqlite"
        # solve may refuse up front a board whose estimate does not fit the free space
        allow = ["--allow-large"] if "--allow-large" in cli("solve", "--help").stdout else []
        try:
            result = sowsolve(*DISK_FULL_SOLVE, *allow, "--table", path, timeout=120, **limit)
        except subprocess.TimeoutExpired:
            pytest.fail("the solve hung when the disk filled up")
        assert result.returncode == 1, (result.returncode, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert "Traceback" not in result.stderr and lines[-1].startswith("sowsolve:"), result.stderr
        if mounted:
            assert lines[-1].startswith("sowsolve: disk full while writing tier"), lines
            assert "resumes when there is space" in lines[-1], lines
        assert "the table keeps tiers up to" in lines[-1], lines
        with open_table(path, allow_unfinished=True) as partial:
            kept = partial.solved_tiers
            assert not partial.finished and kept
            assert f"tiers up to tier {max(kept)} " in lines[-1]
        if mounted:
            subprocess.run(["mount", "-o", "remount,size=8m", str(full)], check=True)
            result = sowsolve(*DISK_FULL_SOLVE, "--table", path, timeout=120)
        else:
            shutil.move(str(path), tmp_path / "moved.sqlite")
            path = tmp_path / "moved.sqlite"
            result = sowsolve(*DISK_FULL_SOLVE, "--table", path, timeout=120)
        assert result.returncode == 0, result.stderr
        with open_table(path) as resumed, open_table(reference) as whole:
            for tier in whole.tiers:
                assert np.array_equal(resumed.tier_records(tier), whole.tier_records(tier)), tier
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(full)], capture_output=True)


def test_failed_opens_release_their_threads_and_files(tmp_path, table_2x4_k2):
    bad = []
    text = tmp_path / "text.sqlite"
    text.write_text("not a table\n" * 20)
    bad.append(text)
    bad.append(copy_of(table_2x4_k2, tmp_path, "meta.sqlite"))
    write_value(bad[-1], "meta", b"{not json")
    bad.append(copy_of(table_2x4_k2, tmp_path, "trigger.sqlite"))
    with sqlite3.connect(bad[-1]) as db:
        db.execute("CREATE TRIGGER t AFTER UPDATE ON sowsolve BEGIN SELECT 1; END")
    db.close()
    bad.append(copy_of(table_2x4_k2, tmp_path, "wal.sqlite"))
    with sqlite3.connect(bad[-1]) as db:
        db.execute("PRAGMA journal_mode = WAL")
    db.close()
    other = copy_of(table_2x4_k2, tmp_path, "other.sqlite")
    notable = tmp_path / "empty-db.sqlite"
    sqlite3.connect(notable).execute("CREATE TABLE x (y)").connection.close()
    bad.append(notable)
    game = make_game("diffusion", cols=4, stones=1)
    gc.collect()                    # what earlier tests left behind
    threads, fds = threading.active_count(), len(os.listdir("/proc/self/fd"))
    for i in range(2000):
        if i % 10 == 9:
            with pytest.raises(TableMismatch):
                TableWriter(str(other), game)
        else:
            with pytest.raises(TableError):
                open_table(bad[i % len(bad)])
    assert threading.active_count() == threads
    assert len(os.listdir("/proc/self/fd")) == fds


@pytest.mark.parametrize("schema", [
    "CREATE TRIGGER t AFTER INSERT ON sowsolve BEGIN DELETE FROM sowsolve; END",
    "CREATE VIEW v AS SELECT key FROM sowsolve",
    "CREATE INDEX i ON sowsolve (value)",
    "CREATE TABLE other (x)",
])
def test_files_with_more_than_the_table_are_refused_unchanged(tmp_path, table_2x4_k2, schema):
    path = copy_of(table_2x4_k2, tmp_path)
    meta = meta_of(path)
    meta.update(finished=False, solved_tiers=meta["solved_tiers"][:3])   # so solve would write
    put_meta(path, meta)
    with sqlite3.connect(path) as db:
        db.execute(schema)
    db.close()
    before = file_state(path)
    out = tmp_path / "out.csv"
    for command, args in read_commands("diffusion", path, out) + [
            ("solve", ["solve", "diffusion", "--cols", 4, "--stones", 2, "--table", path])]:
        args[1] = "2222/2222 A" if command == "query" else args[1]
        result = cli(*args)
        one_sentence(result)
        assert result.exit_code == 2 and "not a sowsolve table" in result.stderr, result.output
        assert file_state(path) == before, command
    assert sorted(os.listdir(tmp_path)) == ["t.sqlite"]
    # --force replaces such a file without running any of its SQL: the old file, kept here by a
    # second link, is untouched, and the new table is whole
    os.link(path, tmp_path / "old.sqlite")
    result = cli("solve", "diffusion", "--cols", 4, "--stones", 2, "--table", path, "--force")
    assert result.exit_code == 0, result.output
    assert file_state(tmp_path / "old.sqlite") == before
    with open_table(path) as table, open_table(table_2x4_k2) as reference:
        assert table.probe("2222/2222 A") == reference.probe("2222/2222 A")
    assert sorted(os.listdir(tmp_path)) == ["old.sqlite", "t.sqlite"]


def test_read_commands_never_change_a_file_and_refuse_wal(tmp_path, table_2x4_k2):
    wal = copy_of(table_2x4_k2, tmp_path, "wal.sqlite")
    with sqlite3.connect(wal) as db:
        db.execute("PRAGMA journal_mode = WAL")
    db.close()
    plain = copy_of(table_2x4_k2, tmp_path, "plain.sqlite")
    out = tmp_path / "out" / "out.csv"
    out.parent.mkdir()
    for path in (plain, wal):
        before = file_state(path)
        for command, args in read_commands("diffusion", path, out, samples=50):
            args[1] = "2222/2222 A" if command == "query" else args[1]
            args += ["--max-stones", 5] if command == "export" else []
            result = cli(*args)
            one_sentence(result)
            if path == wal:
                assert result.exit_code == 2 and "WAL" in result.stderr, result.output
            else:
                assert result.exit_code == 0, result.output
            assert file_state(path) == before, (path.name, command)
        if path == wal:
            with pytest.raises(ForeignTable):
                open_table(path)
        else:
            with open_table(path) as table:
                table.probe("2222/2222 A")
        assert file_state(path) == before
    assert sorted(os.listdir(tmp_path)) == ["out", "plain.sqlite", "wal.sqlite"]


def test_corrupt_pages_are_one_sentence_and_nothing_is_logged(tmp_path, table_2x4_k2):
    path = copy_of(table_2x4_k2, tmp_path)
    data = bytearray(path.read_bytes())
    page = 4096
    rng = random.Random(5)
    for p in range(2, len(data) // page, 3):          # every third page after the schema's
        start = p * page
        data[start:start + page] = bytes(rng.randrange(256) for _ in range(page))
    path.write_bytes(bytes(data))
    for args in (["check", "--table", path], ["export", "--table", path, "--format", "csv",
                                               "--out", tmp_path / "o.csv"],
                 ["info", "--table", path]):
        result = sowsolve(*args, timeout=120)
        assert result.returncode in (1, 2), (args, result.stderr)
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert result.stderr.startswith("sowsolve:"), result.stderr


# --- E: one writer ----------------------------------------------------------------------------

HOLDER = textwrap.dedent("""
    import sys
    from sowsolve.solver.games import make_game
    from sowsolve.tables.store import TableWriter
    game = make_game("diffusion", cols=4, stones=2)
    solve = game.solver.solve
    writer = TableWriter(sys.argv[1], game)
    print("holding", flush=True)
    sys.stdin.readline()
    solve(game, writer, threads=1)
    writer.finish({})
    writer.close()
    print("done", flush=True)
""")


def test_a_second_writer_is_refused_and_the_first_is_unharmed(tmp_path, table_2x4_k2):
    path = tmp_path / "t.sqlite"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding", holder.stderr.read()
        for extra in (["--force"], []):
            result = cli("solve", "diffusion", "--cols", 4, "--stones", 2, "--table", path, *extra)
            one_sentence(result)
            assert result.exit_code == 1 and "being written by another" in result.stderr, result.output
        with pytest.raises(TableBusy):
            TableWriter(str(path), make_game("diffusion", cols=4, stones=2), force=True)
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.wait(timeout=120) == 0, holder.stderr.read()
        assert holder.stdout.readline().strip() == "done"
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    with open_table(path) as table, open_table(table_2x4_k2) as reference:
        assert table.finished
        for tier in reference.tiers:
            assert np.array_equal(table.tier_records(tier), reference.tier_records(tier))
    assert sorted(os.listdir(tmp_path)) == ["t.sqlite"]


# --- F: every error a sentence ----------------------------------------------------------------

@pytest.mark.parametrize("field, value, words", [
    ("indexing", "keys", "indexing"),
    ("finished", "yes", "finished"),
    ("tiers", ["a"], "tiers"),
    ("tier_sizes", {"1": "12"}, "tier_sizes"),
    ("block_records", 0, "block_records"),
    ("solved_tiers", [999], "solved"),
    ("parameters", {"cols": "4", "stones": 2}, "board"),
    ("game", 7, "game"),
])
def test_wrong_metadata_is_one_sentence(tmp_path, table_2x4_k2, field, value, words):
    path = copy_of(table_2x4_k2, tmp_path)
    meta = meta_of(path)
    meta[field] = value
    put_meta(path, meta)
    result = cli("info", "--table", path)
    one_sentence(result)
    assert result.exit_code == 1 and "corrupt" in result.stderr and words in result.stderr, result.output
    with pytest.raises(CorruptTable):
        open_table(path)


# --- G: the Python API --------------------------------------------------------------------------

def test_python_api(table_2x4_k2, small_tables):
    with open_table(table_2x4_k2) as table:
        assert "2222/2222 A" in table and "0000/0001 B" in table
        with pytest.raises(BadPosition):
            "2222/2222 Q" in table            # noqa: B015 - malformed text raises, like a bad key
        assert table["2222/2222 A"] == table.probe("2222/2222 A")
        assert table.get(None) is None and table.get(None, 7) == 7
        with pytest.raises(BadPosition):
            table.probe(None)
        query = table.query("2222/2222 A")
        cli_query = json.loads(cli("query", "2222/2222 A", "--table", table_2x4_k2, "--json").stdout)
        assert query == cli_query
    with pytest.raises(TableClosed) as closed:
        table.probe("2222/2222 A")
    assert isinstance(closed.value, ValueError) and "closed" in str(closed.value)
    with pytest.raises(TableClosed):
        table.get("2222/2222 A")
    with open_table(small_tables["overflow"]) as table:
        game = table.game
        # positions of the board that play from the start never reaches: L can only have
        # moved first, so a board with Dark to move and no disc moved is unreachable
        unreachable = [p for p in ("111/111/111 D", "300/300/300 D", "900/000/000 L")
                       if table.get(p) is None]
        assert unreachable
        for text in unreachable:
            assert text not in table
            assert table.query(text)["source"] == "search"
        assert "111/111/111 L" in table
        assert table[game.initial()] == table.probe("111/111/111 L")


# --- found by trying it as an attacker: values the game cannot have, missing entries -----------

@pytest.mark.parametrize("name", ["diffusion", "overflow"])
def test_a_draw_in_a_game_without_draws_is_corrupt(tmp_path, small_tables, name):
    """Diffusion and Overflow cannot draw (RULES.md: acyclic, every end has a winner): records
    rewritten to 'draw' with valid checksums are refused, not served with exit 0."""
    path = copy_of(small_tables[name], tmp_path)
    meta = meta_of(path)
    tier = max(int(t) for t in meta["solved_tiers"])
    keys = block_of(path, meta, tier, 0, keys=True) if name == "overflow" else None
    records = block_of(path, meta, tier, 0)
    put_block(path, meta, tier, 0, (records & 0xFFFC) | 2)
    if keys is not None:       # the key block's checksum is bound to the (unchanged) first keys
        put_block(path, meta, tier, 0, keys, summary_of(path, tier)["first_keys"])
    for _, args in read_commands(name, path, tmp_path / "o.csv")[:3]:
        result = cli(*args)
        if args[0] == "query" and result.exit_code == 0:
            continue           # the start's tier may be another one; export reads them all
        one_sentence(result)
        assert result.exit_code == 1 and "corrupt" in result.stderr, (args, result.stderr)


def test_an_overflow_table_missing_a_reachable_child_is_corrupt(tmp_path, small_tables):
    """A keyed table holds everything reachable from its start: a child of a stored position
    that is missing means damage, not 'cannot be reached from the start'."""
    path = copy_of(small_tables["overflow"], tmp_path)
    meta = meta_of(path)
    game = make_game("overflow", size="3x3")
    start = game.initial()
    child = game.play(start, game.legal_moves(start)[0])
    tier, key = game.key(child)
    keys = block_of(path, meta, tier, 0, keys=True)
    records = block_of(path, meta, tier, 0)
    keep = keys != np.uint64(key)
    assert (~keep).sum() == 1 and meta["tier_sizes"][str(tier)] == keys.size   # one block
    info = summary_of(path, tier)
    kept_keys, kept_records = keys[keep], records[keep]
    info.update(positions=int(kept_keys.size), first_keys=[int(kept_keys[0])])
    losses, wins = int(((kept_records & 3) == 1).sum()), int(((kept_records & 3) == 3).sum())
    info.update(losses=losses, wins=wins)
    meta["tier_sizes"][str(tier)] = int(kept_keys.size)
    put_meta(path, meta)
    put_summary(path, meta, tier, info)
    put_block(path, meta, tier, 0, kept_records)
    put_block(path, meta, tier, 0, kept_keys, info["first_keys"])
    result = cli("query", "111/111/111 L", "--table", path)
    one_sentence(result)
    assert result.exit_code == 1 and "corrupt" in result.stderr, result.stderr


@pytest.mark.parametrize("entry", ["block", "tier"])
def test_a_missing_block_or_summary_is_corrupt_for_every_command(tmp_path, small_tables, entry):
    path = copy_of(small_tables["diffusion"], tmp_path)
    meta = meta_of(path)
    tier = max(int(t) for t in meta["solved_tiers"])
    delete_key(path, f"block/{tier}/0" if entry == "block" else f"tier/{tier}")
    for _, args in read_commands("diffusion", path, tmp_path / "o.csv"):
        result = cli(*args)
        one_sentence(result)
        assert result.exit_code == 1 and "corrupt" in result.stderr, (args, result.stderr)
