"""The engine, installed as sowsolve.solver (from the folder solver/): the Game contract, the
solvers and the value kinds they store, the Python side of the compiled kernels (kernels.py),
estimates and the self-check; the games themselves are in sowsolve.solver.games."""
