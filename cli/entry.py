"""The `sowsolve` command's entry point: Ctrl-C while the command is still starting (loading
numpy and the kernels takes a moment) ends it like Ctrl-C later on, with one line and exit
130, not a traceback."""
import signal
import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        # the version alone: no command, so none of the kernels, numpy or the tables' modules
        from importlib import metadata
        try:
            version = metadata.version("sowsolve")
        except metadata.PackageNotFoundError:
            version = "unknown (not installed)"
        try:
            print(f"sowsolve {version}", flush=True)
        except OSError as exc:          # a full or closed standard output: as every command
            import errno
            import os
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, sys.stdout.fileno())          # the exit's own flush stays quiet
            if exc.errno == errno.EPIPE:
                sys.exit(128 + 13)
            print(f"sowsolve: cannot write standard output: {exc.strerror or exc}", file=sys.stderr)
            sys.exit(1)
        sys.exit(0)
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
