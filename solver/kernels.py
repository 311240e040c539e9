"""Thin wrappers over the Cython kernels in cext/.  There is no pure-Python fallback: a
sowsolve without its compiled kernels says so instead of running a thousand times slower."""
from __future__ import annotations

try:
    from ..cext import diffusion as _diffusion
    from ..cext import overflow as _overflow
    from ..cext import retrograde as _retrograde
    from ..cext import scoresolve as _scoresolve
    from ..cext import ttsolve as _ttsolve
    from ..cext import zigzag as _zigzag
except ImportError as exc:  # pragma: no cover - only without a build
    raise ImportError("sowsolve's compiled kernels are missing; reinstall with "
                      "`pip install -e .` (needs a C compiler)") from exc

solve_range = _retrograde.solve_range
tier_summary = _retrograde.tier_summary
verify_range = _retrograde.verify_range
TTSolver = _ttsolve.TTSolver
verify_keys = _ttsolve.verify_keys
solve_graph = _scoresolve.solve_graph
zigzag_tier_size = _zigzag.tier_size
zigzag_tier_graph = _zigzag.tier_graph
zigzag_rank = _zigzag.rank
zigzag_unrank_range = _zigzag.unrank_range
solver_errors = _retrograde.ERRORS


def diffusion_kernel(cols: int, variant: int, max_stones: int, slots, owner):
    return _diffusion.DiffusionKernel(cols, variant, max_stones, slots, owner)


def overflow_kernel(rows: int, cols: int):
    return _overflow.OverflowKernel(rows, cols)


def zigzag_kernel(cols: int, circuit, first_orientation):
    return _zigzag.ZigZagKernel(cols, circuit, first_orientation)
