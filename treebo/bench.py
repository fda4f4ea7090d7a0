"""Regret-curve experiments: a grid of problems x surrogates x seeds.

Every run minimizes one benchmark problem (:mod:`treebo.problems`) with one
surrogate from one seed and becomes one JSON record, appended as one line to
``<out>/<problem>.jsonl`` as soon as it finishes. Before a grid starts, the
records already in ``out`` are read and every run they hold (with at least the
requested number of calls) is skipped, so an interrupted grid resumes where it
stopped, and adding a surrogate or a seed to an existing results directory
runs only the missing runs.

Protocol
--------
Both presets follow Kim & Choi (2022, §4): 5 initial scrambled-Sobol points
shared by every surrogate of a seed, then one point per iteration chosen by
expected improvement over 50,000 scrambled-Sobol candidates, forests of
B = 100 trees. They differ in the details (``problems.md`` §1):

``"default"``
    treebo's own defaults: the initial design is treebo's Sobol design drawn
    from ``random_state=seed``; tree surrogates are fitted on the log-scaled
    targets (``y_transform="auto"``); 5,000 local candidates around the best
    points join the 50,000 Sobol ones.
``"paper"``
    the official code's protocol: the initial design is qmcpy's scrambled
    Sobol net with seed ``42 (r + 1)`` for repeat ``r`` (passed through ``x0``;
    mapped onto the space the way that code maps it: reals scaled to the box,
    integers truncated, binaries rounded at 0.5, categoricals by arg-max);
    targets scaled affinely (``y_transform="standardize"``: an affine scaling
    of the targets leaves EI's arg-max unchanged, up to the official code's
    1e-5 jitter on sigma, so this is the official min-max scaling); Sobol
    candidates only (``local_search=False``); ``random_state = 42 (r + 1)``;
    default budgets of 500 iterations (100 for AutoML) after the 5 initial
    points.

With both presets, the binary problems build a new instance for every seed:
seed ``r`` uses case seed :func:`~treebo.problems.paper_case_seed` ``(r)``
(7270, 5390, ... for r = 0, 1, ...), as the official code does, unless an
``instance`` is given in ``problem_params``.

Deviations of the ``paper`` preset from the official code, all deliberate:

- treebo snaps every point onto the feasible set before the surrogate sees
  it; the official code models the binary problems' 5 initial points and every
  AutoML point unsnapped (continuous relaxations), and snaps only inside the
  objective;
- BO proposals for integers are rounded (treebo's ``Integer``), not
  truncated, so every integer value is reachable;
- the GP is treebo's (Matérn 5/2 ARD, marginal likelihood, 5 L-BFGS-B polishes
  of the best Sobol candidates) rather than 100 L-BFGS-B restarts, and its
  hyperparameters are refitted at every iteration on every problem;
- qmcpy 2.x's scrambling may not reproduce the 2022 qmcpy's points for the
  same seed (``problems.md`` §9), and the Sobol candidates are seeded from
  ``random_state`` rather than unseeded;
- objectives are computed in float64 (COMBO's are float32).
"""

from __future__ import annotations

import concurrent.futures as cf
import datetime
import json
import math
import multiprocessing
import os
import platform
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._checks import check_int
from .problems import Problem, get_problem, paper_case_seed, problem_family
from .space import Binary, Categorical, Integer, Real, Space

__all__ = ["PRESETS", "RunSpec", "run_one", "run_grid", "plan_grid", "load_results",
           "append_record", "to_jsonable", "parse_seeds", "trajectory",
           "completed_runs", "regret_curves", "Curves", "summary_table", "format_summary",
           "paired_wins", "format_paired",
           "surrogate_order", "paper_initial_design", "minimize_settings", "default_n_calls",
           "BenchError", "SCHEMA_VERSION"]

#: Accepted values of ``preset``.
PRESETS = ("default", "paper")
#: Version of the record layout written by :func:`run_one`.
SCHEMA_VERSION = 1
#: Size of the initial design in both presets.
N_INITIAL = 5

_PAPER_ITERATIONS = {"continuous": 500, "binary": 500, "mixed": 100}
_DEFAULT_ITERATIONS = {"continuous": 95, "binary": 95, "mixed": 95}


class BenchError(RuntimeError):
    """Some runs of a grid failed; the others were written. ``failures`` lists them."""

    def __init__(self, message: str, failures: list[tuple[RunSpec, str]]):
        super().__init__(message)
        self.failures = failures


def default_n_calls(problem: str, preset: str = "default") -> int:
    """Evaluations per run (the 5 initial points included) when none is given.

    ``paper``: 505 for continuous and binary problems, 105 for AutoML (the
    official code's ``NUM_ITER`` plus the initial design); ``default``: 100.

    Parameters
    ----------
    problem : str
        A registered problem name (its family sets the budget).
    preset : {"default", "paper"}, default "default"

    Returns
    -------
    int
        Evaluations per run: the 5 initial points plus the preset's BO iterations.
    """
    _check_preset(preset)
    table = _PAPER_ITERATIONS if preset == "paper" else _DEFAULT_ITERATIONS
    return N_INITIAL + table[problem_family(problem)]


def _check_preset(preset: str) -> str:
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {list(PRESETS)}, got {preset!r}")
    return preset


@dataclass
class RunSpec:
    """One run of a grid.

    Parameters
    ----------
    problem : str
        A name from :func:`~treebo.problems.available_problems`.
    surrogate : str
        A name from :func:`~treebo.surrogates.available_surrogates`.
    seed : int
        Repeat index ``r >= 0``; fixes the initial design (shared by all
        surrogates), the run's random state and, for binary problems, the
        instance.
    n_calls : int
        Evaluations, the initial design included.
    preset : {"default", "paper"}
    problem_params : dict
        Extra problem parameters (e.g. ``{"lam": 1e-4}``).
    overrides : dict
        :func:`~treebo.minimize` arguments that replace the preset's (e.g.
        ``{"n_candidates": 5000}``); JSON-serializable.
    """

    problem: str
    surrogate: str
    seed: int
    n_calls: int
    preset: str = "default"
    problem_params: dict = field(default_factory=dict)
    overrides: dict = field(default_factory=dict)

    def key(self) -> str:
        """Identity of the run, without ``n_calls``."""
        return _run_key(self.problem, self.problem_params, self.surrogate, self.seed,
                        self.preset, self.overrides)


def _run_key(problem: str, problem_params: dict, surrogate: str, seed: int, preset: str,
             overrides: dict) -> str:
    return json.dumps([problem, problem_params, surrogate, int(seed), preset, overrides],
                      sort_keys=True, default=str)


# -- one run ---------------------------------------------------------------------------------
def build_problem(spec: RunSpec) -> Problem:
    """The problem instance of a run (a new binary instance per seed)."""
    params = dict(spec.problem_params)
    if problem_family(spec.problem) == "binary":
        params.setdefault("instance", paper_case_seed(spec.seed))
    return get_problem(spec.problem, **params)


def paper_initial_design(space: Space, repeat: int, n_points: int = N_INITIAL) -> list:
    """The official code's initial design for repeat ``repeat``, as user-facing points.

    qmcpy's scrambled Sobol net in Gray-code order, ``seed = 42 (repeat + 1)``,
    one column per encoded column of ``space``, mapped the way Kim & Choi's
    code maps its box: reals scaled to their bounds (on the log scale for a
    log-uniform prior), integers scaled then truncated with ``int()``, binaries
    set to 1 where the column is at least 0.5, categoricals by the arg-max of
    their one-hot columns.

    Parameters
    ----------
    space : Space
    repeat : int
        Repeat index ``r >= 0``.
    n_points : int, default 5

    Returns
    -------
    list of points (lists or dicts, as ``space`` gives them)
    """
    import warnings

    import qmcpy

    if isinstance(repeat, bool) or not isinstance(repeat, (int, np.integer)) or repeat < 0:
        raise ValueError(f"repeat must be a non-negative integer, got {repeat!r}")
    net = qmcpy.DigitalNetB2(space.n_columns, seed=42 * (int(repeat) + 1), order="GRAY")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = np.asarray(net.gen_samples(n_points, warn=False), dtype=float)
    raw = raw.reshape(n_points, space.n_columns)
    columns = []
    for dim, cols in zip(space.dimensions, _column_slices(space)):
        u = raw[:, cols]
        if isinstance(dim, Real):
            if dim.prior == "log-uniform":
                lo, hi = math.log(dim.low), math.log(dim.high)
                values = [float(math.exp(lo + v * (hi - lo))) for v in u[:, 0]]
            else:
                values = [float(dim.low + v * (dim.high - dim.low)) for v in u[:, 0]]
        elif isinstance(dim, Integer):
            if dim.prior == "log-uniform":
                lo, hi = math.log(dim.low), math.log(dim.high)
                values = [int(math.exp(lo + v * (hi - lo))) for v in u[:, 0]]
            else:
                values = [int(dim.low + v * (dim.high - dim.low)) for v in u[:, 0]]
        elif isinstance(dim, Binary):
            values = [int(v >= 0.5) for v in u[:, 0]]
        elif isinstance(dim, Categorical):
            values = [dim.categories[int(np.argmax(row))] for row in u]
        else:  # pragma: no cover - every treebo dimension is handled above
            raise TypeError(f"unsupported dimension {dim!r}")
        columns.append(values)
    rows = [list(values) for values in zip(*columns)]
    if isinstance(space.decode(np.zeros((1, space.n_columns)))[0], dict):
        return [dict(zip(space.names, row)) for row in rows]
    return rows


def _column_slices(space: Space) -> list[slice]:
    return [space.columns_of(i) for i in range(space.n_dims)]


def minimize_settings(spec: RunSpec, problem: Problem) -> dict:
    """Keyword arguments of :func:`~treebo.minimize` for a run (``x0`` included).

    Parameters
    ----------
    spec : RunSpec
    problem : Problem
        The run's problem (:func:`build_problem`); the ``paper`` preset draws
        its initial design on ``problem.space``.

    Returns
    -------
    dict
        ``surrogate``, ``n_initial_points=5`` and ``n_candidates=50000``; with
        ``paper`` also ``x0`` (:func:`paper_initial_design`),
        ``y_transform="standardize"``, ``local_search=False`` and
        ``random_state=42 (seed + 1)``, with ``default`` ``random_state=seed``;
        then ``spec.overrides`` replace any of these.

    Raises
    ------
    ValueError
        For an unknown preset, or overrides outside the allowed keys.
    """
    _check_preset(spec.preset)
    settings: dict[str, Any] = {"surrogate": spec.surrogate, "n_initial_points": N_INITIAL,
                                "n_candidates": 50_000}
    if spec.preset == "paper":
        settings.update(x0=paper_initial_design(problem.space, spec.seed),
                        y_transform="standardize", local_search=False,
                        random_state=42 * (spec.seed + 1))
    else:
        settings.update(random_state=int(spec.seed))
    unknown = set(spec.overrides) - _OVERRIDABLE
    if unknown:
        raise ValueError(f"overrides {sorted(unknown)} are not allowed; use {sorted(_OVERRIDABLE)}")
    settings.update(spec.overrides)
    return settings


_OVERRIDABLE = {"n_candidates", "local_search", "y_transform", "acq_optimizer",
                "surrogate_params", "acquisition", "acquisition_params", "initial_design",
                "n_initial_points", "n_local_candidates", "n_jump_candidates",
                "n_local_centers", "local_center_spacing", "distance_variance",
                "explore_every", "explore_length"}


def to_jsonable(value: Any) -> Any:
    """``value`` with numpy scalars as Python numbers, tuples as lists, non-finite floats as None.

    Anything else that JSON cannot hold becomes its ``repr``.
    """
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    return repr(value)


_VERSIONS: dict[str, str] = {}


def versions() -> dict[str, str]:
    """Versions of Python, treebo and the libraries that decide a run's numbers."""
    if not _VERSIONS:
        import qmcpy
        import scipy
        import sklearn

        import treebo

        _VERSIONS.update(python=platform.python_version(), treebo=treebo.__version__,
                         numpy=np.__version__, scipy=scipy.__version__,
                         sklearn=sklearn.__version__, qmcpy=qmcpy.__version__,
                         platform=platform.platform(), machine=platform.machine())
        commit = _git_commit()
        if commit:
            _VERSIONS["treebo_commit"] = commit
    return dict(_VERSIONS)


def _git_commit() -> str | None:
    import subprocess

    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def run_one(spec: RunSpec, callback: Callable | None = None) -> dict:
    """Run one benchmark and return its record.

    Parameters
    ----------
    spec : RunSpec
    callback : callable, optional
        Passed to :func:`~treebo.minimize` (called after every evaluation with
        the result so far).

    Returns
    -------
    dict
        The record (JSON-serializable): ``problem``, ``problem_params`` (the
        instance's parameters), ``surrogate``, ``seed``, ``preset``,
        ``n_calls``, ``n_initial``, ``optimal_value`` (None when unknown),
        per evaluation ``x``, ``values`` (None for a failed evaluation),
        ``best_so_far``, ``regret`` (best-so-far minus the optimal value, the
        paper's "best instantaneous regret"; None when the optimum is unknown),
        ``fit_time``, ``acq_time`` and ``eval_time`` (seconds; 0 fit and
        acquisition time for the initial design), plus ``settings`` (the
        :func:`~treebo.minimize` arguments), ``versions``, ``started``,
        ``wall_time``, ``message`` and ``key``.
    """
    from .optimizer import minimize

    n_calls = int(spec.n_calls)
    if n_calls <= N_INITIAL:
        raise ValueError(f"n_calls must be larger than the {N_INITIAL} initial points, got "
                         f"{spec.n_calls!r}")
    problem = build_problem(spec)
    settings = minimize_settings(spec, problem)
    eval_times: list[float] = []

    def objective(x: Any) -> float:
        start = time.perf_counter()
        try:
            return problem(x)
        finally:
            eval_times.append(time.perf_counter() - start)

    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    wall = time.perf_counter()
    result = minimize(objective, problem.space, n_calls=n_calls, callback=callback, **settings)
    wall = time.perf_counter() - wall

    values, best_so_far, regret = trajectory(result.func_vals, problem.optimal_value)
    f_star = problem.optimal_value
    recorded = {k: v for k, v in settings.items() if k != "x0"}
    recorded["x0"] = "paper_initial_design" if "x0" in settings else None
    return to_jsonable({
        "schema": SCHEMA_VERSION,
        "key": spec.key(),
        "problem": spec.problem,
        "problem_params": dict(spec.problem_params),
        "instance_params": problem.params,
        "surrogate": spec.surrogate,
        "seed": int(spec.seed),
        "preset": spec.preset,
        "overrides": dict(spec.overrides),
        "n_calls": n_calls,
        "n_evaluated": len(values),
        "n_initial": N_INITIAL,
        "optimal_value": f_star,
        "x": result.x_iters,
        "values": values,
        "best_so_far": best_so_far,
        "regret": regret,
        "fit_time": result.fit_time.tolist(),
        "acq_time": result.acq_time.tolist(),
        "eval_time": eval_times,
        "errors": [e for e in result.errors if e],
        "settings": recorded,
        "versions": versions(),
        "started": started,
        "wall_time": wall,
        "message": result.message,
    })


def trajectory(values: Sequence[float], optimal_value: float | None
               ) -> tuple[list, list, list | None]:
    """A run's values, best-so-far and regret as a record stores them.

    Parameters
    ----------
    values : sequence of float
        Objective values in evaluation order; NaN or inf for failed evaluations.
    optimal_value : float or None
        The problem's optimum, when known.

    Returns
    -------
    values : list of float or None
        None for a failed evaluation.
    best_so_far : list of float or None
        None until the first successful evaluation.
    regret : list of float or None, or None
        ``best_so_far - optimal_value`` per evaluation; None when the optimum
        is unknown.
    """
    clean = [None if not math.isfinite(v) else float(v) for v in values]
    best, best_so_far = math.inf, []
    for v in clean:
        if v is not None:
            best = min(best, v)
        best_so_far.append(best if math.isfinite(best) else None)
    regret = None
    if optimal_value is not None:
        regret = [None if b is None else b - optimal_value for b in best_so_far]
    return clean, best_so_far, regret


# -- results on disk -------------------------------------------------------------------------
def load_results(path: str | os.PathLike) -> list[dict]:
    """Read records from a ``.jsonl`` file or from every ``*.jsonl`` file of a directory.

    Lines that are not valid JSON, such as a truncated last line (a run
    killed while writing), are skipped.

    Parameters
    ----------
    path : str or path-like
        A ``.jsonl`` file, or a directory whose ``*.jsonl`` files (not those
        of subdirectories) are read in name order.

    Returns
    -------
    list of dict
        The records, in file and line order; blank lines and lines that are
        not valid JSON are skipped.

    Raises
    ------
    ValueError
        If ``path`` does not exist.
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.jsonl"))
    elif path.exists():
        files = [path]
    else:
        raise ValueError(f"results path {str(path)!r} does not exist")
    records = []
    for file in files:
        with open(file) as handle:
            for line in handle:
                line = line.strip()
                if not line:
                    continue
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    return records


def completed_runs(records: Iterable[dict]) -> dict[str, int]:
    """Run key -> the most evaluations recorded for it.

    Parameters
    ----------
    records : iterable of dict
        As read by :func:`load_results`; records without a ``key`` are ignored.

    Returns
    -------
    dict of str to int
        :meth:`RunSpec.key` -> the most evaluations any record of that run
        holds (its ``n_evaluated``, or ``n_calls`` when that is missing).
    """
    done: dict[str, int] = {}
    for record in records:
        key = record.get("key")
        if key is not None:
            done[key] = max(done.get(key, 0), int(record.get("n_evaluated", record["n_calls"])))
    return done


def append_record(out: Path, record: dict) -> None:
    """Append ``record`` as one line to ``<out>/<problem>.jsonl``, safe beside other writers.

    The line goes out in one ``os.write`` on a descriptor opened with
    ``O_APPEND`` (the kernel puts each write at the end of the file as it is
    then), so records appended by several processes at once (``treebo bench``
    and ``benchmarks/peers.py``, say) never interleave. A buffered file object
    would split a long line into several writes, which could.
    """
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{record['problem']}.jsonl"
    data = (json.dumps(record, sort_keys=True, allow_nan=False) + "\n").encode()
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        # A writer killed mid-line leaves no newline; start on a fresh line so only that
        # half-written record is lost (two writers may both add one: a blank line, skipped).
        size = os.fstat(fd).st_size
        if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)


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
    seeds: list[int] = []
    for token in tokens:
        for part in str(token).split(","):
            try:
                if "-" in part:
                    low, high = (int(v) for v in part.split("-", 1))
                    if high < low:
                        raise ValueError
                    seeds.extend(range(low, high + 1))
                elif part:
                    seeds.append(int(part))
            except ValueError:
                raise ValueError(f"--seeds takes integers and ranges like 0-4, got {token!r}"
                                 ) from None
    if not seeds or min(seeds) < 0:
        raise ValueError(f"--seeds must give non-negative integers, got {list(tokens)!r}")
    return list(dict.fromkeys(seeds))


def _as_list(value: str | Sequence[Any], name: str) -> list:
    items = [value] if isinstance(value, (str, int)) else list(value)
    if not items:
        raise ValueError(f"{name} must not be empty")
    return items


def plan_grid(problems: str | Sequence[str], surrogates: str | Sequence[str],
              seeds: int | Sequence[int], n_calls: int | None = None, *,
              preset: str = "default", problem_params: dict | None = None,
              overrides: dict | None = None) -> list[RunSpec]:
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
    from .surrogates import available_surrogates

    _check_preset(preset)
    problems = _as_list(problems, "problems")
    surrogates = _as_list(surrogates, "surrogates")
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        seeds = list(range(check_int(seeds, "seeds", 1)))
    seeds = _as_list(seeds, "seeds")
    for name in problems:
        problem_family(name)  # raises for unknown names
    for name in surrogates:
        if name not in available_surrogates():
            raise ValueError(f"unknown surrogate {name!r}; choose one of "
                             f"{available_surrogates()}")
    for seed in seeds:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seeds must be non-negative integers, got {seed!r}")
    if n_calls is not None and (isinstance(n_calls, bool) or not isinstance(n_calls, int)
                                or n_calls <= N_INITIAL):
        raise ValueError(f"n_calls must be an integer > {N_INITIAL}, got {n_calls!r}")
    params = problem_params or {}
    return [RunSpec(problem=p, surrogate=s, seed=int(r),
                    n_calls=n_calls if n_calls is not None else default_n_calls(p, preset),
                    preset=preset, problem_params=dict(params.get(p, {})),
                    overrides=dict(overrides or {}))
            for p in problems for r in seeds for s in surrogates]


def run_grid(problems: str | Sequence[str], surrogates: str | Sequence[str],
             seeds: int | Sequence[int], out: str | os.PathLike, n_calls: int | None = None, *,
             preset: str = "default", problem_params: dict | None = None,
             overrides: dict | None = None, n_jobs: int | None = None,
             executor: str | cf.Executor = "process", progress: bool = True) -> list[dict]:
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
        See the module docstring.
    problem_params : dict, optional
        Problem name -> extra parameters, e.g. ``{"ising": {"lam": 1e-4}}``.
    overrides : dict, optional
        :func:`~treebo.minimize` arguments that replace the preset's.
    n_jobs : int, optional
        Runs in flight at once; default: the number of CPUs. ``1`` with a
        string ``executor`` runs everything in this process.
    executor : "process", "thread" or concurrent.futures.Executor
        Where runs go: a process pool (default), a thread pool, or any
        executor you pass (e.g. ``dask.distributed.Client.get_executor()``),
        which is left open.
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
    specs = plan_grid(problems, surrogates, seeds, n_calls, preset=preset,
                      problem_params=problem_params, overrides=overrides)
    out = Path(out)
    done = completed_runs(load_results(out)) if out.exists() else {}
    todo = [s for s in specs if done.get(s.key(), 0) < s.n_calls]
    if progress and len(todo) < len(specs):
        print(f"bench: {len(specs) - len(todo)} of {len(specs)} runs already in {out}, skipped",
              file=sys.stderr)
    if not todo:
        return []
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, int)
                               or n_jobs < 1):
        raise ValueError(f"n_jobs must be a positive integer or None, got {n_jobs!r}")
    workers = min(n_jobs or os.cpu_count() or 1, len(todo))

    from ._progress import ProgressBar

    # The bar counts evaluations, so a long run shows progress and the time
    # left; runs in worker processes count when they finish.
    bar = (ProgressBar(sum(spec.n_calls for spec in todo), label="bench",
                       stream=sys.stderr) if progress else None)
    records: list[dict] = []
    failures: list[tuple[RunSpec, str]] = []
    counted = {"evaluations": 0}  # of the run in progress in this process

    def count_evaluation(result: Any) -> None:
        counted["evaluations"] += 1
        if bar:
            bar.update(1)

    def finish(spec: RunSpec, record: dict | None, error: BaseException | None) -> None:
        if bar:  # the rest of this run's evaluations (all of it for a worker's run)
            bar.update(max(spec.n_calls - counted["evaluations"], 0))
        counted["evaluations"] = 0
        if error is None and record is not None:
            append_record(out, record)
            records.append(record)
            shown = record["regret"][-1] if record["regret"] else record["best_so_far"][-1]
            status = f"{spec.problem}/{spec.surrogate}/{spec.seed}"
            if bar:
                bar.update(1, last=status, final=shown)
        else:
            text = f"{type(error).__name__}: {error}"
            failures.append((spec, text))
            print(f"bench: run {spec.problem}/{spec.surrogate}/seed {spec.seed} failed: {text}",
                  file=sys.stderr)
            if bar:
                bar.update(1, failed=len(failures))

    if isinstance(executor, str) and workers == 1:
        for spec in todo:
            try:
                finish(spec, run_one(spec, count_evaluation if bar else None), None)
            except Exception as error:  # noqa: BLE001 - one failed run must not stop the grid
                finish(spec, None, error)
    else:
        pool, owned = _make_executor(executor, workers)
        try:
            futures = {pool.submit(run_one, spec): spec for spec in todo}
            for future in cf.as_completed(futures):
                spec = futures[future]
                try:
                    finish(spec, future.result(), None)
                except Exception as error:  # noqa: BLE001
                    finish(spec, None, error)
        finally:
            if owned:
                pool.shutdown(wait=True, cancel_futures=True)
    if bar:
        bar.close()
    if failures:
        raise BenchError(f"{len(failures)} of {len(todo)} runs failed (the other "
                         f"{len(records)} were written to {out})", failures)
    return records


def _make_executor(executor: str | cf.Executor, workers: int) -> tuple[cf.Executor, bool]:
    if isinstance(executor, cf.Executor):
        return executor, False
    if executor == "process":
        # spawn: a fresh interpreter per worker, never a fork of a process that
        # already runs scikit-learn's thread pools.
        context = multiprocessing.get_context("spawn")
        return cf.ProcessPoolExecutor(max_workers=workers, mp_context=context), True
    if executor == "thread":
        return cf.ThreadPoolExecutor(max_workers=workers), True
    raise ValueError("executor must be 'process', 'thread' or a concurrent.futures.Executor, "
                     f"got {executor!r}")


# -- curves and tables -----------------------------------------------------------------------
def surrogate_order(names: Iterable[str]) -> list[str]:
    """Distinct surrogate names in registry order (unregistered ones last, as met).

    Parameters
    ----------
    names : iterable of str
        Surrogate names, repeats allowed.

    Returns
    -------
    list of str
        Each name once.
    """
    from .surrogates import available_surrogates

    names = list(dict.fromkeys(names))
    registry = [n for n in available_surrogates() if n in names]
    return registry + [n for n in names if n not in registry]


def _floor(f_star: float | None) -> float:
    return max(1e-12, 1e-12 * abs(f_star)) if f_star is not None else 0.0


def _latest(records: Iterable[dict]) -> list[dict]:
    """One record per run key: the one with the most evaluations."""
    best: dict[str, dict] = {}
    for record in records:
        key = record.get("key") or _run_key(record["problem"], record.get("problem_params", {}),
                                            record["surrogate"], record["seed"],
                                            record.get("preset", "default"),
                                            record.get("overrides", {}))
        if key not in best or record["n_evaluated"] > best[key]["n_evaluated"]:
            best[key] = record
    return list(best.values())


@dataclass
class Curves:
    """Curves of one (problem, surrogate, preset) over seeds.

    Attributes
    ----------
    problem, surrogate, preset : str
    seeds : list of int
    kind : {"regret", "value"}
        ``"regret"``: best-so-far regret against the known optimum (the
        paper's best instantaneous regret); ``"value"``: best-so-far objective
        value, for problems whose optimum is unknown (AutoML).
    curves : ndarray of shape (n_seeds, T + 1)
        Column 0 is the best over the initial design, column t the best after
        BO iteration t (the paper's layout). Regrets are floored at
        ``max(1e-12, 1e-12 |f*|)`` so their log10 is finite.
    iteration_time : ndarray of shape (n_seeds, T)
        Fit plus acquisition seconds of BO iterations 1..T.
    """

    problem: str
    surrogate: str
    preset: str
    seeds: list
    kind: str
    curves: np.ndarray
    iteration_time: np.ndarray

    @property
    def log10(self) -> np.ndarray:
        """``log10`` of the curves (regret kind only)."""
        return np.log10(self.curves)


def regret_curves(records: Iterable[dict], n_calls: int | None = None) -> list[Curves]:
    """Group records by (problem, surrogate, preset) into :class:`Curves`.

    Parameters
    ----------
    records : iterable of dict
        As written by :func:`run_grid` (duplicates of a run: the longest wins).
    n_calls : int, optional
        Cut every run to this many evaluations; by default the shortest run of
        each group sets the length.

    Returns
    -------
    list of Curves
        One per (problem, surrogate, preset), sorted by that triple; the seeds
        of each are in increasing order.

    Raises
    ------
    ValueError
        If a group holds several runs of one seed (other problem parameters
        or overrides), or ``n_calls`` is smaller than the initial design.
    """
    groups: dict[tuple, list[dict]] = {}
    for record in _latest(records):
        groups.setdefault((record["problem"], record["surrogate"],
                           record.get("preset", "default")), []).append(record)
    out = []
    for (problem, surrogate, preset), group in sorted(groups.items()):
        group.sort(key=lambda r: r["seed"])
        seeds = [r["seed"] for r in group]
        if len(set(seeds)) < len(seeds):
            # Runs of one seed with other problem parameters or overrides
            # (e.g. two values of lam) must not be pooled into one curve.
            raise ValueError(f"the records hold several runs of {problem} with {surrogate} "
                             f"({preset}) for one seed, with different problem parameters or "
                             "overrides; keep each experiment in its own results directory")
        n = min(r["n_evaluated"] for r in group)
        if n_calls is not None:
            n = min(n, int(n_calls))
        n0 = group[0].get("n_initial", N_INITIAL)
        if n < n0:
            raise ValueError(f"n_calls must be at least the {n0} initial points, got {n} "
                             f"for {problem} with {surrogate}")
        known = all(r.get("regret") is not None for r in group)
        rows, times = [], []
        for r in group:
            series = r["regret"] if known else r["best_so_far"]
            series = [math.nan if v is None else v for v in series[n0 - 1:n]]
            if known:
                floor = _floor(r.get("optimal_value"))
                series = [max(v, floor) if math.isfinite(v) else v for v in series]
            rows.append(series)
            times.append([f + a for f, a in zip(r["fit_time"][n0:n], r["acq_time"][n0:n])])
        out.append(Curves(problem, surrogate, preset, [r["seed"] for r in group],
                          "regret" if known else "value", np.array(rows, dtype=float),
                          np.array(times, dtype=float)))
    return out


def _named_rows(curves: list[Curves]) -> list[tuple[str, Curves]]:
    """Each curve with its table row name: the problem, plus the preset when several are mixed."""
    several = len({c.preset for c in curves}) > 1
    return [(f"{c.problem} ({c.preset})" if several else c.problem, c) for c in curves]


def summary_table(records: Iterable[dict], n_calls: int | None = None) -> dict[str, dict]:
    """Median final result per problem and surrogate.

    Parameters
    ----------
    records : iterable of dict
        As written by :func:`run_grid`.
    n_calls : int, optional
        Cut every run to this many evaluations (see :func:`regret_curves`).

    Returns
    -------
    dict
        ``{problem: {"kind": "regret" | "value", "n_seeds": {surrogate: n},
        "n_calls": {surrogate: c}, "median": {surrogate: m}, "best": [surrogate, ...]}}``
        where ``c`` is the evaluations per run the curves were cut to, ``m``
        the median over seeds (NaNs ignored) of the final log10 best-so-far
        regret (kind ``"regret"``) or of the final best value (kind
        ``"value"``), and ``best`` the surrogates with the lowest median
        (several on a tie). Groups with several presets are keyed
        ``"problem (preset)"``.
    """
    curves = regret_curves(records, n_calls)
    table: dict[str, dict] = {}
    for name, c in _named_rows(curves):
        row = table.setdefault(name, {"kind": c.kind, "median": {}, "n_seeds": {},
                                      "n_calls": {}})
        final = c.curves[:, -1]
        final = np.log10(final) if c.kind == "regret" else final
        row["median"][c.surrogate] = float(np.nanmedian(final))
        row["n_seeds"][c.surrogate] = len(c.seeds)
        row["n_calls"][c.surrogate] = c.curves.shape[1] - 1 + N_INITIAL
    for row in table.values():
        lowest = min(row["median"].values())
        row["best"] = [s for s, m in row["median"].items() if m == lowest]
    return table


def paired_wins(records: Iterable[dict], surrogate: str,
                n_calls: int | None = None) -> dict[str, dict[str, tuple[int, int, int]]]:
    """Seed-by-seed comparison of one surrogate with every other, per problem.

    Runs of one seed share their initial design, so comparing the final
    results seed by seed removes the luck of the start that the medians of
    :func:`summary_table` keep.

    Parameters
    ----------
    records : iterable of dict
        As written by :func:`run_grid`.
    surrogate : str
        The surrogate to compare with the others.
    n_calls : int, optional
        Cut every run to this many evaluations (see :func:`regret_curves`).

    Returns
    -------
    dict
        ``{problem: {other: (wins, ties, n)}}`` over the ``n`` seeds both
        surrogates have run: ``wins`` counts the seeds where ``surrogate``'s
        final best regret (or best value) is strictly lower, ``ties`` those
        where the two are equal (e.g. both at the regret floor). Problems
        where ``surrogate`` has no runs are left out; keys as in
        :func:`summary_table`.

    Raises
    ------
    ValueError
        If no record holds a run of ``surrogate``.
    """
    curves = regret_curves(records, n_calls)
    if not any(c.surrogate == surrogate for c in curves):
        raise ValueError(f"no runs of {surrogate!r}; recorded: "
                         f"{surrogate_order(c.surrogate for c in curves)}")
    finals: dict[str, dict[str, dict[int, float]]] = {}
    for name, c in _named_rows(curves):
        finals.setdefault(name, {})[c.surrogate] = dict(zip(c.seeds, c.curves[:, -1]))
    out: dict[str, dict[str, tuple[int, int, int]]] = {}
    for name, by_surrogate in finals.items():
        mine = by_surrogate.get(surrogate)
        if mine is None:
            continue
        row = out.setdefault(name, {})
        for other in surrogate_order(by_surrogate):
            if other == surrogate:
                continue
            theirs = by_surrogate[other]
            common = [seed for seed in mine if seed in theirs]
            wins = sum(int(mine[seed] < theirs[seed]) for seed in common)
            ties = sum(int(mine[seed] == theirs[seed]) for seed in common)
            row[other] = (wins, ties, len(common))
    return out


def format_paired(table: dict[str, dict[str, tuple[int, int, int]]], surrogate: str) -> str:
    """A Markdown table of :func:`paired_wins`.

    Parameters
    ----------
    table : dict
        As returned by :func:`paired_wins`.
    surrogate : str
        The surrogate the table compares (for the header).

    Returns
    -------
    str
        One row per problem, one column per other surrogate; a cell
        ``wins/n`` (``wins+ties/n`` with ties, e.g. ``3+1/5``), ``–`` where
        the two share no seed. No trailing newline.
    """
    others = surrogate_order(o for row in table.values() for o in row)
    lines = ["| problem | " + " | ".join(f"{surrogate} < {o}" for o in others) + " |",
             "|---|" + "---:|" * len(others)]
    for name, row in table.items():
        cells = []
        for other in others:
            wins, ties, n = row.get(other, (0, 0, 0))
            if n == 0:
                cells.append("–")
            else:
                cells.append(f"{wins}+{ties}/{n}" if ties else f"{wins}/{n}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_summary(table: dict[str, dict], surrogates: Sequence[str] | None = None) -> str:
    """A Markdown table of :func:`summary_table`, the best entries of each row in bold.

    Parameters
    ----------
    table : dict
        As returned by :func:`summary_table`.
    surrogates : list of str, optional
        Surrogate columns, in this order; by default every surrogate of the
        table, in :func:`surrogate_order`.

    Returns
    -------
    str
        Columns ``problem``, ``quantity`` (``log10 regret`` or ``best value``),
        ``seeds x calls`` and one per surrogate; medians to 2 decimals (regret)
        or 4 (value), ``–`` where a surrogate has no runs. No trailing newline.
    """
    if surrogates is None:
        surrogates = surrogate_order(s for row in table.values() for s in row["median"])
    header = ["problem", "quantity", "seeds x calls", *surrogates]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "---|" * 3 + "---:|" * len(surrogates)]
    for name, row in table.items():
        quantity = "log10 regret" if row["kind"] == "regret" else "best value"
        seeds = sorted(set(row["n_seeds"].values()))
        calls = sorted(set(row["n_calls"].values()))
        cells = [name, quantity, f"{'/'.join(map(str, seeds))} x {'/'.join(map(str, calls))}"]
        for s in surrogates:
            if s not in row["median"]:
                cells.append("–")
                continue
            text = f"{row['median'][s]:.2f}" if row["kind"] == "regret" else \
                f"{row['median'][s]:.4f}"
            cells.append(f"**{text}**" if s in row["best"] else text)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
