"""Files of a shared directory, which every process of a solve on a cluster reads and writes:
written whole under their final name, read only after checks (what a file of such a directory
can be is anyone's who can write there).  solver/cluster.py and solver/splittier.py use them."""
from __future__ import annotations

import errno
import os
import stat
import uuid

import numpy as np


def remove_partials(path: str) -> None:
    """Remove the partial files write_whole left of `path`: a writer killed outright (kill -9,
    a crash of the machine) cannot remove its own, and a checkpoint's is as large as the
    search's table.  Only for a file one process at a time writes, called under its lock."""
    directory, base = os.path.split(path)
    try:
        names = os.listdir(directory or ".")
    except OSError:
        return
    for name in names:
        if name.startswith(f".{base}.") and name.endswith(".partial") and len(name) == len(base) + 42:
            try:
                os.unlink(os.path.join(directory, name))
            except OSError:
                pass


def write_whole(path: str, write, sync: bool = False, shown: str | None = None) -> None:
    """`write(f)` on a new file that then becomes `path` whole: a reader sees the old file, or
    none, or all of the new one; an OSError (a full disk) names `path` (or `shown`, the name the
    user gave), never the partial file, which is removed.  `sync`: the data reach the disk
    before the rename, so that a crash of the machine leaves the old file or the new one."""
    partial = os.path.join(os.path.dirname(path),
                           f".{os.path.basename(path)}.{uuid.uuid4().hex}.partial")
    try:
        with open(partial, "xb") as f:
            write(f)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(partial, path)
    except BaseException as exc:
        try:
            os.unlink(partial)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise OSError(exc.errno, f"cannot write {shown or path}: {exc.strerror or exc}") from None
        raise


def save_array(path: str, array: np.ndarray) -> None:
    """Write `array` whole under `path` (write_whole) in the .npy layout np.save writes, the
    data through Python's own write: its error (a full disk) keeps its errno."""
    array = np.ascontiguousarray(array)

    def write(f) -> None:
        np.lib.format.write_array_header_1_0(f, {
            "descr": np.lib.format.dtype_to_descr(array.dtype), "fortran_order": False,
            "shape": array.shape})
        f.write(memoryview(array.reshape(-1)).cast("B"))

    write_whole(path, write)


# Files of the shared directory are anyone's who can write there, and a read must not hang or
# kill the process that reads them.  Each is opened with O_NOFOLLOW and O_NONBLOCK and fstat'ed
# before a byte is read: a FIFO (whose open would wait for a writer for good), a device or a
# link put in a file's place is refused, and a file whose size is not what its header
# declares is refused before it is read.  Files that are only read are then copied into this
# process's memory, never mapped: a mapped file truncated in place afterwards makes every
# access to its lost pages a SIGBUS, which no check made beforehand can prevent and which kills
# the worker (a copy is immune, for 2 bytes per position of each tier read).  The files the
# parts of a tier share and write in place (its records and the counts of units done) must be
# mapped; they are checked when mapped and again before every unit (`check_whole`), so a
# truncation between two units is an error naming the file, and only one in the middle of a
# unit still ends the worker (Dask then runs the part again, and the new run refuses the file).

def _open_regular(path: str, write: bool = False):
    """The regular file at `path`, opened for reading (or reading and writing); ValueError for
    anything else there (a FIFO, a device, a directory, a symbolic link)."""
    flags = (os.O_RDWR if write else os.O_RDONLY) | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError(f"{path} is a symbolic link, not a file sowsolve wrote") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path} is not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "r+b" if write else "rb")
    except BaseException:
        os.close(fd)
        raise


def _npy_layout(f, path: str) -> tuple[tuple, np.dtype, int]:
    """(shape, dtype, offset of the data) of an open .npy file, from its header alone (never
    unpickled), once its size is what the header declares."""
    readers = {(1, 0): np.lib.format.read_array_header_1_0,
               (2, 0): np.lib.format.read_array_header_2_0}
    try:
        reader = readers.get(np.lib.format.read_magic(f))
        if reader is None:
            raise ValueError("an .npy version sowsolve does not write")
        shape, fortran, dtype = reader(f)
    except (ValueError, SyntaxError, TypeError, KeyError, RuntimeError) as exc:
        raise ValueError(f"{path} is not an array sowsolve wrote ({exc})") from None
    if fortran or dtype.hasobject:
        raise ValueError(f"{path} is not an array sowsolve wrote")
    offset = f.tell()
    expected = offset + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    found = os.fstat(f.fileno()).st_size
    if found != expected:
        raise ValueError(f"{path} holds {found:,} bytes, not the {expected:,} its header declares")
    return shape, dtype, offset


def load_array(path: str, first: int | None = None) -> np.ndarray:
    """An array of a file of the shared directory, checked (above) and read into memory
    (with `first`, only its first elements of a 1-D array)."""
    with _open_regular(path) as f:
        shape, dtype, _ = _npy_layout(f, path)
        count = int(np.prod(shape, dtype=np.int64))
        if first is not None:
            if len(shape) != 1 or first > count:
                raise ValueError(f"{path} does not hold {first:,} elements")
            count, shape = first, (first,)
        array = np.fromfile(f, dtype=dtype, count=count)
        if array.size != count:
            raise ValueError(f"{path} was cut short while it was read")
        return array.reshape(shape)


def new_mapped(path: str, dtype, shape: tuple) -> np.ndarray:
    """A new .npy file of zeros, its disk space taken before it is mapped: writing to a mapped
    page the disk has no room for is a SIGBUS, where taking the space first is an OSError
    (a full disk) naming the file."""
    created = False
    try:
        with open(path, "xb") as f:
            created = True
            np.lib.format.write_array_header_1_0(f, {
                "descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False,
                "shape": shape})
            offset = f.tell()
            nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            try:
                if nbytes:
                    os.posix_fallocate(f.fileno(), offset, nbytes)
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                    raise
                f.truncate(offset + nbytes)     # a file system that cannot take it ahead
    except OSError as exc:
        if created:
            os.unlink(path)
        raise OSError(exc.errno, f"cannot write {path}: {exc.strerror or exc}") from None
    return np.memmap(path, dtype=dtype, mode="r+", offset=offset, shape=shape)


def check_whole(path: str, nbytes: int) -> None:
    """ValueError unless the file at `path` (one this process has mapped) still holds `nbytes`
    bytes: its pages past a truncation would kill the process at the first access."""
    try:
        found = os.stat(path).st_size
    except OSError as exc:
        raise ValueError(f"{path} cannot be read ({exc.strerror or exc})") from None
    if found != nbytes:
        raise ValueError(f"{path} was changed in place ({found:,} bytes, not {nbytes:,})")
