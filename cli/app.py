"""The `sowsolve` command suite (Typer), assembled: the app and its shared parts (common.py),
the commands on tables and games (commands.py: solve, query, export, info, tables, perft,
check, prove), analysis (analyse.py) and play and pictures (explore.py: show, play, serve).
Each command module registers its commands on the one app; importing this module brings them
all."""
# each module registers its commands on `app`, in the order `sowsolve --help` lists them
from . import commands  # noqa: F401,I001
from . import explore  # noqa: F401
from . import analyse  # noqa: F401
from . import engine  # noqa: F401
from .common import app, main

__all__ = ["app", "main"]
