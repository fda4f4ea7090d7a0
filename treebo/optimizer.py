"""The ask/tell optimizer and the ``minimize`` loop.

One iteration (``Optimizer.ask``): encode every evaluated point, standardize
the values (failed evaluations take the worst finite value), fit the
surrogate, score Sobol candidates (plus local neighbours of the best points)
by the acquisition, and give back the best candidate that has not been
evaluated or proposed yet, decoded to a user-facing point.

Points asked but not told yet (*pending*) are shown to the surrogate with a
made-up value, the constant liar (``strategy=``), so that a batch of points,
or a point asked while others are being evaluated, spreads out instead of
piling up on the same spot. With ``storage=`` every ask and tell is committed
to SQLite at once and a reopened study resumes where it stopped
(:mod:`treebo.storage`); :func:`minimize` evaluates through any
``concurrent.futures.Executor`` (:mod:`treebo.parallel`).
"""

from __future__ import annotations

import bisect
import copy
import decimal
import json
import logging
import math
import numbers
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import OptimizeResult as _ScipyResult
from scipy.optimize import minimize as _scipy_minimize
from sklearn.base import clone

from . import acquisition as acq
from ._checks import check_int
from ._progress import ProgressBar
from .parallel import resolve_executor, run_evaluations
from .space import Real, Space, SpaceExhausted
from .storage import (
    SQLiteStorage,
    check_same_study,
    space_description,
    stable_params,
    trial_row_problem,
)
from .surrogates import Surrogate, make_surrogate

__all__ = ["Optimizer", "OptimizeResult", "Trial", "minimize", "SpaceExhausted",
           "transform_targets", "STRATEGIES", "check_strategy"]

logger = logging.getLogger("treebo")

#: Constant-liar strategies of :meth:`Optimizer.ask`: the value a pending
#: point is given is the minimum, mean or maximum of the complete values.
STRATEGIES = ("cl_min", "cl_mean", "cl_max")


def check_strategy(strategy: Any) -> str:
    """``strategy`` if it is one of :data:`STRATEGIES`, else a ValueError naming it.

    Parameters
    ----------
    strategy : str

    Returns
    -------
    str
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    return strategy


#: What reopening a storage does with trials a dead run left pending.
RESUME_PENDING = ("retry", "fail")

#: How many times ``resume_pending="retry"`` offers one pending trial again
#: across resumes. A point whose evaluation kills the process (a segfault, the
#: out-of-memory killer) would otherwise crash every resume, since it is
#: offered first each time; after this many offers it is recorded as failed.
MAX_RESUME_OFFERS = 2


class _ToldColumns:
    """The columns of :meth:`Optimizer.get_result` over the told trials, by trial number.

    Trials are inserted once, when told (a told trial never changes again),
    usually at the end since trials are mostly told in the order they were
    asked; numeric columns live in arrays that grow by doubling, so a result
    costs copies, not a pass over every trial.
    """

    def __init__(self) -> None:
        self.number: list[int] = []
        self.x: list[Any] = []
        self.status: list[str] = []
        self.error: list[str | None] = []
        self._numbers = np.empty((3, 64))  # value (NaN unless complete), fit, acq seconds
        self.n_failed = 0
        self.best: Trial | None = None

    def insert(self, trial: Trial) -> None:
        at, n = bisect.bisect(self.number, trial.number), len(self.number)
        self.number.insert(at, trial.number)
        self.x.insert(at, trial.x)
        self.status.insert(at, trial.status)
        self.error.insert(at, trial.error)
        if n == self._numbers.shape[1]:
            self._numbers = np.concatenate([self._numbers, np.empty_like(self._numbers)], axis=1)
        complete = trial.status == "complete"
        self._numbers[:, at + 1:n + 1] = self._numbers[:, at:n].copy()
        self._numbers[:, at] = (trial.value if complete else math.nan, trial.fit_time,
                                trial.acq_time)
        self.n_failed += trial.status == "failed"
        # The lowest value, and on a tie the lowest trial number.
        best = self.best
        if complete and (best is None or trial.value < best.value
                         or (trial.value == best.value and trial.number < best.number)):
            self.best = trial

    def column(self, row: int) -> np.ndarray:
        """A copy of numeric column ``row`` (0 value, 1 fit, 2 acquisition seconds)."""
        return self._numbers[row, :len(self.number)].copy()




@dataclass
class Trial:
    """One proposed or evaluated point.

    Attributes
    ----------
    number : int
        Position in the optimizer's history, from 0.
    x : list or dict
        The user-facing point.
    status : {"pending", "complete", "failed"}
        ``pending`` between ``ask`` and ``tell``.
    value : float or None
        The objective value; ``None`` unless complete.
    error : str or None
        Why the evaluation failed.
    origin : {"initial", "model", "random", "user"}
        How the point was chosen: initial design, surrogate + acquisition,
        random fallback, or given by the user (told without being asked, or
        an ``x0`` point of :func:`minimize`).
    fit_time, acq_time : float
        Seconds spent fitting the surrogate and optimizing the acquisition to
        propose this point (0 for points not proposed by the model).
    asked_at, told_at : float or None
        Wall-clock timestamps (``time.time()``) of ``ask`` and ``tell``.
    seed : int or None
        The ``random_state`` of the surrogate fit that proposed the point.
    eval_time : float or None
        Seconds the objective ran, measured where it ran (``minimize`` only).
    """

    number: int
    x: Any
    x_encoded: np.ndarray = field(repr=False)
    status: str = "pending"
    value: float | None = None
    error: str | None = None
    origin: str = "user"
    fit_time: float = 0.0
    acq_time: float = 0.0
    asked_at: float | None = None
    told_at: float | None = None
    seed: int | None = None
    eval_time: float | None = None

    @property
    def duration(self) -> float | None:
        """Seconds between ``ask`` and ``tell`` (the evaluation time in ``minimize``)."""
        if self.asked_at is None or self.told_at is None:
            return None
        return self.told_at - self.asked_at


class OptimizeResult(_ScipyResult):
    """Result of an optimization, with scikit-optimize's field names.

    Attributes
    ----------
    x : list or dict
        Best point found (lowest value among complete trials).
    fun : float
        Its value.
    x_iters : list
        Every evaluated point (complete and failed), in the order they were
        asked (for a parallel run this is not the order they finished).
    func_vals : ndarray of shape (n_evaluated,)
        Their values; ``nan`` for failed evaluations.
    statuses : list of str
        ``"complete"`` or ``"failed"`` per evaluated point.
    errors : list of str or None
        The error text of failed evaluations.
    fit_time, acq_time : ndarray of shape (n_evaluated,)
        Seconds spent on the surrogate fit and on the acquisition to propose
        each point (0 for initial-design points).
    space : Space
        The search space.
    n_failed : int
        Number of failed evaluations.
    message : str
        Why the run ended.
    """


def _root_generator(random_state: Any) -> tuple[int | None, np.random.Generator]:
    """The run's seed (when it has one) and the generator its streams are spawned from.

    ``None`` draws fresh entropy and keeps it as the seed, so a study stored
    in SQLite can be reproduced even when no seed was given.
    """
    if random_state is None:
        seed = int(np.random.SeedSequence().entropy)
        return seed, np.random.default_rng(seed)
    if isinstance(random_state, np.random.RandomState):
        # scikit-learn and scikit-optimize users pass these: draw the run's seed from it.
        random_state = int(random_state.randint(np.iinfo(np.int32).max))
    if (isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool)
            and random_state >= 0):
        return int(random_state), np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.Generator):
        return None, random_state
    if isinstance(random_state, (np.random.SeedSequence, np.random.BitGenerator)):
        return None, np.random.default_rng(random_state)
    raise ValueError("random_state must be None, an int >= 0, a numpy.random.Generator or a "
                     f"numpy.random.RandomState, got {random_state!r}")


#: Bit generators a saved stream state may name. The name comes from a file, so it is
#: looked up here and never with ``getattr`` on ``numpy.random`` (issue 16: the name
#: ``"test"`` ran numpy's test suite).
_BIT_GENERATORS = {"PCG64": np.random.PCG64, "PCG64DXSM": np.random.PCG64DXSM,
                   "MT19937": np.random.MT19937, "Philox": np.random.Philox,
                   "SFC64": np.random.SFC64}


def _generator(state: Any) -> np.random.Generator:
    """A generator whose bit generator is in the saved ``state``.

    Raises
    ------
    ValueError
        When ``state`` does not name an allowed bit generator or numpy refuses it.
    """
    name = state.get("bit_generator") if isinstance(state, dict) else None
    if not isinstance(name, str) or name not in _BIT_GENERATORS:
        raise ValueError(f"a saved random-stream state names the bit generator {name!r}; "
                         f"expected one of {sorted(_BIT_GENERATORS)}")
    bit_generator = _BIT_GENERATORS[name]()
    try:
        bit_generator.state = state
    except (TypeError, ValueError, KeyError) as error:
        raise ValueError(f"a saved random-stream state for {name} is invalid: {error}") from None
    return np.random.Generator(bit_generator)


@dataclass
class _Batch:
    """What the proposals of one ``ask`` share: the surrogate's seed and the candidates."""

    seed: int | None
    pool: np.ndarray
    candidate_time: float


class Optimizer:
    """Sequential model-based optimizer driven by ``ask()`` and ``tell(x, y)``.

    Parameters
    ----------
    dimensions : Space, list or dict of dimensions
        The search space (see :class:`~treebo.space.Space`).
    surrogate : str or Surrogate, default "bwo"
        A name from :func:`~treebo.surrogates.available_surrogates` or an
        unfitted surrogate instance (cloned before every fit).
    acquisition : {"ei", "pi", "lcb"}, default "ei"
        Expected improvement (ranked by log-EI), probability of improvement,
        or lower confidence bound.
    n_initial_points : int, default 5
        Points from the initial design before the surrogate is used. Points
        told without being asked count toward it.
    initial_design : {"sobol", "random"}, default "sobol"
        Scrambled Sobol or uniformly random initial points. The design depends
        only on the space, ``n_initial_points`` and ``random_state``, so runs
        with different surrogates and the same seed share it.
    n_candidates : int, default 50_000
        Sobol candidates scored per iteration. Discrete spaces with at most
        this many points are scored exhaustively instead.
    local_search : bool, default True
        Add neighbours of the best evaluated points to the candidates:
        ``n_local_candidates`` Gaussian steps
        (:func:`~treebo.acquisition.local_candidates`) and
        ``n_jump_candidates`` one-dimension jumps
        (:func:`~treebo.acquisition.jump_candidates`), spread over up to
        ``n_local_centers`` centres: the best points that are at least
        ``local_center_spacing`` apart (:func:`~treebo.acquisition.local_centers`).
    n_local_candidates : int, default 5_000
    n_jump_candidates : int, default 2_000
    n_local_centers : int, default 5
    local_center_spacing : float, default 0.1
        Minimum largest-coordinate difference between two local-search
        centres, in encoded units (the unit cube); 0 takes the
        ``n_local_centers`` best points, however close together.
    distance_variance : "auto" or float, default "auto"
        Weight of an exploration variance added to the surrogate's predictive
        variance before the acquisition: the weight times
        :func:`~treebo.acquisition.distance_variance`, which grows from 0 at
        an evaluated or pending point to 1 (the standardized targets'
        variance) a few data spacings away. A tree ensemble's own variance
        does not grow away from the data, so without it the acquisition
        keeps refining the first basin found (see docs/design.md,
        "Exploration"). ``"auto"`` is 1.0 for every surrogate but smooth ones
        (the GP, whose posterior variance already grows away from the data),
        where it is 0; 0 turns it off.
    explore_every : "auto" or int, default "auto"
        Every ``explore_every``-th model-based proposal is an exploration
        step: the surrogate is fitted on plainly standardized targets, and its
        prediction at a candidate is blended with the targets' prior (mean 0,
        variance 1) by the weight
        ``distance_variance(candidates, X, length=explore_length * sqrt(C))``
        (``C`` encoded columns), as a stationary GP's posterior reverts to its
        prior away from the data. Far regions then count as "average and
        unknown" instead of "like the nearest evaluated point", which is what
        lets the search leave a basin whose surroundings look worse. The
        other proposals refine on the log-scaled targets. ``"auto"`` is 4 for
        every surrogate but smooth ones (0 there); 0 turns exploration steps
        off.
    explore_length : float, default 0.1
        Length scale of the exploration steps' prior, in encoded units per
        square root of the number of encoded columns (a length scale that
        grows as ``sqrt(D)``, as GP length-scale priors do in many dimensions).
    acq_optimizer : {"auto", "sampling", "lbfgs"}, default "auto"
        ``"sampling"`` takes the best candidate; ``"lbfgs"`` also polishes the
        best candidates' real-valued coordinates with L-BFGS-B (useful only
        for smooth surrogates); ``"auto"`` uses ``"lbfgs"`` for the GP and
        ``"sampling"`` for tree models.
    surrogate_params : dict, optional
        Parameters passed to :func:`~treebo.surrogates.make_surrogate` when
        ``surrogate`` is a name.
    acquisition_params : dict, optional
        ``{"xi": 0.0}`` for EI and PI, ``{"kappa": 1.96}`` for LCB.
    failure_value : "worst" or float, default "worst"
        What the surrogate sees at failed evaluations: the worst (largest)
        finite value observed so far, or a fixed value in objective units.
        Failed points are never proposed again either way.
    y_transform : {"auto", "log", "standardize"}, default "auto"
        How values are turned into the surrogate's targets (see
        :func:`transform_targets`). ``"log"`` spreads out the values near the
        best one, which lets a tree ensemble resolve the region that matters;
        ``"standardize"`` is the plain affine map, better for the GP, whose
        smooth kernel fits the cusp ``"log"`` puts at the minimum badly.
        ``"auto"`` takes ``"standardize"`` for smooth surrogates (the GP) and
        ``"log"`` for everything else.
    random_state : int >= 0, numpy.random.Generator, numpy.random.RandomState or None
        Makes the run reproducible: the same seed and the same told values
        give the same proposals (a ``RandomState`` gives the run an int seed
        drawn from it). It is split into three independent streams:
        the initial design, the surrogate seeds and the acquisition
        (candidates, tie-breaking, random fallbacks).
    storage : str, os.PathLike or SQLiteStorage, optional
        A SQLite file that records every trial as soon as it is asked or told
        (see :mod:`treebo.storage`). If it already holds a study, the
        optimizer resumes it: the told trials are loaded (never evaluated
        again) and the random streams continue from their saved states, so
        a resumed run proposes what the uninterrupted run would have. The
        space and every setting above must match the stored study
        (:class:`~treebo.storage.StorageMismatchError` otherwise), and so
        must ``random_state`` unless it is ``None``. Call :meth:`close` (or
        use the optimizer as a context manager) to release the study.
    resume_pending : {"retry", "fail"}, default "retry"
        What to do with trials the previous run asked but never told:
        ``"retry"`` offers them again from the next ``ask()``, before any
        new point; ``"fail"`` records them as failed (they are then never
        proposed again). A trial is offered again at most
        ``MAX_RESUME_OFFERS`` (2) times, counted in the storage across
        resumes; a trial still pending after that (its evaluation may kill
        the process) is recorded as failed with the reason when the study is
        next opened.

    Attributes
    ----------
    space : Space
    trials : list of Trial
        Every proposed and told point, in order.
    storage : SQLiteStorage or None
    """

    def __init__(self, dimensions: Any, surrogate: str | Surrogate = "bwo",
                 acquisition: str = "ei", *, n_initial_points: int = 5,
                 initial_design: str = "sobol", n_candidates: int = 50_000,
                 local_search: bool = True, n_local_candidates: int = 5_000,
                 n_jump_candidates: int = 2_000, n_local_centers: int = 5,
                 local_center_spacing: float = 0.1,
                 distance_variance: str | float = "auto", explore_every: str | int = "auto",
                 explore_length: float = 0.1, acq_optimizer: str = "auto",
                 surrogate_params: dict | None = None, acquisition_params: dict | None = None,
                 failure_value: str | float = "worst", y_transform: str = "auto",
                 random_state: Any = None,
                 storage: str | os.PathLike | SQLiteStorage | None = None,
                 resume_pending: str = "retry"):
        self.space = dimensions if isinstance(dimensions, Space) else Space(dimensions)
        if isinstance(surrogate, str):
            self._surrogate = make_surrogate(surrogate, **(surrogate_params or {}))
            self.surrogate_name = surrogate
        elif isinstance(surrogate, Surrogate):
            if surrogate_params:
                raise ValueError("surrogate_params only applies when surrogate is a name; set "
                                 "the parameters on the instance instead")
            self._surrogate = clone(surrogate)
            self.surrogate_name = type(surrogate).__name__
        else:
            raise ValueError("surrogate must be a registered name or a Surrogate instance, got "
                             f"{surrogate!r}")
        self.acquisition = acquisition
        self.acquisition_params = acq.check_acquisition(acquisition, acquisition_params)
        self.n_initial_points = check_int(n_initial_points, "n_initial_points", 0)
        if initial_design not in ("sobol", "random"):
            raise ValueError(f"initial_design must be 'sobol' or 'random', got {initial_design!r}")
        self.initial_design = initial_design
        self.n_candidates = check_int(n_candidates, "n_candidates")
        self.local_search = bool(local_search)
        self.n_local_candidates = check_int(n_local_candidates, "n_local_candidates", 0)
        self.n_jump_candidates = check_int(n_jump_candidates, "n_jump_candidates", 0)
        self.n_local_centers = check_int(n_local_centers, "n_local_centers")
        self.local_center_spacing = _check_nonnegative(local_center_spacing,
                                                       "local_center_spacing")
        self.distance_variance = _auto_or(distance_variance, "distance_variance",
                                          _check_nonnegative, "a finite number >= 0")
        self.explore_every = _auto_or(explore_every, "explore_every",
                                      lambda v, name: check_int(v, name, 0), "an integer >= 0")
        if not (isinstance(explore_length, numbers.Real) and not isinstance(explore_length, bool)
                and math.isfinite(explore_length) and explore_length > 0):
            raise ValueError(f"explore_length must be a finite number > 0, got {explore_length!r}")
        self.explore_length = float(explore_length)
        if acq_optimizer not in ("auto", "sampling", "lbfgs"):
            raise ValueError("acq_optimizer must be 'auto', 'sampling' or 'lbfgs', got "
                             f"{acq_optimizer!r}")
        self.acq_optimizer = acq_optimizer
        if not (failure_value == "worst" or (isinstance(failure_value, numbers.Real)
                                             and not isinstance(failure_value, bool)
                                             and math.isfinite(failure_value))):
            raise ValueError("failure_value must be 'worst' or a finite number, got "
                             f"{failure_value!r}")
        self.failure_value = failure_value
        if y_transform not in Y_TRANSFORMS:
            raise ValueError(f"y_transform must be one of {Y_TRANSFORMS}, got {y_transform!r}")
        self.y_transform = y_transform
        if resume_pending not in RESUME_PENDING:
            raise ValueError(f"resume_pending must be one of {RESUME_PENDING}, got "
                             f"{resume_pending!r}")
        self.resume_pending = resume_pending
        self.random_state = random_state
        self._seed, root = _root_generator(random_state)
        design_rng, self._model_rng, self._acq_rng = root.spawn(3)
        self._design_state = design_rng.bit_generator.state
        self.trials: list[Trial] = []
        # Pending trials of a dead run, offered again by ask() before new points,
        # and how often each trial was offered again so far (kept in the storage).
        self._retry: list[int] = []
        self._resume_offers: dict[str, int] = {}
        # The told trials' result columns, kept up to date from the trials told
        # since the last result, so that tell() costs the same at any history length.
        self._told: _ToldColumns | None = None
        self._newly_told: list[Trial] = []
        self.storage: SQLiteStorage | None = None
        if storage is not None:
            self.storage = storage if isinstance(storage, SQLiteStorage) else SQLiteStorage(
                storage)
            try:
                self._open_storage()
            except BaseException:
                self.storage.close()
                raise
        design_rng = _generator(self._design_state)
        self._design = self._make_initial_design(design_rng)
        self._hash_weights = design_rng.standard_normal(self.space.n_columns)

    # -- public API -------------------------------------------------------------------
    def ask(self, n_points: int | None = None, strategy: str = "cl_min") -> Any:
        """Propose the next point, or a batch of distinct points, to evaluate.

        Parameters
        ----------
        n_points : int, optional
            ``None`` returns one point; an integer ``q`` returns a list of
            ``q`` distinct points.
        strategy : {"cl_min", "cl_mean", "cl_max"}, default "cl_min"
            Constant liar: every pending point (asked earlier and not told
            yet, and each point already chosen for this batch) is shown to
            the surrogate with the minimum, mean or maximum of the complete
            values, and the surrogate is refitted before the next point is
            chosen. With tree ensembles ``cl_min`` spreads a batch the most:
            a worse lie beside the incumbent raises the leaf variance there,
            and EI then favours the lie's neighbours (see docs/user_guide/parallel.md).

        Returns
        -------
        point : list or dict, or a list of them
            Feasible points never evaluated or proposed before. Pending
            trials left by a dead run (see ``resume_pending``) come first.
            A batch may be shorter than ``n_points`` when a discrete space
            runs out of points.

        Raises
        ------
        SpaceExhausted
            If every point of a discrete space has been evaluated or proposed.
        """
        check_strategy(strategy)
        q = 1 if n_points is None else check_int(n_points, "n_points")
        # Copies: a caller that changes a point in place must not change the
        # recorded trial.
        points = [copy.deepcopy(t.x) for t in self._ask_trials(q, strategy)]
        return points[0] if n_points is None else points

    def tell(self, x: Any, y: Any, *, error: str | None = None) -> OptimizeResult:
        """Record the value of a point.

        Parameters
        ----------
        x : list or dict
            A point of the space, usually one returned by :meth:`ask`; points
            that were never asked are accepted too.
        y : float
            Its objective value. ``None``, NaN or infinity mark a failed
            evaluation.
        error : str, optional
            Error text; marks the evaluation as failed.

        Returns
        -------
        OptimizeResult
            The result so far.
        """
        encoded = self.space.encode([x])[0]
        trial = None
        if len(self.trials) > self._n_told():  # some trial is pending
            trial = self._find_trial(x, encoded, pending_only=True)
        if trial is None:
            given = dict(x) if isinstance(x, dict) else list(x)
            trial = Trial(number=len(self.trials), x=given, x_encoded=encoded, origin="user")
        self._tell_trial(trial, y, error=error)
        return self.get_result()

    def add_pending(self, x: Any) -> Trial:
        """Record a point that is being evaluated elsewhere as pending.

        For points this optimizer did not propose, e.g. trials of another
        process sharing a study, or the given first points of a run: like a
        point from :meth:`ask` that has not been told yet, it is shown to the
        surrogate at the constant lie of the next :meth:`ask` and is never
        proposed again. Tell its value with :meth:`tell` (or
        :meth:`tell_trial`) when it is known.

        Parameters
        ----------
        x : list or dict
            A feasible point of the space.

        Returns
        -------
        Trial
            The pending trial (origin ``"user"``), committed to the storage.

        Raises
        ------
        ValueError
            If ``x`` is not a point of the space.
        """
        return self._given_trial(x)

    # -- the trial protocol: for drivers that evaluate trials themselves ------------------
    def ask_trials(self, n_points: int = 1, strategy: str = "cl_min") -> list[Trial]:
        """Propose up to ``n_points`` trials: :meth:`ask` for a driver that tells by trial.

        A driver that evaluates several trials at once (``minimize``'s
        parallel loop, an external scheduler) tells each result to the trial
        it belongs to with :meth:`tell_trial`, instead of finding the trial
        again from its point. All or nothing: if anything fails (the
        surrogate, the storage), the history and the random streams are as
        they were before the call.

        Parameters
        ----------
        n_points : int, default 1
        strategy : {"cl_min", "cl_mean", "cl_max"}, default "cl_min"
            As for :meth:`ask`.

        Returns
        -------
        list of Trial
            The pending trials, fewer than ``n_points`` when a discrete space
            runs out. They are the optimizer's own records: read them, do
            not change them.

        Raises
        ------
        SpaceExhausted
            If every point of a discrete space has been evaluated or proposed.
        """
        check_strategy(strategy)
        return self._ask_trials(check_int(n_points, "n_points"), strategy)

    def tell_trial(self, trial: Trial, y: Any, *, error: str | None = None,
                   eval_time: float | None = None) -> None:
        """Record the value of a pending trial of this optimizer.

        Parameters
        ----------
        trial : Trial
            A pending trial from :meth:`ask_trials` or :meth:`add_pending`.
        y : float
            Its objective value; ``None``, NaN or infinity mark a failure.
        error : str, optional
            Error text; marks the evaluation as failed.
        eval_time : float, optional
            Seconds the evaluation took, recorded with the trial.

        Raises
        ------
        ValueError
            If ``trial`` is not a pending trial of this optimizer.
        """
        number = getattr(trial, "number", None)
        if not (isinstance(number, int) and 0 <= number < len(self.trials)
                and self.trials[number] is trial and trial.status == "pending"):
            raise ValueError(f"trial must be a pending trial of this optimizer, got {trial!r}")
        self._tell_trial(trial, y, error=error, eval_time=eval_time)

    def get_result(self) -> OptimizeResult:
        """The result so far, as :class:`OptimizeResult`."""
        told = self._told_columns()
        best = told.best
        return OptimizeResult(
            x=best.x if best else None,
            fun=best.value if best else math.nan,
            x_iters=list(told.x),
            func_vals=told.column(0),
            statuses=list(told.status),
            errors=list(told.error),
            fit_time=told.column(1),
            acq_time=told.column(2),
            space=self.space,
            n_failed=told.n_failed,
            surrogate=self.surrogate_name,
            random_state=self.random_state,
            message="",
        )

    def close(self) -> None:
        """Close the storage (if any) and release its lock; the history stays in memory."""
        if self.storage is not None:
            self.storage.close()

    def __enter__(self) -> Optimizer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- asking and telling trials ----------------------------------------------------
    def _ask_trials(self, q: int, strategy: str) -> list[Trial]:
        """Propose up to ``q`` trials, append them to the history and commit them.

        All or nothing: if anything fails (the surrogate, the storage), the
        history and the random streams are as they were before the call.
        """
        n_before, retry_before = len(self.trials), list(self._retry)
        offers_before = dict(self._resume_offers)
        streams_before = self._stream_states()
        try:
            chosen: list[Trial] = []
            while self._retry and len(chosen) < q:
                trial = self.trials[self._retry.pop(0)]
                trial.asked_at = time.time()
                key = str(trial.number)  # JSON object keys are strings
                self._resume_offers[key] = self._resume_offers.get(key, 0) + 1
                logger.info("offering trial %d again (%d of %d): it was pending when the "
                            "previous run ended", trial.number, self._resume_offers[key],
                            MAX_RESUME_OFFERS)
                chosen.append(trial)
            if len(chosen) < q:
                try:
                    chosen += self._propose_trials(q - len(chosen), strategy)
                except SpaceExhausted:
                    if not chosen:
                        raise
            if self.storage is not None:
                state = self._stream_states()
                if self._resume_offers != offers_before:
                    state["resume_offers"] = self._resume_offers
                self.storage.record_ask([self._row(t) for t in chosen], state)
        except BaseException:
            del self.trials[n_before:]
            self._retry = retry_before
            self._resume_offers = offers_before
            self._model_rng = _generator(streams_before["rng_model"])
            self._acq_rng = _generator(streams_before["rng_acquisition"])
            raise
        return chosen

    def _given_trial(self, x: Any) -> Trial:
        """Register a user-given point about to be evaluated (an ``x0`` of minimize)."""
        encoded = self.space.encode([x])[0]
        given = dict(x) if isinstance(x, dict) else list(x)
        trial = Trial(number=len(self.trials), x=given, x_encoded=encoded, origin="user",
                      asked_at=time.time())
        self.trials.append(trial)
        if self.storage is not None:
            try:
                self.storage.record_ask([self._row(trial)], {})
            except BaseException:
                self.trials.pop()
                raise
        return trial

    def _tell_trial(self, trial: Trial, y: Any, *, error: str | None = None,
                    eval_time: float | None = None) -> None:
        value, failure = _as_value(y)
        if error is not None:
            failure = str(error)
        before = (trial.status, trial.value, trial.error, trial.told_at, trial.eval_time)
        is_new = trial.number == len(self.trials)
        if is_new:
            self.trials.append(trial)
        trial.told_at = time.time()
        trial.eval_time = eval_time if eval_time is not None else trial.eval_time
        if failure is None:
            trial.status, trial.value, trial.error = "complete", value, None
        else:
            trial.status, trial.value, trial.error = "failed", None, failure
        try:
            if self.storage is not None:
                self.storage.record_tell(self._row(trial))
        except BaseException:
            if is_new:
                self.trials.pop()
            trial.status, trial.value, trial.error, trial.told_at, trial.eval_time = before
            raise
        if trial.number in self._retry:  # told without being offered again
            self._retry.remove(trial.number)
        self._newly_told.append(trial)

    def _told_columns(self) -> _ToldColumns:
        """The told trials' columns, by trial number, including every trial told so far."""
        if self._told is None:
            self._told = _ToldColumns()
            for trial in self.trials:
                if trial.status != "pending":
                    self._told.insert(trial)
        else:
            for trial in self._newly_told:
                self._told.insert(trial)
        self._newly_told.clear()
        return self._told

    def _n_told(self) -> int:
        return len(self._told_columns().number)

    def _n_evaluated(self) -> int:
        """Told trials that were asked (or given as x0) rather than told directly."""
        return sum(t.status != "pending" and t.asked_at is not None for t in self.trials)

    def _find_trial(self, x: Any, encoded: np.ndarray | None = None, *,
                    pending_only: bool = False) -> Trial | None:
        """The first trial at the point ``x`` (only pending ones if ``pending_only``)."""
        if encoded is None:
            encoded = self.space.encode([x])[0]
        # Match on the user-facing values too: a real decoded from a candidate and
        # encoded again may differ from the candidate in the last bit.
        x = x if isinstance(x, dict) else list(x)
        for trial in self.trials:
            if pending_only and trial.status != "pending":
                continue
            if _same_point(trial.x, x) or np.array_equal(trial.x_encoded, encoded):
                return trial
        return None

    # -- storage ------------------------------------------------------------------------
    def _settings(self) -> dict:
        """Everything besides the space and the seed that shapes the proposals."""
        return {
            "surrogate": self.surrogate_name,
            "surrogate_params": stable_params(self._surrogate.get_params(deep=False)),
            "acquisition": self.acquisition,
            "acquisition_params": self.acquisition_params,
            "n_initial_points": self.n_initial_points,
            "initial_design": self.initial_design,
            "n_candidates": self.n_candidates,
            "local_search": self.local_search,
            "n_local_candidates": self.n_local_candidates,
            "n_local_centers": self.n_local_centers,
            "n_jump_candidates": self.n_jump_candidates,
            "local_center_spacing": self.local_center_spacing,
            "distance_variance": self.distance_variance,
            "explore_every": self.explore_every,
            "explore_length": self.explore_length,
            "acq_optimizer": self.acq_optimizer,
            "failure_value": self.failure_value,
            "y_transform": self.y_transform,
        }

    def _stream_states(self) -> dict:
        return {"rng_model": self._model_rng.bit_generator.state,
                "rng_acquisition": self._acq_rng.bit_generator.state}

    def _row(self, trial: Trial) -> dict:
        return {"number": trial.number, "status": trial.status, "origin": trial.origin,
                "point": self.space.point_to_json(trial.x), "x_encoded": trial.x_encoded,
                "value": trial.value, "error": trial.error, "seed": trial.seed,
                "fit_time": trial.fit_time, "acq_time": trial.acq_time,
                "eval_time": trial.eval_time, "asked_at": trial.asked_at,
                "told_at": trial.told_at}

    def _open_storage(self) -> None:
        storage = self.storage.open()
        meta = storage.load_meta()
        space, settings = space_description(self.space), self._settings()
        if not meta:
            storage.create({"space": space, "settings": settings, "seed": self._seed,
                            "rng_design": self._design_state, **self._stream_states()})
            return
        # JSON turns tuples into lists; compare like with like.
        settings = json.loads(json.dumps(settings))
        given_seed = self._seed if self.random_state is not None else None
        check_same_study(storage.path, meta, space, settings, given_seed)
        self._seed = meta["seed"]
        self._design_state = meta["rng_design"]
        try:
            self._model_rng = _generator(meta["rng_model"])
            self._acq_rng = _generator(meta["rng_acquisition"])
            _generator(self._design_state)
        except ValueError as error:
            raise ValueError(f"storage {str(storage.path)!r} is damaged: {error}") from None
        for row in storage.load_trials():
            if row["number"] != len(self.trials):
                raise ValueError(f"storage {str(storage.path)!r} is damaged: trial numbers are "
                                 "not consecutive")
            problem = trial_row_problem(self.space, row)
            if problem is not None:
                raise ValueError(f"storage {str(storage.path)!r} is damaged: trial "
                                 f"{row['number']}: {problem}")
            trial = Trial(number=row["number"], x=self.space.point_from_json(row["point"]),
                          x_encoded=row["x_encoded"], status=row["status"], value=row["value"],
                          error=row["error"], origin=row["origin"], fit_time=row["fit_time"],
                          acq_time=row["acq_time"], asked_at=row["asked_at"],
                          told_at=row["told_at"], seed=row["seed"], eval_time=row["eval_time"])
            self.trials.append(trial)
        pending = [t for t in self.trials if t.status == "pending"]
        logger.info("resuming %s: %d trials told, %d pending", storage.path,
                    len(self.trials) - len(pending), len(pending))
        offers = meta.get("resume_offers", {})
        if not (isinstance(offers, dict) and all(
                isinstance(n, int) and not isinstance(n, bool) and n >= 0
                for n in offers.values())):
            raise ValueError(f"storage {str(storage.path)!r} is damaged: resume_offers "
                             f"{offers!r} (allowed: trial numbers with counts >= 0)")
        self._resume_offers = dict(offers)
        for trial in pending:
            offered = self._resume_offers.get(str(trial.number), 0)
            if self.resume_pending == "fail":
                self._tell_trial(trial, None, error="abandoned: the run that asked for this "
                                 "point ended before telling its value")
            elif offered >= MAX_RESUME_OFFERS:
                logger.warning("trial %d: offered again %d times and every run ended before "
                               "telling its value; recorded as failed", trial.number, offered)
                self._tell_trial(trial, None, error=(
                    f"abandoned: offered again {offered} times after runs that ended before "
                    "telling its value (does evaluating this point kill the process?)"))
            else:
                self._retry.append(trial.number)

    # -- proposals ----------------------------------------------------------------
    def _make_initial_design(self, rng: np.random.Generator) -> np.ndarray:
        n = self.n_initial_points
        if n == 0:
            return np.empty((0, self.space.n_columns))
        if self.initial_design == "sobol":
            raw = acq.sobol_candidates(n, self.space.n_columns, rng)
        else:
            raw = rng.random((n, self.space.n_columns))
        return self.space.snap(raw)

    def _seen(self) -> np.ndarray:
        if not self.trials:
            return np.empty((0, self.space.n_columns))
        return np.array([t.x_encoded for t in self.trials])

    def _unseen(self, X: np.ndarray) -> np.ndarray:
        X = X[acq.unique_rows(X, self._hash_weights)]
        return X[~acq.rows_in(X, self._seen(), self._hash_weights)]

    def _propose_trials(self, q: int, strategy: str) -> list[Trial]:
        """Choose ``q`` new points one after the other, each a pending trial
        (and so a lie) for the next; fewer if a discrete space runs out."""
        out: list[Trial] = []
        batch: _Batch | None = None
        for _ in range(q):
            seed = None
            try:
                n_complete = sum(t.status == "complete" for t in self.trials)
                if len(self.trials) < self.n_initial_points or n_complete == 0:
                    encoded, origin, fit_time, acq_time = self._propose_initial()
                else:
                    if batch is None:
                        batch = self._start_batch()
                    encoded, origin, fit_time, acq_time = self._propose_with_model(batch,
                                                                                   strategy)
                    seed = batch.seed if origin == "model" else None
            except SpaceExhausted:
                if out:
                    break
                raise
            # A copy: ``encoded`` may be a row of the candidate pool, and a view
            # would keep the whole pool (tens of MB) alive for as long as the trial.
            encoded = encoded.copy()
            trial = Trial(number=len(self.trials), x=self.space.decode(encoded[None, :])[0],
                          x_encoded=encoded, origin=origin, fit_time=fit_time,
                          acq_time=acq_time, asked_at=time.time(), seed=seed)
            self.trials.append(trial)
            out.append(trial)
        return out

    def _propose_initial(self) -> tuple[np.ndarray, str, float, float]:
        design = self._unseen(self._design)
        if len(design):
            return design[0], "initial", 0.0, 0.0
        return self._random_unseen(), "random", 0.0, 0.0

    def _random_unseen(self) -> np.ndarray:
        space = self.space
        if space.cardinality <= self.n_candidates:
            pool = self._unseen(space.grid())
        else:
            pool = self._unseen(space.sample_encoded(1024, self._acq_rng))
        if len(pool) == 0:
            raise SpaceExhausted(f"all {int(space.cardinality)} points of the search space have "
                                 "been evaluated or proposed")
        return pool[self._acq_rng.integers(len(pool))]

    def _training_data(self, strategy: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Encoded points and values the surrogate is fitted on.

        Told trials first, in order (failed ones at ``failure_value``), then,
        when ``strategy`` is given, every pending trial at the constant lie.
        """
        told = [t for t in self.trials if t.status != "pending"]
        X = np.array([t.x_encoded for t in told])
        values = np.array([t.value if t.status == "complete" else math.nan for t in told])
        finite = np.isfinite(values)
        fill = np.max(values[finite]) if self.failure_value == "worst" else self.failure_value
        values = np.where(finite, values, fill)
        pending = [t for t in self.trials if t.status == "pending"] if strategy else []
        if pending:
            complete = values[finite]
            lie = {"cl_min": np.min, "cl_mean": np.mean, "cl_max": np.max}[strategy](complete)
            X = np.vstack([X, [t.x_encoded for t in pending]])
            values = np.concatenate([values, np.full(len(pending), lie)])
        return X, values

    def _target_kind(self) -> str:
        if self.y_transform != "auto":
            return self.y_transform
        return "standardize" if self._surrogate.smooth else "log"

    def _start_batch(self) -> _Batch:
        """Draw the surrogate seed and the candidates one ``ask`` shares."""
        seed = None
        if "random_state" in self._surrogate.get_params():
            seed = int(self._model_rng.integers(np.iinfo(np.int32).max))
        start = time.perf_counter()
        told = [t for t in self.trials if t.status != "pending"]
        X, values = self._training_data()
        z = transform_targets(values, self._target_kind())
        complete = np.array([t.status == "complete" for t in told])
        pool = self._unseen(self._candidates(X[complete], z[complete]))
        return _Batch(seed=seed, pool=pool, candidate_time=time.perf_counter() - start)

    def _propose_with_model(self, batch: _Batch,
                            strategy: str) -> tuple[np.ndarray, str, float, float]:
        # Refitting on the told data plus the lies, with the batch's seed, is
        # the whole cost of a constant-liar step; the candidates are shared.
        X, values = self._training_data(strategy)
        explore = self._is_exploration_step()
        z = transform_targets(values, "standardize" if explore else self._target_kind())
        n_told = sum(t.status != "pending" for t in self.trials)

        start = time.perf_counter()
        model = clone(self._surrogate)
        if batch.seed is not None:
            model.set_params(random_state=batch.seed)
        model.fit(X, z)
        fit_time = time.perf_counter() - start

        start = time.perf_counter()
        extra, batch.candidate_time = batch.candidate_time, 0.0
        complete = np.array([t.status == "complete" for t in self.trials if t.status != "pending"])
        best = float(np.min(z[:n_told][complete]))
        if len(batch.pool) == 0:
            logger.info("every candidate has been evaluated or is pending; proposing a random "
                        "unseen point")
            return self._random_unseen(), "random", fit_time, time.perf_counter() - start + extra
        scores = self._score(model, batch.pool, X, best, explore)
        top = scores.max()
        if top == -np.inf or (len(scores) > 1 and top == scores.min()):
            logger.info("the acquisition is flat (%s = %g on all %d candidates); proposing a "
                        "random unseen point", self.acquisition, top, len(scores))
            chosen = self._random_unseen()
            origin = "random"
        else:
            chosen = batch.pool[self._argmax(scores)]
            if self._use_lbfgs(model):
                chosen = self._polish(model, batch.pool, scores, best, X, explore)
            origin = "model"
        # Later points of the batch must differ from this one.
        batch.pool = batch.pool[~acq.rows_in(batch.pool, chosen[None, :], self._hash_weights)]
        return chosen, origin, fit_time, time.perf_counter() - start + extra

    def _candidates(self, X_complete: np.ndarray, z_complete: np.ndarray) -> np.ndarray:
        space = self.space
        if space.cardinality <= self.n_candidates:
            return space.grid()
        parts = [space.snap(acq.sobol_candidates(self.n_candidates, space.n_columns,
                                                 self._acq_rng))]
        if self.local_search:
            centers = X_complete[acq.local_centers(X_complete, z_complete, self.n_local_centers,
                                                   self.local_center_spacing)]
            if self.n_local_candidates > 0:
                per_center = max(1, self.n_local_candidates // len(centers))
                parts.append(acq.local_candidates(space, centers, per_center, self._acq_rng))
            if self.n_jump_candidates > 0:
                per_center = max(1, self.n_jump_candidates // len(centers))
                parts.append(acq.jump_candidates(space, centers, per_center, self._acq_rng))
        return np.vstack(parts)

    def _exploration_settings(self) -> tuple[float, int]:
        """``distance_variance`` and ``explore_every`` with ``"auto"`` resolved.

        Both are off for smooth surrogates (the GP), whose posterior already
        grows uncertain and reverts to its prior away from the data.
        """
        smooth = self._surrogate.smooth
        weight, every = self.distance_variance, self.explore_every
        if weight == "auto":
            weight = 0.0 if smooth else 1.0
        if every == "auto":
            every = 0 if smooth else 4
        return float(weight), int(every)

    def _is_exploration_step(self) -> bool:
        """Whether the next model-based proposal explores (see ``explore_every``)."""
        every = self._exploration_settings()[1]
        if every == 0:
            return False
        n_model = sum(t.origin == "model" for t in self.trials)
        return n_model % every == every - 1

    def _score(self, model: Surrogate, candidates: np.ndarray, X: np.ndarray,
               best: float, explore: bool = False) -> np.ndarray:
        """Acquisition scores of ``candidates`` (higher is better; NaN becomes -inf).

        ``X`` holds the encoded points the model was fitted on (told and
        pending); the exploration variance grows with the distance to them.
        In an exploration step the prediction also reverts to the targets'
        prior (mean 0, variance 1) with the distance, at ``explore_length``.
        """
        prediction = model.predict_dist(candidates)
        mean, variance = prediction.mean, prediction.variance
        if explore:
            length = self.explore_length * math.sqrt(X.shape[1])
            far = acq.distance_variance(candidates, X, length=length)
            mean = (1.0 - far) * mean
            variance = variance + far
        else:
            weight = self._exploration_settings()[0]
            if weight > 0:
                variance = variance + weight * acq.distance_variance(candidates, X)
        scores = acq.acquisition_score(self.acquisition, mean, np.sqrt(variance),
                                       best, **self.acquisition_params)
        return np.where(np.isnan(scores), -np.inf, scores)

    def _argmax(self, scores: np.ndarray) -> int:
        ties = np.flatnonzero(scores == scores.max())
        return int(ties[self._acq_rng.integers(len(ties))]) if len(ties) > 1 else int(ties[0])

    def _use_lbfgs(self, model: Surrogate) -> bool:
        has_real = any(isinstance(d, Real) for d in self.space.dimensions)
        if self.acq_optimizer == "sampling" or not has_real:
            return False
        return self.acq_optimizer == "lbfgs" or model.smooth

    def _polish(self, model: Surrogate, candidates: np.ndarray, scores: np.ndarray,
                best: float, X: np.ndarray, explore: bool = False,
                n_starts: int = 5) -> np.ndarray:
        """Refine the best candidates' real coordinates with L-BFGS-B on the score."""
        real_cols = np.concatenate([np.arange(self.space.columns_of(j).start,
                                              self.space.columns_of(j).stop)
                                    for j, d in enumerate(self.space.dimensions)
                                    if isinstance(d, Real)])
        starts = candidates[np.argsort(-scores, kind="stable")[:n_starts]]
        step = 1e-6

        def score(points: np.ndarray) -> np.ndarray:
            return self._score(model, points, X, best, explore)

        def objective(u: np.ndarray, base: np.ndarray) -> tuple[float, np.ndarray]:
            # One batched prediction gives the value and a forward-difference gradient.
            points = np.repeat(base[None, :], len(u) + 1, axis=0)
            points[:, real_cols] = u
            direction = np.where(u + step <= 1.0, step, -step)
            points[np.arange(1, len(u) + 1), real_cols] = u + direction
            s = score(points)
            s = np.where(np.isfinite(s), s, -1e300)
            return -s[0], -(s[1:] - s[0]) / direction

        best_x, best_score = starts[0], score(starts[:1])[0]
        for base in starts:
            result = _scipy_minimize(objective, base[real_cols], args=(base,), jac=True,
                                     method="L-BFGS-B", bounds=[(0.0, 1.0)] * len(real_cols),
                                     options={"maxiter": 50})
            x = base.copy()
            x[real_cols] = np.clip(result.x, 0.0, 1.0)
            x = self.space.snap(x[None, :])[0]
            value = score(x[None, :])[0]
            if value > best_score and len(self._unseen(x[None, :])):
                best_x, best_score = x, value
        return best_x


#: Accepted values of ``y_transform``.
Y_TRANSFORMS = ("auto", "log", "standardize")

#: Offset of the log transform, as a fraction of the range of the values.
LOG_OFFSET = 1e-3


def transform_targets(values: np.ndarray, kind: str = "log") -> np.ndarray:
    """Map objective values to the standardized targets a surrogate is fitted on.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Finite objective values (failed evaluations already imputed).
    kind : {"log", "standardize"}
        ``"standardize"``: ``(y - mean) / std``. ``"log"``: first
        ``log((y - min) / (max - min) + LOG_OFFSET)``, a monotone map that
        stretches the values near the minimum (the best value maps to
        ``log(1e-3)``, the worst to ``log(1.001)``), then standardized. Both
        keep the order of the values, so the incumbent stays the minimum.
        (The optimizer resolves ``"auto"`` before calling this.)

    Returns
    -------
    ndarray of shape (n,)
        Mean 0 and standard deviation 1, or all zeros when the values are
        constant.
    """
    if kind not in ("log", "standardize"):
        raise ValueError(f"kind must be 'log' or 'standardize', got {kind!r}")
    values = np.asarray(values, dtype=float)
    # Values this large overflow the span or the variance (squares beyond
    # 1e308); both transforms are invariant to scaling, so scale them down.
    # Ordinary values are left untouched, bit for bit.
    magnitude = np.abs(values).max() if values.size else 0.0
    if magnitude > 1e150:
        values = values / magnitude
    span = values.max() - values.min()
    if kind == "log" and span > 0:
        values = np.log((values - values.min()) / span + LOG_OFFSET)
    scale = values.std()
    return (values - values.mean()) / (scale if scale > 0 else 1.0)


def _auto_or(value: Any, name: str, check: Callable[[Any, str], Any], expected: str) -> Any:
    """``"auto"``, or ``value`` passed through ``check``; the error names both choices."""
    if isinstance(value, str) and value == "auto":
        return value
    try:
        return check(value, name)
    except ValueError:
        raise ValueError(f"{name} must be 'auto' or {expected}, got {value!r}") from None


def _check_nonnegative(value: Any, name: str) -> float:
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not math.isfinite(value) or value < 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def _same_point(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except (ValueError, TypeError):  # e.g. array-valued comparisons
        return False


def _as_value(y: Any) -> tuple[float | None, str | None]:
    """(value, None) for a finite number, (None, reason) otherwise."""
    if y is None:
        return None, "objective returned None"
    if hasattr(y, "__array__") and not isinstance(y, (numbers.Number, np.generic)):
        # A one-element array, pandas Series or tensor holds a number.
        try:
            array = np.asarray(y)
        except Exception:  # noqa: BLE001 - whatever it is, it is not a number
            array = None
        if array is not None and array.size == 1 and array.dtype.kind in "biuf":
            y = array.reshape(-1)[0]
    if isinstance(y, decimal.Decimal):
        y = float(y) if y.is_finite() else float("nan")
    if isinstance(y, bool) or not isinstance(y, (numbers.Real, np.floating, np.integer)):
        return None, f"objective returned {type(y).__name__} {y!r}, not a number"
    try:
        y = float(y)
    except (OverflowError, ValueError):  # e.g. an int beyond the float range
        return None, f"objective returned an {type(y).__name__} value beyond the float range"
    if not math.isfinite(y):
        return None, f"objective returned {y!r}"
    return y, None


def minimize(func: Callable[[Any], float], dimensions: Any, n_calls: int = 100, *,
             surrogate: str | Surrogate = "bwo", acquisition: str = "ei",
             n_initial_points: int = 5, initial_design: str = "sobol",
             n_candidates: int = 50_000, local_search: bool = True,
             n_local_candidates: int = 5_000, n_jump_candidates: int = 2_000,
             n_local_centers: int = 5, local_center_spacing: float = 0.1,
             distance_variance: str | float = "auto", explore_every: str | int = "auto",
             explore_length: float = 0.1,
             acq_optimizer: str = "auto", surrogate_params: dict | None = None,
             acquisition_params: dict | None = None, failure_value: str | float = "worst",
             y_transform: str = "auto", x0: Sequence[Any] | None = None,
             y0: Sequence[float] | None = None,
             callback: Callable | Iterable[Callable] | None = None,
             random_state: Any = None, verbose: bool = False,
             storage: str | os.PathLike | SQLiteStorage | None = None,
             resume_pending: str = "retry", n_jobs: int | None = None,
             executor: Any = None, timeout: float | None = None, strategy: str = "cl_min",
             max_retries: int = 1, progress_bar: bool = False) -> OptimizeResult:
    """Minimize a black-box function with a tree-ensemble surrogate.

    Parameters
    ----------
    func : callable
        ``func(x) -> float`` with ``x`` a list (or a dict, when the space was
        given as a dict) of values. An exception (``SystemExit`` included,
        and ``KeyboardInterrupt`` raised in a worker), ``None``, NaN or
        infinity gives a failed evaluation, never retried; the run goes on.
        Ctrl-C in the calling process stops the run, leaves the evaluations
        in flight pending (a resume offers them again) and re-raises. To run in worker
        processes (``n_jobs > 1``, ``timeout``, Dask) it must be picklable
        by cloudpickle: functions, lambdas and closures all are.
    dimensions : Space, list or dict of dimensions
        The search space.
    n_calls : int, default 100
        Number of evaluations of ``func``, the initial design included. With
        a ``storage`` that already holds a study, the evaluations recorded
        there count: a resumed run makes only the missing ones.
    surrogate, acquisition, n_initial_points, initial_design, n_candidates, local_search, \
n_local_candidates, n_jump_candidates, n_local_centers, local_center_spacing, \
distance_variance, explore_every, explore_length, acq_optimizer, surrogate_params, \
acquisition_params, failure_value, y_transform, random_state, storage, resume_pending
        As for :class:`Optimizer`.
    x0 : list of points, optional
        Points to evaluate (or, with ``y0``, to tell) before anything else.
        They count toward ``n_initial_points``; evaluated ones count toward
        ``n_calls``. When resuming, points already in the storage are skipped.
    y0 : list of float, optional
        Known values of ``x0``.
    callback : callable or list of callables, optional
        Called with the :class:`OptimizeResult` after every evaluation; a
        return value of ``True`` stops the run. See :mod:`treebo.callbacks`
        for early stopping, a deadline and a threshold. Evaluations still
        running when a callback stops a parallel run are abandoned (they stay
        pending in the storage and are offered again on resume).
    verbose : bool, default False
        Print one line per evaluation.
    n_jobs : int, optional
        Evaluations kept in flight at once. Without ``executor``, ``n_jobs >
        1`` runs them in that many worker processes (a loky pool, kept for
        the next calls; see :func:`treebo.parallel.process_pool`); ``-1``
        means one per CPU. With ``executor``
        it defaults to the executor's number of workers. A new point is
        proposed as soon as one evaluation finishes (asynchronous), with the
        points still being evaluated as constant lies.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where to run the evaluations. A ``dask.distributed.Client`` is used
        through ``client.get_executor(pure=False)`` (install ``treebo[dask]``).
        A Dask cluster left with no workers for
        ``treebo.parallel.DASK_NO_WORKERS_TIMEOUT`` seconds (60) stops the
        run; the evaluations in flight stay pending.
    timeout : float, optional
        Seconds an evaluation may run, counted from its start; a longer one
        is recorded as failed (``"timed out after ... s"``) and the run goes
        on. It needs a worker: with ``n_jobs`` 1 and no executor the
        evaluations run in one worker process. In a worker process the
        objective is interrupted (``SIGALRM``); one that ignores the alarm is
        given up a second later and, in treebo's own pool, its worker is
        killed and the pool replaced. In a thread (a thread pool, a Dask
        worker) it cannot be stopped: the trial is failed and the evaluation
        abandoned.
    strategy : {"cl_min", "cl_mean", "cl_max"}, default "cl_min"
        The constant lie given to pending points (see :meth:`Optimizer.ask`).
    max_retries : int, default 1
        How often an evaluation lost to the executor (a worker process
        killed, a broken pool, Dask's ``KilledWorker``) is submitted again
        before its trial is recorded as failed. Exceptions raised by ``func``
        are never retried: they are failed evaluations.
    progress_bar : bool, default False
        Show a :class:`~treebo._progress.ProgressBar` on standard error.

    Returns
    -------
    OptimizeResult
        ``x``, ``fun``, ``x_iters``, ``func_vals``, ``statuses``, ``errors``,
        ``fit_time``, ``acq_time``, ``space``, ``message``.
    """
    n_calls = check_int(n_calls, "n_calls")
    if not callable(func):
        raise ValueError(f"func must be callable, got {func!r}")
    callbacks = _as_callbacks(callback)
    check_strategy(strategy)
    max_retries = check_int(max_retries, "max_retries", 0)
    # Validate the parallel arguments before any storage is opened.
    resolve_executor(n_jobs, executor, timeout, dry_run=True)
    optimizer = Optimizer(dimensions, surrogate, acquisition, n_initial_points=n_initial_points,
                          initial_design=initial_design, n_candidates=n_candidates,
                          local_search=local_search, n_local_candidates=n_local_candidates,
                          n_jump_candidates=n_jump_candidates, n_local_centers=n_local_centers,
                          local_center_spacing=local_center_spacing,
                          distance_variance=distance_variance, explore_every=explore_every,
                          explore_length=explore_length, acq_optimizer=acq_optimizer,
                          surrogate_params=surrogate_params,
                          acquisition_params=acquisition_params, failure_value=failure_value,
                          y_transform=y_transform, random_state=random_state, storage=storage,
                          resume_pending=resume_pending)
    try:
        return _run(optimizer, func, n_calls, x0, y0, callbacks, verbose, n_jobs, executor,
                    timeout, strategy, max_retries, progress_bar)
    finally:
        optimizer.close()


def _run(optimizer: Optimizer, func: Callable, n_calls: int, x0: Any, y0: Any,
         callbacks: list[Callable], verbose: bool, n_jobs: Any, executor: Any, timeout: Any,
         strategy: str, max_retries: int, progress_bar: bool) -> OptimizeResult:
    x0 = _as_list(x0, "x0", "a list of points") if x0 is not None else []
    if y0 is not None:
        y0 = _as_list(y0, "y0", "a list of numbers, one per point of x0")
        if len(y0) != len(x0):
            raise ValueError(f"y0 has {len(y0)} values but x0 has {len(x0)} points")
        for x, y in zip(x0, y0):
            if optimizer._find_trial(x) is None:  # not told already in a resumed study
                optimizer.tell(x, y)
        x0 = []
    for x in x0:
        optimizer.space.encode([x])  # fail early on an infeasible x0
    x0 = [x for x in x0 if optimizer._find_trial(x) is None]

    n_before = optimizer._n_evaluated()
    budget = max(n_calls - n_before, 0)
    for cb in callbacks:
        if hasattr(cb, "on_start"):
            cb.on_start()
    bar = ProgressBar(n_calls, "treebo") if progress_bar else None
    if bar is not None and n_before:
        bar.update(n_before)
    told_here = [0]

    def on_tell(trial: Trial) -> str | None:
        told_here[0] += 1
        result = optimizer.get_result()
        if verbose:
            _report(n_before + told_here[0] - 1, n_calls, trial, result)
        if bar is not None:
            bar.update(best=result.fun)
        for cb in callbacks:
            if cb(result):
                reason = getattr(cb, "message", None)
                text = f"stopped by a callback after {told_here[0]} evaluations"
                return f"{text}: {reason}" if reason else text
        return None

    executor, n_workers, owned = resolve_executor(n_jobs, executor, timeout)
    try:
        message = run_evaluations(optimizer, func, budget, x0=x0, executor=executor,
                                  n_workers=n_workers, owned=owned, timeout=timeout,
                                  strategy=strategy, max_retries=max_retries, on_tell=on_tell)
    finally:
        if bar is not None:
            bar.close()
    result = optimizer.get_result()
    result.message = message or f"reached n_calls={n_calls}"
    if verbose:
        print(f"done: {result.message}; best f(x) = {result.fun:.6g} at x = {result.x}")
    return result


def _as_list(values: Any, argname: str, allowed: str) -> list:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise ValueError(f"{argname} must be {allowed}, got {values!r}")
    return list(values)


def _as_callbacks(callback: Any) -> list[Callable]:
    if callback is None:
        return []
    callbacks = [callback] if callable(callback) else _as_list(
        callback, "callback", "callable or a list of callables")
    for cb in callbacks:
        if not callable(cb):
            raise ValueError(f"callback must be callable or a list of callables, got {cb!r}")
    return callbacks


def _report(call: int, n_calls: int, trial: Trial, result: OptimizeResult) -> None:
    shown = f"{trial.value:.6g}" if trial.status == "complete" else f"failed ({trial.error})"
    timing = (f"  fit {trial.fit_time:.2f}s acq {trial.acq_time:.2f}s"
              if trial.origin == "model" else f"  [{trial.origin}]")
    print(f"call {call + 1:>4}/{n_calls}  f(x) = {shown:<14} best = {result.fun:.6g}{timing}",
          file=sys.stdout, flush=True)
