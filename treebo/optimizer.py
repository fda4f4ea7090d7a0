"""The ask/tell optimizer: composes a study's parts and owns nothing else.

The trials live in a :class:`~treebo.history.History`, the first points in an
:class:`~treebo.initial_design.InitialDesign`, the random streams in
:class:`~treebo.random_streams.RandomStreams`, the way a point is proposed in
a :class:`~treebo.proposal.ProposalPipeline`, and every ask and tell is a
transaction with a :class:`~treebo.storage.Storage`.
:func:`~treebo.loop.minimize` drives an optimizer in a loop.
"""

from __future__ import annotations

import copy
import os
import time
from typing import Any

import numpy as np

from ._checks import check_int
from .history import History, Trial
from .initial_design import InitialDesign
from .metrics import Metrics
from .proposal import ProposalPipeline
from .proposal.outcomes import constraint_model
from .random_streams import RandomStreams
from .result import OptimizeResult
from .resume import PendingRetries
from .settings import PIPELINE, SETTINGS, check_settings, part_settings, settings_to_store
from .space import Space, SpaceExhausted
from .storage import InMemoryStorage, SQLiteStorage, Storage, open_study
from .surrogates import Surrogate, as_surrogate
from .targets import as_value, check_strategy

__all__ = ["Optimizer", "OptimizeResult", "Trial", "SpaceExhausted"]

_SETTING_NAMES = frozenset(s.name for s in SETTINGS)


class Optimizer:
    """Sequential model-based optimizer driven by ``ask()`` and ``tell(x, y)``.

    Parameters
    ----------
    dimensions : Space, list or dict of dimensions
        The search space (see :class:`~treebo.space.Space`).
    surrogate : str or Surrogate, default "bwo"
        A name from :func:`~treebo.surrogates.available_surrogates` or an
        unfitted surrogate instance (cloned before every fit).
    n_initial_points : int, default 5
        Points from the initial design before the surrogate is used. Points
        told without being asked count toward it.
    initial_design : {"sobol", "random"}, default "sobol"
        Scrambled Sobol or uniformly random initial points
        (:class:`~treebo.initial_design.InitialDesign`).
    surrogate_params : dict, optional
        Parameters passed to :func:`~treebo.surrogates.make_surrogate` when
        ``surrogate`` is a name.
    acquisition, acquisition_params, acq_optimizer
        The acquisition and how it is maximized:
        :class:`~treebo.acquisition.AcquisitionMaximizer`.
    n_candidates, local_search, n_local_candidates, n_jump_candidates, n_local_centers, \
local_center_spacing
        The candidate pool of an ask: :class:`~treebo.proposal.CandidatePool`.
    distance_variance, explore_length, jump_distance, n_box_candidates, max_halvings
        Settings of the refinement, jump, exploration and local steps:
        :class:`~treebo.proposal.RefineStep`, :class:`~treebo.proposal.JumpStep`,
        :class:`~treebo.proposal.ExploreStep` and :class:`~treebo.proposal.LocalStep`.
    explore_every, jump_every, local_steps
        Which step each proposal takes: :class:`~treebo.proposal.CycleSchedule`.
        By default, expected improvement over 50,000 Sobol candidates and
        7,000 neighbours of the best points (fewer above 588 encoded
        columns, where the pool is held to 256 MiB), and for tree surrogates
        the cycle local, jump, local, local, local, jump, local, explore.
    failure_value : "worst" or float, default "worst"
        What the surrogate sees at failed evaluations: the worst (largest)
        finite value observed so far, or a fixed value in objective units.
        Failed points are never proposed again either way.
    y_transform : {"auto", "log", "standardize"}, default "auto"
        How values become the surrogate's targets
        (:func:`~treebo.targets.transform_targets`); ``"auto"`` is
        ``"standardize"`` for smooth surrogates (the GP), ``"log"`` for the others.
    random_state : int >= 0, numpy.random.Generator, numpy.random.RandomState or None
        The same seed and the same told values give the same proposals
        (:class:`~treebo.random_streams.RandomStreams`).
    storage : str, os.PathLike or Storage, optional
        Where the study is recorded (:mod:`treebo.storage`): a path is a
        SQLite file that commits every trial as soon as it is asked or told;
        ``None`` keeps it in memory. A storage that holds a study resumes it:
        told trials are never evaluated again, and a resumed run proposes
        what the uninterrupted run would have. The space, every setting above
        and ``random_state`` (unless ``None``) must match the stored study
        (:class:`~treebo.storage.StorageMismatchError` otherwise). Call
        :meth:`close`, or use the optimizer as a context manager, to release it.
    resume_pending : {"retry", "fail", "keep"}, default "retry"
        What a resumed study does with the trials the previous run asked but
        never told: offer them again before any new point (at most
        ``MAX_RESUME_OFFERS`` times, then they are failed), record them as
        failed, or keep them pending for the processes evaluating them
        (``treebo ask`` and ``treebo tell``); see :mod:`treebo.resume`.
    direction : {"minimize", "maximize"}, default "minimize"
        Whether low or high values are better. A maximized study models and
        records the negated values: ``trials``, the storage and
        ``failure_value`` hold ``-y``, while :meth:`get_result` reports the
        objective's own values (``fun`` is the largest one). A stored study
        resumes only with the direction it was made with. With
        ``objectives``, give the directions there.
    objectives : dict or list of str, optional
        Several objectives, or one objective among several metrics: metric
        name -> ``"minimize"`` or ``"maximize"`` (a list of names minimizes
        them all). ``tell`` then takes a dict of named numbers holding every
        objective and constrained metric (other finite entries are recorded
        too), and the result holds the Pareto front
        (:class:`~treebo.metrics.Metrics`; the user guide's page on several
        objectives).
    constraints : list of str, optional
        Limits on returned metrics, ``"name <= bound"`` or
        ``"name >= bound"``; needs ``objectives``. A point is feasible when
        all hold; the result's best points are feasible ones.
    constraint_surrogate : str, default "gp"
        The model of each constraint, a name from
        :func:`~treebo.surrogates.available_surrogates` (``"gp"`` fitted
        from one start: :func:`~treebo.proposal.outcomes.constraint_model`);
        the acquisition is weighted by the probability that every
        constraint holds.
    multi_objective : {"parego", "ehvi"}, default "parego"
        How candidates are scored with several objectives:
        :class:`~treebo.proposal.outcomes.ObjectiveScoring`.

    Attributes
    ----------
    space : Space
    trials : list of Trial
        Every proposed and told point, in order (``history.trials``).
    history : History
        The trials and the arrays read from them (:mod:`treebo.history`).
    pipeline : ProposalPipeline
        Holds the acquisition, candidate and step settings above
        (:mod:`treebo.proposal`).
    storage : Storage
        The given storage, or the :class:`~treebo.storage.InMemoryStorage`.
    """

    def __init__(
        self,
        dimensions: Any,
        surrogate: str | Surrogate = "bwo",
        acquisition: str = "ei",
        *,
        n_initial_points: int = 5,
        initial_design: str = "sobol",
        n_candidates: int = 50_000,
        local_search: bool = True,
        n_local_candidates: int = 5_000,
        n_jump_candidates: int = 2_000,
        n_local_centers: int = 5,
        local_center_spacing: float = 0.1,
        distance_variance: str | float = "auto",
        explore_every: str | int = "auto",
        explore_length: float = 0.1,
        jump_every: str | int = "auto",
        jump_distance: float = 0.25,
        local_steps: str | bool = "auto",
        n_box_candidates: int = 1024,
        max_halvings: int = 3,
        acq_optimizer: str = "auto",
        surrogate_params: dict | None = None,
        acquisition_params: dict | None = None,
        failure_value: str | float = "worst",
        y_transform: str = "auto",
        random_state: Any = None,
        storage: str | os.PathLike | Storage | None = None,
        resume_pending: str = "retry",
        direction: str = "minimize",
        objectives: dict | list | None = None,
        constraints: list | None = None,
        constraint_surrogate: str = "gp",
        multi_objective: str = "parego",
    ):
        # Every keyword but dimensions is a setting, declared in treebo.settings.
        settings = check_settings(**{k: v for k, v in locals().items() if k in _SETTING_NAMES})
        self.space = dimensions if isinstance(dimensions, Space) else Space(dimensions)
        self._surrogate = as_surrogate(surrogate, surrogate_params)
        self.surrogate_name = surrogate if isinstance(surrogate, str) else type(surrogate).__name__
        self.pipeline = ProposalPipeline.from_settings(**part_settings(settings, PIPELINE))
        self.n_initial_points = settings["n_initial_points"]
        self.initial_design = settings["initial_design"]
        self.failure_value = settings["failure_value"]
        self.y_transform = settings["y_transform"]
        self.resume_pending = settings["resume_pending"]
        self.direction = settings["direction"]
        self.metrics = _as_metrics(settings, self.pipeline)
        self._constraint_surrogate = None
        if self.metrics is not None and self.metrics.constraints:
            self._constraint_surrogate = constraint_model(settings["constraint_surrogate"])
        self.random_state = random_state
        self._streams = RandomStreams(random_state)
        self.storage = _as_storage(storage)
        self._settings = settings
        try:
            trials = self._open_study()
            design_rng = self._streams.design()
            self._design = InitialDesign(
                self.space, self.n_initial_points, self.initial_design, design_rng
            )
            self.history = History(
                self.space, design_rng.standard_normal(self.space.n_columns), trials
            )
            for trial, error in self._retries.settle(self.trials, self.resume_pending):
                self._tell_trial(trial, None, error=error)
        except BaseException:
            self.storage.close()
            raise

    @property
    def trials(self) -> list[Trial]:
        """Every proposed and told point, in order."""
        return self.history.trials

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
            chosen (see the user guide's page on parallel evaluation).

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
        # Copies, so a caller that changes a point in place does not change the
        # recorded trial; shallow, so a category that is an object (an
        # estimator) is the category itself and the point can be told back.
        points = [copy.copy(t.x) for t in self._ask_trials(q, strategy)]
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
        if self.history.n_pending:
            trial = self.history.find(x, encoded, pending_only=True)
        if trial is None:
            given = self.space.drop_inactive(x)
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
        encoded = self.space.encode([x])[0]
        given = self.space.drop_inactive(x)
        trial = Trial(
            number=len(self.trials), x=given, x_encoded=encoded, origin="user", asked_at=time.time()
        )
        self.history.append(trial)
        try:
            self.storage.record_ask([trial], {})
        except BaseException:
            self.history.truncate(trial.number)
            raise
        return trial

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

    def tell_trial(
        self, trial: Trial, y: Any, *, error: str | None = None, eval_time: float | None = None
    ) -> None:
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
        if not (
            isinstance(number, int)
            and 0 <= number < len(self.trials)
            and self.trials[number] is trial
            and trial.status == "pending"
        ):
            raise ValueError(f"trial must be a pending trial of this optimizer, got {trial!r}")
        self._tell_trial(trial, y, error=error, eval_time=eval_time)

    def mark_interrupted(self, trials: list[Trial]) -> None:
        """Record that the evaluations of ``trials`` were stopped on purpose (Ctrl-C).

        They stay pending, and a resume offers them again like any pending
        trial, but this offer does not count toward ``MAX_RESUME_OFFERS``,
        which is there for points whose evaluation kills the process.

        Parameters
        ----------
        trials : list of Trial
            Trials of this optimizer; those no longer pending are ignored.
        """
        before = self._retries.state()
        if self._retries.interrupted(trials):
            try:
                self.storage.record_ask([], {"resume_offers": self._retries.offers})
            except BaseException:
                self._retries.restore(before)
                raise

    def get_result(self) -> OptimizeResult:
        """The result so far, as :class:`OptimizeResult`."""
        result = self.history.result(
            surrogate=self.surrogate_name, random_state=self.random_state, direction=self.direction
        )
        if self.metrics is not None:
            told = [t.metrics for t in self.trials if t.status != "pending"]
            result.update(self.metrics.result_fields(told, result.x_iters))
        return result

    def close(self) -> None:
        """Close the storage and release its lock; the history stays in memory."""
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
        n_before, retries_before = len(self.trials), self._retries.state()
        streams_before = self._streams.states()
        try:
            chosen = self._retries.take(self.trials, q)
            for trial in chosen:
                trial.asked_at = time.time()
            if len(chosen) < q:
                try:
                    chosen += self._propose_trials(q - len(chosen), strategy)
                except SpaceExhausted:
                    if not chosen:
                        raise
            state = self._streams.states()
            if self._retries.offers != retries_before[1]:
                state["resume_offers"] = self._retries.offers
            self.storage.record_ask(chosen, state)
        except BaseException:
            self.history.truncate(n_before)
            self._retries.restore(retries_before)
            self._streams.restore(streams_before)
            raise
        return chosen

    def _tell_trial(
        self, trial: Trial, y: Any, *, error: str | None = None, eval_time: float | None = None
    ) -> None:
        metrics = None
        value: float | None
        failure: str | None
        if error is not None:
            value, failure = None, str(error)
        elif self.metrics is not None:
            value, metrics, failure = self.metrics.read(y)
        else:
            value, failure = as_value(y)
            if value is not None and self.direction == "maximize":
                value = -value
        self.history.tell(trial, value, failure, eval_time, self.storage.record_tell, metrics)
        self._retries.told(trial.number)

    # -- the study ----------------------------------------------------------------------
    def _open_study(self) -> list[Trial]:
        """Create the study in the storage, or check it is this one and load its trials."""
        trials, offers = open_study(
            self.storage,
            self.space,
            settings_to_store(self._settings, self._surrogate),
            self._streams,
            seed_given=self.random_state is not None,
        )
        self._retries = PendingRetries(offers)
        return trials

    # -- proposals ----------------------------------------------------------------------
    def _propose_trials(self, q: int, strategy: str) -> list[Trial]:
        """Append ``q`` new pending trials: the initial design's points while it
        lasts, then the pipeline's; fewer if a discrete space runs out."""
        out: list[Trial] = []
        try:
            while len(out) < q and (
                len(self.trials) < self.n_initial_points or self.history.n_complete() == 0
            ):
                point, origin = self._design.next_point(
                    self.history.unseen,
                    lambda: self.pipeline.pool.random_point(
                        self.space, self.history.unseen, self._streams.acquisition
                    ),
                )
                out.append(self.history.add_point(point, origin))
            if len(out) < q:
                seed = None
                if self._surrogate.seeded or getattr(self._constraint_surrogate, "seeded", False):
                    seed = int(self._streams.model.integers(np.iinfo(np.int32).max))
                X, y, pending = self.history.observations()
                violations = None
                if self.metrics is not None:
                    told = [t.metrics for t in self.trials if t.status != "pending"]
                    y = self.metrics.objective_matrix(told)
                    if self.metrics.constraints:
                        violations = self.metrics.violations(told)
                for proposal in self.pipeline.propose(
                    self.space,
                    X,
                    y,
                    surrogate=self._surrogate,
                    rng=self._streams.acquisition,
                    pending=pending,
                    n_points=q - len(out),
                    step=self.history.n_model(),
                    seed=seed,
                    strategy=strategy,
                    failure_value=self.failure_value,
                    y_transform=self.y_transform,
                    constraints=violations,
                    constraint_surrogate=self._constraint_surrogate,
                ):
                    model = proposal.origin == "model"
                    out.append(
                        self.history.add_point(
                            proposal.point,
                            proposal.origin,
                            proposal.fit_time,
                            proposal.acq_time,
                            seed if model else None,
                        )
                    )
        except SpaceExhausted:
            if not out:
                raise
        return out


def _as_metrics(settings: dict[str, Any], pipeline: ProposalPipeline) -> Metrics | None:
    """The study's :class:`~treebo.metrics.Metrics`; None when the objective returns a number."""
    objectives, constraints = settings["objectives"], settings["constraints"]
    if objectives is None:
        if constraints is not None:
            raise ValueError(
                "constraints need objectives=: name the returned metric(s) to optimize, "
                "e.g. objectives={'error': 'minimize'}"
            )
        return None
    if settings["direction"] != "minimize":
        raise ValueError(
            "direction applies to a study without objectives=; give each objective's "
            "direction in objectives, e.g. {'accuracy': 'maximize'}"
        )
    if constraints is not None and pipeline.maximizer.acquisition not in ("ei", "pi"):
        raise ValueError(
            f"constraints need the acquisition 'ei' or 'pi', got {pipeline.maximizer.acquisition!r}"
        )
    return Metrics(objectives, constraints)


def _as_storage(storage: Any) -> Storage:
    if storage is None:
        return InMemoryStorage()
    return storage if isinstance(storage, Storage) else SQLiteStorage(storage)
