"""`sowsolve export`: every stored position with its value and remoteness, as CSV or JSON lines.

Where the rows go is decided before anything is written:

- ``-`` streams to standard output; so do ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N`` and
  ``/proc/self/fd/N``, which name a file this process already has open (its offset and append
  mode are kept, nothing is replaced).
- An existing FIFO or character device (a pipe, ``/dev/null``, a terminal) is written through:
  opened for writing, never replaced or created.
- A regular file, or a name that does not exist yet, is written whole or not at all: the rows
  go into an unnamed temporary file in the target's directory (``O_TMPFILE``), which is linked
  in place of the target only once it is complete and synced.  A killed export (even by
  SIGKILL) leaves nothing behind.  Where the file system has no unnamed files, a hidden named
  one (``.sowsolve-export-*``) is used instead: SIGTERM, SIGHUP and Ctrl-C remove it, and
  after a SIGKILL the next export into that directory does.
- A symbolic link to a regular file (or a dangling one) keeps being a link: its target is
  written as above.
- A replaced file keeps its permission bits; a new file gets 0666 minus the umask.

Refused with a usage error before anything is written: the table being read (the same device
and inode however it is spelled: another path, a hard link, a symbolic link; or its SQLite
journal), any other SQLite file (another table, most likely), a directory, a block device, a
directory that does not exist.  Every error names the path the user gave, never a temporary
name.
"""
from __future__ import annotations

import contextlib
import csv
import errno
import fcntl
import io
import json
import os
import re
import secrets
import signal
import stat
import sys
import threading
from typing import Callable, ContextManager, Iterator, NamedTuple

import numpy as np

from ..solver.contract import Game
from ..solver.errors import BadParameters, quote
from .rows import columnar as rows_columnar
from .store import Table

Progress = Callable[[int, str], ContextManager]

FORMATS = ("csv", "jsonl")
CSV_HEADER = ("position", "value", "remoteness")
TEMP_PREFIX = ".sowsolve-export-"
#: Positions formatted and written at a time (a stop request is honoured between slices).
SLICE = 1 << 14
#: Whether to try unnamed temporary files (tests switch it off to exercise the named fallback).
USE_O_TMPFILE = hasattr(os, "O_TMPFILE")
#: Paths that name a file descriptor this process already has open.
_STD_STREAMS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_FD_PATH = re.compile(r"/(?:dev/fd|proc/self/fd|proc/thread-self/fd)/([0-9]{1,9})")
_SIDECARS = ("-journal", "-wal", "-shm")


class OutputError(OSError):
    """The output cannot be written; str() is one sentence naming the user's path."""

    def __str__(self) -> str:
        return str(self.strerror)


class StdoutClosed(OutputError):
    """The reader of standard output went away (`sowsolve export --out - | head`)."""


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived (during an export: the temporary file is gone when it
    propagates); the command exits with 128 + signum, saying `sentence` ("terminated" by
    default: a solve says what it kept and how to resume)."""

    def __init__(self, signum: int, sentence: str = "terminated"):
        super().__init__(signum, sentence)
        self.signum = signum
        self.sentence = sentence


def export(table: Table, out: str, fmt: str, max_stones: int | None,
           progress: Progress | None = None, every_orientation: bool = False,
           threads: int | None = None) -> int:
    """Write every stored position (with its images: positions sharing its record) with value
    and remoteness to `out` (see the module's docstring for where rows go); returns rows.

    `max_stones` keeps the positions with at most that many stones (discs, seeds) on the board.
    Where the game gives its positions as columns (every game of sowsolve), the rows are made
    in compiled code on `threads` threads (None: every core), a block at a time."""
    if fmt not in FORMATS:
        raise BadParameters(f"--format must be csv or jsonl, not {quote(fmt, 20)}")
    game = table.game
    tiers = [t for t in table.tiers if max_stones is None or game.tier_stones(t) <= max_stones]
    with _Stop() as stop:
        target = resolve_output(out, table.path)
        with _open_output(target, out, stop) as sink:
            rows = 0
            if fmt == "csv":
                sink.write(",".join(CSV_HEADER) + "\n")
            if rows_columnar(table):
                return rows + _export_columns(table, tiers, sink, fmt, progress, every_orientation,
                                              threads, stop)
            for tier in tiers:
                bar = progress(table.tier_size(tier), f"export tier {tier}") if progress else None
                try:
                    for first, block in table.iter_blocks(tier):
                        for offset in range(0, block.size, SLICE):
                            records = block[offset:offset + SLICE]
                            start = first + offset
                            positions = table.stored_positions(tier, start, start + records.size)
                            text, count = format_block(game, positions, records, fmt,
                                                       every_orientation)
                            sink.write(text)
                            rows += count
                            if bar is not None:
                                bar.update(records.size)
                            stop.check()
                finally:
                    if bar is not None:
                        bar.close()
            stop.check()
    return rows


def _export_columns(table: Table, tiers: list[int], sink: "_Sink", fmt: str,
                    progress: Progress | None, every_orientation: bool, threads: int | None,
                    stop: "_Stop") -> int:
    """The rows of every tier, a block at a time, formatted in compiled code on a pool of
    threads (in order), written by this one."""
    import concurrent.futures
    from ..cext import rows as compiled
    from ..solver.tiers import default_threads
    from . import rows as tabular
    layout = table.game.board_columns()
    texts = tabular.value_texts(table)
    mode = compiled.CSV if fmt == "csv" else compiled.JSONL
    written = 0

    def job(tier, first, records, keys):
        def run():
            block = tabular.block_rows(table, tier, first, records, keys, every_orientation)
            return records.size, block.counts.shape[0], tabular.text_rows(layout, block, texts, mode)
        return run

    with concurrent.futures.ThreadPoolExecutor(max(1, threads or default_threads())) as pool:
        for tier in tiers:
            bar = progress(table.tier_size(tier), f"export tier {tier}") if progress else None
            try:
                jobs = (job(tier, first, records, keys)
                        for first, records, keys in tabular.blocks(table, tier))
                for size, count, data in tabular.ordered(pool, jobs):
                    sink.write_bytes(data)
                    written += count
                    if bar is not None:
                        bar.update(size)
                    stop.check()
            finally:
                if bar is not None:
                    bar.close()
    return written


def format_block(game, positions: list, records: np.ndarray, fmt: str,
                 every_orientation: bool = False) -> tuple[str, int]:
    """The rows of one block as text (csv module, or one JSON object per line), and how many
    there are.  Columns are built per block; each row costs one format_position.  With
    `every_orientation`, a row for each of the game's orientations of a stored position."""
    names, rems = game.value_kind.columns(records)
    if fmt == "jsonl":      # the texts json.dumps gives the values, once per block
        string = json.encoder.encode_basestring_ascii       # json.dumps's own string encoder
        names = [string(n) if isinstance(n, str) else str(n) for n in names]
        rems = ["null" if r is None else str(r) for r in rems]
    images, format_position = (game.orientations if every_orientation else game.images), game.format_position
    if type(game).images is Game.images and not every_orientation:    # one row per stored position
        rows = [(format_position(p), n, r) for p, n, r in zip(positions, names, rems)]
    else:
        rows = [(format_position(image), n, r) for p, n, r in zip(positions, names, rems)
                for image in images(p)]
    if fmt == "csv":
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows(rows)    # None -> empty field
        return buffer.getvalue(), len(rows)
    lines = [f'{{"position": {string(p)}, "value": {n}, "remoteness": {r}}}' for p, n, r in rows]
    lines.append("")
    return "\n".join(lines), len(rows)


# --- where the rows go ------------------------------------------------------------------------

class Target(NamedTuple):
    kind: str               # "stream" (an open descriptor), "through" (open and write) or "replace"
    path: str | None        # through: the path to open; replace: the file to replace
    fd: int | None = None   # stream: the descriptor
    keep: os.stat_result | None = None     # replace: the file replaced (its mode is kept)


def resolve_output(out: str, table_path: str | None, option: str = "--out") -> Target:
    """Decide where rows go, creating nothing; BadParameters/OutputError name `out` (given
    as `option`).  `table_path`: the table being read, never written over (None: none)."""
    if not isinstance(out, str) or not out:
        raise BadParameters(f"{option} must name a file, or - for standard output")
    table_stat = os.stat(table_path) if table_path is not None else None
    if out == "-":
        return _stream(1, out, table_stat, option)
    absolute = os.path.abspath(out)
    match = _FD_PATH.fullmatch(absolute)
    if absolute in _STD_STREAMS or match:
        return _stream(_STD_STREAMS[absolute] if match is None else int(match.group(1)),
                       out, table_stat, option)
    if out.endswith(os.sep):
        raise BadParameters(f"{option} {out} names a directory; name a file")
    try:
        st = os.stat(out)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise BadParameters(f"cannot write {out}: a part of its directory path is not a "
                            f"directory") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise BadParameters(f"cannot write {out}: its symbolic links form a loop") from None
        raise _output_error(exc, out) from None
    real = os.path.realpath(out)
    table_real = os.path.realpath(table_path) if table_path is not None else None
    if st is not None and table_stat is not None and (st.st_dev, st.st_ino) == (table_stat.st_dev, table_stat.st_ino):
        raise BadParameters(f"{option} {out} is the table being read; name another file")
    if table_real is not None and any(real == table_real + suffix for suffix in _SIDECARS):
        raise BadParameters(f"{option} {out} is the SQLite journal of the table being read; "
                            f"name another file")
    if st is None:              # a new file (through a dangling link: its target)
        directory = os.path.dirname(real)
        try:
            dst = os.stat(directory)
        except FileNotFoundError:
            raise BadParameters(f"cannot write {out}: its directory does not exist") from None
        except NotADirectoryError:
            raise BadParameters(f"cannot write {out}: a part of its directory path is not a "
                                f"directory") from None
        except OSError as exc:
            raise _output_error(exc, out) from None
        if not stat.S_ISDIR(dst.st_mode):
            raise BadParameters(f"cannot write {out}: a part of its directory path is not a "
                                f"directory")
        return Target("replace", real if os.path.islink(out) else out)
    if stat.S_ISDIR(st.st_mode):
        raise BadParameters(f"{option} {out} is a directory; name a file")
    if stat.S_ISBLK(st.st_mode):
        raise BadParameters(f"{option} {out} is a block device; sowsolve writes exports to "
                            f"files, pipes and character devices only")
    if stat.S_ISREG(st.st_mode):
        if _is_sqlite(out):
            raise BadParameters(f"{option} {out} is an SQLite file (a table?); sowsolve does not "
                                f"write over one: name another file")
        return Target("replace", real if os.path.islink(out) else out, keep=st)
    return Target("through", out)


def _is_sqlite(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _stream(fd: int, out: str, table_stat: os.stat_result | None, option: str = "--out") -> Target:
    try:
        st = os.fstat(fd)
    except OSError:
        raise BadParameters(f"{option} {out}: file descriptor {fd} is not open") from None
    if table_stat is not None and (st.st_dev, st.st_ino) == (table_stat.st_dev, table_stat.st_ino):
        raise BadParameters(f"{option} {out} is the table being read; name another file")
    return Target("stream", None, fd)


def write_output(out: str, text: str, table_path: str | None = None, option: str = "--out") -> None:
    """Write `text` to `out` as export writes its rows (a file whole or not at all, a pipe or
    device through, - standard output), never over the table being read."""
    with _Stop() as stop:
        target = resolve_output(out, table_path, option)
        with _open_output(target, out, stop) as sink:
            sink.write(text)
        stop.check()


def _output_error(exc: OSError, out: str, what: str = "cannot write") -> OutputError:
    shown = "standard output" if out == "-" else out
    return OutputError(exc.errno, f"{what} {shown}: {exc.strerror or exc}")


class _Sink:
    """Writes whole slices of rows; an OSError becomes an OutputError naming the user's path.
    A pipe or device may block as long as its reader waits: a signal interrupts that."""

    def __init__(self, out: str, stop: "_Stop", fd: int = -1, file=None):
        self.out, self.stop, self.fd, self.file = out, stop, fd, file

    def write(self, text: str) -> None:
        try:
            with self.stop.immediately():
                if self.file is not None:       # sys.stdout / sys.stderr
                    self.file.write(text)
                    self.file.flush()
                    return
                data = memoryview(text.encode("utf-8"))
                while data:
                    data = data[os.write(self.fd, data):]
        except OSError as exc:
            raise _output_error(exc, self.out) from None

    def write_bytes(self, data: bytes) -> None:
        """Rows already encoded (ASCII): written as they are."""
        if self.file is not None and not hasattr(self.file, "buffer"):
            self.write(data.decode("ascii"))
            return
        try:
            with self.stop.immediately():
                if self.file is not None:
                    self.file.flush()
                    self.file.buffer.write(data)
                    self.file.buffer.flush()
                    return
                view = memoryview(data)
                while view:
                    view = view[os.write(self.fd, view):]
        except OSError as exc:
            raise _output_error(exc, self.out) from None


@contextlib.contextmanager
def _open_output(target: Target, out: str, stop: "_Stop") -> Iterator[_Sink]:
    if target.kind == "stream":
        yield from _open_stream(target.fd, out, stop)
    elif target.kind == "through":
        yield from _open_through(target.path, out, stop)
    else:
        yield from _open_replace(target, out, stop)


def _open_stream(fd: int, out: str, stop: "_Stop") -> Iterator[_Sink]:
    standard = {1: sys.stdout, 2: sys.stderr}.get(fd)
    if standard is not None:
        try:
            yield _Sink(out, stop, file=standard)
        except OutputError as exc:
            if exc.errno == errno.EPIPE and fd == 1:
                _silence_stdout()
                raise StdoutClosed(exc.errno, exc.strerror) from None
            raise
        except BaseException:       # stopped, maybe inside a write its reader never took:
            if fd == 1:             # the exit's flush of what is left must not wait for it
                _silence_stdout()
            raise
        return
    try:
        fd = os.dup(fd)
    except OSError as exc:
        raise _output_error(exc, out) from None
    try:
        yield _Sink(out, stop, fd=fd)
    finally:
        os.close(fd)


def _silence_stdout() -> None:
    """Point stdout at /dev/null (its reader left, or we stop): the exit's flush is quiet."""
    with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)


def _open_through(path: str, out: str, stop: "_Stop") -> Iterator[_Sink]:
    """A FIFO or character device: open it for writing (blocks until a FIFO has a reader)."""
    try:
        with stop.immediately():
            fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise _output_error(exc, out) from None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):     # it became a regular file meanwhile
            raise OutputError(errno.EAGAIN, f"cannot write {out}: it changed while being "
                                            f"opened; try again")
        yield _Sink(out, stop, fd=fd)
    finally:
        os.close(fd)


def _open_replace(target: Target, out: str, stop: "_Stop") -> Iterator[_Sink]:
    """A temporary file in the target's directory, renamed over the target once complete."""
    directory, base = os.path.split(os.path.abspath(target.path))
    try:
        dirfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise _output_error(exc, out) from None
    fd, name = -1, None
    try:
        remove_leftovers(dirfd)
        fd, name = _temporary(dirfd, out)
        try:
            _set_mode(fd, target.keep)
        except OSError as exc:
            raise _output_error(exc, out) from None
        yield _Sink(out, stop, fd=fd)
        with _signals_blocked():
            try:
                os.fsync(fd)
                if name is None:
                    name = _link(fd, dirfd)
                os.replace(name, base, src_dir_fd=dirfd, dst_dir_fd=dirfd)
                name = None
                with contextlib.suppress(OSError):      # not every file system syncs directories
                    os.fsync(dirfd)
            except OSError as exc:
                raise _output_error(exc, out) from None
    finally:
        with _signals_blocked():
            if name is not None:
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=dirfd)
            if fd >= 0:
                os.close(fd)
            os.close(dirfd)


def _temporary(dirfd: int, out: str) -> tuple[int, str | None]:
    """(fd, None) of an unnamed file in the directory, or (fd, name) of a named one; either
    way locked, so that no other export's clean-up takes it for a leftover."""
    if USE_O_TMPFILE:
        try:
            fd = os.open(".", os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o600, dir_fd=dirfd)
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
                raise _output_error(exc, out) from None
        else:
            if os.path.exists(f"/proc/self/fd/{fd}"):      # linkable into place at the end
                fcntl.flock(fd, fcntl.LOCK_EX)
                return fd, None
            os.close(fd)
    for _ in range(100):
        name = TEMP_PREFIX + secrets.token_hex(8)
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o600, dir_fd=dirfd)
        except FileExistsError:
            continue
        except OSError as exc:
            raise _output_error(exc, out) from None
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:    # another export's clean-up may have taken it before the lock: start again
            same = os.path.samestat(os.stat(name, dir_fd=dirfd, follow_symlinks=False), os.fstat(fd))
        except FileNotFoundError:
            same = False
        if same:
            return fd, name
        os.close(fd)
    raise OutputError(errno.EEXIST, f"cannot write {out}: no free temporary name beside it")


def _link(fd: int, dirfd: int) -> str:
    """Give the unnamed file a hidden name in its directory (then renamed over the target)."""
    for _ in range(100):
        name = TEMP_PREFIX + secrets.token_hex(8)
        try:
            os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dirfd, follow_symlinks=True)
            return name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name")


def remove_leftovers(dirfd: int) -> None:
    """Remove the temporary files of killed exports in a directory: named ones that no running
    export holds locked."""
    try:
        names = [n for n in os.listdir(dirfd) if n.startswith(TEMP_PREFIX)]
    except OSError:
        return
    for name in names:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=dirfd)
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue                        # a running export's file
            if os.path.samestat(os.stat(name, dir_fd=dirfd, follow_symlinks=False), st):
                os.unlink(name, dir_fd=dirfd)
        except OSError:
            pass
        finally:
            os.close(fd)


def _umask() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _set_mode(fd: int, replaced: os.stat_result | None) -> None:
    """A new file: 0666 minus the umask; a replaced one: its permission bits (and owner, where
    we may set it)."""
    if replaced is None:
        os.fchmod(fd, 0o666 & ~_umask())
        return
    os.fchmod(fd, stat.S_IMODE(replaced.st_mode) & 0o777)
    mine = os.fstat(fd)
    if (mine.st_uid, mine.st_gid) != (replaced.st_uid, replaced.st_gid):
        with contextlib.suppress(OSError):
            os.fchown(fd, replaced.st_uid, replaced.st_gid)


# --- signals ----------------------------------------------------------------------------------

_HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class _Stop:
    """SIGINT, SIGTERM and SIGHUP during an export.  The handler only takes note while the
    table is being read (an exception raised inside sqlitedict's exchange with its thread can
    leave that thread waiting forever); the export stops at the next block, or at once while
    it waits on a pipe or device.  Stopping raises KeyboardInterrupt (SIGINT) or Terminated,
    and the temporary file is removed on the way out."""

    def __init__(self):
        self.signum: int | None = None
        self.now = False
        self.previous: dict = {}

    def __enter__(self) -> "_Stop":
        if threading.current_thread() is threading.main_thread():
            self.previous = {s: signal.signal(s, self._handler) for s in _HANDLED}
        return self

    def __exit__(self, *exc) -> None:
        for s, old in self.previous.items():
            signal.signal(s, old if old is not None else signal.SIG_DFL)

    def _handler(self, signum, frame) -> None:
        if self.signum is None:
            self.signum = signum
        if self.now:
            self.check()

    def check(self) -> None:
        if self.signum is not None:
            self.now = False
            if self.signum == signal.SIGINT:
                raise KeyboardInterrupt
            raise Terminated(self.signum)

    @contextlib.contextmanager
    def immediately(self) -> Iterator[None]:
        """A section that may block (a FIFO's reader): a signal stops it at once."""
        self.now = True
        try:
            self.check()
            yield
        finally:
            self.now = False


@contextlib.contextmanager
def _signals_blocked() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP while the file is put in place or cleaned up."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = set(_HANDLED)
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
