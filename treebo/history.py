"""The history of a study: its trials, in the order they were asked.

:class:`History` holds every :class:`Trial` (pending, complete, failed), the
told trials' result columns (kept up to date so a result costs copies, not a
pass over every trial), the encoded points (so "has this point been taken?"
is an array lookup), and the surrogate's training data, in which pending
trials are shown at a constant lie. Changes are transactions: a trial is
told, or a batch asked, only if the storage commit that records it succeeds.
"""

from __future__ import annotations

import bisect
import contextlib
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .acquisition import rows_in, unique_rows
from .result import OptimizeResult
from .space import Space

__all__ = ["History", "Trial"]

#: Constant-liar strategies of :meth:`Optimizer.ask`: the value a pending
#: point is given is the minimum, mean or maximum of the complete values.


@contextlib.contextmanager
def _interrupt_deferred() -> Iterator[None]:
    """Hold a SIGINT (Ctrl-C) that arrives inside the block until it ends, then raise it.

    Only in the main thread with Python's default SIGINT handler (elsewhere a
    handler cannot be set, and a handler of the user's is left alone).
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    caught: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if caught:
            raise KeyboardInterrupt


@dataclass
class Trial:
    """One proposed or evaluated point.

    Made and kept up to date by the optimizer
    (:meth:`~treebo.Optimizer.ask_trials`, :attr:`~treebo.Optimizer.trials`):
    read the fields, do not set them.

    Parameters
    ----------
    number : int
        Position in the optimizer's history, from 0.
    x : list or dict
        The user-facing point.
    x_encoded : ndarray of shape (n_columns,)
        The point encoded in the unit cube (:meth:`~treebo.Space.encode`).
    status : {"pending", "complete", "failed"}, default "pending"
        ``pending`` between ``ask`` and ``tell``.
    value : float or None, default None
        The objective value; ``None`` unless complete.
    error : str or None, default None
        Why the evaluation failed.
    origin : {"initial", "model", "random", "user"}, default "user"
        How the point was chosen: initial design, surrogate + acquisition,
        random fallback, or given by the user (told without being asked, or
        an ``x0`` point of :func:`minimize`).
    fit_time, acq_time : float, default 0.0
        Seconds spent fitting the surrogate and optimizing the acquisition to
        propose this point (0 for points not proposed by the model).
    asked_at, told_at : float or None, default None
        Wall-clock timestamps (``time.time()``) of ``ask`` and ``tell``.
    seed : int or None, default None
        The ``random_state`` of the surrogate fit that proposed the point.
    eval_time : float or None, default None
        Seconds the objective ran, measured where it ran (``minimize`` only).
    metrics : dict or None, default None
        For a study with ``objectives=``: every metric the evaluation
        returned, by name, in the user's units (``value`` is then the first
        objective, negated if maximized). None otherwise, and for a failure.
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
    metrics: dict[str, float] | None = None

    @property
    def duration(self) -> float | None:
        """Seconds between ``ask`` and ``tell`` (the evaluation time in ``minimize``)."""
        if self.asked_at is None or self.told_at is None:
            return None
        return self.told_at - self.asked_at


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
        self._numbers[:, at + 1 : n + 1] = self._numbers[:, at:n].copy()
        self._numbers[:, at] = (
            trial.value if complete else math.nan,
            trial.fit_time,
            trial.acq_time,
        )
        self.n_failed += trial.status == "failed"
        # The lowest value, and on a tie the lowest trial number (a complete
        # trial always has a value).
        value, best = trial.value, self.best
        if not complete or value is None:
            return
        if (
            best is None
            or best.value is None
            or value < best.value
            or (value == best.value and trial.number < best.number)
        ):
            self.best = trial

    def column(self, row: int) -> np.ndarray:
        """A copy of numeric column ``row`` (0 value, 1 fit, 2 acquisition seconds)."""
        return self._numbers[row, : len(self.number)].copy()


class History:
    """Every trial of a study, with the arrays the optimizer reads from them.

    Parameters
    ----------
    space : Space
    hash_weights : ndarray of shape (n_columns,)
        Random weights of the row hash that finds repeated points (see
        :func:`~treebo.acquisition.unique_rows`).
    trials : list of Trial, optional
        Trials of a resumed study, numbered from 0 in order.

    Attributes
    ----------
    trials : list of Trial
        In order of their numbers. Read them; change them only through the
        methods below.
    """

    def __init__(self, space: Space, hash_weights: np.ndarray, trials: Sequence[Trial] = ()):
        self.space = space
        self.hash_weights = hash_weights
        self.trials: list[Trial] = []
        self._encoded = np.empty((64, space.n_columns))
        # The told trials' result columns, brought up to date from the trials
        # told since the last result, so that a tell costs the same at any length.
        self._told = _ToldColumns()
        self._newly_told: list[Trial] = []
        self._n_pending = 0
        for trial in trials:
            self.append(trial)
            if trial.status != "pending":
                self._newly_told.append(trial)

    def __len__(self) -> int:
        return len(self.trials)

    # -- changes --------------------------------------------------------------------
    def append(self, trial: Trial) -> None:
        """Add the next trial.

        Parameters
        ----------
        trial : Trial
            Numbered ``len(self)``, in any status.
        """
        n = len(self.trials)
        if n == len(self._encoded):
            self._encoded = np.concatenate([self._encoded, np.empty_like(self._encoded)])
        self._encoded[n] = trial.x_encoded
        self.trials.append(trial)
        self._n_pending += trial.status == "pending"

    def add_point(
        self,
        encoded: np.ndarray,
        origin: str,
        fit_time: float = 0.0,
        acq_time: float = 0.0,
        seed: int | None = None,
    ) -> Trial:
        """Add a pending trial at an encoded point, decoded for the user, asked now.

        Parameters
        ----------
        encoded : ndarray of shape (n_columns,)
        origin : str
            What proposed it (see :class:`Trial`).
        fit_time, acq_time : float, default 0.0
            Seconds spent fitting the surrogate and maximizing the acquisition.
        seed : int, optional
            The surrogate's seed, for a model-based proposal.

        Returns
        -------
        Trial
        """
        # A copy: ``encoded`` may be a row of the candidate pool, and a view
        # would keep the whole pool (tens of MB) alive for as long as the trial.
        encoded = encoded.copy()
        trial = Trial(
            number=len(self.trials),
            x=self.space.decode(encoded[None, :])[0],
            x_encoded=encoded,
            origin=origin,
            fit_time=fit_time,
            acq_time=acq_time,
            asked_at=time.time(),
            seed=seed,
        )
        self.append(trial)
        return trial

    def truncate(self, n: int) -> None:
        """Forget the pending trials numbered ``n`` and above (an ask that failed).

        Parameters
        ----------
        n : int
            The number of the first trial to forget.

        Raises
        ------
        ValueError
            When one of those trials is not pending.
        """
        dropped = self.trials[n:]
        if any(t.status != "pending" for t in dropped):
            raise ValueError("only pending trials can be forgotten")
        del self.trials[n:]
        self._n_pending -= len(dropped)

    def tell(
        self,
        trial: Trial,
        value: float | None,
        error: str | None,
        eval_time: float | None,
        commit: Callable[[Trial], None],
        metrics: dict[str, float] | None = None,
    ) -> None:
        """Record an evaluation, as one transaction with ``commit(trial)``.

        Parameters
        ----------
        trial : Trial
            A pending trial of this history, or a new one numbered ``len(self)``.
        value : float or None
            The value of a complete evaluation; ``None`` with ``error``.
        error : str or None
            Why the evaluation failed; ``None`` for a complete one.
        eval_time : float or None
            Seconds the evaluation took, if measured.
        commit : callable
            Records the told trial (the storage); if it raises, the trial is
            left as it was (and a new one is not added) and the error propagates.
        metrics : dict, optional
            Every metric of a complete evaluation of a study with objectives.
        """
        fields = ("status", "value", "error", "told_at", "eval_time", "metrics")
        before = tuple(getattr(trial, f) for f in fields)
        is_new = trial.number == len(self.trials)
        was_pending = not is_new and trial.status == "pending"
        trial.told_at = time.time()
        trial.eval_time = eval_time if eval_time is not None else trial.eval_time
        if error is None:
            trial.status, trial.value, trial.error = "complete", value, None
            trial.metrics = metrics
        else:
            trial.status, trial.value, trial.error, trial.metrics = "failed", None, error, None
        # Ctrl-C waits for the end of the block: the commit and the change in
        # memory that mirrors it happen both or neither. (Had it landed just
        # after the commit, the memory would be rolled back and the next ask
        # would reuse, in the file, the number of a trial told there.)
        with _interrupt_deferred():
            if is_new:
                self.append(trial)
            try:
                commit(trial)
            except BaseException:
                if is_new:
                    self.trials.pop()
                for f, v in zip(fields, before):
                    setattr(trial, f, v)
                raise
            self._n_pending -= was_pending
            self._newly_told.append(trial)

    # -- reading ----------------------------------------------------------------------
    def told_columns(self) -> _ToldColumns:
        """The told trials' result columns, by trial number, up to date."""
        for trial in self._newly_told:
            self._told.insert(trial)
        self._newly_told.clear()
        return self._told

    @property
    def n_told(self) -> int:
        """Trials with a value or a failure."""
        return len(self.trials) - self._n_pending

    @property
    def n_pending(self) -> int:
        return self._n_pending

    def n_complete(self) -> int:
        return sum(t.status == "complete" for t in self.trials)

    def n_model(self) -> int:
        """Trials proposed by the surrogate and the acquisition."""
        return sum(t.origin == "model" for t in self.trials)

    def n_evaluated(self) -> int:
        """Told trials that were asked (or given as x0) rather than told directly."""
        return sum(t.status != "pending" and t.asked_at is not None for t in self.trials)

    def find(
        self, x: Any, encoded: np.ndarray | None = None, *, pending_only: bool = False
    ) -> Trial | None:
        """The first trial at the point ``x``, or None.

        Parameters
        ----------
        x : list or dict
            A user-facing point; a trial matches when its ``x`` equals it or
            its encoded point equals ``encoded``.
        encoded : ndarray of shape (n_columns,), optional
            ``x`` encoded, when the caller has it (default: encoded here).
        pending_only : bool, default False
            Look only at pending trials.

        Returns
        -------
        Trial or None
        """
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

    def result(self, *, surrogate: str, random_state: Any, direction: str) -> OptimizeResult:
        """The told trials as an :class:`OptimizeResult`, in the objective's direction.

        Parameters
        ----------
        surrogate : str
            The surrogate's name, reported with the result.
        random_state : int, Generator or None
            The study's seed, reported with the result.
        direction : {"minimize", "maximize"}
            A maximized study holds negated values; the result has the objective's own.

        Returns
        -------
        OptimizeResult
        """
        told = self.told_columns()
        best = told.best
        sign = -1.0 if direction == "maximize" else 1.0
        return OptimizeResult(
            x=best.x if best else None,
            fun=sign * best.value if best is not None and best.value is not None else math.nan,
            x_iters=list(told.x),
            func_vals=told.column(0) if sign > 0 else -told.column(0),
            statuses=list(told.status),
            errors=list(told.error),
            fit_time=told.column(1),
            acq_time=told.column(2),
            space=self.space,
            n_failed=told.n_failed,
            surrogate=surrogate,
            random_state=random_state,
            direction=direction,
            message="",
        )

    def encoded(self) -> np.ndarray:
        """Every trial's encoded point, shape (n_trials, n_columns); a view, do not change it."""
        return self._encoded[: len(self.trials)]

    def unseen(self, X: np.ndarray) -> np.ndarray:
        """The distinct rows of ``X`` that are no trial's point, in order.

        Parameters
        ----------
        X : ndarray of shape (n_points, n_columns)
            Encoded points.

        Returns
        -------
        ndarray of shape (n_unseen, n_columns)
            The first occurrence of each distinct row that is neither
            evaluated nor pending.
        """
        X = X[unique_rows(X, self.hash_weights)]
        return X[~rows_in(X, self.encoded(), self.hash_weights)]

    def observations(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The told points with their values, and the pending points, encoded.

        Returns
        -------
        X : ndarray of shape (n_told, n_columns)
            Told trials, in order.
        y : ndarray of shape (n_told,)
            Their values; NaN for a failed evaluation.
        pending : ndarray of shape (n_pending, n_columns)
            Pending trials, in order.
        """
        width = self.space.n_columns
        told = [t for t in self.trials if t.status != "pending"]
        X = np.array([t.x_encoded for t in told]).reshape(-1, width)
        y = np.array([t.value if t.status == "complete" else math.nan for t in told])
        pending = np.array([t.x_encoded for t in self.trials if t.status == "pending"]).reshape(
            -1, width
        )
        return X, y, pending


def _same_point(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except (ValueError, TypeError):  # e.g. array-valued comparisons
        return False
