"""The `sowsolve` command, installed as sowsolve.cli (from the folder cli/): its subcommands
(app.py), where tables are found (locate.py) and how values and positions are shown as text
(render.py)."""
