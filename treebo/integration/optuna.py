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
from typing import Any

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
    raise ImportError("treebo.integration.optuna needs Optuna; install it with: "
                      "pip install 'treebo[optuna]'") from _error

from .._checks import check_int
from ..optimizer import Optimizer
from ..proposal import cycle_step_kind
from ..space import Categorical, Dimension, Integer, Real, SpaceExhausted
from ..surrogates import Surrogate, make_surrogate
from ..targets import check_strategy

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

# Arguments of Optimizer that the sampler sets itself.
_TAKEN = frozenset({"dimensions", "surrogate", "acquisition", "n_initial_points",
                    "n_candidates", "surrogate_params", "acquisition_params", "failure_value",
                    "random_state", "storage", "resume_pending"})

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
        elif isinstance(d, FloatDistribution):
            # Decimal on the shortest repr: the grid values are then the ones
            # the user wrote (0.3, not 0.30000000000000004) and n is exact, as
            # Optuna's own adjustment of high to the grid computes it.
            low, step = decimal.Decimal(str(d.low)), decimal.Decimal(str(d.step))
            self.dimension = Integer(0, int((decimal.Decimal(str(d.high)) - low) // step),
                                     name=name)
            self.step = (low, step)
        else:
            raise ValueError(f"{type(d).__name__} is not a float, int or categorical "
                             "distribution")

    def to_treebo(self, value: Any) -> Any:
        """The treebo value of the Optuna (external) ``value``."""
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return int(d.to_internal_repr(value))
        if self.step is not None:
            return int(round((float(value) - d.low) / d.step))
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


def _stream_seed(seed: int, number: int, stream: int, words: Sequence[int] = (),
                 dtype: type = np.uint64) -> int:
    """A seed for one trial's stream, from the sampler's seed and the trial number only."""
    sequence = np.random.SeedSequence([seed, number, stream, *words])
    return int(sequence.generate_state(1, dtype)[0])


def _name_words(name: str) -> list[int]:
    # A stable digest: str hashes change from one process to the next.
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=16).digest()
    return [int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:], "little")]


def _observation(trial: FrozenTrial, codecs: Mapping[str, _Codec],
                 sign: float) -> tuple[dict, float | None] | None:
    """``(point, value)`` to tell treebo for a finished trial, or None when it is not modeled.

    The value is on treebo's scale (minimized: ``sign`` is -1 for a
    maximized study), None for a failure. A trial is modeled when it has
    every parameter of ``codecs`` with the same distribution.
    """
    if trial.state == TrialState.COMPLETE:
        value = sign * trial.value
    elif trial.state == TrialState.PRUNED and trial.intermediate_values:
        value = sign * trial.intermediate_values[max(trial.intermediate_values)]
    elif trial.state in (TrialState.PRUNED, TrialState.FAIL):
        value = None
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
    return point, value


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

    Each trial, treebo's :class:`~treebo.Optimizer` is rebuilt from the
    study's trials (so nothing is kept between trials: processes sharing one
    storage are on an equal footing) and asked for one point of the
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
        this many trials with a value in the relative search space
        (complete ones, and pruned ones with intermediate values).
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
        Further arguments of :class:`~treebo.Optimizer`: ``local_search``,
        ``n_local_candidates``, ``distance_variance``, ``explore_every``,
        ``explore_length``, ``jump_every``, ``jump_distance``,
        ``acq_optimizer``, ``y_transform``, ... (not the ones set above, nor
        ``random_state``, ``storage``, ``n_initial_points``).

    Notes
    -----
    How trials are modeled:

    - COMPLETE: their value (negated when the study maximizes: treebo minimizes).
      A non-finite value is a failure.
    - FAIL: told as failed; the surrogate sees them at ``failure_value``.
    - PRUNED: the last intermediate value reported (the one the trial was
      pruned at), as the value of a finished trial: it is what the study
      knows about that point, and for a learning curve it is pessimistic,
      which is what a pruned point deserves. Without intermediate values,
      as failed.
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

    def __init__(self, *, surrogate: str | Surrogate = "bwo",
                 surrogate_params: dict | None = None, acquisition: str = "ei",
                 acquisition_params: dict | None = None, n_startup_trials: int = 10,
                 n_candidates: int = 50_000, seed: int | None = None,
                 independent_sampler: BaseSampler | None = None, constant_liar: bool = True,
                 strategy: str = "cl_min", failure_value: str | float = "worst",
                 warn_independent_sampling: bool = True,
                 optimizer_kwargs: dict | None = None) -> None:
        self._n_startup_trials = check_int(n_startup_trials, "n_startup_trials", 0)
        if seed is not None:
            seed = check_int(seed, "seed", 0)
        if independent_sampler is not None and not isinstance(independent_sampler, BaseSampler):
            raise ValueError("independent_sampler must be an optuna.samplers.BaseSampler or "
                             f"None, got {independent_sampler!r}")
        check_strategy(strategy)
        for name, flag in (("constant_liar", constant_liar),
                           ("warn_independent_sampling", warn_independent_sampling)):
            if not isinstance(flag, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {flag!r}")
        kwargs = dict(optimizer_kwargs or {})
        clash = sorted(_TAKEN & set(kwargs))
        if clash:
            raise ValueError(f"optimizer_kwargs must not set {clash}: they are arguments of "
                             "TreeBOSampler or set by it")
        explore_every = kwargs.pop("explore_every", "auto")
        jump_every = kwargs.pop("jump_every", "auto")
        self._settings = {"surrogate": surrogate, "acquisition": acquisition,
                          "n_candidates": n_candidates, "surrogate_params": surrogate_params,
                          "acquisition_params": acquisition_params,
                          "failure_value": failure_value, **kwargs}
        # Every setting is checked now, by the optimizer itself, rather than at
        # the first model-based trial.
        check = Optimizer({"x": Real(0.0, 1.0)}, n_initial_points=0,
                          explore_every=explore_every, jump_every=jump_every, **self._settings)
        # The optimizer's own rule for "auto": no exploration or jump steps for
        # smooth surrogates (the GP), whose posterior already reverts to its prior.
        model = (make_surrogate(surrogate, **(surrogate_params or {}))
                 if isinstance(surrogate, str) else surrogate)
        self._explore_every, self._jump_every, self._local_steps = (
            check.pipeline.schedule.resolved(model.smooth))
        check.close()
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

    def after_trial(self, study: Study, trial: FrozenTrial, state: TrialState,
                    values: Sequence[float] | None) -> None:
        """Forward to the independent sampler (treebo keeps nothing between trials)."""
        if self._independent_sampler is not None:
            self._independent_sampler.after_trial(study, trial, state, values)

    def infer_relative_search_space(self, study: Study,
                                    trial: FrozenTrial) -> dict[str, BaseDistribution]:
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
        space = intersection_search_space(study.get_trials(deepcopy=False), include_pruned=True)
        codecs = _codecs(space)
        return {name: space[name] for name in codecs}

    def sample_relative(self, study: Study, trial: FrozenTrial,
                        search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
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
            return self._propose(study, trial, codecs)

    def sample_independent(self, study: Study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
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
                logger.warning("TreeBOSampler: parameter %r (trial %d) is drawn by the "
                               "independent sampler: it is not in every finished trial with "
                               "the same distribution (a conditional parameter, or a range "
                               "that changes), or treebo cannot encode it. Further such "
                               "draws of it are not reported.", param_name, trial.number)
        if self._independent_sampler is not None:
            return self._independent_sampler.sample_independent(study, trial, param_name,
                                                                param_distribution)
        seed = _stream_seed(self._seed, trial.number, _INDEPENDENT_STREAM,
                            _name_words(param_name), dtype=np.uint32)
        return RandomSampler(seed=seed).sample_independent(study, trial, param_name,
                                                           param_distribution)

    # -- proposals ---------------------------------------------------------------------
    def _propose(self, study: Study, trial: FrozenTrial,
                 codecs: dict[str, _Codec]) -> dict[str, Any]:
        sign = -1.0 if study.direction == StudyDirection.MAXIMIZE else 1.0
        trials = study.get_trials(deepcopy=False)
        n_proposed = sum(t.number < trial.number and PROPOSAL_KEY in t.system_attrs
                         for t in trials)
        kind = cycle_step_kind(n_proposed, self._explore_every, self._jump_every,
                               self._local_steps)
        optimizer = Optimizer(
            {name: codec.dimension for name, codec in codecs.items()}, n_initial_points=0,
            random_state=_stream_seed(self._seed, trial.number, _MODEL_STREAM),
            # The optimizer counts its own model-based proposals to space the
            # exploration and jump steps; this one has none (its first proposal
            # is an exploration step with explore_every=1, a jump step with
            # jump_every=2), so the study's count decides.
            explore_every=1 if kind == "explore" else 0,
            jump_every=2 if kind == "jump" else 0, **self._settings)
        # Trial number -> (point, finished, has a finite value) of what the optimizer holds.
        known: dict[int, tuple[dict, bool, bool]] = {}
        self._sync(optimizer, trials, trial, codecs, known, sign)
        if sum(valued for _, _, valued in known.values()) < self._n_startup_trials:
            return {}

        for _ in range(1 + _MAX_RETRIES):
            try:
                point = optimizer.ask(strategy=self._strategy)
            except SpaceExhausted:
                logger.info("TreeBOSampler: every point of the relative search space %s has "
                            "been evaluated or is pending; trial %d is drawn by the "
                            "independent sampler", sorted(codecs), trial.number)
                return {}
            params = {name: codec.to_optuna(point[name]) for name, codec in codecs.items()}
            _publish(study, trial, codecs, params)
            if not self._constant_liar:
                return params
            # Another process may have proposed the same point while this one
            # was fitting: read the study again; of two colliding proposals, the
            # later one always sees the earlier.
            latest = study.get_trials(deepcopy=False)
            if point not in self._sync(optimizer, latest, trial, codecs, known, sign):
                return params
            logger.info("TreeBOSampler: trial %d's proposal is also another trial's, which "
                        "was proposed meanwhile; proposing again", trial.number)
        return params

    def _sync(self, optimizer: Optimizer, trials: list[FrozenTrial], current: FrozenTrial,
              codecs: dict[str, _Codec], known: dict[int, tuple[dict, bool, bool]],
              sign: float) -> list[dict]:
        """Give ``optimizer`` the trials it does not hold yet, or holds at another point.

        Finished trials are told; with the constant liar, running and
        waiting trials whose points are known become pending (a trial
        proposed again elsewhere changes its point). ``known`` is updated.

        Returns
        -------
        list of dict
            The points of every other trial seen, finished or not.
        """
        points = []
        for t in trials:
            if t.number == current.number:
                continue
            observed = _observation(t, codecs, sign)
            if observed is not None:
                point, value = observed
                if not known.get(t.number, (None, False))[1]:
                    try:
                        optimizer.tell(point, value)   # completes it if it was pending
                    except ValueError:  # a value outside the dimension: not modeled
                        continue
                    valued = value is not None and math.isfinite(value)
                    known[t.number] = (point, True, valued)
                points.append(point)
            elif self._constant_liar and t.state in (TrialState.RUNNING, TrialState.WAITING):
                point = _pending_point(t, codecs)
                if point is None:
                    continue
                if known.get(t.number, (None,))[0] != point:
                    try:
                        optimizer.add_pending(point)
                    except ValueError:
                        continue
                    known[t.number] = (point, False, False)
                points.append(point)
        return points


def _publish(study: Study, trial: FrozenTrial, codecs: Mapping[str, _Codec],
             params: Mapping[str, Any]) -> None:
    """Write ``params`` into ``trial``'s system attributes for other workers to read."""
    text = json.dumps({name: codecs[name].distribution.to_internal_repr(value)
                       for name, value in params.items()})
    chunks = [text[i:i + _CHUNK] for i in range(0, len(text), _CHUNK)]
    # Optuna offers samplers no public way to annotate a trial; its own
    # samplers write system attributes through the study's storage too.
    storage, trial_id = study._storage, trial._trial_id
    for i, chunk in enumerate(chunks):
        storage.set_trial_system_attr(trial_id, f"{PROPOSAL_KEY}:{i}", chunk)
    # The count last, so that a reader never finds a count without its chunks. A
    # proposal made again may be read half rewritten: _published then fails to
    # parse it and the trial counts as unknown for that one reading.
    storage.set_trial_system_attr(trial_id, PROPOSAL_KEY, len(chunks))


def _check_single_objective(study: Study) -> None:
    if len(study.directions) > 1:
        raise ValueError(f"TreeBOSampler optimizes one objective; this study has "
                         f"{len(study.directions)} (directions {study.directions}). Use a "
                         "multi-objective sampler such as optuna.samplers.NSGAIISampler.")


def _fresh_seed() -> int:
    return int(np.random.SeedSequence().entropy)
