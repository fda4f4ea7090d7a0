"""The proposal pipeline: the candidate pool, the step kinds, their schedule, the maximizer."""

from __future__ import annotations

import inspect
import time
from typing import Any

import numpy as np

from ..acquisition import AcquisitionMaximizer, rows_in, unique_rows
from ..pareto import non_dominated
from ..space import Space, SpaceExhausted
from ..surrogates import Surrogate, fitted_clone
from ..targets import Y_TRANSFORMS, check_failure_value, training_values, transform_targets
from .base import Proposal, Step, StepData
from .explore import ExploreStep
from .jump import JumpStep
from .local import LocalStep
from .outcomes import (
    FeasibilityModel,
    HypervolumeScore,
    ObjectiveScoring,
    chebyshev_values,
    total_violation,
)
from .pool import CandidatePool
from .refine import RefineStep
from .schedule import CycleSchedule

__all__ = ["ProposalPipeline", "STEP_KINDS"]


#: Step kind name -> class. A new kind is a module with a :class:`Step` subclass,
#: registered here and named by a schedule.
STEP_KINDS: dict[str, type[Step]] = {
    "refine": RefineStep,
    "jump": JumpStep,
    "explore": ExploreStep,
    "local": LocalStep,
}


class ProposalPipeline:
    """How a model-based point is proposed: which step, from which candidates, chosen how.

    Parameters
    ----------
    maximizer : AcquisitionMaximizer
    pool : CandidatePool
    steps : dict of str to Step
        One instance per kind the schedule names; ``"refine"`` is required:
        it is what a step that has nothing to propose defers to.
    schedule : CycleSchedule
    outcomes : ObjectiveScoring, optional
        How candidates are scored with several objectives (default: ParEGO).
    """

    def __init__(
        self,
        maximizer: AcquisitionMaximizer,
        pool: CandidatePool,
        steps: dict[str, Step],
        schedule: CycleSchedule,
        outcomes: ObjectiveScoring | None = None,
    ):
        if "refine" not in steps:
            raise ValueError("steps must include a 'refine' step")
        self.maximizer = maximizer
        self.pool = pool
        self.steps = steps
        self.schedule = schedule
        self.outcomes = outcomes or ObjectiveScoring()

    @classmethod
    def from_settings(cls, **settings: Any) -> ProposalPipeline:
        """The pipeline built from settings by name; omitted settings take their part's default.

        Each setting is a parameter of the part it configures, declared there
        once with its default: the maximizer, the pool, a step kind or the
        schedule (:meth:`setting_names` lists them). A setting two parts take
        (``n_jump_candidates``, ``distance_variance``) goes to both.
        :class:`~treebo.Optimizer` documents them all.

        Parameters
        ----------
        **settings
            Values by setting name.

        Returns
        -------
        ProposalPipeline

        Raises
        ------
        TypeError
            If a name is not a setting.
        """
        unknown = sorted(set(settings) - set(cls.setting_names()))
        if unknown:
            raise TypeError(
                f"unknown proposal settings {unknown}; the settings are {list(cls.setting_names())}"
            )

        def build(part: Any) -> Any:
            return part(**{name: settings[name] for name in _parameters(part) if name in settings})

        return cls(
            build(AcquisitionMaximizer),
            build(CandidatePool),
            {kind: build(step) for kind, step in STEP_KINDS.items()},
            build(CycleSchedule),
            build(ObjectiveScoring),
        )

    @staticmethod
    def setting_names() -> tuple[str, ...]:
        """Every setting :meth:`from_settings` takes, in the order of the parts.

        Returns
        -------
        tuple of str
        """
        names: dict[str, None] = {}
        parts = (AcquisitionMaximizer, CandidatePool, *STEP_KINDS.values(), CycleSchedule)
        for part in (*parts, ObjectiveScoring):
            names.update(dict.fromkeys(_parameters(part)))
        return tuple(names)

    def get_params(self) -> dict[str, Any]:
        """Every setting of the maximizer, pool, steps and schedule, for storing with a study.

        Steps prefix a setting with their kind where two parts share a name
        with different meanings; settings of the same name and meaning (a
        jump step's ``n_jump_candidates`` and the pool's) appear once.
        """
        params: dict[str, Any] = {**self.maximizer.get_params(), **self.pool.get_params()}
        for kind, step in self.steps.items():
            for name, value in step.get_params().items():
                key = name if params.get(name, value) == value else f"{kind}_{name}"
                params[key] = value
        params.update(self.schedule.get_params())
        params.update(self.outcomes.get_params())
        return params

    def step_kind(self, n_model: int, smooth: bool) -> str:
        """The schedule's kind for the proposal after ``n_model`` model-based ones.

        Parameters
        ----------
        n_model : int
            Model-based proposals made so far.
        smooth : bool
            Whether the surrogate is smooth (the GP), which takes no jump or
            exploration steps.

        Returns
        -------
        str
            A key of :attr:`steps`.
        """
        return self.schedule.step_kind(n_model, smooth)

    def propose(
        self,
        space: Space,
        X: np.ndarray,
        y: np.ndarray,
        *,
        surrogate: Surrogate,
        rng: np.random.Generator,
        pending: np.ndarray | None = None,
        n_points: int = 1,
        step: int = 0,
        seed: int | None = None,
        strategy: str = "cl_min",
        failure_value: str | float = "worst",
        y_transform: str = "auto",
        fixed: dict[int, float] | None = None,
        constraints: np.ndarray | None = None,
        constraint_surrogate: Surrogate | None = None,
    ) -> list[Proposal]:
        """Propose new points from the evaluations so far; the pipeline keeps no state.

        Parameters
        ----------
        space : Space
        X : ndarray of shape (n_told, n_columns)
            Evaluated points, encoded (:meth:`Space.encode`).
        y : ndarray of shape (n_told,) or (n_told, n_objectives)
            Their values in objective units, lower is better; NaN marks a
            failed evaluation (shown to the surrogate at ``failure_value``).
            At least one must be finite. With several objectives, each
            proposal scores the augmented Chebyshev scalarization of the
            objectives under weights of its own
            (:func:`~treebo.proposal.outcomes.chebyshev_values`).
        surrogate : Surrogate
            Unfitted; cloned before every fit.
        rng : numpy.random.Generator
            Candidates, tie-breaking and random fallbacks draw from it.
        pending : ndarray of shape (n_pending, n_columns), optional
            Encoded points being evaluated: never proposed, and shown to the
            surrogate at the constant lie of ``strategy``.
        n_points : int, default 1
            Points to propose. Each is a pending point for the next, and the
            surrogate is refitted in between.
        step : int, default 0
            Model-based proposals made before this call: the position of the
            first point in the schedule, which names its step kind.
        seed : int, optional
            The surrogate's ``random_state`` for every fit of this call.
        strategy : {"cl_min", "cl_mean", "cl_max"}, default "cl_min"
        failure_value : "worst" or float, default "worst"
        y_transform : {"auto", "log", "standardize"}, default "auto"
            As for :class:`~treebo.Optimizer`.
        fixed : dict of int to float, optional
            Encoded columns that every proposal holds at a value, e.g. a
            budget column at the full budget (the Optuna sampler's pruned
            trials). The incumbent, the local candidates' centres and the
            constant lie are then taken over the told points that hold these
            values too; the others are data for the model only, and no
            proposal repeats their other columns. The columns
            must be of integer, binary or categorical dimensions (L-BFGS-B
            polishing moves real ones).
        constraints : ndarray of shape (n_told, n_constraints), optional
            Violations of black-box constraints at the told points, at most 0
            where a constraint holds (NaN for failures). The acquisition
            (``"ei"`` or ``"pi"``) is weighted by the probability that every
            constraint holds, from a surrogate per constraint, and the
            incumbent is the best feasible point; while no told point is
            feasible, the target is the total violation.
        constraint_surrogate : Surrogate, optional
            Unfitted; the model of each constraint (default: ``surrogate``).

        Returns
        -------
        list of Proposal
            Distinct encoded points that are neither in ``X`` nor pending
            (decode them with :meth:`Space.decode`); fewer than ``n_points``
            when a discrete space runs out.

        Raises
        ------
        SpaceExhausted
            If every point of a discrete space is evaluated or pending.
        ValueError
            If the shapes do not match, or no finite value is at ``fixed``.

        Examples
        --------
        >>> import numpy as np
        >>> from treebo import Space, Real
        >>> from treebo.proposal import ProposalPipeline
        >>> from treebo.surrogates import make_surrogate
        >>> space = Space([Real(-2.0, 2.0)])
        >>> X = space.encode([[-1.5], [0.3], [1.2], [-0.4], [0.9]])
        >>> y = (space.decode(X)[:, 0].astype(float) - 0.5) ** 2
        >>> proposals = ProposalPipeline.from_settings(n_candidates=1000).propose(
        ...     space, X, y, surrogate=make_surrogate("bwo", n_estimators=20),
        ...     rng=np.random.default_rng(0))
        >>> point = space.decode(proposals[0].point[None, :])[0]
        """
        X, Y, pending = _check_observations(space, X, y, pending)
        violations = None if constraints is None else _check_violations(constraints, len(X))
        if violations is not None and self.maximizer.acquisition not in ("ei", "pi"):
            raise ValueError(
                f"constraints need the acquisition 'ei' or 'pi', not {self.maximizer.acquisition!r}"
            )
        columns = np.array(list(fixed or {}), dtype=int)
        held = np.array(list((fixed or {}).values()), dtype=float)
        real = [
            c
            for j, d in enumerate(space.dimensions)
            if not d.is_discrete
            for c in range(*space.columns_of(j).indices(space.n_columns))
        ]
        if set(columns) & set(real) or not set(columns) <= set(range(space.n_columns)):
            raise ValueError(
                f"fixed must name encoded columns of integer, binary or "
                f"categorical dimensions, got {sorted(columns.tolist())}"
            )
        at_fixed = np.all(X[:, columns] == held, axis=1)
        complete = np.all(np.isfinite(Y), axis=1) & at_fixed
        if not complete.any():
            raise ValueError(
                "y must hold at least one finite value (NaN marks a failure)"
                + (" at the fixed columns' values" if fixed else "")
            )
        failure_value = check_failure_value(failure_value)
        if y_transform not in Y_TRANSFORMS:
            raise ValueError(f"y_transform must be one of {Y_TRANSFORMS}, got {y_transform!r}")
        target_kind = (
            y_transform if y_transform != "auto" else "standardize" if surrogate.smooth else "log"
        )
        # Weights of the row hash that finds repeated points. The hash only narrows
        # down which rows to compare exactly, so any fixed weights do.
        weights = np.random.default_rng(0x7EEB0).standard_normal(space.n_columns)

        def hold(C: np.ndarray) -> np.ndarray:
            if len(columns):
                C = C.copy()
                C[:, columns] = held
            return C

        # Every candidate passes through unseen(), which holds the fixed columns;
        # a told point at other values of them counts as seen too.
        seen = [hold(X), hold(pending)]

        def unseen(C: np.ndarray) -> np.ndarray:
            C = hold(C)
            C = C[unique_rows(C, weights)]
            return C[~rows_in(C, np.vstack(seen), weights)]

        def fallback() -> np.ndarray:
            return self.pool.random_point(space, unseen, rng)

        start = time.perf_counter()
        log_feasibility = None
        if violations is not None:
            told = np.all(np.isfinite(Y), axis=1)
            violation = np.where(told, total_violation(violations), np.nan)
            if np.any(complete & (violation <= 0)):
                complete &= violation <= 0  # the incumbent and the centres are feasible
                feasibility = FeasibilityModel(
                    constraint_surrogate or surrogate, X[told], violations[told], seed
                )
                log_feasibility = feasibility.log_probability
            else:  # look for the feasible region first
                Y = violation[:, None]

        def target() -> np.ndarray:
            # One objective as it is; several under weights drawn for this proposal.
            if Y.shape[1] == 1:
                return Y[:, 0]
            return chebyshev_values(Y, rng.dirichlet(np.ones(Y.shape[1])))

        y = target()
        z = transform_targets(training_values(y, 0, failure_value), target_kind)
        pool = unseen(self.pool.build(space, X[complete], z[complete], rng))
        candidate_time = time.perf_counter() - start
        out: list[Proposal] = []
        hypervolume = None
        if self.outcomes.uses_hypervolume(Y.shape[1]):
            hypervolume = _HypervolumeModels(surrogate, X, Y, complete, seed)
        for i in range(n_points):
            if i and Y.shape[1] > 1:
                y = target()
            lies = np.vstack([pending, *(p.point[None, :] for p in out)])
            data = StepData(
                space=space,
                X=np.vstack([X, lies]),
                values=training_values(y, len(lies), failure_value, strategy, complete),
                complete=complete,
                pool=pool,
                surrogate=surrogate,
                seed=seed,
                target_kind=target_kind,
                unseen=unseen,
                rng=rng,
                fallback=fallback,
                log_feasibility=log_feasibility,
                objective_score=None if hypervolume is None else hypervolume.score(lies, rng),
            )
            try:
                proposal = self.propose_step(data, self.step_kind(step, surrogate.smooth))
            except SpaceExhausted:
                if out:
                    break
                raise
            proposal.acq_time += candidate_time
            candidate_time = 0.0
            if proposal.origin == "model":  # later points of the batch must differ from this one
                pool = pool[~rows_in(pool, proposal.point[None, :], weights)]
                step += 1
            out.append(proposal)
            seen.append(proposal.point[None, :])
        return out

    def propose_step(self, data: StepData, kind: str) -> Proposal:
        """One proposal by the step of ``kind``, or by the refinement step when it has none.

        Parameters
        ----------
        data : StepData
            What the step proposes from.
        kind : str
            A key of :attr:`steps`.

        Returns
        -------
        Proposal
        """
        proposal = self.steps[kind].propose(data, self.maximizer)
        if proposal is None:
            proposal = self.steps["refine"].propose(data, self.maximizer)
        assert proposal is not None  # a refinement step always proposes
        return proposal


def _check_observations(
    space: Space, X: Any, y: Any, pending: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    width = space.n_columns
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    pending = np.empty((0, width)) if pending is None else np.asarray(pending, dtype=float)
    for name, array in (("X", X), ("pending", pending)):
        if array.ndim != 2 or array.shape[1] != width:
            raise ValueError(
                f"{name} must be an array of encoded points of shape (n, {width}), "
                f"got shape {array.shape}"
            )
    if y.ndim not in (1, 2) or len(y) != len(X) or (y.ndim == 2 and y.shape[1] < 1):
        raise ValueError(
            f"y must have shape ({len(X)},) or ({len(X)}, n_objectives), one row per row "
            f"of X, got shape {y.shape}"
        )
    return X, y.reshape(len(X), -1), pending


class _HypervolumeModels:
    """One model per objective, fitted once per ask, scoring each proposal by log EHVI."""

    def __init__(
        self,
        surrogate: Surrogate,
        X: np.ndarray,
        Y: np.ndarray,
        complete: np.ndarray,
        seed: int | None,
    ):
        told = np.all(np.isfinite(Y), axis=1)
        low, high = Y[told].min(axis=0), Y[told].max(axis=0)
        scaled = (Y - low) / np.where(high > low, high - low, 1.0)
        self.front = scaled[complete]
        self.models = [
            fitted_clone(surrogate, X[told], scaled[told, j], seed) for j in range(Y.shape[1])
        ]

    def score(self, lies: np.ndarray, rng: np.random.Generator) -> HypervolumeScore:
        """The score of one proposal: the batch's earlier points join the front at their means."""
        front = self.front
        if len(lies):
            means = np.stack([m.predict_dist(lies).mean for m in self.models], axis=1)
            front = np.vstack([front, means])
        front = front[non_dominated(front)]
        return HypervolumeScore(self.models, front[np.argsort(front[:, 0])], rng)


def _check_violations(violations: Any, n_told: int) -> np.ndarray:
    violations = np.asarray(violations, dtype=float)
    if violations.ndim != 2 or len(violations) != n_told or violations.shape[1] < 1:
        raise ValueError(
            f"constraints must have shape ({n_told}, n_constraints), one row per row of X, "
            f"got shape {violations.shape}"
        )
    return violations


def _parameters(part: type) -> list[str]:
    """The constructor parameters of a pipeline part, which are its settings."""
    return list(inspect.signature(part).parameters)
