"""Failed evaluations that speak up: the first one is reported, a systematic one stops the run.

:func:`~treebo.minimize` records an objective that raises as a failed trial
and goes on, because an objective that fails at some points (a training that
diverges, a simulation that does not converge) should not cost a long run.
A bug fails everywhere, though, and would otherwise spend the whole budget on
failed trials. So a run

* warns (:class:`ObjectiveFailureWarning`) at its first failed evaluation,
  with the exception type and message;
* stops and raises :class:`ObjectiveError`, chained to the objective's own
  exception, when its first evaluations (as many as the initial design,
  at least 3, and at most the evaluations left to make) all raise the same
  exception type, unless the user named the exception types that count as
  failed trials (``catch=``), or all return None (a forgotten ``return``);
* with ``catch=`` given, re-raises at once any exception that is not an
  instance of those types (the trial is recorded as failed first).

The objective is wrapped in :class:`GuardedObjective`, which runs wherever
the evaluation runs (this process or a worker) and hands a raised exception
back as a :class:`Failure` value; :class:`FailureWatch` stands between the
evaluation loop and the optimizer, tells the failure's text as the trial's
error and decides whether the run goes on.
"""

from __future__ import annotations

import os
import pickle
import sys
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .history import Trial
    from .optimizer import Optimizer

__all__ = [
    "ObjectiveError",
    "ObjectiveFailureWarning",
    "GuardedObjective",
    "Failure",
    "FailureWatch",
    "check_catch",
]


class ObjectiveError(RuntimeError):
    """The objective failed in a way that stopped the run (see :mod:`treebo.failures`).

    Its ``__cause__`` is the objective's own exception when it could be
    brought back from where the evaluation ran.
    """


class ObjectiveFailureWarning(UserWarning):
    """The first failed evaluation of a run: its trial number, exception type and message."""


#: The error text of an evaluation that returned None (see :func:`treebo.targets.as_value`).
_RETURNED_NONE = "objective returned None"


def check_catch(catch: Any) -> tuple[type[Exception], ...] | None:
    """``catch`` as a tuple of exception classes, or None; a ValueError otherwise.

    Parameters
    ----------
    catch : exception class, tuple or list of them, or None

    Returns
    -------
    tuple of exception classes or None
    """
    if catch is None:
        return None
    items = tuple(catch) if isinstance(catch, (tuple, list)) else (catch,)
    if not items or not all(isinstance(c, type) and issubclass(c, Exception) for c in items):
        raise ValueError(
            "catch must be None, an exception class (a subclass of Exception) or "
            f"a tuple of them, got {catch!r}"
        )
    return items


@dataclass
class Failure:
    """An exception the objective raised, as it travels back from the evaluation.

    Parameters
    ----------
    text : str
        ``"Type: message"``, as the trial's error records it.
    type_name : str
        The exception's class name, qualified by its module unless builtin.
    caught : bool
        Whether the exception is one of the ``catch`` types (always True
        when ``catch`` is None).
    exception : BaseException or None
        The exception itself: in the calling process with its traceback; from
        a worker process only if it could be pickled (without traceback).
    """

    text: str
    type_name: str
    caught: bool
    exception: BaseException | None


class GuardedObjective:
    """The objective, returning a :class:`Failure` instead of raising an ``Exception``.

    Exceptions that are not ``Exception`` subclasses (``SystemExit``,
    ``KeyboardInterrupt``, the evaluation timeout) pass through, to be
    handled by the evaluation loop. Picklable when ``func`` is.

    Parameters
    ----------
    func : callable
        The user's objective, ``func(x) -> float``.
    catch : tuple of exception classes or None
        From :func:`check_catch`.
    """

    def __init__(self, func: Callable[[Any], Any], catch: tuple[type[BaseException], ...] | None):
        self.func = func
        self.catch = catch
        self.driver_pid = os.getpid()

    def __call__(self, x: Any) -> Any:
        try:
            return self.func(x)
        except Exception as error:  # noqa: BLE001 - reported to the driver as a Failure
            caught = self.catch is None or isinstance(error, self.catch)
            return Failure(
                text=_exception_text(error),
                type_name=_type_name(error),
                caught=caught,
                exception=self._portable(error),
            )

    def _portable(self, error: BaseException) -> BaseException | None:
        if os.getpid() == self.driver_pid:
            return error
        try:  # the result travels back pickled; an exception that does not pickle stays here
            pickle.dumps(error)
        except Exception:  # noqa: BLE001 - any pickling failure
            return None
        return error


def _caller_level() -> int:
    """The ``stacklevel`` of the first caller outside treebo, so a warning names the user's call."""
    frame: FrameType | None = sys._getframe(2)
    level = 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith("treebo."):
        frame, level = frame.f_back, level + 1
    return level


def _exception_text(error: BaseException) -> str:
    # The same text the evaluation loop records for an exception it catches itself.
    return "".join(traceback.format_exception_only(type(error), error)).strip()


def _type_name(error: BaseException) -> str:
    cls = type(error)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


class FailureWatch:
    """The optimizer as the evaluation loop sees it, watching the failed evaluations.

    Forwards ``add_pending``, ``ask_trials``, ``tell_trial`` and
    ``mark_interrupted`` to the optimizer; a :class:`Failure` told as a value becomes a failed trial
    with the failure's text. :meth:`check` is then called with each told
    trial and returns why the run must stop, if it must; :meth:`raise_if_stopped`
    raises the matching exception once the loop has ended.

    Parameters
    ----------
    optimizer : Optimizer
    n_abort : int
        How many first evaluations all raising the same exception type stop
        the run (only when ``catch`` is None).
    catch : tuple of exception classes or None
    where : str
        How the messages name the study (e.g. ``"in study.db"``), or empty.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        n_abort: int,
        catch: tuple[type[BaseException], ...] | None,
        where: str = "",
    ):
        self.optimizer = optimizer
        self.n_abort = n_abort
        self.catch = catch
        self.where = where
        self._failures: dict[int, Failure] = {}
        self._warned = False
        # (number, kind, failure) of the trials told so far in this run while every
        # one failed in the same way.
        self._leading: list[tuple[int, str, Failure | None]] = []
        self._leading_open = True
        self._error: BaseException | None = None

    # -- the optimizer's trial protocol, as the evaluation loop uses it ------------------
    def add_pending(self, x: Any) -> Trial:
        return self.optimizer.add_pending(x)

    def ask_trials(self, n_points: int, strategy: str) -> list[Trial]:
        return self.optimizer.ask_trials(n_points, strategy)

    def mark_interrupted(self, trials: list[Trial]) -> None:
        self.optimizer.mark_interrupted(trials)

    def tell_trial(
        self, trial: Trial, y: Any, *, error: str | None = None, eval_time: float | None = None
    ) -> None:
        if isinstance(y, Failure):
            self.optimizer.tell_trial(trial, None, error=y.text, eval_time=eval_time)
            self._failures[trial.number] = y
            return
        self.optimizer.tell_trial(trial, y, error=error, eval_time=eval_time)

    # -- decisions ------------------------------------------------------------------
    def check(self, trial: Trial) -> str | None:
        """Warn at the run's first failure; the reason to stop the run after ``trial``, or None.

        Parameters
        ----------
        trial : Trial
            A trial just told through :meth:`tell_trial`.

        Returns
        -------
        str or None
            Why the run stops, or None to go on;
            :meth:`raise_if_stopped` raises the matching exception.
        """
        failure = self._failures.pop(trial.number, None)
        if failure is not None and not failure.caught:
            self._error = self._uncaught(trial, failure)
            return f"stopped: trial {trial.number} raised {failure.type_name}, not in catch"
        if trial.status == "failed" and not self._warned:
            self._warned = True
            warnings.warn(
                f"trial {trial.number} failed (the first failed evaluation of this "
                "run; it is recorded as failed and the run goes on; result.errors "
                f"lists every failure): {trial.error}",
                ObjectiveFailureWarning,
                stacklevel=_caller_level(),
            )
        if not self._leading_open:
            return None
        kind = self._kind(trial, failure)
        if kind is None or (self._leading and self._leading[0][1] != kind):
            self._leading_open = False
            self._leading.clear()
            return None
        self._leading.append((trial.number, kind, failure))
        if len(self._leading) < self.n_abort:
            return None
        self._error = self._systematic()
        return f"stopped: the first {len(self._leading)} evaluations all {kind}"

    def _kind(self, trial: Trial, failure: Failure | None) -> str | None:
        """How a failure that may be systematic is described, or None for any other trial."""
        if failure is not None:
            return f"raised {failure.type_name}" if self.catch is None else None
        if trial.status == "failed" and trial.error == _RETURNED_NONE:
            return "returned None"  # a forgotten return statement
        return None

    def raise_if_stopped(self) -> None:
        """Raise the exception that stopped the run, if one did."""
        if self._error is None:
            return
        error, self._error = self._error, None
        if isinstance(error, ObjectiveError):
            raise error from error.__cause__
        raise error

    def _uncaught(self, trial: Trial, failure: Failure) -> BaseException:
        note = (
            f"treebo: trial {trial.number} raised {failure.type_name}, which is not one "
            f"of catch={self.catch!r}; it is recorded as failed{self.where} and the run "
            "stopped"
        )
        if failure.exception is None:
            return ObjectiveError(f"{failure.text}\n{note}")
        failure.exception.add_note(note)
        return failure.exception

    def _systematic(self) -> ObjectiveError:
        numbers = [number for number, _, _ in self._leading]
        _, kind, first = self._leading[0]
        shown = (
            f"trial {numbers[0]}" if len(numbers) == 1 else f"trials {numbers[0]} to {numbers[-1]}"
        )
        if first is None:
            advice = "Fix the objective: it must return a number."
        else:
            advice = (
                f"Fix the objective, or pass catch=({first.type_name}, ...) if such "
                f"failures are expected and the run should go on. The first failure: "
                f"{first.text}"
            )
        error = ObjectiveError(
            f"the objective {kind} in each of the first {len(numbers)} evaluations ({shown}, "
            f"recorded as failed{self.where}); the run stopped. {advice}"
        )
        error.__cause__ = first.exception if first is not None else None
        return error
