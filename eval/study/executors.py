"""Where tasks run: in this process, on a local process pool, or on a Dask cluster.

    executor_for(jobs=1, scheduler=None)   # InProcess; ProcessPool(jobs) for jobs > 1; Dask(scheduler)

An executor's `run(calls)` takes (function, args, code) triples and yields (position, record) as tasks finish,
in completion order; `close()` cancels what has not started. Workers build their own e-graphs: egglog objects
are bound to their thread and cannot be pickled, so a task carries program text and settings, never e-graphs.

The process pool starts its workers with `spawn` (a fresh interpreter, no inherited egglog state or threads).
A task that kills its worker process ends a process-pool sweep (`WorkerDied`, the finished tasks are kept); on
Dask, which retries such a task on other workers, it becomes a recorded failure (`KilledWorker`).
Dask (`pip install 'eqjax[cluster]'`) is imported only here: `scheduler="local"` starts a `LocalCluster` of
`jobs` single-threaded worker processes, `scheduler="tcp://host:8786"` connects to a running scheduler whose
workers have the same eqjax installed (a worker with other code records every task as failed, naming both
code versions).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from eval.study.task import call_task, resolve
from ir.errors import EqjaxError

Call = tuple[str, dict[str, Any], str]  # function path, args, code version


class ExecutorUnavailable(EqjaxError):
    """An executor that cannot start here: Dask not installed, a scheduler that does not answer."""


class WorkerDied(EqjaxError):
    """A worker process of the pool died under a task: the pool cannot go on."""


class InProcess:
    name = "in-process"

    def run(self, calls: Sequence[Call]) -> Iterator[tuple[int, dict]]:
        for position, call in enumerate(calls):
            yield position, call_task(*call)

    def close(self) -> None:
        pass


class ProcessPool:
    def __init__(self, jobs: int):
        if jobs < 1:
            raise ValueError(f"a process pool needs at least one worker, got jobs={jobs}")
        self.jobs = jobs
        self.name = f"process pool ({jobs} workers)"
        self._pool = None

    def run(self, calls: Sequence[Call]) -> Iterator[tuple[int, dict]]:
        import multiprocessing
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
        from concurrent.futures.process import BrokenProcessPool

        self._pool = ProcessPoolExecutor(self.jobs, mp_context=multiprocessing.get_context("spawn"))
        pending = {self._pool.submit(call_task, *call): position for position, call in enumerate(calls)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=pending.get):
                position = pending.pop(future)
                try:
                    outcome = future.result()
                except BrokenProcessPool:
                    raise WorkerDied(f"a worker process died (killed, out of memory, or a crash in native code) "
                                     f"under one of the {calls[position][0]} tasks running (the pool does not say "
                                     "which); the finished tasks are kept: run the rest with --resume, or with "
                                     "--jobs 1 to see the crash") from None
                yield position, outcome

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


class Dask:
    """`release`: the import path of a function run once in each worker's task thread before the client closes,
    to drop state bound to that thread (egglog objects must be freed in the thread that made them; freed at the
    workers' exit they print "EGraph is unsendable, but is being dropped on another thread")."""

    def __init__(self, scheduler: str, jobs: int = 2, release: str | None = None):
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ExecutorUnavailable("a Dask scheduler needs dask.distributed: pip install 'eqjax[cluster]'") from None
        if release is not None:
            resolve(release)  # a path that names nothing fails here, not silently on the workers at the end
        self.scheduler, self.jobs, self.release = scheduler, jobs, release
        self.name = (f"Dask LocalCluster ({jobs} workers)" if scheduler == "local" else f"Dask scheduler {scheduler}")
        self._client = self._cluster = None
        self._futures: list = []

    def _connect(self):
        from distributed import Client, LocalCluster

        try:
            if self.scheduler == "local":
                self._cluster = LocalCluster(n_workers=self.jobs, threads_per_worker=1, processes=True,
                                             dashboard_address=None)
                self._client = Client(self._cluster)
            else:
                self._client = Client(self.scheduler, timeout="20s")
        except OSError as e:
            raise ExecutorUnavailable(f"cannot reach the Dask scheduler {self.scheduler}: {e}") from None
        return self._client

    def run(self, calls: Sequence[Call]) -> Iterator[tuple[int, dict]]:
        from distributed import as_completed

        client = self._connect()
        # pure=False: a task's key is its position in this run, Dask must not merge or cache equal calls
        self._futures = [client.submit(call_task, *call, pure=False) for call in calls]
        position = {future.key: i for i, future in enumerate(self._futures)}
        for future in as_completed(self._futures):
            try:
                outcome = future.result()
            except Exception as e:  # the worker died under this task as often as Dask retries (KilledWorker)
                outcome = {"result": None, "error": {"type": type(e).__name__, "message": str(e), "traceback": ""},
                           "seconds": 0.0}
            yield position[future.key], outcome
            future.release()

    def close(self) -> None:
        if self._client is not None:
            if self._futures:
                self._client.cancel(self._futures)
            if self.release:
                self._release_workers()
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = None
        self._futures = []

    def _release_workers(self) -> None:
        client = self._client
        pinned = [client.submit(_call, self.release, workers=[w], allow_other_workers=False, pure=False)
                  for w in client.scheduler_info()["workers"]]
        client.gather(pinned, errors="skip")  # closing goes on: a worker that cannot release exits anyway


def _call(function: str) -> None:
    resolve(function)()


def executor_for(jobs: int = 1, scheduler: str | None = None, release: str | None = None):
    """InProcess for one job, a ProcessPool for more, Dask when a scheduler is named ("local" or an address);
    `release` as `Dask` takes it."""
    if scheduler:
        return Dask(scheduler, max(jobs, 1), release)
    return ProcessPool(jobs) if jobs > 1 else InProcess()
