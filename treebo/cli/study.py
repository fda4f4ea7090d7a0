"""The ``treebo`` subcommands for a user's own study: minimize a function or a command,
ask, tell, show and report.

::

    treebo minimize train.py:objective --space space.toml --n-calls 50 --storage s.db
    treebo minimize --command 'python train.py --lr {lr}' --space space.toml --storage s.db
    treebo ask --storage s.db --space space.toml   # {"trial": 0, "x": {"lr": 0.01}}
    treebo tell --storage s.db 0 0.231
    treebo show s.db
    treebo report s.db -o report.html

:mod:`treebo.cli` parses the arguments and hands them here; a study with
budgets (``--budget-param``) is run by :mod:`treebo.cli.multifidelity`.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..untrusted import excerpt
from .objectives import cell, metric_names, print_result, show
from .usage import add_setting_arguments, format_table, given_settings

if TYPE_CHECKING:
    from ..result import OptimizeResult
    from ..space import Space

__all__ = [
    "is_user_target",
    "minimize_user",
    "add_objective_arguments",
    "add_ask_arguments",
    "add_tell_arguments",
    "add_show_arguments",
    "cmd_ask",
    "cmd_tell",
    "cmd_show",
    "add_report_arguments",
    "cmd_report",
    "objective",
    "exception_class",
    "print_objective_error",
    "show_warning",
]

#: Evaluations of ``treebo minimize FILE.py:FUNCTION`` when ``--n-calls`` is not given.
DEFAULT_N_CALLS = 100


def is_user_target(target: str | None) -> bool:
    """Whether a ``minimize`` target names a user's function rather than a problem.

    Parameters
    ----------
    target : str or None
        The target argument: ``FILE.py:FUNCTION`` or ``MODULE:FUNCTION`` (a
        user's function, the ones with a colon), or a problem name.

    Returns
    -------
    bool
    """
    return target is not None and ":" in target


def add_objective_arguments(p: argparse.ArgumentParser) -> None:
    """The ``minimize`` options for a user's objective (see :func:`minimize_user`).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The ``minimize`` subcommand's parser; the options are added to it.
    """
    p.add_argument(
        "--command",
        metavar="CMD",
        dest="command_line",
        help="evaluate each point by running CMD, with {name} replaced by the value "
        "of dimension name; its value is the last number it prints, or with --objective "
        "a JSON object of metrics on its last line (needs --space)",
    )
    p.add_argument(
        "--space",
        metavar="FILE",
        help="search space file, TOML or JSON (for FILE.py:FUNCTION, default: the "
        "function's `space` attribute)",
    )
    p.add_argument(
        "--json-field",
        metavar="NAME",
        help="with --command: read the value from this field of the last JSON "
        "line the command prints (a.b for a nested field)",
    )
    p.add_argument(
        "--shell",
        action="store_true",
        help="with --command: run CMD as a /bin/sh script whose values are its positional "
        "parameters, never parsed by the shell",
    )
    p.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="seconds one evaluation may run; a longer one is a failed trial",
    )
    p.add_argument("--n-jobs", type=int, help="evaluations run at once (default: 1)")
    p.add_argument(
        "--catch",
        action="append",
        metavar="EXCEPTION",
        help="an exception type of the objective that is an expected failed trial "
        "(repeatable; "
        "a builtin name such as ValueError, or module.Name); any other one stops "
        "the run (default: every exception is a failed trial, but a run whose "
        "first evaluations all raise the same type stops)",
    )


def objective(
    args: argparse.Namespace, placeholders: dict[str, str] | None = None
) -> tuple[Callable[..., Any], Space]:
    """The objective and its space, from the target or ``--command``, and ``--space``.

    ``placeholders`` maps the names a command may also use (the budget of a
    multi-fidelity run, its checkpoint directory) to the option that
    introduces each; none may name a dimension.
    """
    from ..objective import function_space, load_function, load_space_file

    space = load_space_file(args.space) if args.space else None
    if args.command_line is not None:
        if args.problem is not None:
            raise ValueError(f"give either a target ({args.problem!r}) or --command, not both")
        if space is None:
            raise ValueError("--command needs --space FILE: the dimensions fill its placeholders")
        from ..command import CommandObjective

        names = list(space.names)
        for name, flag in (placeholders or {}).items():
            if name in names:
                raise ValueError(
                    f"{flag}: the placeholder {{{name}}} is also a dimension of the space; "
                    "rename the dimension"
                    + (" or give the budget another name" if flag == "--budget-param" else "")
                )
            names.append(name)
        metrics = metric_names(args)
        if metrics is not None and args.json_field is not None:
            raise ValueError(
                "--json-field reads one number; with --objective the command prints a JSON "
                "object of its metrics as its last line"
            )
        return CommandObjective(
            args.command_line,
            names,
            json_field=args.json_field,
            metrics=metrics,
            timeout=args.timeout,
            shell=args.shell,
        ), space
    for option in ("json_field", "shell"):
        if getattr(args, option):
            raise ValueError(f"--{option.replace('_', '-')} only applies with --command")
    func = load_function(args.problem)
    space = space if space is not None else function_space(func)
    if space is None:
        raise ValueError(
            f"{args.problem!r} has no search space: give --space FILE, or set "
            f"{args.problem.rpartition(':')[2]}.space = {{...}} in its module"
        )
    return func, space


def minimize_user(args: argparse.Namespace) -> int:
    """``treebo minimize FILE.py:FUNCTION | MODULE:FUNCTION | --command CMD``.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed arguments of ``treebo minimize`` (with the options of
        :func:`add_objective_arguments`).

    Returns
    -------
    int
        The exit status: 0, or 1 (after printing why) when the study is in
        use by another process, the objective's errors stopped the run, or
        no evaluation succeeded. Bad arguments raise ``ValueError``, which
        :func:`treebo.cli.main` reports.
    """
    from .. import minimize
    from ..failures import ObjectiveError
    from ..storage import StorageLockedError

    for option, flag in (("out", "--out"), ("param", "--param")):
        if getattr(args, option, None):
            raise ValueError(
                f"{flag} applies to benchmark problems only; a user's objective "
                "is recorded with --storage"
            )
    if args.preset != "default":
        raise ValueError("--preset applies to benchmark problems only")
    func, space = objective(args)
    # A command gets its own timeout, which kills the command; a function needs a worker.
    timeout = None if args.command_line is not None else args.timeout
    catch = tuple(exception_class(name) for name in args.catch) if args.catch else None
    made = [0]

    def count(result: OptimizeResult) -> None:
        made[0] += 1

    try:
        with warnings.catch_warnings():
            warnings.showwarning = show_warning
            result = minimize(
                func,
                space,
                n_calls=DEFAULT_N_CALLS if args.n_calls is None else args.n_calls,
                progress_bar=not args.quiet,
                n_jobs=args.n_jobs,
                timeout=timeout,
                callback=count,
                catch=catch,
                **given_settings(args),
            )
    except StorageLockedError as error:
        print(f"treebo minimize: error: {error}", file=sys.stderr)
        return 1
    except ObjectiveError as error:
        print_objective_error(error)
        return 1
    n = len(result.func_vals)
    if args.storage:
        print(f"study {args.storage}: {n} evaluations, {made[0]} of them in this call")
    if result.x is None:
        errors = sorted({e.splitlines()[0] for e in result.errors if e})
        print(f"no successful evaluation in {n}; errors: {errors}")
        return 1
    if "objectives" in result:
        print_result(result)
    else:
        index = int(result.func_vals.tolist().index(result.fun))
        print(f"best value {result.fun:.10g} at evaluation {index + 1} of {n}")
        print(f"x = {json.dumps(_jsonable(result.x))}")
    if result.n_failed:
        print(
            f"{result.n_failed} evaluations failed; the first: "
            f"{next(e for e in result.errors if e).splitlines()[0]}"
        )
    return 0


def exception_class(name: str) -> type:
    """The exception class a ``--catch`` name gives: a builtin, or ``module.Name``."""
    import builtins
    import importlib

    module, _, attribute = name.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module) if module else builtins, attribute)
    except (ImportError, AttributeError):
        cls = None
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        raise ValueError(
            f"--catch {name!r} is not an exception class (a builtin name such as "
            "ValueError, or module.Name)"
        )
    return cls


def print_objective_error(error: BaseException) -> None:
    """Print, for the shell, why the objective stopped a run: its traceback and the remedy."""
    _print_cause(error.__cause__)
    print(f"treebo minimize: error: {error}", file=sys.stderr)
    if isinstance(error.__cause__, Exception):
        print(
            f"treebo minimize: on the command line, --catch "
            f"{_catch_name(type(error.__cause__))} makes such failures expected ones",
            file=sys.stderr,
        )


def _catch_name(cls: type) -> str:
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


def _jsonable(value: Any) -> Any:
    from ..shared_study import jsonable

    return jsonable(value)


def show_warning(
    message: Any, category: type, filename: str, lineno: int, file: Any = None, line: Any = None
) -> None:
    print(f"treebo: warning: {message}", file=sys.stderr, flush=True)


def _print_cause(cause: BaseException | None) -> None:
    """The traceback of the objective's exception, without treebo's own frames."""
    if cause is None or cause.__traceback__ is None:
        return
    package = str(Path(__file__).resolve().parent.parent)  # treebo/
    frames = [
        f
        for f in traceback.extract_tb(cause.__traceback__)
        if not str(Path(f.filename).resolve()).startswith(package)
    ]
    if not frames:  # raised by treebo itself (a command's failure): the message says it all
        return
    lines = ["Traceback of the first failure (most recent call last):\n"]
    lines += traceback.format_list(frames)
    lines += traceback.format_exception_only(type(cause), cause)
    print("".join(lines), end="", file=sys.stderr)


# -- ask, tell, show -------------------------------------------------------------------------
def _wait_argument(p: argparse.ArgumentParser) -> None:
    from ..shared_study import WAIT

    p.add_argument(
        "--wait",
        type=float,
        default=WAIT,
        metavar="SECONDS",
        help=f"how long to wait while another process has the study open (default: {WAIT:g})",
    )


def add_ask_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--storage", required=True, metavar="FILE", help="SQLite study")
    p.add_argument(
        "--space",
        metavar="FILE",
        help="search space file, TOML or JSON; needed by the first ask, "
        "checked against the stored one later",
    )
    _wait_argument(p)
    add_setting_arguments(
        p,
        exclude=("storage", "resume_pending"),
        helps={"random_state": "random seed (default: a fresh one, stored with the study)"},
        description="The keywords of treebo.Optimizer, for a new study; a stored study is "
        "asked with its stored settings, and given ones must match them.",
    )


def add_tell_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--storage", required=True, metavar="FILE", help="SQLite study")
    p.add_argument("trial", type=int, help="the trial number printed by ask")
    p.add_argument("value", nargs="?", help="the objective's value at the trial's point")
    p.add_argument(
        "--failed",
        nargs="?",
        const="failed (told by treebo tell --failed)",
        metavar="REASON",
        help="record the evaluation as failed (with a reason)",
    )
    _wait_argument(p)


def add_show_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("storage", metavar="FILE", help="SQLite study")
    p.add_argument("--json", action="store_true", help="one JSON object per trial instead")


def cmd_ask(args: argparse.Namespace) -> int:
    """``treebo ask``: print ``{"trial": N, "x": {...}}`` and record the trial as pending.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed arguments of ``treebo ask``.

    Returns
    -------
    int
        The exit status, 0; errors raise, for :func:`treebo.cli.main` to
        report.
    """
    from ..objective import load_space_file
    from ..shared_study import ask

    space = load_space_file(args.space) if args.space else None
    print(json.dumps(ask(args.storage, space, wait=args.wait, **given_settings(args))))
    return 0


def cmd_tell(args: argparse.Namespace) -> int:
    """``treebo tell``: record a pending trial's value (or ``--failed``).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed arguments of ``treebo tell``.

    Returns
    -------
    int
        The exit status, 0; errors raise, for :func:`treebo.cli.main` to
        report.
    """
    from ..shared_study import tell

    if (args.value is None) == (args.failed is None):
        raise ValueError("give the trial's VALUE, or --failed, but not both")
    value = None if args.value is None else _told_value(args.value)
    told = tell(args.storage, args.trial, value, error=args.failed, wait=args.wait)
    best = "none yet" if told["best"] is None else f"{told['best']:.10g}"
    if "objectives" not in told:
        print(f"trial {told['trial']}: {told['status']}; best value {best}")
        return 0
    feasible = f"{told['n_feasible']} of {told['n_told']} evaluations feasible"
    if len(told["objectives"]) > 1:
        print(
            f"trial {told['trial']}: {told['status']}; Pareto front of {told['n_pareto']} "
            f"point{'' if told['n_pareto'] == 1 else 's'}; {feasible}"
        )
    else:
        best = best if told["n_feasible"] else "none yet"
        print(f"trial {told['trial']}: {told['status']}; best feasible value {best}; {feasible}")
    return 0


def _told_value(text: str) -> float | dict:
    """``treebo tell``'s VALUE: a number, or a JSON object of metrics (the study says
    which it takes, and refuses the other kind)."""
    from ..untrusted import BoundExceededError, load_json

    if text.lstrip().startswith("{"):
        try:
            value = load_json(text, what="VALUE")
        except BoundExceededError:
            raise
        except ValueError:
            value = None
        if not isinstance(value, dict):
            raise ValueError(
                f"VALUE must be a number or a JSON object of metrics such as "
                f'\'{{"error": 0.1, "latency": 0.03}}\', got {excerpt(text)}'
            )
        return value
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"VALUE must be a number, got {excerpt(text)}") from None


def cmd_show(args: argparse.Namespace) -> int:
    """``treebo show``: the best trial and a table of every trial.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed arguments of ``treebo show``.

    Returns
    -------
    int
        The exit status, 0; errors raise, for :func:`treebo.cli.main` to
        report.
    """
    from ..settings import settings_from_store
    from ..shared_study import jsonable, read_shared
    from ..space import Space

    meta, rows = read_shared(args.storage)
    settings = settings_from_store(meta, args.storage)
    try:
        names = Space.from_dict(meta.get("space", {}), object_categories="repr").names
    except ValueError as error:
        raise ValueError(f"storage {str(args.storage)!r} is damaged: {error}") from None
    if args.json:
        for row in rows:
            print(json.dumps(jsonable(row)))
        return 0
    if settings["objectives"] is not None:
        show(args.storage, settings, rows, names)
        return 0
    maximize = settings["direction"] == "maximize"
    counts = {s: sum(r["status"] == s for r in rows) for s in ("complete", "failed", "pending")}
    print(
        f"study {args.storage}: {len(rows)} trials ({counts['complete']} complete, "
        f"{counts['failed']} failed, {counts['pending']} pending); "
        f"{settings['direction']}, surrogate {settings['surrogate']}"
    )
    complete = [r for r in rows if r["status"] == "complete"]
    if complete:
        sign = -1 if maximize else 1
        best = min(complete, key=lambda r: (sign * r["value"], r["number"]))
        shown = ", ".join(f"{k}={cell(v)}" for k, v in (best["x"] or {}).items())
        print(f"best: trial {best['number']}, value {best['value']:.10g} at {shown}")
    else:
        print("best: none (no complete trial)")
    print(_table(rows, names))
    return 0


def _table(rows: list[dict], names: list[str]) -> str:
    header = ["trial", "status", "value", *names, "error"]
    body = []
    for row in rows:
        x = row["x"] or {}
        error = (row["error"] or "").splitlines()
        body.append(
            [
                str(row["number"]),
                row["status"],
                "" if row["value"] is None else cell(row["value"]),
                *[cell(x[n]) if n in x else "" for n in names],
                error[0][:60] if error else "",
            ]
        )
    return format_table(header, body)


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "storage_file",
        metavar="STORAGE",
        help="a study's storage file (--storage of minimize); read only, so it "
        "may still be running",
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="the HTML page to write: one file with the figures embedded",
    )
    p.add_argument(
        "--max-dimensions",
        type=int,
        default=6,
        metavar="N",
        help="dimensions in the partial-dependence and evaluation figures, the "
        "most important first (default: 6)",
    )


def cmd_report(args: argparse.Namespace) -> int:
    """``treebo report``: write a study's HTML page.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed arguments of ``treebo report``.

    Returns
    -------
    int
        The exit status: 0, or 1 (after one line naming the file and the
        cause) when the page cannot be written, in which case a previous
        page there is left unchanged. Bad arguments (a missing storage
        file, an ``--output`` that is a directory or in a folder that cannot
        be written) raise ``ValueError`` before the page is made.
    """
    from ..files import WriteError, check_output_file
    from ..results.report import write_report

    if not Path(args.storage_file).is_file():
        raise ValueError(f"storage file {args.storage_file!r} does not exist")
    check_output_file(args.output, "--output")
    try:
        written = write_report(args.storage_file, args.output, max_dimensions=args.max_dimensions)
    except WriteError as error:
        print(f"treebo report: error: {error}", file=sys.stderr)
        return 1
    print(written)
    return 0
