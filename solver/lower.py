"""The lower tiers a solve reads, kept on disk instead of in memory (out of core).

A tier solver's window holds every finished tier a later tier still reads: for score tiers
(captures reach any lower tier) all of them, which is what bounds a solve in memory.  With
`LowerTiers`, a tier enters the window as a file and leaves memory: its records are written
to a file that has no name (O_TMPFILE where the file system has it, else one unlinked as soon as
it is made) in a private directory beside the table (mode 0700) or, in a worker of a cluster,
in its local directory, and mapped privately (a write would stay in this process's pages; the
solvers only read them) -- no other process can open, swap or truncate it (a truncated mapped
file would kill the solve with SIGBUS at the next access), and no file is left behind however
the solve ends.  A solve holds a lock on its private directory while it runs; a solve killed
outright (SIGKILL) leaves its empty directory, which the next solve beside it removes (one whose
lock nobody holds, or, made before the locks, one untouched for a minute).  The kernel pages in what its captures read; those pages are the page
cache's, which the system reclaims under pressure, so the solve's own memory is the tier
being solved.  Small arrays (a margin tier's long-remoteness table) stay in memory.
"""
from __future__ import annotations

import errno
import fcntl
import os
import shutil
import tempfile
import time

import numpy as np

from .contract import Game

#: arrays smaller than this stay in memory (a page table entry per file is not worth it)
SMALL = 1 << 20
PREFIX = ".sowsolve-lower-"
LOCK = ".lock"
#: a private directory without a lock (of a solve before the locks) this long untouched is a
#: dead solve's (a new one takes its lock at once)
UNLOCKED_AGE = 60.0


def remove_dead(folder: str) -> list[str]:
    """Remove the private directories that killed solves left in `folder`: those whose lock no
    running solve holds; the names removed."""
    removed = []
    try:
        names = [n for n in os.listdir(folder) if n.startswith(PREFIX)]
    except OSError:
        return removed
    for name in names:
        path = os.path.join(folder, name)
        if os.path.islink(path) or not os.path.isdir(path):
            continue
        try:
            fd = os.open(os.path.join(path, LOCK), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            try:
                stale = time.time() - os.stat(path).st_mtime > UNLOCKED_AGE
            except OSError:
                continue
            if stale:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(name)
            continue
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue                          # a running solve's
        finally:
            os.close(fd)
        shutil.rmtree(path, ignore_errors=True)
        removed.append(name)
    return removed


class LowerTiers:
    """Where a solve's window keeps its tiers: files mapped read-only (see the module)."""

    def __init__(self, beside: str | None = None, within: str | None = None):
        """Files go in a new private directory in the directory of `beside` (the table), or
        else straight in the directory `within` (a cluster worker's local directory; left out,
        the system's temporary files), which is left as it is."""
        self.lock_fd = -1
        if beside is not None:
            folder = os.path.dirname(os.path.abspath(beside))
            remove_dead(folder)
            self.directory = tempfile.mkdtemp(prefix=PREFIX, dir=folder)
            self.owned = True
            # held while the solve runs: a directory whose lock is free is a dead solve's
            self.lock_fd = os.open(os.path.join(self.directory, LOCK),
                                   os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX)
        else:
            self.directory = within or tempfile.gettempdir()
            self.owned = False

    def keep(self, game: Game, tier: int, data):
        """The tier `data` (a value kind's tier data) as the window keeps it: its large arrays
        mapped from files of this directory, checked as any tier read from a file."""
        arrays = {}
        for name, array in game.value_kind.tier_arrays(data).items():
            arrays[name] = self._mapped(array, f"tier-{tier}-{name}") if array.nbytes >= max(SMALL, 1) \
                else array
        return game.value_kind.tier_from_arrays(arrays, game.tier_size(tier))

    def _mapped(self, array: np.ndarray, name: str) -> np.ndarray:
        array = np.ascontiguousarray(array)
        try:
            # no name at all where the system can (O_TMPFILE), else unlinked as it is made
            with tempfile.TemporaryFile(dir=self.directory) as f:
                # written through the file, not the mapping: a full disk is an OSError here,
                # never a SIGBUS on a mapped page later
                f.write(memoryview(array.reshape(-1)).cast("B"))
                f.flush()
                # private (copy-on-write): kernels that take their tiers writeable read the
                # file, and a write would stay in this process's own pages; the mapping keeps
                # the file once it is closed
                return np.memmap(f, dtype=array.dtype, mode="c", shape=array.shape)
        except OSError as exc:
            raise OSError(exc.errno or errno.EIO, f"cannot keep {name} on disk in "
                          f"{self.directory}: {exc.strerror or exc}") from None

    def close(self) -> None:
        if self.owned:
            shutil.rmtree(self.directory, ignore_errors=True)
        if self.lock_fd >= 0:
            os.close(self.lock_fd)
            self.lock_fd = -1

    def __enter__(self) -> "LowerTiers":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
