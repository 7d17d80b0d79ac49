"""Fan a run's units out over a Dask cluster (issue 13, item 3; docs/scale-out.md).

Units (one algorithm in one trial, ``runner.units``) draw from their own seeds and write
their own journals in the run folder, so any process may run any unit in any order, and
``runner.merge`` then writes the same files whatever ran where. The run folder is the single
source of truth: a run whose client or workers died is finished by running it again on it.

* ``workers=1`` and no scheduler: in this process (no Dask needed);
* ``workers=N``: a ``distributed.LocalCluster`` of N single-threaded worker processes
  (``processes=False``: threads of this process, for tests); a task is a unit, or a group of
  one classical algorithm's trials stepped together (``runner.lockstep_groups``);
* ``scheduler="tcp://HOST:PORT"``: an existing cluster whose workers import the same qbo
  and see the run folder at the same path; a task is one unit.

Hardware targets (``ibm:``, ``fake:``) are refused here: their job journal (jobs.jsonl) is
shared by all units of a run, so they run in one process without ``--workers``.

Ctrl-C on a local cluster: the terminal sends SIGINT to every process of the run. The worker
processes leave it to this one (they are forked with a handler that only notes it, so no
worker spills a traceback), and this one, interrupted, kills them and closes the cluster with
short timeouts (``STOP_TIMEOUT_S``) instead of the graceful shutdown, which took seconds. The
journals of the units that were running are safe to continue from (``--resume``).
"""

from __future__ import annotations

import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from qbo.errors import BadInput
from qbo.files import Interrupted
from qbo.limits import WORKERS_MAX
from qbo.execution.targets import parse_target
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.figure import Painter
from qbo.experiments.folder import finished
from qbo.experiments.runner import (
    ProgressCallback, Unit, UnitCallback, lockstep_groups, merge, painter_for, prepare, run_experiment, run_lockstep_units,
    unit_done, units,
)

SCHEMES = ("tcp", "tls", "ws", "wss")
_ADDRESS = re.compile(r"^(?P<scheme>[a-z]+)://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(?P<port>[0-9]{1,5})$")
DASK_MISSING = "--workers/--scheduler need Dask: pip install 'qbo[dask]' (dask[distributed])"
STOP_TIMEOUT_S = 0.5  # each of the client's and the cluster's close on Ctrl-C


def parse_scheduler(address: str) -> str:
    """``SCHEME://HOST:PORT`` with a Dask comm scheme and a port in 1..65535, else a one-line
    ValueError naming the value."""
    match = _ADDRESS.match(address.strip()) if isinstance(address, str) else None
    if match is None or match["scheme"] not in SCHEMES or not 1 <= int(match["port"]) <= 65535:
        raise ValueError(f"scheduler must look like tcp://HOST:PORT (scheme {', '.join(SCHEMES)}), got {address!r}")
    return address.strip()


def check_workers(workers: Any) -> int:
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= WORKERS_MAX:
        raise BadInput(f"workers must be an integer from 1 to {WORKERS_MAX} (limit WORKERS_MAX), got {workers!r}")
    return workers


def pending_units(config: ExperimentConfig, out_dir: str | Path) -> list[Unit]:
    """The units of the run whose journals do not say they finished, in ``units`` order
    (none once run.json says the run finished: stages.jsonl then holds every record)."""
    if finished(out_dir) is not None:
        return []
    return [unit for unit in units(config) if not unit_done(config, out_dir, unit)]


def run_fanned_out(
    config: ExperimentConfig, out_dir: str | Path, *, workers: int = 1, scheduler: str | None = None,
    processes: bool = True, on_unit: UnitCallback | None = None, on_progress: ProgressCallback | None = None,
) -> list[dict[str, Any]]:
    """Run (or finish) every unit on ``workers`` local workers or on the cluster at
    ``scheduler``, then merge; returns the records (as ``runner.run_experiment``).

    ``on_unit`` hears of every finished unit; ``on_progress`` (calls within a unit) only
    when units run in this process."""
    check_workers(workers)
    address = parse_scheduler(scheduler) if scheduler is not None else None
    if address is None and workers == 1:  # in this process: the runner's own loop
        return run_experiment(config, out_dir, on_progress, on_unit)
    _check_target(config)
    _dask()  # a clean error before the folder is claimed
    lock = prepare(config, out_dir)
    try:
        # regret.png's helper warms up while the cluster works, if a core of this machine is spare
        with painter_for(config, busy=workers if address is None else 0) as painter:
            return _run_units(config, str(Path(out_dir)), workers, address, processes, on_unit, painter)
    finally:
        lock.release()


def _run_units(
    config: ExperimentConfig, out: str, workers: int, address: str | None, processes: bool,
    on_unit: UnitCallback | None, painter: Painter,
) -> list[dict[str, Any]]:
    everything, todo = units(config), pending_units(config, out)
    done = len(everything) - len(todo)
    if todo:
        with _client(workers, address, processes) as client:
            from distributed import as_completed

            # on a local cluster a classical algorithm's trials step together in as many groups
            # as there are workers (runner.lockstep_groups); on a scheduler, whose workers may
            # still be joining, and for every other unit, a task is one unit
            parts = workers if address is None else len(todo)
            futures = {
                client.submit(run_lockstep_units, config, group, out,
                              remember=address is None and not processes,  # threads merge
                              key=f"qbo-units-{group[0].key}-{len(group)}-{_token(out)}", pure=False): group
                for group in lockstep_groups(config, todo, parts)
            }
            for future in as_completed(futures):
                future.result()  # a unit's error (one-line ValueError) surfaces here
                for unit in futures[future]:
                    done += 1
                    if on_unit:
                        on_unit(unit.key, done, len(everything))
    return merge(config, out, painter)


def fan_out(
    fn: Callable[[Any], Any], jobs: Sequence[Any], *, workers: int = 1, scheduler: str | None = None,
    processes: bool = True,
) -> list[Any]:
    """``[fn(job) for job in jobs]``, in this process (``workers=1``, no scheduler) or on the
    same Dask clusters as ``run_fanned_out``; results in job order. For grids of independent
    jobs (bench/), where ``fn`` and the jobs must pickle and ``fn`` must be deterministic in
    its job, so results do not depend on the workers."""
    check_workers(workers)
    address = parse_scheduler(scheduler) if scheduler is not None else None
    if address is None and workers == 1:
        return [fn(job) for job in jobs]
    _dask()
    with _client(workers, address, processes) as client:
        return client.gather(client.map(fn, list(jobs), pure=False))


def _check_target(config: ExperimentConfig) -> None:
    if parse_target(config.target).is_device:
        raise ValueError(f"--workers/--scheduler run simulator targets (exact, aer, aer:NAME), got '{config.target}'")


def _dask() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ValueError(DASK_MISSING) from None


def _token(out: str) -> str:
    """Distinguishes the tasks of two run folders on one shared scheduler."""
    import hashlib

    return hashlib.sha256(str(Path(out).resolve()).encode()).hexdigest()[:12]


@contextmanager
def _client(workers: int, address: str | None, processes: bool) -> Iterator[Any]:
    from distributed import Client, LocalCluster

    if address is not None:
        try:
            client = Client(address, timeout="5s")
        except (OSError, TimeoutError) as exc:
            raise ValueError(f"cannot reach the Dask scheduler at '{address}': {exc}") from None
        with client:
            yield client
        return
    import dask

    # on Linux, workers fork from this process, which has qbo imported: a cluster is up much
    # sooner than with spawn, where each worker imports qiskit and scipy again (docs/scale-out.md)
    method = "fork" if sys.platform == "linux" else dask.config.get("distributed.worker.multiprocessing-method")
    with dask.config.set({"distributed.worker.multiprocessing-method": method}), _interrupts_held() as held:
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=processes, dashboard_address=None,
            memory_limit=0, silence_logs=logging.ERROR,
        )
        try:
            client = Client(cluster)
        except BaseException:
            cluster.close()
            raise
    try:
        held.release()  # a Ctrl-C while the cluster started acts now
        yield client
    except (KeyboardInterrupt, Interrupted):  # Ctrl-C, SIGTERM (qbo.files.interruptible)
        _stop_now(client, cluster)
        raise
    except BaseException:
        with cluster, client:
            raise
    with cluster, client:
        pass


class _Held:
    """A Ctrl-C noted while the local cluster starts (``_interrupts_held``)."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.handler: Any = None  # SIGINT's handler before the hold, which the noted signal goes to

    def note(self, signum: int, frame: Any) -> None:
        self.signum = signum

    def release(self) -> None:
        """Deliver a noted SIGINT to the handler it would have met (KeyboardInterrupt, or
        ``qbo.files.Interrupted`` under ``interruptible``)."""
        signum, self.signum = self.signum, None
        if signum is not None and callable(self.handler):
            self.handler(signum, None)


@contextmanager
def _interrupts_held() -> Iterator[_Held]:
    """While the worker processes fork, SIGINT only notes that it came (``_Held.release``
    delivers it later) and SIGTERM has its default action: the workers inherit both, so a
    Ctrl-C sent to the whole process group leaves them to this process (which kills them,
    ``_stop_now``) instead of spilling a traceback each, and Dask can still terminate them.
    Off the main thread (no signal handlers there), as is."""
    held = _Held()
    if threading.current_thread() is not threading.main_thread():
        yield held
        return
    held.handler = signal.signal(signal.SIGINT, held.note)
    term = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        yield held
    finally:
        signal.signal(signal.SIGINT, held.handler)
        signal.signal(signal.SIGTERM, term)


def _stop_now(client: Any, cluster: Any) -> None:
    """Interrupted: kill the worker processes at once, then close the client and the cluster
    with short timeouts (the graceful close waits for the workers for seconds)."""
    from distributed import Nanny

    for worker in list(cluster.workers.values()):
        if isinstance(worker, Nanny) and worker.pid is not None:
            with suppress(ProcessLookupError):
                os.kill(worker.pid, signal.SIGKILL)
    with suppress(Exception):
        client.close(timeout=STOP_TIMEOUT_S)
    with suppress(Exception):
        cluster.close(timeout=STOP_TIMEOUT_S)
