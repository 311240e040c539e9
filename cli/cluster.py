"""`sowsolve solve ... --workers N | --scheduler ADDRESS | --scheduler-file FILE`: the Dask
client a solve runs on (solver/cluster.py has the executor).  Everything here fails before the
table is touched: a cluster that cannot be reached leaves nothing written."""
from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import stat
import threading
import uuid
import warnings
from typing import Iterator, Optional

from ..solver.errors import BadParameters, quote, shown

#: how long a scheduler may take to answer, and workers to join it ($SOWSOLVE_CONNECT_SECONDS:
#: another wait, for a scheduler across a slow network, or a quick refusal in scripts)
CONNECT_SECONDS = 10


def connect_seconds() -> float:
    """The wait for a scheduler: $SOWSOLVE_CONNECT_SECONDS, else CONNECT_SECONDS."""
    text = os.environ.get("SOWSOLVE_CONNECT_SECONDS")
    if text is None or not text.strip():
        return float(CONNECT_SECONDS)
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds <= 3600:               # (nan fails this too)
        raise BadParameters(f"$SOWSOLVE_CONNECT_SECONDS must be a number of seconds more than 0 "
                            f"and at most 3600, not {quote(text, 20)}")
    return seconds


def wanted(workers: Optional[int], scheduler: Optional[str], scheduler_file: Optional[str]) -> bool:
    """Whether the options ask for a cluster, after checking they make sense together."""
    given = [name for name, value in (("--workers", workers), ("--scheduler", scheduler),
                                      ("--scheduler-file", scheduler_file)) if value is not None]
    if len(given) > 1:
        why = ("--workers starts a cluster here, the others name a running one"
               if workers is not None else "each names the one running cluster to solve on")
        raise BadParameters(f"{' and '.join(given)} cannot be given together: {why}")
    if workers is not None and not 1 <= workers <= 256:
        raise BadParameters(f"--workers must be from 1 to 256, not {shown(workers)}")
    if scheduler is not None and not scheduler.strip():
        raise BadParameters("--scheduler needs an address, such as tcp://10.0.0.1:8786")
    return bool(given)


def _distributed():
    try:
        import distributed
    except ImportError:
        raise BadParameters("solving on a cluster needs Dask's distributed: pip install "
                            "'sowsolve[cluster]'") from None
    return distributed


def _scheduler_address(scheduler_file: str) -> str:
    """The address a scheduler file (`dask scheduler --scheduler-file`) names."""
    try:
        if not stat.S_ISREG(os.stat(scheduler_file).st_mode):
            raise BadParameters(f"--scheduler-file {scheduler_file[:200]} is not a regular file")
        with open(scheduler_file, "rb") as f:
            info = json.loads(f.read(1 << 20))
    except RecursionError:
        raise BadParameters(f"--scheduler-file {scheduler_file[:200]} cannot be read as a "
                            f"scheduler file (nested too deep)") from None
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not JSON"
        raise BadParameters(f"--scheduler-file {scheduler_file[:200]} cannot be read as a "
                            f"scheduler file ({why})") from None
    address = info.get("address") if isinstance(info, dict) else None
    if not isinstance(address, str) or not address:
        raise BadParameters(f"--scheduler-file {scheduler_file[:200]} names no scheduler "
                            f"address")
    return address


#: the module each local worker process loads as it starts (its `dask_setup` hook)
WORKER_PRELOAD = "sowsolve.solver.cluster"


@contextlib.contextmanager
def client_for(workers: Optional[int], scheduler: Optional[str],
               scheduler_file: Optional[str]) -> Iterator[object]:
    """A connected Dask client with at least one worker: a local cluster of `workers` worker
    processes (one thread each), or the running cluster of `scheduler` / `scheduler_file`.
    BadParameters (a usage error) where it cannot be had."""
    distributed = _distributed()
    for name in ("distributed", "tornado"):     # its own chatter would drown the progress bar
        logging.getLogger(name).setLevel(logging.CRITICAL)
    with contextlib.ExitStack() as stack:
        if workers is not None:
            with _sigint_held(), warnings.catch_warnings():
                # Ctrl-C is the driver's alone (the workers' preload ignores it); a port of
                # the scheduler's own HTTP server already taken is no news for a solve
                warnings.filterwarnings("ignore", message="Port .* is already in use")
                cluster = stack.enter_context(distributed.LocalCluster(
                    n_workers=workers, threads_per_worker=1, processes=True,
                    dashboard_address=None, silence_logs=logging.CRITICAL,
                    preload=[WORKER_PRELOAD]))
            client = stack.enter_context(distributed.Client(cluster))
        else:
            address = scheduler if scheduler is not None else _scheduler_address(scheduler_file)
            where = address[:200]
            wait = connect_seconds()
            try:
                client = stack.enter_context(distributed.Client(address, timeout=wait))
            except ValueError:
                raise BadParameters(f"{where} is not a Dask scheduler address such as "
                                    f"tcp://10.0.0.1:8786") from None
            except Exception:  # noqa: BLE001 - whatever Dask raises, it is not there
                raise BadParameters(f"the Dask scheduler {where} does not answer within "
                                    f"{wait:g} s") from None
            try:
                client.wait_for_workers(1, timeout=wait)
            except Exception:  # noqa: BLE001 - a timeout of Dask's own class
                raise BadParameters(f"the Dask scheduler {where} has no workers (none joined "
                                    f"within {wait:g} s)") from None
        yield client


@contextlib.contextmanager
def _sigint_held() -> Iterator[None]:
    """SIGINT blocked while worker processes start: a Ctrl-C pressed meanwhile stays pending in
    the driver, which takes it (KeyboardInterrupt) the moment the mask is lifted.  (Ignoring it
    meanwhile, which the workers would inherit, loses it: the kernels' native threads do not
    block it, and take it.)  The workers do not keep the mask -- Dask starts them afresh -- so
    each ignores Ctrl-C itself once it runs (solver/cluster.py `dask_setup`, their preload);
    one pressed while a worker is still importing ends that worker with a traceback of its
    own, and the solve stops as always."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def check_shared_dir(client, shared_dir: str) -> None:
    """The shared directory can be written here and every worker sees what is written there;
    BadParameters otherwise (before any table is made)."""
    if not os.path.isdir(shared_dir):
        raise BadParameters(f"--shared-dir {shared_dir[:200]} is not a directory")
    probe = os.path.join(os.path.abspath(shared_dir), f".sowsolve-probe-{uuid.uuid4().hex}")
    try:
        with open(probe, "w") as f:
            f.write("sowsolve")
    except OSError as exc:
        raise BadParameters(f"the shared directory {shared_dir[:200]} cannot be written "
                            f"({exc.strerror or exc})") from None
    try:
        seen = client.run(os.path.isfile, probe)
    except Exception:  # noqa: BLE001 - a worker that cannot answer cannot solve either
        raise BadParameters("the Dask workers do not answer") from None
    finally:
        os.unlink(probe)
    blind = [address for address, ok in seen.items() if not ok]
    if blind:
        raise BadParameters(f"{len(blind)} of {len(seen)} Dask workers do not see the shared "
                            f"directory {os.path.abspath(shared_dir)[:200]} (e.g. {blind[0]}): "
                            f"give --shared-dir a directory they all mount at the same path")
