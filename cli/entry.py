"""The `sowsolve` command's entry point: Ctrl-C while the command is still starting (loading
numpy and the kernels takes a moment) ends it like Ctrl-C later on, with one line and exit
130, not a traceback."""
import sys


def main() -> None:
    try:
        from .app import main as run
    except KeyboardInterrupt:
        print("sowsolve: interrupted", file=sys.stderr)
        sys.exit(130)
    run()
