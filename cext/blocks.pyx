# cython: language_level=3, boundscheck=False, wraparound=False
"""The table format's per-block coding of records (tables/format.py), compiled: it runs on the
store thread for every block of every tier while the solver's threads solve the next tier, so
what it costs is taken from the solve.

palette(): the distinct values of a block of 16-bit records and each record's position among
them as a byte -- one pass marking the values that occur, one pass mapping, without the 8-byte
copy of every record and the counting that numpy's bincount makes."""
from libc.stdint cimport int64_t, uint8_t, uint16_t
from libc.stdlib cimport calloc, free

import numpy as np
cimport numpy as cnp

cnp.import_array()

cdef enum:
    VALUES = 1 << 16
    PALETTE_MAX = 256


cdef int palette_codes(const uint16_t *records, int64_t n, uint8_t *seen, uint16_t *values,
                       uint8_t *codes) noexcept nogil:
    """The number of distinct values of records[0..n-1] (ascending into `values`, each
    record's position among them into `codes`), or -1 when there are more than 256 (`codes`
    then unwritten).  `seen`: VALUES zeroed bytes, marked where a value occurs (a store, not a
    count: no chain of additions to one counter when a value repeats), then each present
    value's position."""
    cdef int64_t i
    cdef int v, present = 0
    for i in range(n):
        seen[records[i]] = 1
    for v in range(VALUES):
        if seen[v]:
            if present == PALETTE_MAX:
                return -1
            values[present] = <uint16_t>v
            seen[v] = <uint8_t>present
            present += 1
    for i in range(n):
        codes[i] = seen[records[i]]
    return present


def palette(cnp.ndarray records):
    """(the distinct values ascending as uint16, each record's position among them as uint8),
    or None where the block holds more than 256 distinct values: what numpy's
    flatnonzero(bincount(...)) and a lookup give, in two passes over the block (and one over
    the 65,536 marks)."""
    if records.dtype != np.uint16 or records.ndim != 1:
        raise TypeError(f"palette takes a one-dimensional uint16 array, not {records.dtype} "
                        f"of {records.ndim} dimensions")
    cdef cnp.ndarray flat = np.ascontiguousarray(records)
    cdef int64_t n = flat.shape[0]
    cdef cnp.ndarray values = np.empty(PALETTE_MAX, dtype=np.uint16)
    cdef cnp.ndarray codes = np.empty(n, dtype=np.uint8)
    cdef uint8_t *seen = <uint8_t *>calloc(VALUES, 1)
    cdef int present
    if seen == NULL:
        raise MemoryError("no memory for a block's palette")
    try:
        with nogil:
            present = palette_codes(<const uint16_t *>cnp.PyArray_DATA(flat), n, seen,
                                    <uint16_t *>cnp.PyArray_DATA(values),
                                    <uint8_t *>cnp.PyArray_DATA(codes))
    finally:
        free(seen)
    if present < 0:
        return None
    return values[:present].copy(), codes
