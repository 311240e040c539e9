"""The compiled coding of a block of records (cext/blocks.pyx) and a tier's summary
(retrograde.tier_summary) against references written here from what the table format says
they are: the palette is the block's distinct values ascending and each record's position among
them, or nothing past 256 values; the summary counts each outcome and finds the first of the
longest wins."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sowsolve.cext import blocks
from sowsolve.solver.kernels import WINLOSS_LAYOUT, tier_summary
from sowsolve.tables import format as fmt

BITS = WINLOSS_LAYOUT["outcome_bits"]
WIN, LOSS, DRAW = WINLOSS_LAYOUT["win"], WINLOSS_LAYOUT["loss"], WINLOSS_LAYOUT["draw"]


def reference_palette(records):
    values = sorted(set(int(r) for r in records))
    if len(values) > 256:
        return None
    where = {v: i for i, v in enumerate(values)}
    return values, [where[int(r)] for r in records]


@st.composite
def record_blocks(draw):
    """Blocks of a few distinct values (as a tier's are), or of many (past the palette)."""
    size = draw(st.integers(0, 3000))
    distinct = draw(st.sampled_from([1, 2, 7, 255, 256, 257, 600]))
    pool = np.array(draw(st.lists(st.integers(0, 65535), min_size=distinct, max_size=distinct,
                                  unique=True)), dtype=np.uint16)
    picks = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).integers(0, distinct, size)
    return pool[picks]


@settings(max_examples=300, deadline=None)
@given(record_blocks())
def test_the_palette_is_the_distinct_values_and_each_records_position(records):
    got = blocks.palette(records)
    expected = reference_palette(records)
    if expected is None:
        assert got is None
        return
    values, codes = got
    assert values.dtype == np.uint16 and codes.dtype == np.uint8
    assert values.tolist() == expected[0]
    assert codes.tolist() == expected[1]


def test_the_palette_takes_a_strided_block_and_refuses_other_types():
    records = np.arange(600, dtype=np.uint16)[::3]            # 200 values, not contiguous
    values, codes = blocks.palette(records)
    assert values.tolist() == list(range(0, 600, 3)) and codes.tolist() == list(range(200))
    assert blocks.palette(np.arange(257, dtype=np.uint16)) is None
    # 256 values, the extremes among them, shuffled: the last code is 255
    full = np.concatenate([[65535, 0], np.arange(1000, 1254)]).astype(np.uint16)[::-1]
    values, codes = blocks.palette(full)
    assert values.tolist() == [0] + list(range(1000, 1254)) + [65535]
    assert values[codes].tolist() == full.tolist() and codes[-1] == 255 and codes[-2] == 0
    with pytest.raises(TypeError, match="uint16"):
        blocks.palette(np.arange(5, dtype=np.int64))
    # the table format's own entry: a big-endian or strided block is coded by its values
    swapped = np.array([7, 3, 7, 65535], dtype=">u2")
    values, codes = fmt._palette(swapped)
    assert values.dtype == np.dtype("<u2") and values.tolist() == [3, 7, 65535]
    assert codes.tolist() == [1, 0, 1, 2]


@settings(max_examples=50, deadline=None)
@given(record_blocks())
def test_a_palette_block_decodes_to_its_records(records):
    """What the store writes is what a reader gets back (fmt's own decoder)."""
    if records.size < fmt.PALETTE_MIN_RECORDS:
        records = np.resize(records, fmt.PALETTE_MIN_RECORDS) if records.size else \
            np.zeros(fmt.PALETTE_MIN_RECORDS, dtype=np.uint16)
    data = fmt.encode_block(3, 0, records, b"context", palette=True)
    distinct = np.unique(records).size
    assert data[:4] == (fmt.PALETTE_MAGIC if distinct <= 256 else fmt.BLOCK_MAGIC)
    assert fmt.decode_block(data, 3, 0, records.size, context=b"context", palette=True).tolist() \
        == records.tolist()


def reference_summary(records):
    outcomes = [int(r) & ((1 << BITS) - 1) for r in records]
    wins = [(int(r) >> BITS, i) for i, r in enumerate(records) if outcomes[i] == WIN]
    longest = max((rem for rem, _ in wins), default=0)
    index = min((i for rem, i in wins if rem == longest), default=-1)
    return (outcomes.count(LOSS), outcomes.count(DRAW), outcomes.count(WIN), outcomes.count(0),
            longest, index)


@st.composite
def tiers(draw):
    """Tier arrays, some longer than the summary's run of 65,536 records, with wins of
    remoteness 0 (a final position), none at all, or the longest repeated."""
    size = draw(st.sampled_from([0, 1, 5, 1000, 65536, 65537, 140000]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    outcomes = rng.choice([0, LOSS, DRAW, WIN], size, p=draw(st.sampled_from(
        [[0, .5, 0, .5], [0, 1, 0, 0], [.01, .3, .3, .39], [0, 0, 0, 1]])))
    top = draw(st.sampled_from([0, 1, 200, (1 << (16 - BITS)) - 1]))
    remoteness = rng.integers(0, top + 1, size)
    return ((remoteness << BITS) | outcomes).astype(np.uint16)


@settings(max_examples=60, deadline=None)
@given(tiers())
def test_the_tier_summary_counts_outcomes_and_finds_the_first_longest_win(records):
    assert tuple(int(x) for x in tier_summary(records)) == reference_summary(records)
    # a strided view is summarised as the records it shows, not as the memory under it
    assert tuple(int(x) for x in tier_summary(records[::-2])) == reference_summary(records[::-2])


def test_the_tier_summary_refuses_what_is_not_records():
    with pytest.raises(TypeError, match="uint16"):
        tier_summary(np.arange(5, dtype=np.int64))
