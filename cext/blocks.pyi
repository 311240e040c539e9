"""Types of the compiled block coding of the table format (blocks.pyx)."""
import numpy as np
import numpy.typing as npt

def palette(records: npt.NDArray[np.uint16]
            ) -> tuple[npt.NDArray[np.uint16], npt.NDArray[np.uint8]] | None:
    """(distinct values ascending, each record's position among them), or None past 256."""
