"""The lower tiers a solve reads, kept on disk instead of in memory (out of core).

A tier solver's window holds every finished tier a later tier still reads: for score tiers
(captures reach any lower tier) all of them, which is what bounds a solve in memory.  With
`LowerTiers`, a tier enters the window as a file and leaves memory: its records are written
to a file of a private directory (mode 0700, beside the table), mapped privately (a write
would stay in this process's pages; the solvers only read them), and the file
unlinked at once -- no other process can then open, swap or truncate it (a truncated mapped
file would kill the solve with SIGBUS at the next access), and nothing is left behind however
the solve ends.  The kernel pages in what its captures read; those pages are the page
cache's, which the system reclaims under pressure, so the solve's own memory is the tier
being solved.  Small arrays (a margin tier's long-remoteness table) stay in memory.
"""
from __future__ import annotations

import errno
import os
import shutil
import tempfile

import numpy as np

from .contract import Game

#: arrays smaller than this stay in memory (a page table entry per file is not worth it)
SMALL = 1 << 20


class LowerTiers:
    """Where a solve's window keeps its tiers: files mapped read-only (see the module)."""

    def __init__(self, beside: str | None = None):
        """Files go in a new private directory in the directory of `beside` (the table), or
        of the system's temporary files (a worker of a cluster)."""
        folder = None if beside is None else os.path.dirname(os.path.abspath(beside))
        self.directory = tempfile.mkdtemp(prefix=".sowsolve-lower-", dir=folder)

    def keep(self, game: Game, tier: int, data):
        """The tier `data` (a value kind's tier data) as the window keeps it: its large arrays
        mapped from files of this directory, checked as any tier read from a file."""
        arrays = {}
        for name, array in game.value_kind.tier_arrays(data).items():
            arrays[name] = self._mapped(array, f"tier-{tier}-{name}") if array.nbytes >= max(SMALL, 1) \
                else array
        return game.value_kind.tier_from_arrays(arrays, game.tier_size(tier))

    def _mapped(self, array: np.ndarray, name: str) -> np.ndarray:
        path = os.path.join(self.directory, name)
        array = np.ascontiguousarray(array)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                # written through the file, not the mapping: a full disk is an OSError here,
                # never a SIGBUS on a mapped page later
                f.write(memoryview(array.reshape(-1)).cast("B"))
            # private (copy-on-write): kernels that take their tiers writeable read the file,
            # and a write would stay in this process's own pages
            mapped = np.memmap(path, dtype=array.dtype, mode="c", shape=array.shape)
        except OSError as exc:
            raise OSError(exc.errno or errno.EIO, f"cannot keep a lower tier on disk in "
                          f"{self.directory}: {exc.strerror or exc}") from None
        finally:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        return mapped

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> "LowerTiers":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
