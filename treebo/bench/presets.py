"""The benchmark protocols (``preset``): budgets, initial designs, minimize arguments.

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

Problems with a budget of their own: the conditional model selection
(``model_selection_*``) runs 50 evaluations, 10 of them initial
points, in both presets (:func:`default_n_calls`, :func:`default_n_initial`):
its 23-dimensional space with six model families needs more than 5 points to
show the surrogate every family once in a while, and 50 evaluations is the
budget its benchmark was specified with. COCO's bbob problems
(``bbob_f01_d10_i1``, :mod:`treebo.problems.bbob`) run 20 evaluations per
dimension (COCO's budgets are counted per dimension), 5 of them initial
points, in both presets. Every other problem keeps 5 initial points and the
budgets above, which the committed records were run with.

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

import math
from typing import Any, cast

import numpy as np

from ..problems import Problem, get_problem, paper_case_seed, problem_family, problem_suites
from ..problems.bbob import bbob_budget, is_bbob_name
from ..settings import SETTINGS, setting
from ..space import Integer, Real, Space
from .spec import RunSpec

__all__ = [
    "PRESETS",
    "N_INITIAL",
    "OVERRIDABLE",
    "default_n_calls",
    "default_n_initial",
    "check_preset",
    "build_problem",
    "paper_initial_design",
    "minimize_settings",
]

#: Accepted values of ``preset``.
PRESETS = ("default", "paper")
#: Size of the initial design in both presets, for every problem without a
#: budget of its own (see :func:`default_n_initial`).
N_INITIAL = 5

# BO iterations after the initial design when no n_calls is given.
_PAPER_ITERATIONS = {"continuous": 500, "binary": 500, "mixed": 100}
_DEFAULT_ITERATIONS = {"continuous": 95, "binary": 95, "mixed": 95}

# (evaluations per run, initial points) of problems whose protocol sets its
# own budget, the same in both presets; the families' tables above do not
# apply to them. The conditional model selection: 50 evaluations,
# 10 of them initial points.
_OWN_BUDGETS: dict[str, tuple[int, int]] = {
    name: (50, 10) for name in problem_suites()["model_selection"]
}

#: The settings a run's ``overrides`` may change: every setting of
#: :data:`treebo.settings.SETTINGS` but those ``fixed_in_benchmarks`` (the
#: surrogate, the seed, ...), which with ``n_calls`` and ``x0`` make the runs of
#: one seed comparable across surrogates.
OVERRIDABLE = frozenset(s.name for s in SETTINGS if not s.fixed_in_benchmarks)


def _own_budget(problem: str) -> tuple[int, int] | None:
    """(evaluations, initial points) of a problem with a budget of its own, else None."""
    if problem in _OWN_BUDGETS:
        return _OWN_BUDGETS[problem]
    if is_bbob_name(problem):
        return bbob_budget(problem), N_INITIAL
    return None


def check_preset(preset: str) -> str:
    """Return ``preset`` if it is one of :data:`PRESETS`.

    Parameters
    ----------
    preset : str

    Returns
    -------
    str
        ``preset`` itself.

    Raises
    ------
    ValueError
        For any other value, listing the valid ones.
    """
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {list(PRESETS)}, got {preset!r}")
    return preset


def default_n_calls(problem: str, preset: str = "default") -> int:
    """Evaluations per run (the initial points included) when none is given.

    ``paper``: 505 for continuous and binary problems, 105 for AutoML (the
    official code's ``NUM_ITER`` plus the initial design); ``default``: 100.
    The conditional model selection (``model_selection_*``): 50 in both;
    COCO's bbob problems: 20 per dimension (``20 D``) in both.

    Parameters
    ----------
    problem : str
        A registered problem name (its family, or its own budget, sets the
        number).
    preset : {"default", "paper"}, default "default"

    Returns
    -------
    int
        Evaluations per run: the initial points plus the preset's BO iterations.

    Raises
    ------
    ValueError
        For an unknown preset or problem.
    """
    check_preset(preset)
    family = problem_family(problem)  # raises for an unknown name
    own = _own_budget(problem)
    if own is not None:
        return own[0]
    table = _PAPER_ITERATIONS if preset == "paper" else _DEFAULT_ITERATIONS
    return N_INITIAL + table[family]


def default_n_initial(problem: str, preset: str = "default") -> int:
    """Initial points per run: :data:`N_INITIAL` (5), or a problem's own number.

    The conditional model selection (``model_selection_*``) starts from 10
    points in both presets; every other problem from 5.
    :func:`minimize_settings` passes this as ``n_initial_points`` (and, with
    ``paper``, draws as many points of the official code's design).

    Parameters
    ----------
    problem : str
        A registered problem name.
    preset : {"default", "paper"}, default "default"

    Returns
    -------
    int
        Initial points per run.

    Raises
    ------
    ValueError
        For an unknown preset or problem.
    """
    check_preset(preset)
    problem_family(problem)  # raises for an unknown name
    own = _own_budget(problem)
    return own[1] if own is not None else N_INITIAL


def build_problem(spec: RunSpec) -> Problem:
    """The problem instance of a run: a new binary instance per seed.

    Parameters
    ----------
    spec : RunSpec

    Returns
    -------
    Problem
        ``spec.problem`` with ``spec.problem_params``; a binary problem
        without an ``instance`` parameter gets case seed
        :func:`~treebo.problems.paper_case_seed` ``(spec.seed)``.
    """
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
        if dim.is_numeric:
            number_range = cast("Real | Integer", dim)  # what is_numeric promises
            # Scaled to the bounds, then truncated for an integer (not rounded,
            # nor given an equal share per value as Integer.decode does).
            as_value = float if not dim.is_discrete else int
            low, high = number_range.low, number_range.high
            if number_range.prior == "log-uniform":
                lo, hi = math.log(low), math.log(high)
                values = [as_value(math.exp(lo + v * (hi - lo))) for v in u[:, 0]]
            else:
                values = [as_value(low + v * (high - low)) for v in u[:, 0]]
        else:
            # A binary's threshold at 0.5 and a categorical's arg-max are its decoding.
            values = dim.decode(u)
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
        ``surrogate``, ``n_initial_points`` (:func:`default_n_initial`: 5,
        or 10 for ``model_selection_*``) and ``n_candidates=50000``; with
        ``paper`` also ``x0`` (:func:`paper_initial_design`, as many points),
        ``y_transform="standardize"``, ``local_search=False`` and
        ``random_state=42 (seed + 1)``, with ``default`` ``random_state=seed``;
        then ``spec.overrides`` (checked) replace any of these or add others.

    Raises
    ------
    ValueError
        For an unknown preset, overrides outside :data:`OVERRIDABLE`, or an
        override whose value its setting does not allow.
    """
    check_preset(spec.preset)
    n_initial = default_n_initial(spec.problem, spec.preset)
    settings: dict[str, Any] = {
        "surrogate": spec.surrogate,
        "n_initial_points": n_initial,
        "n_candidates": 50_000,
    }
    if spec.preset == "paper":
        settings.update(
            x0=paper_initial_design(problem.space, spec.seed, n_initial),
            y_transform="standardize",
            local_search=False,
            random_state=42 * (spec.seed + 1),
        )
    else:
        settings.update(random_state=int(spec.seed))
    unknown = set(spec.overrides) - OVERRIDABLE
    if unknown:
        raise ValueError(f"overrides {sorted(unknown)} are not allowed; use {sorted(OVERRIDABLE)}")
    for name, value in spec.overrides.items():
        setting(name).allowed.check(value, name)  # a bad value fails before the run
    settings.update(spec.overrides)
    return settings
