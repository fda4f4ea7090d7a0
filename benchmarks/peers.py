"""Peer optimizers on treebo's benchmark problems, recorded like treebo's own runs.

Runs other libraries' optimizers on the problems of :mod:`treebo.problems`
with the budgets, seeds and initial points of treebo's ``default`` grid
(:mod:`treebo.bench`), and appends one record per run to
``<out>/<problem>.jsonl`` in the layout of :func:`treebo.bench.run_one`,
with the peer's name in ``surrogate``. ``treebo summary OUT`` and
``treebo plot OUT`` then show the peers beside treebo's surrogates.

    python benchmarks/peers.py --problems continuous --peers random skopt_et \\
        --seeds 0-9 --out benchmarks/results/regret

Peers (``pip install 'treebo[peers]'`` installs their libraries):

``random``        uniform random search: ``Space.sample`` from ``numpy.random.default_rng(seed)``
``skopt_et``      scikit-optimize ``forest_minimize(base_estimator="ET", acq_func="EI")``
``skopt_rf``      scikit-optimize ``forest_minimize(base_estimator="RF", acq_func="EI")``
``skopt_gp``      scikit-optimize ``gp_minimize(acq_func="EI")``
``smac_rf``       SMAC3 ``HyperparameterOptimizationFacade`` (its random forest), ask and tell
``optuna_tpe``    Optuna ``TPESampler``, ask and tell
``optuna_gp``     Optuna ``GPSampler`` (needs torch), ask and tell
``optuna_cmaes``  Optuna ``CmaEsSampler`` (needs the ``cmaes`` package), ask and tell
``hyperopt_tpe``  hyperopt ``fmin(algo=tpe.suggest)``

Protocol: every run of seed ``r`` first evaluates the ``n0`` points of
treebo's initial design for that seed (``Optimizer(space,
n_initial_points=n0, random_state=r).ask(n0)``, the points
``minimize(..., n_initial_points=n0, random_state=r)`` evaluates first;
``n0`` is treebo's ``default_n_initial(problem)``: 5, 10 for the
model-selection problems), fed through each library's own way of taking
given points (skopt ``x0`` with ``n_initial_points=0``; SMAC's initial design
with ``additional_configs`` and ``n_configs=0``; Optuna ``enqueue_trial``;
hyperopt ``points_to_evaluate``); the library's model takes over from
evaluation ``n0 + 1`` (Optuna's and hyperopt's ``n_startup_trials`` /
``n_startup_jobs`` set to ``n0``), for ``n_calls - n0`` proposals. Each library is
seeded with ``r``. Otherwise the libraries run at their defaults, except:
acquisition EI for scikit-optimize's GP (its default is ``gp_hedge``); SMAC
told that the objective is deterministic and retraining its forest after
every evaluation (``retrain_after=1``, as SMAC's black-box facade does;
its hyperparameter facade's 8 would make 7 of every 8 proposals from a stale
model); Optuna's GP told that the objective is deterministic
(``deterministic_objective=True``). Optuna's CMA-ES starts after the
``n0`` given points (``n_startup_trials=n0``) from its defaults: the mean at
the centre of the box, ``sigma0`` a sixth of the narrowest range, population
``4 + floor(3 ln D)``; it is for real and integer dimensions only, and a
space with binary or categorical ones is refused (``UnsupportedSpace``).
Budgets: :func:`treebo.bench.default_n_calls` (100 for continuous problems,
50 for the model-selection ones, 20 per dimension for COCO's bbob problems),
55 for the binary ones.

COCO's bbob problems (``bbob_f01_d10_i1``; ``pip install 'treebo[bbob]'``)
are chosen by name or with ``--problems bbob`` and ``--functions``,
``--dims`` and ``--instances`` (by default the protocol's: functions 1-24,
dimensions 2, 5, 10, instances 1-3), as with ``treebo bench``::

    python benchmarks/peers.py --problems bbob --dims 2 5 --instances 1-3 --seeds 0-2 \
        --peers random optuna_tpe optuna_cmaes --out benchmarks/results/bbob

Space mapping: ``Real`` -> the library's float (log scale for a log-uniform
prior), ``Integer`` -> its integer, ``Binary`` -> a categorical over
``[0, 1]``, ``Categorical`` -> a categorical over the category indices.
Conditional spaces (``active_if``) run with ``random``, ``optuna_tpe``,
``optuna_gp`` and ``smac_rf``, each through its library's own mechanism, and
every point given to the objective holds its active dimensions only (a
library's point with an inactive or a missing active value is an error, never
evaluated): ``random`` draws with ``Space.sample``, which respects the
conditions; Optuna runs define-by-run: each trial suggests, parents first,
only the parameters that the values already suggested make active, and the
initial points are enqueued with their active parameters only (TPE at its
defaults: the multivariate TPE over the parameters every trial has, its
univariate TPE for each conditional parameter from the trials that have it;
the GP models only the parameters every trial has and leaves the conditional
ones to its independent sampler, a ``RandomSampler(seed)``, with
``warn_independent_sampling=False``); SMAC gets ConfigSpace conditions, an
``EqualsCondition`` (one allowed value) or ``InCondition`` (several) per
parent and an ``AndConjunction`` of them for several parents, and its
configurations, given and proposed, hold the active hyperparameters only.
The skopt peers and ``hyperopt_tpe`` refuse a conditional space before
evaluating anything (``UnsupportedSpace``, naming the peer; the command line
skips that peer on that problem and exits 1): scikit-optimize has no
conditional dimensions, and hyperopt's nested ``hp.choice`` cannot express a
condition on an integer or on several parents without duplicating
dimensions. Unconditional spaces take the same code as before.

Times: ``acq_time`` of a proposal is the time from the end of the previous
evaluation to the start of this one (the library's fit, acquisition and
bookkeeping; 0 for the given points), ``fit_time`` is 0 (the libraries do
not report the fit apart), ``eval_time`` the objective's time.

Runs whose key is already in ``--out`` with at least ``n_calls`` evaluations
are skipped, so an interrupted grid resumes. Records are appended with
:func:`treebo.bench.append_record` (one ``O_APPEND`` write each), so ``treebo
bench`` may write to the same directory at the same time.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import functools
import importlib.metadata
import importlib.util
import math
import os
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from treebo.bench import (
    N_INITIAL,
    SCHEMA_VERSION,
    RunSpec,
    append_record,
    build_problem,
    completed_runs,
    default_n_calls,
    load_results,
    to_jsonable,
    trajectory,
    versions,
)
from treebo.problems import Problem, problem_family
from treebo.space import Binary, Categorical, Dimension, Integer, Real, Space

try:
    # The initial design's size per problem, as treebo's own grid uses it (10 for the
    # model-selection problems).
    from treebo.bench import default_n_initial
except ImportError:  # a treebo without it starts every problem from N_INITIAL points
    def default_n_initial(problem: str) -> int:
        return N_INITIAL

#: Evaluations per run of the binary problems (the 5 initial points included).
BINARY_N_CALLS = 55
#: How to install the peers' libraries.
INSTALL = "pip install 'treebo[peers]'"
DEFAULT_OUT = "benchmarks/results/regret"


class UnsupportedSpace(ValueError):
    """A peer asked to run on a search space it cannot represent (a conditional one)."""


# -- one run -----------------------------------------------------------------------------
def initial_design(problem: Problem, seed: int, n_initial: int = N_INITIAL) -> list:
    """treebo's initial design of seed ``seed``: the points ``minimize`` evaluates first.

    The ``n_initial`` points of ``minimize(..., n_initial_points=n_initial,
    random_state=seed)``, the default preset's (points without their
    inactive dimensions in a conditional space).
    """
    from treebo import Optimizer

    return Optimizer(problem.space, n_initial_points=int(n_initial),
                     random_state=int(seed)).ask(int(n_initial))


def _dim_values(space: Space, point: Any) -> list:
    """A user-facing point as one value per dimension, in order."""
    if isinstance(point, dict):
        return [point[name] for name in space.names]
    return list(point)


def _to_library(dim: Any, value: Any) -> Any:
    """A treebo value as the peers' spaces hold it (categoricals by index)."""
    if isinstance(dim, Real):
        return float(value)
    if isinstance(dim, (Integer, Binary)):
        return int(value)
    if isinstance(dim, Categorical):
        return dim.categories.index(value)
    raise TypeError(f"unsupported dimension {dim!r}")


def _from_library(dim: Any, value: Any) -> Any:
    if isinstance(dim, Real):
        return min(max(float(value), dim.low), dim.high)
    if isinstance(dim, (Integer, Binary)):
        return int(round(float(value)))
    if isinstance(dim, Categorical):
        return dim.categories[int(value)]
    raise TypeError(f"unsupported dimension {dim!r}")


def library_conditions(space: Space) -> list[tuple[Dimension, list[tuple[str, list]]]]:
    """Every dimension, parents first, with its conditions in the libraries' values.

    A dimension comes after all of its parents (Kahn's algorithm, ties in the
    space's order, as :class:`~treebo.space.Space` visits them), with a list
    of ``(parent, allowed values)``, each value as :func:`_to_library` maps
    the parent's (a category's index, an int), in the parent's order; empty
    for an unconditional dimension. A dimension is active when every parent
    is active and takes one of its allowed values.
    """
    dims = {dim.name: dim for dim in space.dimensions}
    parents = {name: list(dim.active_if or {}) for name, dim in dims.items()}
    order: list[str] = []
    while len(order) < len(dims):
        ready = next(name for name in space.names
                     if name not in order and all(p in order for p in parents[name]))
        order.append(ready)
    return [(dims[name], [(parent, [_to_library(dims[parent], v) for v in allowed])
                          for parent, allowed in (dims[name].active_if or {}).items()])
            for name in order]


def is_active(conditions: list[tuple[str, list]], values: dict) -> bool:
    """Whether a dimension with ``conditions`` is active given its parents' ``values``.

    ``values`` holds the library values of the active dimensions decided so
    far (an inactive parent is absent, so its children are inactive too).
    """
    return all(parent in values and values[parent] in allowed for parent, allowed in conditions)


class PeerRun:
    """The evaluations of one peer run: points, values and times, as the record needs them.

    The first ``len(x0)`` points a library proposes must be the given initial
    design (checked to 1e-9 on the encoded scale); the design's own points are
    evaluated, so every peer's first values are treebo's to the last bit.
    """

    def __init__(self, problem: Problem, x0: list, n_calls: int):
        self.problem, self.space, self.x0, self.n_calls = problem, problem.space, x0, n_calls
        self.n_initial = len(x0)
        self.dicts = bool(x0) and isinstance(x0[0], dict)
        self.x: list = []
        self.values: list[float] = []
        self.acq_time: list[float] = []
        self.eval_time: list[float] = []
        self._since = time.perf_counter()

    def point(self, values: Sequence[Any]) -> Any:
        """A treebo point from one library value per dimension (in order)."""
        point = [_from_library(d, v) for d, v in zip(self.space.dimensions, values)]
        return dict(zip(self.space.names, point)) if self.dicts else point

    def active_point(self, values: dict) -> dict:
        """A treebo point of a conditional space from a library's ``{name: value}``.

        ``values`` must hold the active dimensions and only them; anything
        else is a mapping error (RuntimeError), never passed on to the objective.
        """
        point = {d.name: _from_library(d, values[d.name])
                 for d in self.space.dimensions if d.name in values}
        unknown = set(values) - set(self.space.names)
        try:
            canonical = self.space.drop_inactive(point)
        except ValueError as error:  # an active dimension is missing
            raise RuntimeError(f"the library's point {values!r} is not feasible: {error}") \
                from error
        if unknown or canonical != point:
            extra = sorted(unknown | (set(point) - set(canonical)))
            raise RuntimeError(f"the library's point {values!r} has values for {extra}, which "
                               "are inactive there")
        return point

    def library_point(self, point: Any) -> list:
        """One library value per dimension of a treebo point."""
        return [_to_library(d, v)
                for d, v in zip(self.space.dimensions, _dim_values(self.space, point))]

    def library_dict(self, point: Any) -> dict:
        """``{name: library value}`` of a treebo point (its active dimensions only)."""
        if self.space.conditional:
            point = self.space.drop_inactive(point)
            return {d.name: _to_library(d, point[d.name])
                    for d in self.space.dimensions if d.name in point}
        return dict(zip(self.space.names, self.library_point(point)))

    def __call__(self, point: Any) -> float:
        """Evaluate a proposal; its acquisition time is the time since the last evaluation."""
        proposal = time.perf_counter() - self._since
        i = len(self.x)
        if i >= self.n_calls:
            raise RuntimeError(f"the peer asked for more than n_calls={self.n_calls} evaluations")
        if i < len(self.x0):
            given = self.space.encode([self.x0[i]])
            # Within 1e-6 encoded units: ConfigSpace keeps about 8 significant digits
            # of a log-scaled float it is given (3.418335543e-06 comes back as
            # 3.4183355e-06), a change far below any other point's distance.
            if not np.allclose(self.space.encode([point]), given, rtol=0.0, atol=1e-6):
                raise RuntimeError(f"evaluation {i} is {point!r}, not the initial point "
                                   f"{self.x0[i]!r}")
            point, proposal = self.x0[i], 0.0
        start = time.perf_counter()
        value = float(self.problem(point))
        self.eval_time.append(time.perf_counter() - start)
        self.x.append(point)
        self.values.append(value)
        self.acq_time.append(proposal)
        self._since = time.perf_counter()
        return value


def _run_random(run: PeerRun, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    for point in run.x0:
        run(point)
    while len(run.x) < run.n_calls:
        run(run.space.sample(1, rng)[0])
    return {"sampler": "treebo Space.sample(1, rng) per proposal",
            "rng": "numpy.random.default_rng(seed)"}


# scikit-optimize ------------------------------------------------------------------------
def _no_conditions(space: Space, why: str) -> None:
    """Refuse a conditional space: the library would be fed values of inactive dimensions."""
    if space.conditional:
        raise UnsupportedSpace(f"conditional search spaces are not supported: {why} (this "
                               f"space's {[d.name for d in space.dimensions if d.active_if]} "
                               "have active_if conditions)")


def _only_numbers(space: Space, why: str) -> None:
    """Refuse a space with binary or categorical dimensions (or conditions)."""
    _no_conditions(space, why)
    others = [d.name for d in space.dimensions if not isinstance(d, (Real, Integer))]
    if others:
        raise UnsupportedSpace(f"binary and categorical dimensions are not supported: {why} "
                               f"(this space's {others} are neither real nor integer)")


def _skopt_dimensions(space: Space) -> list:
    from skopt import space as sk

    out = []
    for dim in space.dimensions:
        if isinstance(dim, Real):
            out.append(sk.Real(dim.low, dim.high, prior=dim.prior, name=dim.name))
        elif isinstance(dim, Integer):
            out.append(sk.Integer(dim.low, dim.high, prior=dim.prior, name=dim.name))
        elif isinstance(dim, Binary):
            out.append(sk.Categorical([0, 1], name=dim.name))
        elif isinstance(dim, Categorical):
            out.append(sk.Categorical(list(range(len(dim.categories))), name=dim.name))
        else:
            raise TypeError(f"unsupported dimension {dim!r}")
    return out


def _run_skopt(run: PeerRun, seed: int, *, method: str, **kwargs: Any) -> dict:
    _no_conditions(run.space, "scikit-optimize's dimensions have no conditions")
    import skopt

    minimize = getattr(skopt, method)
    arguments = {"n_calls": run.n_calls, "n_initial_points": 0, "acq_func": "EI",
                 "random_state": int(seed), **kwargs}
    minimize(lambda values: run(run.point(values)), _skopt_dimensions(run.space),
             x0=[run.library_point(p) for p in run.x0], **arguments)
    return {"call": f"skopt.{method}", "arguments": arguments, "x0": "treebo initial design"}


# SMAC3 -----------------------------------------------------------------------------------
def _configspace(space: Space, seed: int) -> Any:
    from ConfigSpace import Categorical as CSCategorical
    from ConfigSpace import ConfigurationSpace, Float
    from ConfigSpace import Integer as CSInteger

    cs = ConfigurationSpace(seed=int(seed))
    for dim in space.dimensions:
        if isinstance(dim, Real):
            cs.add(Float(dim.name, (dim.low, dim.high), log=dim.prior == "log-uniform"))
        elif isinstance(dim, Integer):
            cs.add(CSInteger(dim.name, (dim.low, dim.high), log=dim.prior == "log-uniform"))
        elif isinstance(dim, Binary):
            cs.add(CSCategorical(dim.name, [0, 1]))
        elif isinstance(dim, Categorical):
            cs.add(CSCategorical(dim.name, list(range(len(dim.categories)))))
        else:
            raise TypeError(f"unsupported dimension {dim!r}")
    if space.conditional:
        cs.add(_configspace_conditions(cs, space))
    return cs


def _configspace_conditions(cs: Any, space: Space) -> list:
    """One ConfigSpace condition per conditional dimension: its ``active_if``.

    ``EqualsCondition`` for one allowed value of a parent, ``InCondition`` for
    several, an ``AndConjunction`` of them for several parents; values are
    the parents' hyperparameter values (category indices, ints). A parent's
    own condition makes its children inactive with it, as in treebo.
    """
    from ConfigSpace import AndConjunction, EqualsCondition, InCondition

    out = []
    for dim, conditions in library_conditions(space):
        parts = [EqualsCondition(cs[dim.name], cs[parent], allowed[0]) if len(allowed) == 1
                 else InCondition(cs[dim.name], cs[parent], allowed)
                 for parent, allowed in conditions]
        if parts:
            out.append(parts[0] if len(parts) == 1 else AndConjunction(*parts))
    return out


def _ask_and_tell_only(config: Any, seed: int = 0) -> float:
    raise RuntimeError("this SMAC instance is driven by ask and tell")


def _run_smac(run: PeerRun, seed: int) -> dict:
    cs = _configspace(run.space, seed)
    workdir = Path(tempfile.mkdtemp(prefix="treebo-peers-smac-"))
    with warnings.catch_warnings():
        # SMAC 2.4 calls ConfigSpace's deprecated Configuration.get_dictionary
        warnings.simplefilter("ignore", DeprecationWarning)
        # and its local search logs np.mean of an empty list of timings when it
        # stops at once (seen on conditional spaces); the mean is only logged
        warnings.filterwarnings("ignore", "Mean of empty slice", RuntimeWarning)
        warnings.filterwarnings("ignore", "invalid value encountered in scalar divide",
                                RuntimeWarning)
        try:
            _smac_loop(run, seed, cs, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    settings = {"call": "smac.HyperparameterOptimizationFacade ask/tell",
                "arguments": {"deterministic": True, "n_trials": run.n_calls, "seed": int(seed),
                              "initial_design": "n_configs=0, additional_configs=x0",
                              "config_selector": "retrain_after=1"},
                "x0": "treebo initial design"}
    if run.space.conditional:
        settings["conditions"] = ("ConfigSpace EqualsCondition/InCondition, AndConjunction for "
                                  "several parents; configurations hold the active values only")
    return settings


def _smac_loop(run: PeerRun, seed: int, cs: Any, workdir: Path) -> None:
    from ConfigSpace import Configuration
    from smac import HyperparameterOptimizationFacade as HPO
    from smac import Scenario
    from smac.runhistory.dataclasses import TrialValue

    scenario = Scenario(cs, deterministic=True, n_trials=run.n_calls, seed=int(seed),
                        output_directory=workdir / "smac3_output")
    given = [Configuration(cs, values=run.library_dict(p)) for p in run.x0]
    smac = HPO(scenario, _ask_and_tell_only,
               initial_design=HPO.get_initial_design(scenario, n_configs=0,
                                                     additional_configs=given),
               config_selector=HPO.get_config_selector(scenario, retrain_after=1),
               overwrite=True, logging_level=40)
    while len(run.x) < run.n_calls:
        info = smac.ask()
        if run.space.conditional:  # a Configuration leaves its inactive hyperparameters out
            value = run(run.active_point(dict(info.config)))
        else:
            value = run(run.point([info.config[name] for name in run.space.names]))
        smac.tell(info, TrialValue(cost=value))


# Optuna ----------------------------------------------------------------------------------
def _optuna_distributions(space: Space) -> dict:
    from optuna.distributions import (
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )

    out = {}
    for dim in space.dimensions:
        if isinstance(dim, Real):
            out[dim.name] = FloatDistribution(dim.low, dim.high,
                                              log=dim.prior == "log-uniform")
        elif isinstance(dim, Integer):
            out[dim.name] = IntDistribution(dim.low, dim.high, log=dim.prior == "log-uniform")
        elif isinstance(dim, Binary):
            out[dim.name] = CategoricalDistribution([0, 1])
        elif isinstance(dim, Categorical):
            out[dim.name] = CategoricalDistribution(list(range(len(dim.categories))))
        else:
            raise TypeError(f"unsupported dimension {dim!r}")
    return out


def _run_optuna(run: PeerRun, seed: int, *, sampler: str) -> dict:
    if sampler == "CmaEsSampler":
        # Checked before Optuna is imported: the space is refused whether or not it is installed.
        _no_conditions(run.space, "Optuna's CMA-ES samples one fixed set of parameters")
        _only_numbers(run.space, "Optuna's CMA-ES samples real and integer parameters only")
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if sampler == "TPESampler":
        arguments = {"seed": int(seed), "n_startup_trials": run.n_initial}
    elif sampler == "CmaEsSampler":
        arguments = {"seed": int(seed), "n_startup_trials": run.n_initial}
    else:
        arguments = {"seed": int(seed), "n_startup_trials": run.n_initial,
                     "deterministic_objective": True}
        if run.space.conditional:
            # Conditional parameters are outside its intersection search space and
            # drawn by its independent sampler; not a warning per trial and parameter.
            arguments["warn_independent_sampling"] = False
    with warnings.catch_warnings():
        # deterministic_objective is marked experimental
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        chosen = getattr(optuna.samplers, sampler)(**arguments)
    study = optuna.create_study(direction="minimize", sampler=chosen)
    for point in run.x0:
        study.enqueue_trial(run.library_dict(point))
    distributions = _optuna_distributions(run.space)
    if run.space.conditional:
        conditions = library_conditions(run.space)
        while len(run.x) < run.n_calls:
            trial = study.ask()
            value = run(run.active_point(_suggest_active(trial, conditions, distributions)))
            study.tell(trial, value)
        return {"call": f"optuna.samplers.{sampler} ask/tell, define-by-run",
                "arguments": arguments, "x0": "treebo initial design (enqueue_trial)",
                "conditions": "a parameter is suggested only when its parents (suggested "
                              "first) make it active"}
    while len(run.x) < run.n_calls:
        trial = study.ask(distributions)
        value = run(run.point([trial.params[name] for name in run.space.names]))
        study.tell(trial, value)
    return {"call": f"optuna.samplers.{sampler} ask/tell", "arguments": arguments,
            "x0": "treebo initial design (enqueue_trial)"}


def _suggest_active(trial: Any, conditions: list, distributions: dict) -> dict:
    """Define-by-run: suggest, parents first, each parameter that the values so far make active."""
    from optuna.distributions import FloatDistribution, IntDistribution

    values: dict = {}
    for dim, dim_conditions in conditions:
        if not is_active(dim_conditions, values):
            continue
        d = distributions[dim.name]
        if isinstance(d, FloatDistribution):
            values[dim.name] = trial.suggest_float(dim.name, d.low, d.high, log=d.log)
        elif isinstance(d, IntDistribution):
            values[dim.name] = trial.suggest_int(dim.name, d.low, d.high, log=d.log)
        else:
            values[dim.name] = trial.suggest_categorical(dim.name, d.choices)
    return values


# hyperopt --------------------------------------------------------------------------------
def _hyperopt_space(space: Space) -> dict:
    from hyperopt import hp

    out = {}
    for dim in space.dimensions:
        name = dim.name
        if isinstance(dim, Real):
            if dim.prior == "log-uniform":
                out[name] = hp.loguniform(name, math.log(dim.low), math.log(dim.high))
            else:
                out[name] = hp.uniform(name, dim.low, dim.high)
        elif isinstance(dim, Integer):
            if dim.prior == "log-uniform":
                out[name] = hp.qloguniform(name, math.log(dim.low), math.log(dim.high), 1)
            else:
                out[name] = hp.uniformint(name, dim.low, dim.high)
        elif isinstance(dim, Binary):
            out[name] = hp.choice(name, [0, 1])
        elif isinstance(dim, Categorical):
            out[name] = hp.choice(name, list(range(len(dim.categories))))
        else:
            raise TypeError(f"unsupported dimension {dim!r}")
    return out


def _run_hyperopt(run: PeerRun, seed: int) -> dict:
    _no_conditions(run.space, "this mapping gives hyperopt flat hp.* expressions, not the "
                   "nested hp.choice tree its conditional spaces need")
    from hyperopt import fmin, tpe

    arguments = {"n_startup_jobs": run.n_initial}
    fmin(lambda params: run(run.point([params[n] for n in run.space.names])),
         _hyperopt_space(run.space), algo=functools.partial(tpe.suggest, **arguments),
         max_evals=run.n_calls - len(run.x0), rstate=np.random.default_rng(int(seed)),
         points_to_evaluate=[run.library_dict(p) for p in run.x0], verbose=False,
         show_progressbar=False)
    return {"call": "hyperopt.fmin(algo=tpe.suggest)",
            "arguments": {**arguments, "max_evals": run.n_calls - len(run.x0),
                          "rstate": "numpy.random.default_rng(seed)"},
            "x0": "treebo initial design (points_to_evaluate)"}


# -- registry ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Peer:
    """A peer optimizer: what it imports (module -> distribution), how it runs, and
    whether it runs on conditional spaces (``conditional``)."""

    name: str
    requires: dict
    run: Callable[[PeerRun, int], dict]
    conditional: bool = False

    def check_space(self, space: Space) -> None:
        """Raise :class:`UnsupportedSpace` if this peer cannot run on ``space``."""
        if space.conditional and not self.conditional:
            supported = [name for name, peer in PEERS.items() if peer.conditional]
            raise UnsupportedSpace(f"peer {self.name} does not support conditional search "
                                   f"spaces (dimensions with active_if); peers that do: "
                                   f"{supported}")

    def missing(self) -> list[str]:
        """Distributions of the modules this peer needs that cannot be imported."""
        return [dist for module, dist in self.requires.items()
                if importlib.util.find_spec(module) is None]

    def versions(self) -> dict[str, str]:
        return {dist: importlib.metadata.version(dist) for dist in self.requires.values()}


PEERS: dict[str, Peer] = {peer.name: peer for peer in [
    Peer("random", {}, _run_random, conditional=True),
    Peer("optuna_tpe", {"optuna": "optuna"},
         functools.partial(_run_optuna, sampler="TPESampler"), conditional=True),
    Peer("hyperopt_tpe", {"hyperopt": "hyperopt"}, _run_hyperopt),
    Peer("skopt_et", {"skopt": "scikit-optimize"},
         functools.partial(_run_skopt, method="forest_minimize", base_estimator="ET")),
    Peer("skopt_rf", {"skopt": "scikit-optimize"},
         functools.partial(_run_skopt, method="forest_minimize", base_estimator="RF")),
    Peer("smac_rf", {"smac": "smac", "ConfigSpace": "ConfigSpace"}, _run_smac,
         conditional=True),
    Peer("optuna_gp", {"optuna": "optuna", "torch": "torch"},
         functools.partial(_run_optuna, sampler="GPSampler"), conditional=True),
    Peer("skopt_gp", {"skopt": "scikit-optimize"},
         functools.partial(_run_skopt, method="gp_minimize")),
    Peer("optuna_cmaes", {"optuna": "optuna", "cmaes": "cmaes"},
         functools.partial(_run_optuna, sampler="CmaEsSampler")),
]}


def peer_n_calls(problem: str) -> int:
    """Default evaluations per run: 55 for the binary problems, treebo's default otherwise."""
    return BINARY_N_CALLS if problem_family(problem) == "binary" else default_n_calls(problem)


def run_peer(peer: str, problem: str, seed: int, n_calls: int | None = None) -> dict:
    """Run one peer on one problem from one seed and return its record.

    Parameters
    ----------
    peer : str
        A name from :data:`PEERS`.
    problem : str
        A registered problem name (binary problems get seed ``seed``'s instance).
    seed : int
        Repeat index: the initial design and the library's seed.
    n_calls : int, optional
        Evaluations, the initial points included (default :func:`peer_n_calls`).

    Returns
    -------
    dict
        A record in :func:`treebo.bench.run_one`'s layout, ``surrogate=peer``.

    Raises
    ------
    ImportError
        If the peer's library is missing (the message names the extra).
    UnsupportedSpace
        If the problem's space is conditional and the peer does not support
        that (before anything is evaluated).
    """
    if peer not in PEERS:
        raise ValueError(f"unknown peer {peer!r}; choose from {list(PEERS)}")
    entry = PEERS[peer]
    missing = entry.missing()
    if missing:
        raise ImportError(f"peer {peer} needs {', '.join(missing)}; install with: {INSTALL}")
    n_calls = peer_n_calls(problem) if n_calls is None else int(n_calls)
    n_initial = default_n_initial(problem)
    if n_calls <= n_initial:
        raise ValueError(f"n_calls must be larger than the {n_initial} initial points, got "
                         f"{n_calls!r}")
    spec = RunSpec(problem=problem, surrogate=peer, seed=int(seed), n_calls=n_calls)
    instance = build_problem(spec)
    entry.check_space(instance.space)
    run = PeerRun(instance, initial_design(instance, spec.seed, n_initial), n_calls)
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    wall = time.perf_counter()
    settings = entry.run(run, spec.seed)
    wall = time.perf_counter() - wall
    if len(run.x) != n_calls:
        raise RuntimeError(f"{peer} evaluated {len(run.x)} points, not n_calls={n_calls}")

    values, best_so_far, regret = trajectory(run.values, instance.optimal_value)
    f_star = instance.optimal_value
    return to_jsonable({
        "schema": SCHEMA_VERSION,
        "key": spec.key(),
        "problem": problem,
        "problem_params": {},
        "instance_params": instance.params,
        "surrogate": peer,
        "seed": spec.seed,
        "preset": spec.preset,
        "overrides": {},
        "n_calls": n_calls,
        "n_evaluated": len(values),
        "n_initial": n_initial,
        "optimal_value": f_star,
        "regret_floor": getattr(instance, "regret_floor", None),
        "x": run.x,
        "values": values,
        "best_so_far": best_so_far,
        "regret": regret,
        "fit_time": [0.0] * len(values),
        "acq_time": run.acq_time,
        "eval_time": run.eval_time,
        "errors": [],
        "settings": {"peer": peer, "n_initial_points": n_initial, "random_state": spec.seed,
                     **settings},
        "versions": {**versions(), **entry.versions()},
        "started": started,
        "wall_time": wall,
        "message": f"{peer}: {n_calls} evaluations ({n_initial} given, "
                   f"{n_calls - n_initial} proposed)",
    })


# -- command line --------------------------------------------------------------------------
@contextlib.contextmanager
def single_thread() -> Iterator[None]:
    """Keep BLAS, OpenMP, joblib and torch to one thread inside the block (shared machines)."""
    from threadpoolctl import threadpool_limits

    saved = os.environ.get("LOKY_MAX_CPU_COUNT")
    os.environ["LOKY_MAX_CPU_COUNT"] = "1"  # joblib's n_jobs=-1 (SMAC's forest) -> 1 worker
    torch = sys.modules.get("torch")
    torch_threads = torch.get_num_threads() if torch is not None else None
    try:
        with threadpool_limits(limits=1):
            if torch is not None:
                torch.set_num_threads(1)
            yield
    finally:
        if torch is not None:
            torch.set_num_threads(torch_threads)
        if saved is None:
            os.environ.pop("LOKY_MAX_CPU_COUNT", None)
        else:
            os.environ["LOKY_MAX_CPU_COUNT"] = saved


def _describe(record: dict) -> str:
    n0 = record["n_initial"]
    proposals = record["acq_time"][n0:]
    per = sum(proposals) / max(len(proposals), 1)
    if record["regret"] is not None:
        final = f"best regret {record['regret'][-1]:.3g}"
    else:
        final = f"best value {record['best_so_far'][-1]:.6g}"
    return (f"{record['problem']}/{record['surrogate']}/seed {record['seed']}: {final} after "
            f"{record['n_evaluated']} calls, {per:.3f} s per proposal, "
            f"{record['wall_time']:.1f} s")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Run peer optimizers on treebo's benchmark problems; records go where "
        "`treebo bench` puts its own, for `treebo summary` and `treebo plot`.")
    parser.add_argument("--problems", nargs="+", required=True, metavar="NAME",
                        help="problem names or groups, as for `treebo bench --problems` "
                        "(bbob: COCO's functions, see --functions, --dims, --instances)")
    for option, text in (("--functions", "bbob functions, e.g. 1-24 or 1,8,21 (default: 1-24)"),
                         ("--dims", "bbob dimensions, e.g. 2 5 10 (default: 2 5 10)"),
                         ("--instances", "bbob instances, e.g. 1-3 (default: 1-3)")):
        parser.add_argument(option, nargs="+", metavar="N", help=text + "; with --problems bbob")
    parser.add_argument("--peers", nargs="+", default=list(PEERS), metavar="NAME",
                        help=f"peers to run, in this order (default: all of {list(PEERS)})")
    parser.add_argument("--seeds", nargs="+", default=["0-9"], metavar="SEEDS",
                        help="seeds and ranges, e.g. 0-9 (default: 0-9)")
    parser.add_argument("--n-calls", type=int,
                        help=f"evaluations per run, the initial points included (default: "
                        f"treebo's budget of the problem, {BINARY_N_CALLS} for the binary "
                        "problems)")
    parser.add_argument("--out", default=DEFAULT_OUT,
                        help=f"results directory (default: {DEFAULT_OUT})")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run every missing (peer, problem, seed) run, peers outermost; 0 if all ran."""
    from treebo.bench import parse_int_ranges, parse_seeds
    from treebo.problems import select_problems

    args = _parser().parse_args(argv)
    try:
        selection = {key: None if getattr(args, key) is None
                     else parse_int_ranges(getattr(args, key), f"--{key}")
                     for key in ("functions", "dims", "instances")}
        problems = select_problems(args.problems, **selection)
        seeds = parse_seeds(args.seeds)
    except ValueError as error:
        print(f"peers: {error}", file=sys.stderr)
        return 2
    unknown = [p for p in args.peers if p not in PEERS]
    if unknown:
        print(f"peers: unknown peer(s) {unknown}; choose from {list(PEERS)}", file=sys.stderr)
        return 2
    if args.n_calls is not None and args.n_calls <= N_INITIAL:
        print(f"peers: --n-calls must be larger than {N_INITIAL}", file=sys.stderr)
        return 2
    peers = list(dict.fromkeys(args.peers))
    status = 0
    for name in list(peers):
        missing = PEERS[name].missing()
        if missing:
            print(f"peers: skipping {name}: {', '.join(missing)} not installed; install with: "
                  f"{INSTALL}", file=sys.stderr)
            peers.remove(name)
            status = 1
    if "optuna_gp" in peers:
        import torch  # noqa: F401 - imported now so that single_thread limits its threads
    out = Path(args.out)
    done = completed_runs(load_results(out)) if out.exists() else {}
    with single_thread():
        status = max(status, _run_all(peers, problems, seeds, args.n_calls, out, done))
    return status


def _run_all(peers: list[str], problems: list[str], seeds: list[int], n_calls_arg: int | None,
             out: Path, done: dict[str, int]) -> int:
    status, skipped = 0, 0
    for peer in peers:
        for problem in problems:
            n_calls = n_calls_arg or peer_n_calls(problem)
            for seed in seeds:
                key = RunSpec(problem=problem, surrogate=peer, seed=seed, n_calls=n_calls).key()
                if done.get(key, 0) >= n_calls:
                    skipped += 1
                    continue
                try:
                    record = run_peer(peer, problem, seed, n_calls)
                except UnsupportedSpace as error:  # the same for every seed: say it once
                    print(f"peers: skipping {peer} on {problem}: {error}", file=sys.stderr,
                          flush=True)
                    status = 1
                    break
                except Exception as error:  # noqa: BLE001 - one failed run must not stop the grid
                    print(f"peers: {problem}/{peer}/seed {seed} failed: "
                          f"{type(error).__name__}: {error}", file=sys.stderr, flush=True)
                    status = 1
                    continue
                append_record(out, record)
                done[key] = record["n_evaluated"]
                print(_describe(record), flush=True)
    if skipped:
        print(f"peers: {skipped} runs already in {out}, skipped", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
