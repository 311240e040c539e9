"""`sowsolve export --format parquet --out DIR`: a table as a Parquet dataset (pyarrow), one file
a tier, for data tools that query it in place (DuckDB, Polars, pandas) -- docs/export.md.

Columns (each a small integer, or a dictionary of short strings): `position` (the position's
text; `text=False` leaves it out), one column a pit or cell in the order the text writes
them, the fields after the counts (`side`, and a game's others, null where the text writes
"-"), `stones` on the board, `value` (win/loss/draw, or the margin) and
`remoteness` (null where play never ends).  Each file's metadata (key "sowsolve") names the
game, the board, the table it came from (its file name and the SHA-256 of its metadata and of
the tier's records) and how the text is made of the columns.

Whole or not at all: the files are written into a hidden folder beside DIR
(`.DIR.sowsolve-partial`), each tier's file renamed into place there once complete, and the
folder renamed to DIR only once every tier and the manifest (`sowsolve-export.json`) are
written and synced (the manifest, `_sowsolve-export.json`, last).  A killed export leaves that hidden folder; the same command resumes it
(the tiers already written are kept), any other removes it.  DIR is never written over unless
`force`, and never when it holds anything but a previous export.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import errno
import fcntl
import hashlib
import json
import os
import secrets
import shutil
import sys
import threading
from typing import Callable, ContextManager

import numpy as np

from ..cext import rows as _rows
from ..solver.errors import BadParameters, quote, shown
from . import rows as tabular
from .export import OutputError, _Stop
from .format import dump_json

Progress = Callable[[int, str], ContextManager]

#: its name starts with "_": dataset readers (pyarrow, pandas, Spark) leave such files out
MANIFEST = "_sowsolve-export.json"
PARTIAL = ".sowsolve-partial"
#: what the manifest's "format" says (a folder with another is no export of ours)
FORMAT = "sowsolve parquet export"
FORMAT_VERSION = 1
#: rows gathered into one row group (a block of records is a few hundred thousand rows)
ROW_GROUP_ROWS = 1 << 20
COMPRESSION = "zstd"
#: level 1: of the writer's time, encoding takes the most; level 3 saved 4% of the bytes for a
#: quarter more time (bench/results/export-standard.json has the whole table)
COMPRESSION_LEVEL = 1
#: the columns written with dictionaries (the counts' plain bytes compress as well, faster)
DICTIONARY_COLUMNS = ["position", "side", "ko", "last_capturer", "value"]
#: the columns whose row groups carry their minimum and maximum, for a reader's filters
STATISTICS_COLUMNS = ["stones", "side", "value", "remoteness"]


def pyarrow_modules():
    """(pyarrow, pyarrow.parquet), or BadParameters saying how to install them."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise BadParameters("--format parquet needs pyarrow: pip install 'sowsolve[parquet]'") from None
    return pyarrow, pyarrow.parquet


def tier_file(tier: int) -> str:
    return f"tier-{tier:06d}.parquet"


def _is_tier_file(name: str) -> bool:
    return (name.startswith("tier-") and name.endswith(".parquet")
            and name[5:-8].isdigit() and len(name) == 5 + 6 + 8)


def table_identity(table) -> str:
    """The SHA-256 of the table's metadata (its game, board, tiers and their sizes, when each
    was solved): the same table gives the same identity, a solve anew another."""
    data = dump_json(table.meta)
    return hashlib.sha256(data if isinstance(data, bytes) else data.encode()).hexdigest()


def is_previous_export(path: str) -> bool:
    """Whether the folder holds a previous export and nothing else: its manifest and the tier
    files it lists."""
    try:
        names = set(os.listdir(path))
        with open(os.path.join(path, MANIFEST)) as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return False
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        return False
    files = manifest.get("files")
    if not isinstance(files, dict):
        return False
    return names == set(files) | {MANIFEST} and all(_is_tier_file(n) for n in files)


def _check_out(out: str, table_path: str, force: bool) -> tuple[str, str, bool]:
    """(the folder's absolute path, its parent, whether a previous export is there to replace)."""
    if not isinstance(out, str) or not out or out == "-":
        raise BadParameters("--out must name a folder for a Parquet export (not standard output)")
    path = os.path.abspath(out)
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        raise BadParameters(f"cannot write {shown(out, 60)}: its folder does not exist")
    if os.path.lexists(path):
        if os.path.islink(path) or not os.path.isdir(path):
            raise BadParameters(f"--out {shown(out, 60)} exists and is no folder; a Parquet export "
                                f"is a folder: name a new one")
        if not is_previous_export(path):
            raise BadParameters(f"--out {shown(out, 60)} is a folder that holds other things than "
                                f"a sowsolve export; name a new folder")
        if not force:
            raise BadParameters(f"--out {shown(out, 60)} holds a previous export; add --force to "
                                f"replace it")
        return path, parent, True
    table_real = os.path.realpath(table_path)
    if table_real == path or table_real.startswith(path + os.sep):
        raise BadParameters(f"--out {shown(out, 60)} is where the table being read is")
    above = os.path.realpath(parent)
    while True:                     # a dataset reader would take the new one for part of it
        if os.path.isfile(os.path.join(above, MANIFEST)):
            raise BadParameters(f"--out {shown(out, 60)} lies inside a previous export "
                                f"({shown(above, 60)}); name a folder outside it")
        if os.path.dirname(above) == above:
            break
        above = os.path.dirname(above)
    return path, parent, False


class _Partial:
    """The hidden folder an export is written into, locked while it runs (two exports into one
    folder at once: the second is refused)."""

    def __init__(self, parent: str, base: str, settings: dict):
        self.path = os.path.join(parent, f".{base}{PARTIAL}")
        self.settings = settings
        self.lock_fd = -1

    def open(self) -> set[str]:
        """Create or resume the folder; the tier files already complete in it."""
        if os.path.lexists(self.path) and (os.path.islink(self.path) or not os.path.isdir(self.path)):
            raise BadParameters(f"{self.path} is in the way of the export (not a folder it made)")
        os.makedirs(self.path, exist_ok=True)
        self.lock_fd = os.open(os.path.join(self.path, ".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self.lock_fd)
            self.lock_fd = -1
            raise BadParameters(f"another export into the same folder is running "
                                f"({os.path.basename(self.path)} is locked)") from None
        settings_path = os.path.join(self.path, "settings.json")
        try:
            with open(settings_path) as f:
                kept = json.load(f)
        except (OSError, ValueError):
            kept = None
        names = os.listdir(self.path)
        ours = {".lock", "settings.json"}
        if kept != self.settings or any(n not in ours and not _is_tier_file(n)
                                        and not (n.startswith("tier-") and n.endswith(".tmp"))
                                        for n in names):
            # another export's leftovers (or none): start afresh
            for name in names:
                if name != ".lock":
                    _remove(os.path.join(self.path, name))
            with open(settings_path + ".tmp", "w") as f:
                json.dump(self.settings, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(settings_path + ".tmp", settings_path)
            return set()
        for name in names:
            if name.endswith(".tmp"):
                _remove(os.path.join(self.path, name))
        return {n for n in names if _is_tier_file(n)}

    def close(self) -> None:
        if self.lock_fd >= 0:
            os.close(self.lock_fd)
            self.lock_fd = -1


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def export_parquet(table, out: str, max_stones: int | None = None,
                   progress: Progress | None = None, every_orientation: bool = False,
                   force: bool = False, text: bool = True, threads: int | None = None) -> int:
    """Write the table as a Parquet dataset in the folder `out` (see the module); returns the
    rows written (with those of tiers a killed run had written already)."""
    pa, pq = pyarrow_modules()
    from ..solver.tiers import default_threads
    from .store import open_table, software_version
    game = table.game
    if not tabular.columnar(table):
        raise BadParameters(f"{game.describe()} gives no columns of its positions: export it as "
                            f"csv or jsonl")
    path, parent, replace = _check_out(out, table.path, force)
    tiers = [t for t in table.tiers if max_stones is None or game.tier_stones(t) <= max_stones]
    if not tiers:
        raise BadParameters(f"no position of {game.describe()} has at most {max_stones} "
                            f"{game.pieces}: nothing to export")
    layout = game.board_columns()
    identity = table_identity(table)
    settings = {"table": identity, "max_stones": max_stones, "every_orientation": every_orientation,
                "text": text, "software": software_version(), "format_version": FORMAT_VERSION}
    partial = _Partial(parent, os.path.basename(path), settings)
    threads = max(1, threads or default_threads())
    with _Stop() as stop:
        done = partial.open()
        finished = False
        try:
            todo = [t for t in tiers if tier_file(t) not in done]
            files: dict[str, dict] = {}
            for name in done:
                files[name] = _file_note(pq, os.path.join(partial.path, name))
            total = sum(table.tier_size(t) for t in todo)
            bar = progress(total, "export parquet") if progress and total else None
            lock = threading.Lock()

            def advance(count: int) -> None:
                if bar is not None:
                    with lock:
                        bar.update(count)

            def write_tier(tier: int) -> tuple[str, dict]:
                # each thread reads through a reader of its own (a reader is not shared)
                with open_table(table.path) as reader:
                    if table_identity(reader) != identity:
                        raise OutputError(errno.EAGAIN, f"{table.path} changed during the export")
                    return _write_tier(pa, pq, reader, tier, layout, partial.path, text,
                                       every_orientation, stop, advance)

            try:
                with concurrent.futures.ThreadPoolExecutor(threads) as pool:
                    # the largest tiers first, so that the last ones are short
                    order = sorted(todo, key=lambda t: -table.tier_size(t))
                    futures = [pool.submit(write_tier, t) for t in order]
                    try:
                        while not all(f.done() for f in futures):
                            concurrent.futures.wait(futures, timeout=0.2,
                                                    return_when=concurrent.futures.FIRST_EXCEPTION)
                            stop.check()
                            if any(f.done() and f.exception() for f in futures):
                                break
                    except BaseException:
                        stop.signum = stop.signum or 2      # the workers stop at their next block
                        for f in futures:
                            f.cancel()
                        raise
                    for f in futures:
                        name, note = f.result()
                        files[name] = note
            finally:
                if bar is not None:
                    bar.close()
            stop.check()
            manifest = {"format": FORMAT, "format_version": FORMAT_VERSION,
                        "game": game.name, "parameters": game.parameters(),
                        "description": game.describe(), "table_file": os.path.basename(table.path),
                        "table_metadata_sha256": identity, "software": software_version(),
                        "max_stones": max_stones, "every_orientation": every_orientation,
                        "text": text, "rows": sum(n["rows"] for n in files.values()),
                        "files": dict(sorted(files.items()))}
            _finish(partial, path, manifest, replace)
            finished = True
        except OSError as exc:
            if isinstance(exc, OutputError):
                raise
            # pyarrow's own sentence names no file: the folder written is named instead
            raise OutputError(exc.errno or errno.EIO, f"cannot write {shown(out, 60)}: "
                              f"{os.strerror(exc.errno) if exc.errno else exc}") from None
        finally:
            partial.close()
            if not finished and stop.signum is None and sys.exc_info()[0] is not None \
                    and not issubclass(sys.exc_info()[0], (KeyboardInterrupt,)):
                # an error (a damaged table, a full disk): nothing to resume, nothing kept;
                # a kill or Ctrl-C leaves the folder for the same command to resume
                _remove(partial.path)
    return manifest["rows"]


def _file_note(pq, path: str) -> dict:
    meta = pq.read_metadata(path)
    note = json.loads(meta.metadata[b"sowsolve"])
    return {"tier": note["tier"], "rows": meta.num_rows,
            "records_sha256": note["records_sha256"]}


def _finish(partial: _Partial, path: str, manifest: dict, replace: bool) -> None:
    """The manifest written last, everything synced, the folder renamed into place."""
    manifest_path = os.path.join(partial.path, MANIFEST)
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    for name in (".lock", "settings.json"):
        _remove(os.path.join(partial.path, name))
    directory = os.open(partial.path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    parent = os.path.dirname(path)
    if replace:
        old = os.path.join(parent, f".{os.path.basename(path)}.sowsolve-old-{secrets.token_hex(4)}")
        os.rename(path, old)
        os.rename(partial.path, path)
        shutil.rmtree(old, ignore_errors=True)
    else:
        try:
            os.rename(partial.path, path)
        except OSError as exc:          # it appeared meanwhile (another export won)
            raise OutputError(exc.errno, f"cannot put the export at {path}: "
                                         f"{exc.strerror or exc}") from None
    with contextlib.suppress(OSError):
        fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_tier(pa, pq, table, tier: int, layout, folder: str, text: bool, every_orientation: bool,
                stop: _Stop, advance) -> tuple[str, dict]:
    """One tier's file: its blocks' columns, row groups of about ROW_GROUP_ROWS rows, written as
    a temporary file and renamed once complete (its records' SHA-256 in its metadata)."""
    game = table.game
    name = tier_file(tier)
    temporary = os.path.join(folder, name + ".tmp")
    value_texts = tabular.value_texts(table)
    # the values a finished table of the game can hold: win and loss (and draw where the
    # rules allow one), never "unsolved"
    values_kept = (None if value_texts is None else
                   [t for t in ("win", "loss", "draw") if t in value_texts
                    and (t != "draw" or game.can_draw)])
    digest = hashlib.sha256()
    schema = _schema(pa, layout, value_texts, text)
    note = {"game": game.name, "parameters": game.parameters(), "description": game.describe(),
            "tier": tier, "tier_name": game.tier_name(tier), "stones": game.tier_stones(tier),
            "table_file": os.path.basename(table.path), "table_metadata_sha256": table_identity(table),
            "counts": list(layout.counts), "ranks": list(layout.ranks),
            "fields": [[field, list(alphabet)] for field, alphabet in layout.fields],
            "value_kind": game.value_kind.name, "every_orientation": every_orientation}
    rows = 0
    pending: list = []
    pending_rows = 0
    writer = pq.ParquetWriter(temporary, schema, compression=COMPRESSION,
                              compression_level=COMPRESSION_LEVEL,
                              use_dictionary=DICTIONARY_COLUMNS, write_statistics=STATISTICS_COLUMNS)
    try:
        for first, records, keys in tabular.blocks(table, tier, digest):
            if stop.signum is not None:
                raise KeyboardInterrupt
            block = tabular.block_rows(table, tier, first, records, keys, every_orientation)
            batch = _batch(pa, schema, layout, block, value_texts, game.tier_stones(tier), text,
                           values_kept)
            pending.append(batch)
            pending_rows += batch.num_rows
            rows += batch.num_rows
            if pending_rows >= ROW_GROUP_ROWS:
                writer.write_table(pa.Table.from_batches(pending, schema), row_group_size=pending_rows)
                pending, pending_rows = [], 0
            advance(records.size)
        if pending:
            writer.write_table(pa.Table.from_batches(pending, schema), row_group_size=pending_rows)
        note["records_sha256"] = digest.hexdigest()
        note["rows"] = rows
        writer.add_key_value_metadata({"sowsolve": json.dumps(note, sort_keys=True)})
        writer.close()
        writer = None
        with open(temporary, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(temporary, os.path.join(folder, name))
    except BaseException:
        if writer is not None:
            with contextlib.suppress(Exception):
                writer.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    return name, {"tier": tier, "rows": rows, "records_sha256": note["records_sha256"]}


def _schema(pa, layout, value_texts, text: bool):
    fields = []
    if text:
        fields.append(pa.field("position", pa.string(), nullable=False))
    fields += [pa.field(name, pa.uint8(), nullable=False) for name in layout.counts]
    fields += [pa.field(name, pa.dictionary(pa.int8(), pa.string()), nullable="-" in alphabet)
               for name, alphabet in layout.fields]
    fields.append(pa.field("stones", pa.uint16(), nullable=False))
    fields.append(pa.field("value", pa.int16() if value_texts is None
                           else pa.dictionary(pa.int8(), pa.string()), nullable=False))
    fields.append(pa.field("remoteness", pa.uint16()))
    return pa.schema(fields)


def _dictionary(pa, codes: np.ndarray, texts, nulls: set, kept=None):
    """Codes of `texts` as a dictionary column: only the texts in `kept` (all but `nulls`
    where not given) make its dictionary, in their order; a code of a text in `nulls` is null
    (a dictionary holds no text that no row can have: pandas shows each as a category)."""
    kept = [t for t in texts if t not in nulls] if kept is None else list(kept)
    lookup = np.full(len(texts), -1, dtype=np.int8)
    for i, t in enumerate(texts):
        if t in kept:
            lookup[i] = kept.index(t)
    indices = lookup[codes]
    missing = indices < 0
    if missing.any() and not all(texts[c] in nulls for c in np.unique(np.asarray(codes)[missing])):
        raise ValueError(f"a record holds {texts[int(np.asarray(codes)[missing][0])]!r}, which a "
                         f"finished table has none of")
    return pa.DictionaryArray.from_arrays(pa.array(indices, mask=missing if missing.any() else None),
                                          pa.array(kept, pa.string()))


def _batch(pa, schema, layout, block: tabular.BlockRows, value_texts, stones: int, text: bool,
           values_kept=None):
    """A block's rows as a record batch: every stored position's rows in the order export
    writes them, images after originals (runs of one side to move compress better)."""
    owners = block.owners
    n, m = owners.size, block.values.size
    counts, fields = block.counts, block.fields
    images = n // m if m and n % m == 0 else 0
    if images and np.array_equal(owners[::images], np.arange(m)) and \
            np.array_equal(owners[images - 1::images], np.arange(m)):
        # every position has as many rows (owners sorted, each run as long): regrouped in
        # compiled code, a position's first rows, then its second rows
        count_columns = _rows.grouped_columns(counts, images)
        field_columns = _rows.grouped_columns(fields, images)
        owners = np.tile(np.arange(m, dtype=np.int64), images)
        if text:
            counts = np.ascontiguousarray(count_columns.T)
            fields = np.ascontiguousarray(field_columns.T)
    else:
        # each row's rank among its position's rows: the originals first, then the images
        rank = np.arange(n, dtype=np.int64) - np.searchsorted(owners, owners, side="left")
        order = np.argsort(rank, kind="stable") if n and rank.max() > 0 else None
        if order is not None:
            counts, fields, owners = counts[order], fields[order], owners[order]
        count_columns = np.ascontiguousarray(counts.T)
        field_columns = np.ascontiguousarray(fields.T)
    columns = []
    if text:
        offsets, data = _rows.format_rows(np.ascontiguousarray(counts), layout.ranks,
                                          np.ascontiguousarray(fields),
                                          [a for _, a in layout.fields], owners, block.values,
                                          block.remoteness, value_texts, _rows.TEXT)
        columns.append(pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data)))
    # untyped: a numpy array's own type is taken as it is (typed, pyarrow converts value by value)
    columns += [pa.array(count_columns[j]) for j in range(count_columns.shape[0])]
    for j, (_, alphabet) in enumerate(layout.fields):
        columns.append(_dictionary(pa, field_columns[j], alphabet, {"-"}))
    columns.append(pa.array(np.full(n, stones, dtype=np.uint16)))
    values = block.values[owners]
    if value_texts is None:
        columns.append(pa.array(values.astype(np.int16)))
    else:
        columns.append(_dictionary(pa, values, value_texts, set(), kept=values_kept))
    rems = block.remoteness[owners]
    endless = rems < 0
    columns.append(pa.array(np.where(endless, 0, rems).astype(np.uint16),
                            mask=endless if endless.any() else None))
    return pa.RecordBatch.from_arrays(columns, schema=schema)
