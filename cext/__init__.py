"""The compiled kernels, installed as sowsolve.cext (from the folder cext/): the game kernels
(one per game, named after it) and the solvers (retrograde, scoresolve, ttsolve), built from
the .pyx files here against sowsolve_kernel.h, the kernel contract and the record layouts they
share; the .pyi stubs beside them give their types."""
