"""Types of the compiled row writer (rows.pyx): an export's rows from columns, a block at a time."""
from typing import Final, Sequence

import numpy as np
import numpy.typing as npt

CSV: Final[int]
JSONL: Final[int]
TEXT: Final[int]

def format_rows(counts: npt.NDArray[np.uint8], ranks: Sequence[int], fields: npt.NDArray[np.uint8],
                alphabets: Sequence[Sequence[str]], owners: npt.NDArray[np.int64],
                values: npt.NDArray[np.int32], remoteness: npt.NDArray[np.int32],
                value_texts: Sequence[str] | None, mode: int) -> bytearray | tuple[npt.NDArray[np.int32], bytearray]:
    """CSV lines, JSON lines, or (TEXT) the position texts with their offsets."""

def grouped_columns(rows: npt.NDArray[np.uint8], images: int) -> npt.NDArray[np.uint8]:
    """Columns x rows, each position's first rows first, then its second rows, ..."""
