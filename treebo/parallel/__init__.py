"""Evaluating the objective through any ``concurrent.futures.Executor``.

:func:`run_evaluations` is the one driver of every run (``minimize``,
``minimize_multifidelity``, the CLI, ``TreeBOSearchCV``): it takes jobs from a
:class:`JobSource` and keeps ``n_workers`` evaluations in flight and proposes a new
point as soon as one finishes (asynchronous, not in synchronous batches), so
a slow evaluation never holds up the others. The points being evaluated are
pending trials, which the optimizer shows to its surrogate as constant lies.

Failures are sorted into two kinds:

* the objective raised (any exception, ``SystemExit`` included, and a
  ``KeyboardInterrupt`` anywhere but the driver's main thread), returned
  NaN/inf/None, or ran past ``timeout``: a *failed* trial, recorded with its
  error text and never retried;
* the evaluation was *lost* (the executor raised instead of returning: a
  worker process killed, a broken pool, Dask's ``KilledWorker``, a cancelled
  future): it is submitted again up to ``max_retries`` times, then recorded as
  failed. An executor that refuses new work ends the run with a message.

Either way the loop goes on and every result that came back is told, so
nothing told is lost (with ``storage=`` it is committed at once). Ctrl-C in
the driver (``KeyboardInterrupt`` in its main thread) stops the run: what is
in flight stays pending and the exception reaches the caller.

An evaluation that overruns ``timeout`` and ignores the worker's alarm is
given up a second later: in treebo's own pool its worker is killed with the
pool, which a fresh one replaces (evaluations of other trials killed with it
are submitted again, not counted as retries); the future of any other
executor is cancelled and abandoned. A Dask cluster left with no workers for
``DASK_NO_WORKERS_TIMEOUT`` seconds ends the run, leaving what is in flight
pending.

Executors: the evaluations run in the calling process when there is nothing
to run in parallel; ``n_jobs > 1`` (or a ``timeout``) uses a loky process pool
(:func:`process_pool`), which ships closures and lambdas with cloudpickle and
reports dead workers; any ``concurrent.futures.Executor`` may be passed; a
``dask.distributed.Client`` is used through ``client.get_executor(pure=False)``.

The modules: ``task`` (what runs in a worker: the objective, its timeout,
the watchdog), ``executors`` (the inline executor, the process pool, Dask)
and ``scheduler`` (the loop that keeps evaluations in flight).
"""

from .executors import process_pool, resolve_executor, warm_up
from .scheduler import Job, JobSource, Workers, run_evaluations

__all__ = [
    "resolve_executor",
    "run_evaluations",
    "process_pool",
    "warm_up",
    "DASK_NO_WORKERS_TIMEOUT",
    "Job",
    "JobSource",
    "Workers",
]

#: Seconds a Dask cluster may have no workers, while evaluations wait for one,
#: before the run stops. Raise it for an adaptive cluster that scales up from
#: zero more slowly (the scheduling loop reads it here at the start of each run).
DASK_NO_WORKERS_TIMEOUT = 60.0
