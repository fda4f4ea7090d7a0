"""An Optuna sampler backed by treebo's surrogates: :class:`TreeBOSampler`.

Needs Optuna (``pip install 'treebo[optuna]'``); importing this module
without it raises an ImportError that names the extra. ``import treebo``
never imports Optuna.

Every proposal refits from the study's trials as the storage holds them, so
the sampler keeps no model between trials and any number of processes
sharing one storage can use it (see :class:`TreeBOSampler`).
"""

from __future__ import annotations

import decimal
import hashlib
import json
import logging
import math
import threading
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

try:
    from optuna.distributions import (
        BaseDistribution,
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )
    from optuna.samplers import BaseSampler, RandomSampler
    from optuna.search_space import intersection_search_space
    from optuna.study import Study, StudyDirection
    from optuna.trial import FrozenTrial, TrialState
except ImportError as _error:
    raise ImportError(
        "treebo.integration.optuna needs Optuna; install it with: pip install 'treebo[optuna]'"
    ) from _error

from .._checks import check_choice, check_int
from ..proposal import ProposalPipeline
from ..space import Categorical, Dimension, Integer, Real, Space, SpaceExhausted
from ..surrogates import Surrogate, as_surrogate
from ..targets import Y_TRANSFORMS, check_failure_value, check_strategy

__all__ = ["TreeBOSampler"]

logger = logging.getLogger("treebo")

#: System attribute of a trial that holds the number of chunks of its
#: published proposal; the chunks are ``f"{PROPOSAL_KEY}:{i}"``, JSON text of
#: ``{parameter name: internal representation}``.
PROPOSAL_KEY = "treebo:proposal"

# RDBStorage keeps a system attribute's value in a column of 2048 characters
# (its JSON quoting included), so longer proposals are split.
_CHUNK = 2000

# Proposals made again when a trial running elsewhere turns out to hold the
# same point; a collision needs two proposals racing in the same fraction of
# a second, so more than one retry is already unlikely.
_MAX_RETRIES = 3

# Settings of the proposal pipeline that optimizer_kwargs may set: all but the
# ones that are arguments of the sampler.
_PIPELINE_KWARGS = tuple(
    name
    for name in ProposalPipeline.setting_names()
    if name not in ("acquisition", "acquisition_params", "n_candidates")
)

# The dimension that holds a trial's budget (its last reported step, plus one)
# when the study has pruned trials.
_BUDGET = "treebo:budget"

# Streams derived from (seed, trial number, purpose[, parameter]).
_MODEL_STREAM, _INDEPENDENT_STREAM = 0, 1


class _Codec:
    """How the values of one Optuna distribution map to a treebo dimension and back.

    Float and int distributions without a step become ``Real`` and
    ``Integer`` (log-uniform when ``log``); a distribution with a step
    becomes ``Integer(0, n)`` over the grid index ``k`` of
    ``low + k * step`` (``n`` grid steps), so treebo sees the grid and never
    proposes a value off it; a categorical becomes ``Categorical`` over the
    choices' indices (Optuna's choices may repeat under ``==``, e.g. 1 and
    True, which treebo's categories refuse).

    Raises
    ------
    ValueError
        When treebo's dimensions cannot encode the distribution (an interval
        too narrow for float64, integer bounds beyond ``2**49``), or it is
        not a float, int or categorical distribution.
    """

    def __init__(self, name: str, distribution: BaseDistribution):
        if not isinstance(
            distribution, (CategoricalDistribution, IntDistribution, FloatDistribution)
        ):
            raise ValueError(
                f"{type(distribution).__name__} is not a float, int or categorical distribution"
            )
        self.distribution = distribution
        self.step: tuple[decimal.Decimal, decimal.Decimal] | None = None
        d = distribution
        if isinstance(d, CategoricalDistribution):
            self.dimension: Dimension = Categorical(range(len(d.choices)), name=name)
        elif isinstance(d, IntDistribution) and d.step == 1:
            self.dimension = Integer(d.low, d.high, log=bool(d.log), name=name)
        elif isinstance(d, IntDistribution):
            self.dimension = Integer(0, (d.high - d.low) // d.step, name=name)
            self.step = (decimal.Decimal(d.low), decimal.Decimal(d.step))
        elif isinstance(d, FloatDistribution) and d.step is None:
            self.dimension = Real(d.low, d.high, log=bool(d.log), name=name)
        else:
            # Decimal on the shortest repr: the grid values are then the ones
            # the user wrote (0.3, not 0.30000000000000004) and n is exact, as
            # Optuna's own adjustment of high to the grid computes it.
            low, step = decimal.Decimal(str(d.low)), decimal.Decimal(str(d.step))
            self.dimension = Integer(
                0, int((decimal.Decimal(str(d.high)) - low) // step), name=name
            )
            self.step = (low, step)

    def to_treebo(self, value: Any) -> Any:
        """The treebo value of the Optuna (external) ``value``."""
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return int(d.to_internal_repr(value))
        if self.step is not None:
            # The Decimals of the grid convert back to exactly d.low and d.step.
            low, step = self.step
            return int(round((float(value) - float(low)) / float(step)))
        if isinstance(d, IntDistribution):
            return int(value)
        return float(value)

    def to_optuna(self, value: Any) -> Any:
        """The Optuna (external) value of the treebo ``value``."""
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return d.choices[int(value)]
        if self.step is not None:
            low, step = self.step
            on_grid = low + int(value) * step
            return int(on_grid) if isinstance(d, IntDistribution) else min(float(on_grid), d.high)
        if isinstance(d, IntDistribution):
            return int(value)
        return min(max(float(value), d.low), d.high)


def _codecs(search_space: Mapping[str, BaseDistribution]) -> dict[str, _Codec]:
    """The codecs of the parameters treebo samples jointly: not single-valued, encodable."""
    codecs = {}
    for name, distribution in search_space.items():
        if distribution.single():
            continue
        try:
            codecs[name] = _Codec(name, distribution)
        except ValueError as error:
            logger.debug("parameter %r is left to the independent sampler: %s", name, error)
    return codecs


def _stream_seed(
    seed: int, number: int, stream: int, words: Sequence[int] = (), dtype: type = np.uint64
) -> int:
    """A seed for one trial's stream, from the sampler's seed and the trial number only."""
    sequence = np.random.SeedSequence([seed, number, stream, *words])
    return int(sequence.generate_state(1, dtype)[0])


def _name_words(name: str) -> list[int]:
    # A stable digest: str hashes change from one process to the next.
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=16).digest()
    return [int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:], "little")]


def _observation(
    trial: FrozenTrial, codecs: Mapping[str, _Codec], sign: float
) -> tuple[dict, float, int | None] | None:
    """``(point, value, step)`` of a finished trial, or None when it is not modeled.

    The value is on treebo's scale (minimized: ``sign`` is -1 for a
    maximized study), NaN for a failure. ``step`` is the step of a pruned
    trial's last intermediate value, the budget it was evaluated at; None
    for a complete (full-budget) or failed trial. A trial is modeled when it
    has every parameter of ``codecs`` with the same distribution.
    """
    step = None
    if trial.state == TrialState.COMPLETE and trial.value is not None:
        value = sign * trial.value
    elif trial.state == TrialState.PRUNED and trial.intermediate_values:
        step = max(trial.intermediate_values)
        value = sign * trial.intermediate_values[step]
    elif trial.state in (TrialState.PRUNED, TrialState.FAIL):
        value = math.nan
    else:
        return None
    point = {}
    for name, codec in codecs.items():
        if trial.distributions.get(name) != codec.distribution:
            return None
        try:
            point[name] = codec.to_treebo(trial.params[name])
        except (ValueError, TypeError, OverflowError):
            return None
    return point, (value if math.isfinite(value) else math.nan), step


class _StudyData:
    """The study's trials as encoded arrays for one proposal.

    A pruned trial is an evaluation at a lower budget: when the study has
    any, the space gains a budget dimension (an integer, log-scaled: the
    trial's last reported step plus one), complete and pending trials sit at
    the full budget (the largest reported step plus one), and proposals are
    made at the full budget.
    """

    def __init__(
        self,
        trials: Sequence[FrozenTrial],
        current: FrozenTrial,
        codecs: Mapping[str, _Codec],
        sign: float,
        pending: bool,
    ):
        finished: list[tuple[dict, float, int | None]] = []
        running: list[dict] = []
        for t in trials:
            if t.number == current.number:
                continue
            observed = _observation(t, codecs, sign)
            if observed is not None:
                finished.append(observed)
            elif pending and t.state in (TrialState.RUNNING, TrialState.WAITING):
                point = _pending_point(t, codecs)
                if point is not None:
                    running.append(point)
        steps = [step for _, _, step in finished if step is not None]
        reported = [max(t.intermediate_values) for t in trials if t.intermediate_values]
        self.full = max(reported, default=0) + 1 if steps else None
        if self.full is not None and self.full < 2:
            self.full = 2  # every report at step 0: the full budget is past it
        dims = {name: codec.dimension for name, codec in codecs.items()}
        if self.full is not None:
            dims[_BUDGET] = Integer(1, self.full, log=True)
        self.space = Space(dims)
        self.points = [point for point, _, _ in finished] + running
        rows, values = [], []
        for point, value, step in finished:
            row = self._encode(point, step)
            if row is not None:
                rows.append(row)
                values.append(value)
        self.X = np.array(rows).reshape(-1, self.space.n_columns)
        self.y = np.array(values, dtype=float)
        lies = [row for row in (self._encode(point, None) for point in running) if row is not None]
        self.pending = np.array(lies).reshape(-1, self.space.n_columns)
        self.fixed = None
        if self.full is not None:
            full = Space([dims[_BUDGET]]).encode([[self.full]])[0, 0]
            self.fixed = {self.space.columns_of(_BUDGET).start: float(full)}

    def _encode(self, point: dict, step: int | None) -> np.ndarray | None:
        if self.full is not None:
            point = {**point, _BUDGET: self.full if step is None else min(step + 1, self.full)}
        try:
            return self.space.encode([point])[0]
        except ValueError:  # a value outside the dimension: not modeled
            return None

    @property
    def n_valued(self) -> int:
        """Trials with a finite value at any budget; 0 without one at the full budget."""
        finite = np.isfinite(self.y)
        if self.fixed is not None:
            ((column, value),) = self.fixed.items()
            if not (finite & (self.X[:, column] == value)).any():
                return 0
        return int(finite.sum())

    def decode(self, encoded: np.ndarray) -> dict:
        point = self.space.decode(encoded[None, :])[0]
        point.pop(_BUDGET, None)
        return point


def _published(trial: FrozenTrial) -> dict:
    """The proposal a sampler published for ``trial`` ({} if none, or unreadable)."""
    attrs = trial.system_attrs
    count = attrs.get(PROPOSAL_KEY)
    if not isinstance(count, int) or count < 1:
        return {}
    try:
        proposal = json.loads("".join(attrs[f"{PROPOSAL_KEY}:{i}"] for i in range(count)))
    except (KeyError, TypeError, ValueError):
        # A proposal being rewritten by another process: treat it as unknown.
        return {}
    return proposal if isinstance(proposal, dict) else {}


def _pending_point(trial: FrozenTrial, codecs: Mapping[str, _Codec]) -> dict | None:
    """The point a running or waiting trial is (or will be) evaluated at, if all of it is known.

    Per parameter: the value already suggested, else the value it was
    enqueued with (``study.enqueue_trial``), else the value a sampler
    published for it before the objective asked for it.
    """
    fixed = trial.system_attrs.get("fixed_params") or {}
    published = None
    point = {}
    try:
        for name, codec in codecs.items():
            if name in trial.params:
                if trial.distributions.get(name) != codec.distribution:
                    return None
                value = trial.params[name]
            elif name in fixed:
                value = fixed[name]
            else:
                published = _published(trial) if published is None else published
                if name not in published:
                    return None
                value = codec.distribution.to_external_repr(published[name])
            point[name] = codec.to_treebo(value)
    except (ValueError, TypeError, IndexError, OverflowError):
        return None
    return point


class TreeBOSampler(BaseSampler):
    """An Optuna sampler that proposes the study's next point with a treebo surrogate.

    Each trial, treebo's proposal pipeline
    (:meth:`treebo.proposal.ProposalPipeline.propose`) proposes one point from
    the study's trials as the storage holds them (so nothing is kept between
    trials: processes sharing one storage are on an equal footing), in the
    *relative search space*: the parameters that every finished trial
    suggested with the same distribution (Optuna's intersection search
    space; complete and pruned trials count). Parameters outside it
    (conditional parameters of a define-by-run objective, ranges that
    change) and single-valued ones are drawn by the independent sampler, as
    is every parameter of the first ``n_startup_trials`` trials.

    Parameters
    ----------
    surrogate : str or Surrogate, default "bwo"
        A name from :func:`~treebo.available_surrogates` or an unfitted
        surrogate instance.
    surrogate_params : dict, optional
        Parameters of :func:`~treebo.make_surrogate` when ``surrogate`` is a name.
    acquisition : {"ei", "pi", "lcb"}, default "ei"
        Expected improvement, probability of improvement or lower confidence
        bound, as for :class:`~treebo.Optimizer`.
    acquisition_params : dict, optional
        Parameters of the acquisition, as for :class:`~treebo.Optimizer`.
    n_startup_trials : int, default 10
        The independent sampler draws every parameter until the study holds
        this many trials with a value in the relative search space (complete
        ones, and pruned ones with intermediate values), one of them complete.
    n_candidates : int, default 50_000
        Sobol candidates scored per proposal, as for
        :class:`~treebo.Optimizer`; relative spaces with at most this many
        points are scored exhaustively. The proposal's cost grows with it:
        measured on 2 busy cores in 6 dimensions at 100 trials, 0.46 s per
        trial with 50,000 and 0.2 s with 10,000.
    seed : int >= 0, optional
        Makes a sequential study reproducible: the treebo proposal of trial
        ``n`` is seeded by ``SeedSequence([seed, n, 0])`` and the default
        independent sampler's draw of parameter ``p`` by
        ``SeedSequence([seed, n, 1, digest(p)])``, so a proposal depends
        only on the seed, the trial number and the trials before it, never
        on the sampler's history. None draws a seed from fresh entropy.
    independent_sampler : optuna.samplers.BaseSampler, optional
        Draws the startup trials and the parameters outside the relative
        search space. By default, a :class:`optuna.samplers.RandomSampler`
        seeded per trial and parameter as above, so that processes started
        with the same ``seed`` do not draw the same startup points (a
        ``RandomSampler(seed)`` in each would).
    constant_liar : bool, default True
        Show the points of running (and enqueued, waiting) trials to the
        surrogate as pending, at the constant lie of ``strategy``, so that
        parallel workers (``study.optimize(..., n_jobs=k)``, or processes
        sharing a storage) spread out instead of proposing the same point.
    strategy : {"cl_min", "cl_mean", "cl_max"}, default "cl_min"
        The lie: the minimum, mean or maximum of the complete values
        (treebo's scale: the best value is the minimum for both directions).
    failure_value : "worst" or float, default "worst"
        Value the surrogate is fitted with for failed trials: the worst
        value seen, or a number on treebo's scale (the objective's value,
        negated in a maximized study).
    warn_independent_sampling : bool, default True
        Log a warning (on the ``treebo`` logger, once per parameter) when a
        parameter is drawn by the independent sampler after the startup trials.
    optimizer_kwargs : dict, optional
        Further settings of the proposals, as for :class:`~treebo.Optimizer`:
        ``acq_optimizer``, ``local_search``, ``n_local_candidates``,
        ``n_jump_candidates``, ``n_local_centers``, ``local_center_spacing``,
        ``distance_variance``, ``explore_every``, ``explore_length``,
        ``jump_every``, ``jump_distance``, ``local_steps`` and ``y_transform``.
        The study's count of treebo proposals places each proposal in the
        schedule of step kinds, as an optimizer's own count does.

    Notes
    -----
    How trials are modeled:

    - COMPLETE: their value (negated when the study maximizes: treebo minimizes).
      A non-finite value is a failure.
    - FAIL: told as failed; the surrogate sees them at ``failure_value``.
    - PRUNED: an evaluation at a lower budget. Its last intermediate value
      is its value at the budget of that step (``step + 1``); a budget
      dimension (log-scaled) joins the surrogate's inputs, with complete
      and running trials at the full budget (the largest step any trial
      reported, plus one), and every proposal is made at the full budget.
      The incumbent and the constant lie are taken over the full-budget
      trials only, so a pruned point's early value does not pose as a
      result. Without intermediate values, a pruned trial is a failure.
    - RUNNING and WAITING: pending (constant liar), when every parameter of
      the relative search space is known for them: suggested already,
      enqueued, or published by the sampler that proposed them. Each
      proposal is published in the trial's system attributes
      (``PROPOSAL_KEY``) the moment it is made, because the objective
      writes a parameter to the storage only when it asks for it.

    Within one process, proposals are made one at a time (a lock), so each
    thread of ``n_jobs`` sees the others' points. Across processes, two
    proposals made at the same moment cannot see each other; after
    publishing its proposal, the sampler reads the study again and proposes
    anew if a trial it did not know of holds the same point (the later of
    two colliding proposals always sees the earlier one).

    Multi-objective studies are refused (ValueError).
    """

    def __init__(
        self,
        *,
        surrogate: str | Surrogate = "bwo",
        surrogate_params: dict | None = None,
        acquisition: str = "ei",
        acquisition_params: dict | None = None,
        n_startup_trials: int = 10,
        n_candidates: int = 50_000,
        seed: int | None = None,
        independent_sampler: BaseSampler | None = None,
        constant_liar: bool = True,
        strategy: str = "cl_min",
        failure_value: str | float = "worst",
        warn_independent_sampling: bool = True,
        optimizer_kwargs: dict | None = None,
    ) -> None:
        self._n_startup_trials = check_int(n_startup_trials, "n_startup_trials", 0)
        if seed is not None:
            seed = check_int(seed, "seed", 0)
        if independent_sampler is not None and not isinstance(independent_sampler, BaseSampler):
            raise ValueError(
                "independent_sampler must be an optuna.samplers.BaseSampler or "
                f"None, got {independent_sampler!r}"
            )
        check_strategy(strategy)
        for name, flag in (
            ("constant_liar", constant_liar),
            ("warn_independent_sampling", warn_independent_sampling),
        ):
            if not isinstance(flag, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {flag!r}")
        kwargs = dict(optimizer_kwargs or {})
        unknown = sorted(set(kwargs) - set(_PIPELINE_KWARGS) - {"y_transform"})
        if unknown:
            raise ValueError(
                f"optimizer_kwargs must only set {sorted(_PIPELINE_KWARGS)} and "
                f"'y_transform', got {unknown} (the others are arguments of "
                "TreeBOSampler, or do not apply to it)"
            )
        self._y_transform = check_choice(
            kwargs.pop("y_transform", "auto"), "y_transform", Y_TRANSFORMS
        )
        self._failure_value = check_failure_value(failure_value)
        self._surrogate = as_surrogate(surrogate, surrogate_params)
        self._pipeline = ProposalPipeline.from_settings(
            acquisition=acquisition,
            acquisition_params=acquisition_params,
            n_candidates=n_candidates,
            **kwargs,
        )
        self._seed = seed if seed is not None else _fresh_seed()
        self._independent_sampler = independent_sampler
        self._constant_liar = bool(constant_liar)
        self._strategy = strategy
        self._warn_independent_sampling = bool(warn_independent_sampling)
        self._warned: set[str] = set()
        self._lock = threading.Lock()

    # The lock cannot be pickled (Optuna's docs suggest pickling a sampler to resume).
    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    # -- the sampler protocol ----------------------------------------------------------
    def reseed_rng(self) -> None:
        """Draw a new seed from fresh entropy (and reseed the independent sampler).

        Optuna calls this in each worker thread of ``study.optimize(n_jobs=k)``;
        proposals made after it no longer follow ``seed``.
        """
        self._seed = _fresh_seed()
        if self._independent_sampler is not None:
            self._independent_sampler.reseed_rng()

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        """Refuse a multi-objective study before its first trial runs; forward the call."""
        _check_single_objective(study)
        if self._independent_sampler is not None:
            self._independent_sampler.before_trial(study, trial)

    def after_trial(
        self, study: Study, trial: FrozenTrial, state: TrialState, values: Sequence[float] | None
    ) -> None:
        """Forward to the independent sampler (treebo keeps nothing between trials)."""
        if self._independent_sampler is not None:
            self._independent_sampler.after_trial(study, trial, state, values)

    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        """The parameters every finished trial suggested with the same distribution.

        Parameters
        ----------
        study : optuna.study.Study
        trial : optuna.trial.FrozenTrial
            The trial about to be sampled.

        Returns
        -------
        dict of str -> BaseDistribution
            Optuna's intersection search space over the complete and pruned
            trials, without single-valued distributions and those treebo's
            dimensions cannot encode.
        """
        _check_single_objective(study)
        study = _whole_study(study)
        space = intersection_search_space(study.get_trials(deepcopy=False), include_pruned=True)
        codecs = _codecs(space)
        return {name: space[name] for name in codecs}

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        """Propose the relative search space's parameters of ``trial`` with treebo.

        Parameters
        ----------
        study : optuna.study.Study
        trial : optuna.trial.FrozenTrial
            The trial being sampled.
        search_space : dict of str -> BaseDistribution
            From :meth:`infer_relative_search_space`.

        Returns
        -------
        dict of str -> value
            One value per parameter, in Optuna's (external) representation;
            ``{}`` during the startup trials, or when every point of a
            discrete space has been evaluated or is pending (the independent
            sampler then draws the parameters).
        """
        _check_single_objective(study)
        codecs = _codecs(search_space)
        if not codecs:
            return {}
        with self._lock:
            return self._propose(_whole_study(study), trial, codecs)

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        """Draw one parameter outside the relative search space with the independent sampler.

        Parameters
        ----------
        study : optuna.study.Study
        trial : optuna.trial.FrozenTrial
        param_name : str
        param_distribution : BaseDistribution

        Returns
        -------
        value
            In Optuna's (external) representation.
        """
        if self._warn_independent_sampling and param_name not in self._warned:
            trials = study.get_trials(deepcopy=False)
            # Not for the startup trials, nor for a trial that started during them
            # and asks for a parameter of the joint space later.
            joint = _codecs(intersection_search_space(trials, include_pruned=True))
            n_complete = sum(t.state == TrialState.COMPLETE for t in trials)
            if n_complete >= self._n_startup_trials and param_name not in joint:
                self._warned.add(param_name)
                logger.warning(
                    "TreeBOSampler: parameter %r (trial %d) is drawn by the "
                    "independent sampler: it is not in every finished trial with "
                    "the same distribution (a conditional parameter, or a range "
                    "that changes), or treebo cannot encode it. Further such "
                    "draws of it are not reported.",
                    param_name,
                    trial.number,
                )
        if self._independent_sampler is not None:
            return self._independent_sampler.sample_independent(
                study, trial, param_name, param_distribution
            )
        seed = _stream_seed(
            self._seed, trial.number, _INDEPENDENT_STREAM, _name_words(param_name), dtype=np.uint32
        )
        return RandomSampler(seed=seed).sample_independent(
            study, trial, param_name, param_distribution
        )

    # -- proposals ---------------------------------------------------------------------
    def _propose(
        self, study: Study, trial: FrozenTrial, codecs: dict[str, _Codec]
    ) -> dict[str, Any]:
        sign = -1.0 if study.direction == StudyDirection.MAXIMIZE else 1.0
        trials = study.get_trials(deepcopy=False)
        # The study's count of treebo proposals places this one in the schedule.
        n_proposed = sum(t.number < trial.number and PROPOSAL_KEY in t.system_attrs for t in trials)
        rng = np.random.default_rng(_stream_seed(self._seed, trial.number, _MODEL_STREAM))
        seed = int(rng.integers(np.iinfo(np.int32).max)) if self._surrogate.seeded else None
        params: dict[str, Any] = {}
        for _ in range(1 + _MAX_RETRIES):
            data = _StudyData(trials, trial, codecs, sign, self._constant_liar)
            if data.n_valued < max(self._n_startup_trials, 1):
                return {}
            try:
                (proposal,) = self._pipeline.propose(
                    data.space,
                    data.X,
                    data.y,
                    surrogate=self._surrogate,
                    rng=rng,
                    pending=data.pending,
                    step=n_proposed,
                    seed=seed,
                    strategy=self._strategy,
                    failure_value=self._failure_value,
                    y_transform=self._y_transform,
                    fixed=data.fixed,
                )
            except SpaceExhausted:
                logger.info(
                    "TreeBOSampler: every point of the relative search space %s has "
                    "been evaluated or is pending; trial %d is drawn by the "
                    "independent sampler",
                    sorted(codecs),
                    trial.number,
                )
                return {}
            point = data.decode(proposal.point)
            params = {name: codec.to_optuna(point[name]) for name, codec in codecs.items()}
            _publish(study, trial, codecs, params)
            if not self._constant_liar:
                return params
            # Another process may have proposed the same point while this one
            # was fitting: read the study again; of two colliding proposals, the
            # later one always sees the earlier.
            trials = study.get_trials(deepcopy=False)
            others = _StudyData(trials, trial, codecs, sign, True).points
            if point not in others:
                return params
            logger.info(
                "TreeBOSampler: trial %d's proposal is also another trial's, which "
                "was proposed meanwhile; proposing again",
                trial.number,
            )
        return params


def _publish(
    study: Study, trial: FrozenTrial, codecs: Mapping[str, _Codec], params: Mapping[str, Any]
) -> None:
    """Write ``params`` into ``trial``'s system attributes for other workers to read."""
    text = json.dumps(
        {name: codecs[name].distribution.to_internal_repr(value) for name, value in params.items()}
    )
    chunks = [text[i : i + _CHUNK] for i in range(0, len(text), _CHUNK)]
    # Optuna offers samplers no public way to annotate a trial; its own
    # samplers write system attributes through the study's storage too.
    storage, trial_id = study._storage, trial._trial_id
    for i, chunk in enumerate(chunks):
        storage.set_trial_system_attr(trial_id, f"{PROPOSAL_KEY}:{i}", chunk)
    # The count last, so that a reader never finds a count without its chunks. A
    # proposal made again may be read half rewritten: _published then fails to
    # parse it and the trial counts as unknown for that one reading.
    storage.set_trial_system_attr(trial_id, PROPOSAL_KEY, len(chunks))


def _whole_study(study: Study) -> Study:
    """The study itself, where Optuna passes a sampler the view of one Hyperband bracket.

    Under ``HyperbandPruner``, Optuna shows samplers only the trials of the
    current trial's bracket (a private ``_BracketStudy`` that keeps the whole
    study as ``_study``). The budget-aware model uses every evaluation, as
    BOHB does, so the sampler reads the whole study.
    """
    try:
        whole = object.__getattribute__(study, "_study")
    except AttributeError:
        return study
    return whole if isinstance(whole, Study) else study


def _check_single_objective(study: Study) -> None:
    if len(study.directions) > 1:
        raise ValueError(
            f"TreeBOSampler optimizes one objective; this study has "
            f"{len(study.directions)} (directions {study.directions}). Use a "
            "multi-objective sampler such as optuna.samplers.NSGAIISampler."
        )


def _fresh_seed() -> int:
    # Without an argument, SeedSequence draws its entropy from the OS as one int.
    return int(cast(int, np.random.SeedSequence().entropy))
