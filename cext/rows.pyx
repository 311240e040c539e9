# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Rows of an export in compiled code, a block at a time (tables/rows.py drives it).

A game gives its positions as columns of small integers and says how its text is made of
them (solver/contract.py, BoardColumns): counts in the text's order grouped into ranks, then
fields whose codes name short texts.  Here, for any game alike, those columns (and each row's
value and remoteness) become CSV lines, JSON lines or the position texts alone, with the GIL
released: every row as solver/games/notation.py's format_grid and the csv module write it,
without a Python call a row.  Every code and index is checked before the loop reads it.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t
from cpython.bytearray cimport PyByteArray_FromStringAndSize
from libc.string cimport memcpy

import numpy as np

cdef enum:
    MODE_CSV = 0
    MODE_JSONL = 1
    MODE_TEXT = 2

#: what a call writes: CSV lines, JSON lines, or the position texts alone (with offsets)
CSV, JSONL, TEXT = MODE_CSV, MODE_JSONL, MODE_TEXT


cdef inline char *put_uint(char *p, int64_t v) noexcept nogil:
    cdef char digits[24]
    cdef int n = 0
    if v == 0:
        p[0] = 48
        return p + 1
    while v > 0:
        digits[n] = <char>(48 + v % 10)
        v = v // 10
        n += 1
    while n > 0:
        n -= 1
        p[0] = digits[n]
        p += 1
    return p


cdef inline char *put_int(char *p, int64_t v) noexcept nogil:
    if v < 0:
        p[0] = 45
        return put_uint(p + 1, -v)
    return put_uint(p, v)


cdef inline char *put_text(char *p, const char *data, int32_t start, int32_t length) noexcept nogil:
    memcpy(p, data + start, length)
    return p + length


def _texts(texts, what):
    """(data, starts, lengths) of short plain texts (printable ASCII, no quote, backslash or
    comma: written as they are into CSV and JSON)."""
    data, starts, lengths = bytearray(), [], []
    for text in texts:
        raw = text.encode("ascii")
        if any(c < 32 or c > 126 or c in b'",\\' for c in raw):
            raise ValueError(f"{what} {text!r} is not plain text")
        starts.append(len(data))
        lengths.append(len(raw))
        data += raw
    return bytes(data), np.asarray(starts, dtype=np.int32), np.asarray(lengths, dtype=np.int32)


def format_rows(const uint8_t[:, ::1] counts, ranks, const uint8_t[:, ::1] fields, alphabets,
                const int64_t[::1] owners, const int32_t[::1] values, const int32_t[::1] remoteness,
                value_texts, int mode):
    """The rows of a block: CSV (`position,value,remoteness`), JSON lines, or (mode TEXT) the
    position texts alone.  counts (rows x counts), fields (rows x fields) and owners (the value
    index of each row) are the rows; values and remoteness (-1: none) are per owner; value_texts
    the text of each value code, or None where values are numbers.  Returns the rows (a
    bytearray), and for TEXT (int32 offsets of each text, the texts)."""
    cdef Py_ssize_t n = counts.shape[0], ncounts = counts.shape[1], nfields = fields.shape[1]
    cdef Py_ssize_t nvalues = values.shape[0], i, j, k, r, f
    ranks_arr = np.ascontiguousarray(ranks, dtype=np.int32)
    cdef const int32_t[::1] rk = ranks_arr
    cdef Py_ssize_t nranks = rk.shape[0]
    if fields.shape[0] != n or owners.shape[0] != n:
        raise ValueError("counts, fields and owners must have one row each")
    if remoteness.shape[0] != nvalues:
        raise ValueError("values and remoteness must have one entry each")
    if int(ranks_arr.sum()) != ncounts or (nranks and int(ranks_arr.min()) < 1):
        raise ValueError(f"the ranks {list(ranks_arr)} do not hold {ncounts} counts")
    if len(alphabets) != nfields:
        raise ValueError(f"{nfields} fields need {nfields} alphabets, not {len(alphabets)}")
    if mode not in (CSV, JSONL, TEXT):
        raise ValueError(f"mode must be CSV, JSONL or TEXT, not {mode}")
    # every code and owner is checked before the loop reads through it
    if n and (np.asarray(owners).min() < 0 or np.asarray(owners).max() >= nvalues):
        raise ValueError("an owner lies outside the values")
    flat = []
    first = np.zeros(nfields + 1, dtype=np.int32)
    widest = 0
    for f in range(nfields):
        alphabet = list(alphabets[f])
        if n and int(np.asarray(fields[:, f]).max()) >= len(alphabet):
            raise ValueError(f"a code of field {f} lies outside its {len(alphabet)} texts")
        flat += alphabet
        first[f + 1] = len(flat)
        widest += max(len(t) for t in alphabet) + 1
    alpha_data, alpha_start, alpha_len = _texts(flat, "a field's text")
    numeric = value_texts is None
    if numeric:
        value_data, value_start, value_len = b"", np.zeros(1, np.int32), np.zeros(1, np.int32)
        value_width = 12
    else:
        value_data, value_start, value_len = _texts(list(value_texts), "a value's text")
        if nvalues and (np.asarray(values).min() < 0 or np.asarray(values).max() >= len(value_texts)):
            raise ValueError("a value code lies outside the values' texts")
        value_width = int(value_len.max()) + 2
    # the most a row can take: 3 digits and a comma a count, the ranks' slashes, quotes, the
    # fields, the value, the remoteness and the JSON around them
    cdef Py_ssize_t bound = ncounts * 4 + nranks + 2 + widest + value_width + 24 + 48
    out = PyByteArray_FromStringAndSize(NULL, n * bound + 1)     # not zeroed: all written
    offsets = np.zeros(n + 1, dtype=np.int32) if mode == TEXT else None
    if mode == TEXT and n * bound >= 2 ** 31:
        raise ValueError("too many rows for one block of texts")
    cdef char *base = <char *>out
    cdef char *p = base
    cdef const char *ad = alpha_data
    cdef const char *vd = value_data
    cdef const int32_t[::1] a_start = alpha_start
    cdef const int32_t[::1] a_len = alpha_len
    cdef const int32_t[::1] fi = first
    cdef const int32_t[::1] v_start = value_start
    cdef const int32_t[::1] v_len = value_len
    cdef int32_t[::1] off
    if mode == TEXT:
        off = offsets
    cdef bint wide, num = numeric
    cdef int md = mode
    cdef int64_t owner
    cdef int32_t code, rem
    with nogil:
        for i in range(n):
            wide = False
            for j in range(ncounts):
                if counts[i, j] >= 10:
                    wide = True
                    break
            if md == MODE_JSONL:
                memcpy(p, b'{"position": "', 14)
                p += 14
            elif md == MODE_CSV and wide:
                p[0] = 34
                p += 1
            k = 0
            for r in range(nranks):
                if r:
                    p[0] = 47
                    p += 1
                for j in range(rk[r]):
                    if wide and j:
                        p[0] = 44
                        p += 1
                    if counts[i, k] < 10:
                        p[0] = <char>(48 + counts[i, k])
                        p += 1
                    else:
                        p = put_uint(p, counts[i, k])
                    k += 1
            for f in range(nfields):
                p[0] = 32
                code = fi[f] + fields[i, f]
                p = put_text(p + 1, ad, a_start[code], a_len[code])
            if md == MODE_TEXT:
                off[i + 1] = <int32_t>(p - base)
                continue
            owner = owners[i]
            rem = remoteness[owner]
            if md == MODE_CSV:
                if wide:
                    p[0] = 34
                    p += 1
                p[0] = 44
                p += 1
                if num:
                    p = put_int(p, values[owner])
                else:
                    p = put_text(p, vd, v_start[values[owner]], v_len[values[owner]])
                p[0] = 44
                p += 1
                if rem >= 0:
                    p = put_uint(p, rem)
                p[0] = 10
                p += 1
            else:
                memcpy(p, b'", "value": ', 12)
                p += 12
                if num:
                    p = put_int(p, values[owner])
                else:
                    p[0] = 34
                    p = put_text(p + 1, vd, v_start[values[owner]], v_len[values[owner]])
                    p[0] = 34
                    p += 1
                memcpy(p, b', "remoteness": ', 16)
                p += 16
                if rem >= 0:
                    p = put_uint(p, rem)
                else:
                    memcpy(p, b"null", 4)
                    p += 4
                memcpy(p, b"}\n", 2)
                p += 2
    del out[p - base:]                  # in place: no copy of the rows
    if mode == TEXT:
        return offsets, out
    return out


def grouped_columns(const uint8_t[:, ::1] rows, int images):
    """Column by column (columns x rows), the rows of positions that have `images` rows each,
    in turn (a position's rows consecutive, as an export writes them) regrouped: every
    position's first row, then every second row, and so on (runs of one side to move, which a
    Parquet column compresses better).  `rows` must hold a whole number of positions."""
    cdef Py_ssize_t n = rows.shape[0], width = rows.shape[1], m, j, c
    cdef int image
    if images < 1 or n % images:
        raise ValueError(f"{n} rows are no whole number of positions of {images} rows")
    m = n // images
    out = np.empty((width, n), dtype=np.uint8)
    cdef uint8_t[:, ::1] o = out
    with nogil:
        for c in range(width):              # each column written in order, read in strides
            for image in range(images):
                for j in range(m):
                    o[c, image * m + j] = rows[j * images + image, c]
    return out
