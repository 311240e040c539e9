"""The `sowsolve` command's entry point: Ctrl-C while the command is still starting (loading
numpy and the kernels takes a moment) ends it like Ctrl-C later on, with one line and exit
130, not a traceback."""
import signal
import sys


def main() -> None:
    try:
        from .app import main as run
    except KeyboardInterrupt:
        print("sowsolve: interrupted", file=sys.stderr)
        sys.exit(130)
    try:
        run()
    except KeyboardInterrupt:
        # before a command's own handling of Ctrl-C (while the options are still being read)
        print("sowsolve: interrupted", file=sys.stderr)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        sys.exit(130)
    except SystemExit as leaving:
        if leaving.code == 130:
            from . import common
            if not common.explained:
                # Ctrl-C while click reads the options: it exits 130 without a word
                print("sowsolve: interrupted", file=sys.stderr)
            # a second Ctrl-C while the process ends (its threads joined) would only add
            # Python's own complaint after that one line
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise
