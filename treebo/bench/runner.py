"""Running benchmarks: one run (:func:`run_one`) and grids of runs that resume.

A grid (:func:`run_grid`) is every run of problems x surrogates x seeds
(:func:`plan_grid`). Before it starts, the records already in its results
directory are read and every run they hold with at least the requested number
of calls is skipped, so an interrupted grid resumes where it stopped, and
adding a surrogate or a seed to an existing results directory runs only the
missing runs. Runs go to worker processes (or threads, or any executor); each
finished run's record is appended by this process, as soon as it arrives.
"""

from __future__ import annotations

import concurrent.futures as cf
import datetime
import functools
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._checks import check_int
from ..parallel import Job, Workers, process_pool, resolve_executor, run_evaluations
from ..parallel.executors import InlineExecutor
from ..problems import problem_family
from .presets import (
    N_INITIAL,
    build_problem,
    check_preset,
    default_n_calls,
    default_n_initial,
    minimize_settings,
)
from .records import append_record, build_record, completed_runs, load_results
from .spec import RunSpec

if TYPE_CHECKING:
    from distributed import Client

    from ..storage import SQLiteStorage

__all__ = ["BenchError", "run_one", "plan_grid", "run_grid", "parse_seeds", "parse_int_ranges"]

#: The executors :func:`run_grid` makes itself, by name.
_EXECUTORS = ("process", "thread")


class BenchError(RuntimeError):
    """Some runs of a grid failed; the others were written. ``failures`` lists them.

    Parameters
    ----------
    message : str
        The error message.
    failures : list of (RunSpec, str)
        Each failed run and its error text.
    """

    def __init__(self, message: str, failures: list[tuple[RunSpec, str]]):
        super().__init__(message)
        self.failures = failures


def run_one(
    spec: RunSpec,
    callback: Callable | None = None,
    storage: str | os.PathLike | SQLiteStorage | None = None,
) -> dict:
    """Run one benchmark and return its record.

    Parameters
    ----------
    spec : RunSpec
    callback : callable, optional
        Passed to :func:`~treebo.minimize` (called after every evaluation with
        the result so far).
    storage : str, path-like or SQLiteStorage, optional
        Passed to :func:`~treebo.minimize`: every trial is committed to this
        SQLite study as soon as it is asked and told, and a study it already
        holds for this run is resumed (only the evaluations missing to
        ``spec.n_calls`` are made). The record then covers every stored
        evaluation, except ``eval_time`` (None for evaluations of earlier
        calls), ``started`` and ``wall_time``, which are this call's.

    Returns
    -------
    dict
        The record (JSON-serializable), laid out as
        :func:`~treebo.bench.records.build_record` says: the run's identity
        and settings, per evaluation ``x``, ``values``, ``best_so_far``,
        ``regret`` (None when the optimum is unknown), ``fit_time``,
        ``acq_time`` and ``eval_time``, and ``versions``, ``started``,
        ``wall_time``, ``message`` and ``key``.

    Raises
    ------
    ValueError
        If ``spec.n_calls`` leaves no BO iteration after the initial design,
        or for invalid problem parameters or overrides.
    ~treebo.storage.StorageLockedError
        If ``storage`` is in use by another process.
    """
    # Through treebo's public name, which stays put wherever the optimizer's
    # modules define it (and is imported lazily: it pulls in scikit-learn).
    from .. import minimize

    n_calls = int(spec.n_calls)
    problem = build_problem(spec)
    settings = minimize_settings(spec, problem)
    n_initial = settings.get("n_initial_points", N_INITIAL)
    if n_calls <= n_initial:
        raise ValueError(
            f"n_calls must be larger than the {n_initial} initial points, got {spec.n_calls!r}"
        )
    eval_times: list[float] = []

    def objective(x: Any) -> float:
        start = time.perf_counter()
        try:
            return problem(x)
        finally:
            eval_times.append(time.perf_counter() - start)

    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    wall = time.perf_counter()
    result = minimize(
        objective, problem.space, n_calls=n_calls, callback=callback, storage=storage, **settings
    )
    wall = time.perf_counter() - wall
    # Evaluations are made one at a time, in order: those of earlier calls on
    # a resumed storage come first, and were timed by those calls.
    eval_time: list[float | None] = [None] * (len(result.func_vals) - len(eval_times))
    eval_time.extend(eval_times)
    return build_record(
        spec,
        problem,
        settings,
        result,
        eval_time=eval_time,
        started=started,
        wall_time=wall,
    )


# -- grids -----------------------------------------------------------------------------------
def parse_seeds(tokens: Sequence[str | int]) -> list[int]:
    """Seeds from integers and ranges such as ``"0-4"`` or ``"1,3,5"``.

    Parameters
    ----------
    tokens : sequence of str or int

    Returns
    -------
    list of int
        Non-negative seeds, each once, in the order given.

    Raises
    ------
    ValueError
        For anything but non-negative integers and increasing ranges.
    """
    return parse_int_ranges(tokens, "--seeds")


def parse_int_ranges(tokens: Sequence[str | int], name: str) -> list[int]:
    """Non-negative integers from integers and ranges such as ``"0-4"`` or ``"1,3,5"``.

    What ``--seeds`` and the bbob selections (``--functions``, ``--dims``,
    ``--instances``) take.

    Parameters
    ----------
    tokens : sequence of str or int
    name : str
        The option, for error messages (e.g. ``"--instances"``).

    Returns
    -------
    list of int
        Each once, in the order given.

    Raises
    ------
    ValueError
        For anything but non-negative integers and increasing ranges, naming
        ``name``.
    """
    values: list[int] = []
    for token in tokens:
        for part in str(token).split(","):
            try:
                if "-" in part:
                    low, high = (int(v) for v in part.split("-", 1))
                    if high < low:
                        raise ValueError
                    values.extend(range(low, high + 1))
                elif part:
                    values.append(int(part))
            except ValueError:
                raise ValueError(
                    f"{name} takes integers and ranges like 0-4, got {token!r}"
                ) from None
    if not values or min(values) < 0:
        raise ValueError(f"{name} must give non-negative integers, got {list(tokens)!r}")
    return list(dict.fromkeys(values))


def _as_list(value: str | int | Sequence[Any], name: str) -> list:
    items = [value] if isinstance(value, (str, int)) else list(value)
    if not items:
        raise ValueError(f"{name} must not be empty")
    return items


def plan_grid(
    problems: str | Sequence[str],
    surrogates: str | Sequence[str],
    seeds: int | Sequence[int],
    n_calls: int | None = None,
    *,
    preset: str = "default",
    problem_params: dict | None = None,
    overrides: dict | None = None,
) -> list[RunSpec]:
    """The runs of a grid, validated (unknown names raise ``ValueError`` listing the valid ones).

    Parameters
    ----------
    problems, surrogates : str or list of str
        Registered names.
    seeds : int or list of int
        Repeat indices ``>= 0``; an int ``n`` means ``0..n-1``.
    n_calls : int, optional
        Evaluations per run, ``> 5``; by default :func:`default_n_calls` of
        each problem and preset.
    preset : {"default", "paper"}
    problem_params : dict, optional
        Problem name -> extra parameters; problems not in it get none.
    overrides : dict, optional
        :func:`~treebo.minimize` arguments that replace the preset's, the same
        for every run.

    Returns
    -------
    list of RunSpec
        One per problem, seed and surrogate, in that nesting order (the
        surrogate varies fastest).
    """
    from ..surrogates import available_surrogates

    check_preset(preset)
    problems = _as_list(problems, "problems")
    surrogates = _as_list(surrogates, "surrogates")
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        seeds = list(range(check_int(seeds, "seeds", 1)))
    seeds = _as_list(seeds, "seeds")
    for name in problems:
        problem_family(name)  # raises for unknown names
    for name in surrogates:
        if name not in available_surrogates():
            raise ValueError(f"unknown surrogate {name!r}; choose one of {available_surrogates()}")
    for seed in seeds:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seeds must be non-negative integers, got {seed!r}")
    n_initial = max(default_n_initial(p, preset) for p in problems) if problems else N_INITIAL
    if n_calls is not None and (
        isinstance(n_calls, bool) or not isinstance(n_calls, int) or n_calls <= n_initial
    ):
        raise ValueError(
            f"n_calls must be an integer > {n_initial} (the initial points), got {n_calls!r}"
        )
    params = problem_params or {}
    return [
        RunSpec(
            problem=p,
            surrogate=s,
            seed=int(r),
            n_calls=n_calls if n_calls is not None else default_n_calls(p, preset),
            preset=preset,
            problem_params=dict(params.get(p, {})),
            overrides=dict(overrides or {}),
        )
        for p in problems
        for r in seeds
        for s in surrogates
    ]


def run_grid(
    problems: str | Sequence[str],
    surrogates: str | Sequence[str],
    seeds: int | Sequence[int],
    out: str | os.PathLike,
    n_calls: int | None = None,
    *,
    preset: str = "default",
    problem_params: dict | None = None,
    overrides: dict | None = None,
    n_jobs: int | None = None,
    executor: str | cf.Executor | Client = "process",
    progress: bool = True,
) -> list[dict]:
    """Run every missing run of a grid and append its record to ``out``.

    Parameters
    ----------
    problems, surrogates : str or list of str
        Registered names.
    seeds : int or list of int
        Repeat indices (see :class:`RunSpec`). An int ``n`` means ``0..n-1``.
    out : path
        Results directory; records go to ``<out>/<problem>.jsonl``.
    n_calls : int, optional
        Evaluations per run, the 5 initial points included; by default
        :func:`default_n_calls` of each problem and preset.
    preset : {"default", "paper"}
        See :mod:`treebo.bench.presets`.
    problem_params : dict, optional
        Problem name -> extra parameters, e.g. ``{"ising": {"lam": 1e-4}}``.
    overrides : dict, optional
        :func:`~treebo.minimize` arguments that replace the preset's.
    n_jobs : int, optional
        Runs in flight at once; default: the number of CPUs. ``1`` with a
        string ``executor`` runs everything in this process.
    executor : "process", "thread", concurrent.futures.Executor or dask.distributed.Client
        Where runs go: treebo's pool of worker processes (default;
        :func:`treebo.parallel.process_pool`, fresh interpreters, never forks
        of this process), a thread pool, or any executor or Dask client you
        pass (e.g. ``dask.distributed.Client``), which is left open.
    progress : bool, default True
        Show a progress bar of the grid on stderr.

    Returns
    -------
    list of dict
        The new records, in order of completion.

    Raises
    ------
    BenchError
        After the grid, if some runs raised; every other run was written.
    """
    specs = plan_grid(
        problems,
        surrogates,
        seeds,
        n_calls,
        preset=preset,
        problem_params=problem_params,
        overrides=overrides,
    )
    if n_jobs is not None and (
        isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1
    ):
        raise ValueError(f"n_jobs must be a positive integer or None, got {n_jobs!r}")
    if isinstance(executor, str):
        if executor not in _EXECUTORS:
            raise ValueError(
                "executor must be 'process', 'thread', a concurrent.futures."
                f"Executor or a dask.distributed.Client, got {executor!r}"
            )
    else:
        resolve_executor(n_jobs or 1, executor, None, dry_run=True)  # only checks it
    out = Path(out)
    done = completed_runs(load_results(out)) if out.exists() else {}
    todo = [s for s in specs if done.get(s.key(), 0) < s.n_calls]
    if progress and len(todo) < len(specs):
        print(
            f"bench: {len(specs) - len(todo)} of {len(specs)} runs already in {out}, skipped",
            file=sys.stderr,
        )
    if not todo:
        return []
    workers = min(n_jobs or os.cpu_count() or 1, len(todo))
    grid = _Grid(out, todo, progress)
    try:
        _run_jobs(grid, executor, n_jobs, workers)
    finally:
        grid.close()
    if grid.failures:
        raise BenchError(
            f"{len(grid.failures)} of {len(todo)} runs failed (the other "
            f"{len(grid.records)} were written to {out})",
            grid.failures,
        )
    return grid.records


class _Grid:
    """A running grid: its runs as jobs of the driver, its records, failures and progress bar.

    A :class:`~treebo.parallel.JobSource`: each job is a run (its argument a
    :class:`RunSpec`); the driver gives each record back as it arrives.
    """

    def __init__(self, out: Path, todo: list[RunSpec], progress: bool):
        from .._progress import ProgressBar

        self.out, self.todo = out, todo
        self.queue = deque(enumerate(todo))
        self.records: list[dict] = []
        self.failures: list[tuple[RunSpec, str]] = []
        # The bar counts evaluations, so a long run shows progress and the time
        # left; runs in worker processes count when they finish.
        self.bar = (
            ProgressBar(sum(spec.n_calls for spec in todo), label="bench", stream=sys.stderr)
            if progress
            else None
        )
        self.counted = 0  # evaluations of the run in progress in this process

    def count_evaluation(self, result: Any) -> None:
        """Callback of a run made in this process: one more evaluation on the bar."""
        self.counted += 1
        if self.bar:
            self.bar.update(1)

    def _run_over(self, spec: RunSpec) -> None:
        if self.bar:  # the rest of this run's evaluations (all of it for a worker's run)
            self.bar.update(max(spec.n_calls - self.counted, 0))
        self.counted = 0

    # -- the driver's job source -----------------------------------------------------
    def next_jobs(self, n_jobs: int) -> list[Job]:
        jobs: list[Job] = []
        while self.queue and len(jobs) < n_jobs:
            number, spec = self.queue.popleft()
            jobs.append(Job(number, spec))
        return jobs

    def finish(self, job: Job, value: Any, error: str | None, eval_time: float | None) -> None:
        if error is None:
            self.record(job.argument, value)
        else:  # one failed run must not stop the grid
            self.fail(job.argument, error)

    def interrupted(self, jobs: list[Job]) -> None:
        """Nothing to record: a run in flight writes its record only when it finishes."""

    # -- what happened -----------------------------------------------------------------
    def record(self, spec: RunSpec, record: dict) -> None:
        """Append a finished run's record to the results directory."""
        self._run_over(spec)
        append_record(self.out, record)
        self.records.append(record)
        shown = record["regret"][-1] if record["regret"] else record["best_so_far"][-1]
        if self.bar:
            self.bar.update(1, last=f"{spec.problem}/{spec.surrogate}/{spec.seed}", final=shown)

    def fail(self, spec: RunSpec, text: str) -> None:
        """Note a failed run (``text`` is its error) and say so on stderr; the grid goes on."""
        self._run_over(spec)
        self.failures.append((spec, text))
        print(
            f"bench: run {spec.problem}/{spec.surrogate}/seed {spec.seed} failed: {text}",
            file=sys.stderr,
        )
        if self.bar:
            self.bar.update(1, failed=len(self.failures))

    def close(self) -> None:
        if self.bar:
            self.bar.close()


def _run_jobs(
    grid: _Grid, executor: str | cf.Executor | Client, n_jobs: int | None, workers: int
) -> None:
    """Run every run of ``grid`` through the driver, ``workers`` at a time.

    One run at a time in this process (its evaluations counted on the
    progress bar as they are made); ``"process"`` is
    :func:`treebo.parallel.process_pool`, shared with :func:`~treebo.minimize`
    and kept for later use; ``"thread"`` a thread pool of this grid's own;
    anything else goes through :func:`treebo.parallel.resolve_executor` and
    is left open. A run lost with its worker is a failed run, not retried.
    """
    func: Callable = run_one
    threads: cf.ThreadPoolExecutor | None = None
    if executor == "thread" and workers > 1:
        threads = cf.ThreadPoolExecutor(max_workers=workers)
        pool: Workers = Workers(threads, workers, owned=False, timeout=None, max_retries=0)
    elif isinstance(executor, str) and workers == 1:
        pool = Workers(InlineExecutor(), 1, owned=True, timeout=None, max_retries=0)
        if grid.bar:
            func = functools.partial(run_one, callback=grid.count_evaluation)
    elif isinstance(executor, str):
        pool = Workers(process_pool(workers), workers, owned=True, timeout=None, max_retries=0)
    else:
        found, n_workers, owned = resolve_executor(n_jobs, executor, None)
        pool = Workers(found, n_workers, owned, timeout=None, max_retries=0)
    try:
        run_evaluations(grid, func, pool)
    finally:
        if threads is not None:
            threads.shutdown(wait=True, cancel_futures=True)
