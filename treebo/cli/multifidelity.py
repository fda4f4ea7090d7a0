"""``treebo minimize`` with budgets: a multi-fidelity study of a user's function or command.

::

    treebo minimize train.py:train --budget-param epochs --min-budget 1 \\
        --max-budget 27 --total-budget 10 --storage s.db
    treebo minimize --command 'python train.py --lr {lr} --epochs {epochs}' \\
        --space space.toml --budget-param epochs --min-budget 1 --max-budget 27 \\
        --total-budget 10

The function is called ``FUNCTION(x, NAME=budget)`` (and ``report=`` with
``--intermediate``, ``checkpoint=`` with ``--checkpoint-dir``); a command
gets the budget through the placeholder ``{NAME}`` and the configuration's
checkpoint directory through ``{checkpoint}``. The run is
:func:`~treebo.minimize_multifidelity`.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from . import study
from .usage import UsageError

if TYPE_CHECKING:
    from ..multifidelity import Checkpoint
    from ..result import OptimizeResult

__all__ = ["add_budget_arguments", "wants_budgets", "minimize_user"]

#: ``eta`` when ``--eta`` is not given (Hyperband's and BOHB's).
DEFAULT_ETA = 3

#: The options of a multi-fidelity run, by the ``args`` attribute they set.
_BUDGET_OPTIONS = {
    "budget_param": "--budget-param",
    "min_budget": "--min-budget",
    "max_budget": "--max-budget",
    "total_budget": "--total-budget",
    "eta": "--eta",
    "intermediate": "--intermediate",
    "checkpoint_dir": "--checkpoint-dir",
    "promotion": "--promotion",
}

#: The placeholder of a command that ``--checkpoint-dir`` fills.
CHECKPOINT_PLACEHOLDER = "checkpoint"


def _budget(text: str) -> int | float:
    """A budget as written: ``27`` is an int (integer budgets), ``0.5`` or ``27.0`` a float."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def add_budget_arguments(p: argparse.ArgumentParser) -> None:
    """The ``minimize`` options of a multi-fidelity run (see :func:`minimize_user`)."""
    group = p.add_argument_group(
        "multi-fidelity (Hyperband brackets and successive halving over a budget)"
    )
    group.add_argument(
        "--budget-param",
        metavar="NAME",
        help="run FUNCTION at budgets: it is called FUNCTION(x, NAME=budget) (epochs, "
        "boosting rounds, a fraction of the data) and only the best configurations "
        "reach --max-budget; with --command, {NAME} is replaced by the budget. Needs "
        "--min-budget, --max-budget and --total-budget, and replaces --n-calls",
    )
    group.add_argument(
        "--min-budget",
        type=_budget,
        metavar="B",
        help="the lowest budget; integer budgets when both are written as integers",
    )
    group.add_argument("--max-budget", type=_budget, metavar="B", help="the full budget")
    group.add_argument(
        "--total-budget",
        type=float,
        metavar="T",
        help="what the run may spend, in full evaluations: the budgets of all "
        "evaluations add up to at most T x --max-budget",
    )
    group.add_argument(
        "--eta",
        type=float,
        help=f"each budget is ETA times the one below, and the best 1/ETA are "
        f"promoted (default: {DEFAULT_ETA})",
    )
    group.add_argument(
        "--intermediate",
        action="store_true",
        default=None,
        help="FUNCTION also takes `report`: report(budget, value) while it trains "
        "records its value at that lower budget for the model",
    )
    group.add_argument(
        "--checkpoint-dir",
        metavar="DIR",
        help="trainings continue from one budget to the next: FUNCTION also takes "
        "`checkpoint` (checkpoint.path, a directory of the configuration under DIR, "
        "and checkpoint.budget, the budget its saved state reached), and a command's "
        "{checkpoint} is that directory; a promotion is charged only the budget "
        "beyond the previous one",
    )
    group.add_argument(
        "--promotion",
        choices=["synchronous", "asynchronous"],
        help="synchronous (the default): a rung promotes once all of its evaluations "
        "are told, and free workers start the next bracket meanwhile; asynchronous "
        "(ASHA): a configuration is promoted as soon as it is among the best 1/ETA "
        "told at its rung",
    )


def wants_budgets(args: argparse.Namespace) -> bool:
    """Whether any option of a multi-fidelity run is given."""
    return any(getattr(args, name, None) is not None for name in _BUDGET_OPTIONS)


def minimize_user(args: argparse.Namespace) -> int:
    """``treebo minimize FILE.py:FUNCTION | MODULE:FUNCTION | --command CMD`` with budgets."""
    from .. import minimize_multifidelity
    from ..failures import ObjectiveError
    from ..files import check_directory
    from ..storage import StorageLockedError

    _check_options(args)
    if args.checkpoint_dir is not None:
        # Before the objective is loaded and the storage opened: a checkpoint directory
        # that cannot be made would otherwise fail every evaluation, blamed on the objective.
        check_directory(args.checkpoint_dir, "--checkpoint-dir")
    name = args.budget_param
    command = args.command_line is not None
    continued = args.checkpoint_dir is not None
    placeholders = {name: "--budget-param"}
    if continued:
        placeholders[CHECKPOINT_PLACEHOLDER] = "--checkpoint-dir"
    func, space = study.objective(args, placeholders if command else None)
    objective: Callable[..., Any]
    if command:
        objective = _CommandWithBudget(func, list(space.names), name)
    else:
        _check_parameters(func, args.problem, name, bool(args.intermediate), continued)
        objective = _FunctionWithBudget(func, name, bool(args.intermediate), continued)
    catch = tuple(study.exception_class(n) for n in args.catch) if args.catch else None
    eta = DEFAULT_ETA if args.eta is None else args.eta
    progress = _Progress(args, name)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = study.show_warning
            result = minimize_multifidelity(
                objective,
                space,
                args.min_budget,
                args.max_budget,
                args.total_budget,
                eta,
                surrogate=args.surrogate,
                n_jobs=args.n_jobs,
                storage=args.storage,
                random_state=args.seed,
                catch=catch,
                callback=progress,
                intermediate=bool(args.intermediate),
                direction="maximize" if args.maximize else "minimize",
                checkpoint_dir=args.checkpoint_dir,
                # A command gets its own timeout, which kills the command; a function
                # needs a worker.
                timeout=args.timeout if args.command_line is None else None,
                # The library's default when the option is not given.
                **({"promotion": args.promotion} if args.promotion else {}),
            )
    except StorageLockedError as error:
        print(f"treebo minimize: error: {error}", file=sys.stderr)
        return 1
    except ObjectiveError as error:
        study.print_objective_error(error)
        return 1
    finally:
        progress.close()
    return _summary(args, result, progress.made)


def _check_options(args: argparse.Namespace) -> None:
    """A usage error naming the options that are missing, or that do not apply with budgets."""
    missing = [
        _BUDGET_OPTIONS[name]
        for name in ("budget_param", "min_budget", "max_budget", "total_budget")
        if getattr(args, name) is None
    ]
    if missing:
        given = [flag for name, flag in _BUDGET_OPTIONS.items() if getattr(args, name) is not None]
        raise UsageError(
            f"{', '.join(given)}: a multi-fidelity run needs --budget-param NAME, --min-budget, "
            f"--max-budget and --total-budget; missing: {', '.join(missing)}"
        )
    refused = [
        flag
        for flag, given in (
            ("--n-calls", args.n_calls is not None),
            ("--n-initial-points", args.n_initial_points is not None),
            ("--n-candidates", args.n_candidates is not None),
            ("--out", bool(args.out)),
            ("--param", bool(args.param)),
            ("--preset", args.preset != "default"),
        )
        if given
    ]
    if refused:
        raise UsageError(
            f"{', '.join(refused)} cannot be combined with --budget-param: a multi-fidelity "
            "run spends --total-budget (not --n-calls) and proposes its own configurations"
        )
    if args.intermediate and args.command_line is not None:
        raise UsageError(
            "--intermediate applies to a Python function (it calls report); a command "
            "cannot report intermediate values"
        )
    for flag, value in (("--min-budget", args.min_budget), ("--max-budget", args.max_budget)):
        if not (math.isfinite(value) and value > 0):
            raise UsageError(f"{flag} must be a positive number, got {value!r}")
    if args.min_budget > args.max_budget:
        raise UsageError(
            f"--min-budget must be at most --max-budget, got {args.min_budget!r} and "
            f"{args.max_budget!r}"
        )
    for flag, value in (("--total-budget", args.total_budget), ("--eta", args.eta)):
        if value is not None and not (
            math.isfinite(value) and value > (1 if flag == "--eta" else 0)
        ):
            allowed = "a number > 1" if flag == "--eta" else "a positive number"
            raise UsageError(f"{flag} must be {allowed}, got {value!r}")


def _check_parameters(
    func: Callable, target: str, name: str, intermediate: bool, continued: bool
) -> None:
    """A usage error, before anything runs, if ``func`` cannot take what it will be given."""
    try:
        parameters = inspect.signature(func).parameters
    except (TypeError, ValueError):  # a builtin or extension: let the first call tell
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return
    wanted = [("--budget-param", name, "the budget")]
    if intermediate:
        wanted.append(("--intermediate", "report", "the report function"))
    if continued:
        wanted.append(("--checkpoint-dir", "checkpoint", "the checkpoint"))
    for flag, parameter_name, what in wanted:
        parameter = parameters.get(parameter_name)
        if parameter is None or parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise UsageError(
                f"{flag}: {target} has no parameter {parameter_name!r} to take {what} by "
                f"keyword (its parameters: {', '.join(parameters)})"
            )


class _FunctionWithBudget:
    """``func(x, budget[, report][, checkpoint])`` of the run as ``FUNCTION(x, NAME=budget, ...)``.

    ``report`` and ``checkpoint`` are passed by keyword, each when the run gives it.
    """

    def __init__(self, func: Callable, name: str, intermediate: bool, continued: bool):
        self.func = func
        self.name = name
        self.extras = [n for n, on in (("report", intermediate), ("checkpoint", continued)) if on]

    def __call__(self, x: Any, budget: Any, *extras: Any) -> Any:
        return self.func(x, **{self.name: budget}, **dict(zip(self.extras, extras)))


class _CommandWithBudget:
    """A command objective whose placeholder ``{name}`` is the budget."""

    def __init__(self, command: Callable, names: list[str], name: str):
        self.command = command
        self.names = names
        self.name = name

    def __call__(self, x: Any, budget: Any, checkpoint: Checkpoint | None = None) -> Any:
        values = dict(x) if isinstance(x, Mapping) else dict(zip(self.names, x))
        values[self.name] = budget
        if checkpoint is not None:
            values[CHECKPOINT_PLACEHOLDER] = str(checkpoint.path)
        return self.command(values)


class _Progress:
    """The progress bar of the budget spent, and the count of evaluations made in this call."""

    def __init__(self, args: argparse.Namespace, name: str):
        self.made = 0
        self.bar = None
        self.integer = isinstance(args.min_budget, int) and isinstance(args.max_budget, int)
        if not args.quiet:
            from .._progress import ProgressBar

            # Integer budgets count in their own unit (epochs); others in percent of the total.
            total = args.total_budget * args.max_budget if self.integer else 100
            label = f"{args.problem or 'command'} ({name} spent)"
            self.bar = ProgressBar(int(total), label=label)
            self.cap = args.total_budget * args.max_budget

    def __call__(self, result: OptimizeResult) -> None:
        self.made += 1
        if self.bar is None:
            return
        spent = float(sum(result.costs))
        count = int(spent) if self.integer else int(100 * spent / self.cap)
        self.bar.update(count - self.bar.count, best=float(result.fun))

    def close(self) -> None:
        if self.bar is not None and self.made:
            self.bar.close()


def _summary(args: argparse.Namespace, result: OptimizeResult, made: int) -> int:
    from ..shared_study import jsonable

    n = len(result.func_vals)
    if args.storage:
        print(f"study {args.storage}: {n} evaluations, {made} of them in this call")
    per_budget: Counter = Counter(result.budgets)
    counts = ", ".join(f"{b:g}: {k}" for b, k in sorted(per_budget.items()))
    spent = (
        f"spent {result.spent:.4g} of {args.total_budget:g} x max budget "
        f"({float(sum(result.costs)):g} {args.budget_param}) on {n} evaluations "
        f"({args.budget_param} {counts})"
    )
    if result.x is None:
        print(
            f"no successful evaluation at the max budget ({args.budget_param} = "
            f"{args.max_budget:g}) in {n} evaluations; {spent}"
        )
        _print_failures(result)
        return 1
    full = [
        i
        for i, (v, b) in enumerate(zip(result.func_vals, result.budgets))
        if b == args.max_budget and v == result.fun
    ]
    print(
        f"best value {result.fun:.10g} at the max budget ({args.budget_param} = "
        f"{args.max_budget:g}), evaluation {full[0] + 1} of {n}"
    )
    print(f"x = {json.dumps(jsonable(result.x))}")
    print(spent)
    if args.intermediate:
        print(f"{len(result.reported_budgets)} intermediate values reported")
    _print_failures(result)
    return 0


def _print_failures(result: OptimizeResult) -> None:
    if result.n_failed:
        print(
            f"{result.n_failed} evaluations failed; the first: "
            f"{next(e for e in result.errors if e).splitlines()[0]}"
        )
