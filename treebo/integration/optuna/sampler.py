"""The Optuna sampler: :class:`TreeBOSampler`."""

from __future__ import annotations

import logging
import math
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler, RandomSampler
from optuna.search_space import intersection_search_space
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from ..._checks import check_choice, check_int
from ...proposal import ProposalPipeline
from ...proposal.outcomes import constraint_model
from ...space import SpaceExhausted
from ...surrogates import Surrogate, as_surrogate
from ...targets import Y_TRANSFORMS, check_failure_value, check_strategy
from .codec import Codec, joint_codecs
from .publication import PROPOSAL_KEY, publish_proposal
from .seeds import INDEPENDENT_STREAM, MODEL_STREAM, fresh_seed, name_words, stream_seed
from .study_data import StudyData, whole_study

__all__ = ["TreeBOSampler"]

#: The trial system attribute under which Optuna's samplers store the values of
#: ``constraints_func``; ``FrozenTrial.constraints`` reads them from it (keyed
#: "0", "1", ...) along with those of ``Trial.set_constraint``.
CONSTRAINTS_KEY = "constraints"

# Optuna 5.0.0's samplers warn so when given constraints_func; the same words and
# category, so that a filter set for theirs applies to this one too.
_CONSTRAINTS_FUNC_WARNING = (
    "`constraints_func` has been deprecated in v5.0.0. This feature will be removed "
    "in v7.0.0. See https://github.com/optuna/optuna/releases/tag/v5.0.0. "
    "Use `optuna.trial.Trial.set_constraint` instead."
)

logger = logging.getLogger("treebo")

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


class TreeBOSampler(BaseSampler):
    """An Optuna sampler that proposes the study's next point with a treebo surrogate.

    It handles studies of one objective or several (``directions=``), with or
    without constraints (``trial.set_constraint`` in the objective, or
    ``constraints_func``).

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
        (treebo's scale: the best value is the minimum for both directions;
        with several objectives, of the proposal's scalarized values).
    failure_value : "worst" or float, default "worst"
        Value the surrogate is fitted with for failed trials: the worst
        value seen, or a number on treebo's scale (the objective's value,
        negated in a maximized study; with several objectives, a value of
        the scalarization, whose values lie in [0, 1.05]).
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
    constraints_func : callable, optional
        ``constraints_func(frozen_trial)`` returns a sequence of floats, each
        feasible when at most 0; called once per complete or pruned trial
        (in :meth:`after_trial`) and stored in the trial's system attributes
        as Optuna's samplers store it, so that ``trial.constraints``,
        ``study.best_trial`` and ``study.best_trials`` see it. A NaN raises
        ValueError. As in Optuna 5.0.0's samplers, this emits a
        FutureWarning: ``trial.set_constraint(key, value)`` in the objective
        does the same and is read without it.
    constraint_surrogate : str or Surrogate, default "gp"
        The model of each constraint (a name from
        :func:`~treebo.available_surrogates`, or an unfitted instance), as
        for :class:`~treebo.Optimizer`.

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

    Several objectives: each trial's ``values``, negated where the
    direction maximizes, are the columns of ``y``; each proposal scalarizes
    them with Chebyshev weights of its own (ParEGO), as
    :class:`~treebo.Optimizer` does. A trial with a non-finite value is a
    failure. Optuna does not report intermediate values of such studies, so
    a pruned trial there is a failure.

    Constraints: the keys of ``trial.constraints`` that any trial with
    values has (those of ``constraints_func`` are ``"0"``, ``"1"``, ...)
    are the constraints, each modeled by ``constraint_surrogate``; the
    acquisition (``"ei"`` or ``"pi"``; ``"lcb"`` raises ValueError) is
    weighted by the probability that every constraint holds, the incumbent
    is the best feasible trial, and while no trial is feasible the search
    minimizes the total violation. Infeasible trials stay data for the
    objectives' model. A trial that lacks a key other trials have counts as
    meeting that constraint, as Optuna's ``study.best_trial`` and
    ``study.best_trials`` count it, and enters that constraint's model at the
    limit, 0. Infinite constraint values are placed just beyond the finite
    ones (by their spread), keeping their sign.
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
        constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
        constraint_surrogate: str | Surrogate = "gp",
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
        if constraints_func is not None:
            if not callable(constraints_func):
                raise ValueError(
                    f"constraints_func must be a callable or None, got {constraints_func!r}"
                )
            if acquisition not in ("ei", "pi"):
                raise ValueError(
                    f"constraints need the acquisition 'ei' or 'pi', not {acquisition!r}"
                )
            warnings.warn(_CONSTRAINTS_FUNC_WARNING, FutureWarning, stacklevel=2)
        self._constraints_func = constraints_func
        self._constraint_surrogate = constraint_model(constraint_surrogate)
        self._seed = seed if seed is not None else fresh_seed()
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
        self._seed = fresh_seed()
        if self._independent_sampler is not None:
            self._independent_sampler.reseed_rng()

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        """Forward to the independent sampler.

        Parameters
        ----------
        study : optuna.study.Study
        trial : optuna.trial.FrozenTrial
            The trial about to run.
        """
        if self._independent_sampler is not None:
            self._independent_sampler.before_trial(study, trial)

    def after_trial(
        self, study: Study, trial: FrozenTrial, state: TrialState, values: Sequence[float] | None
    ) -> None:
        """Store the values of ``constraints_func``; forward to the independent sampler.

        Parameters
        ----------
        study : optuna.study.Study
        trial : optuna.trial.FrozenTrial
            The trial that finished.
        state : optuna.trial.TrialState
        values : sequence of float or None
            Its objective values.

        Raises
        ------
        ValueError
            If ``constraints_func`` returns a NaN (nothing is stored then, and
            the study stops, as with Optuna's samplers).
        """
        if self._constraints_func is not None and state in (
            TrialState.COMPLETE,
            TrialState.PRUNED,
        ):
            _store_constraints(self._constraints_func, study, trial)
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
        study = whole_study(study)
        space = intersection_search_space(study.get_trials(deepcopy=False), include_pruned=True)
        codecs = joint_codecs(space)
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
        codecs = joint_codecs(search_space)
        if not codecs:
            return {}
        with self._lock:
            return self._propose(whole_study(study), trial, codecs)

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
            joint = joint_codecs(intersection_search_space(trials, include_pruned=True))
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
        seed = stream_seed(
            self._seed, trial.number, INDEPENDENT_STREAM, name_words(param_name), dtype=np.uint32
        )
        return RandomSampler(seed=seed).sample_independent(
            study, trial, param_name, param_distribution
        )

    # -- proposals ---------------------------------------------------------------------
    def _propose(
        self, study: Study, trial: FrozenTrial, codecs: dict[str, Codec]
    ) -> dict[str, Any]:
        signs = [-1.0 if d == StudyDirection.MAXIMIZE else 1.0 for d in study.directions]
        trials = study.get_trials(deepcopy=False)
        # The study's count of treebo proposals places this one in the schedule.
        n_proposed = sum(t.number < trial.number and PROPOSAL_KEY in t.system_attrs for t in trials)
        rng = np.random.default_rng(stream_seed(self._seed, trial.number, MODEL_STREAM))
        data = StudyData(trials, trial, codecs, signs, self._constant_liar)
        seeded = self._surrogate.seeded or (
            data.constraints is not None and self._constraint_surrogate.seeded
        )
        seed = int(rng.integers(np.iinfo(np.int32).max)) if seeded else None
        params: dict[str, Any] = {}
        for attempt in range(1 + _MAX_RETRIES):
            if attempt:
                data = StudyData(trials, trial, codecs, signs, self._constant_liar)
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
                    constraints=data.constraints,
                    constraint_surrogate=self._constraint_surrogate,
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
            publish_proposal(study, trial, codecs, params)
            if not self._constant_liar:
                return params
            # Another process may have proposed the same point while this one
            # was fitting: read the study again; of two colliding proposals, the
            # later one always sees the earlier.
            trials = study.get_trials(deepcopy=False)
            others = StudyData(trials, trial, codecs, signs, True).points
            if point not in others:
                return params
            logger.info(
                "TreeBOSampler: trial %d's proposal is also another trial's, which "
                "was proposed meanwhile; proposing again",
                trial.number,
            )
        return params


def _store_constraints(
    constraints_func: Callable[[FrozenTrial], Sequence[float]], study: Study, trial: FrozenTrial
) -> None:
    """Store ``constraints_func(trial)`` where Optuna's samplers do, or nothing if it has a NaN."""
    stored = None
    try:
        values = tuple(float(v) for v in constraints_func(trial))
        if any(math.isnan(v) for v in values):
            raise ValueError(
                f"constraints_func returned NaN for trial {trial.number}: {values}; "
                "constraint values cannot be NaN"
            )
        stored = values
    finally:
        # Written when the function fails too (None: no constraints), as
        # Optuna's samplers do.
        study._storage.set_trial_system_attr(trial._trial_id, CONSTRAINTS_KEY, stored)
