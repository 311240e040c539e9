"""Builds the Cython kernels in cext/ (with OpenMP where the compiler has it)."""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
# Every cext/<name>.pyx is a kernel module sowsolve.cext.<name>: a new game's kernel needs no
# line here.
KERNELS = sorted(name[:-4] for name in os.listdir(os.path.join(HERE, "cext")) if name.endswith(".pyx"))
# Every solver/games/<game>/ package (its rules, vector files and rule text) is installed as
# sowsolve.solver.games.<game>: a new game's package needs no line here or in pyproject.toml.
GAMES_DIR = os.path.join(HERE, "solver", "games")
GAME_PACKAGES = sorted(name for name in os.listdir(GAMES_DIR)
                       if os.path.isfile(os.path.join(GAMES_DIR, name, "__init__.py")))


def compiler_has_openmp() -> bool:
    """Compile and link a tiny OpenMP program; a compiler without it builds single-threaded."""
    if os.environ.get("SOWSOLVE_NO_OPENMP"):
        return False
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "omp.c")
        with open(src, "w") as f:
            f.write("#include <omp.h>\nint main(void){return omp_get_max_threads() < 1;}\n")
        result = subprocess.run([cc, "-fopenmp", src, "-o", os.path.join(tmp, "omp")],
                                capture_output=True)
        return result.returncode == 0


#: the cores this build may use: the kernels are translated and compiled side by side
CORES = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
openmp = compiler_has_openmp()
compile_args = ["-O3", "-fno-strict-aliasing"] + (["-fopenmp"] if openmp else [])
link_args = ["-fopenmp"] if openmp else []
if not openmp:
    print("sowsolve: building without OpenMP (solver kernels run on one thread)", file=sys.stderr)

extensions = [
    Extension(
        f"sowsolve.cext.{name}",
        [f"cext/{name}.pyx"],
        include_dirs=[numpy.get_include(), "cext"],
        extra_compile_args=compile_args,
        extra_link_args=link_args,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for name in KERNELS
]

setup(
    # the kernels compile side by side, one per core (each is one large C file)
    options={"build_ext": {"parallel": CORES}},
    packages=["sowsolve", "sowsolve.solver", "sowsolve.solver.games", "sowsolve.cext",
              "sowsolve.cli", "sowsolve.tables"]
             + [f"sowsolve.solver.games.{name}" for name in GAME_PACKAGES],
    # the kernels' sources and type stubs, the PEP 561 markers, each game's vectors and rules
    package_data={"sowsolve.cext": ["*.pxd", "*.pyx", "*.h", "*.pyi", "py.typed"],
                  "sowsolve": ["py.typed"],
                  **{f"sowsolve.solver.games.{name}": ["*.json", "RULES.md"]
                     for name in GAME_PACKAGES}},
    ext_modules=cythonize(
        extensions,
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
        include_path=["cext"],
        nthreads=CORES if CORES > 1 else 0,
    ),
)
