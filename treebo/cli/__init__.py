"""The ``treebo`` command: minimize your objective, ask and tell from the shell, run
benchmark problems and grids of runs, and draw regret curves.

::

    treebo minimize train.py:objective --space space.toml --n-calls 50 --storage s.db
    treebo minimize --command 'python train.py --lr {lr}' --space space.toml --storage s.db
    treebo minimize train.py:train --budget-param epochs --min-budget 1 --max-budget 27 \\
        --total-budget 10 --storage s.db
    treebo ask --storage s.db --space space.toml
    treebo tell --storage s.db 0 0.231
    treebo show s.db
    treebo list
    treebo minimize branin --surrogate bwo --n-calls 100 --seed 0
    treebo minimize branin --n-calls 200 --storage branin.db   # run again to resume
    treebo bench --problems continuous --surrogates bwo rf ert gp --seeds 0-4 \\
        --n-calls 100 --out results/
    treebo bench --problems bbob --functions 1-24 --dims 2 5 --instances 1-3 \\
        --surrogates bwo --seeds 0-2 --out results/bbob/
    treebo plot results/ --out figures/
    treebo summary results/
    treebo report study.db -o report.html

One module per group of subcommands: :mod:`~treebo.cli.study` (a user's own
study: minimize, ask, tell, show, report), :mod:`~treebo.cli.multifidelity`
(minimize with budgets), :mod:`~treebo.cli.benchmarks` (list, minimize a
problem, bench, plot, summary); this module holds the parser and ``main``.

Exit status: 0 on success, 2 for bad arguments (unknown names list the valid
ones), 1 when runs fail.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from . import benchmarks, multifidelity, study
from .usage import UsageError, add_setting_arguments, given_settings

__all__ = ["main"]


# The settings a run with budgets takes from the command line. It refuses
# --n-initial-points and --n-candidates itself, with the other options it refuses.
_BUDGET_SETTINGS = (
    "surrogate",
    "random_state",
    "direction",
    "storage",
    "n_initial_points",
    "n_candidates",
)


def _cmd_minimize(args: argparse.Namespace) -> int:
    if args.command_line is not None or study.is_user_target(args.problem):
        if multifidelity.wants_budgets(args):
            from ..settings import setting

            refused = [
                setting(name).flag for name in given_settings(args) if name not in _BUDGET_SETTINGS
            ]
            if refused:
                raise UsageError(
                    f"{', '.join(refused)} cannot be combined with --budget-param: a "
                    "multi-fidelity run proposes its configurations with settings of its own"
                )
            return multifidelity.minimize_user(args)
        return study.minimize_user(args)
    if args.problem is None:
        raise UsageError(
            "minimize needs a problem name, FILE.py:FUNCTION, MODULE:FUNCTION or --command CMD"
        )
    return benchmarks.minimize_problem(args)


def _minimize_arguments(p: argparse.ArgumentParser) -> None:
    from ..bench import PRESETS

    # Listed by --help; a usage line with every option would bury an error's one line.
    p.usage = "%(prog)s [TARGET] [--command CMD] [options]"
    p.add_argument(
        "problem",
        nargs="?",
        metavar="TARGET",
        help="a problem name (see `treebo list`), or your objective as "
        "FILE.py:FUNCTION or MODULE:FUNCTION",
    )
    p.add_argument(
        "--n-calls",
        type=int,
        help="evaluations, the 5 initial points included (default: 100; "
        "a run with --budget-param is limited by --total-budget instead)",
    )
    p.add_argument("--preset", choices=PRESETS, default="default")
    p.add_argument(
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="problem parameter, e.g. lam=0.0001 or instance=466 (repeatable)",
    )
    p.add_argument(
        "--out",
        help="append the run's JSON record to OUT/<problem>.jsonl; "
        "refused, before anything runs, when that file already holds a record of "
        "the same run with at least --n-calls evaluations (a longer run is appended; "
        "readers keep the longest record)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    study.add_objective_arguments(p)
    multifidelity.add_budget_arguments(p)
    add_setting_arguments(
        p,
        helps={
            "random_state": "seed / repeat index (default: 0 for a problem; "
            "for your objective a fresh seed, stored with the study)",
            "storage": "SQLite study that records every trial as soon as it is asked and "
            "told; if FILE already holds this run's study, it is resumed: only the "
            "evaluations missing to --n-calls (or --total-budget) are made (not with --out)",
        },
        defaults={"surrogate": "bwo"},
        description="The keywords of treebo.Optimizer; a stored study resumes only with the "
        "settings it was made with. For a benchmark problem they override its preset's "
        "(--surrogate, --seed and --storage name the run; --n-initial-points, --maximize "
        "and --resume-pending do not apply); a run with --budget-param takes --surrogate, "
        "--seed, --maximize and --storage.",
    )


# name -> (help, function adding the subcommand's arguments or None, the subcommand)
_COMMANDS: dict[str, tuple[str, Callable | None, Callable]] = {
    "list": ("list problems and surrogates", None, benchmarks.cmd_list),
    "minimize": (
        "minimize your objective (a Python function or a command, at full budget or "
        "with budgets) or a benchmark problem",
        _minimize_arguments,
        _cmd_minimize,
    ),
    "ask": (
        'propose a point of a stored study; prints {"trial": N, "x": {...}}',
        study.add_ask_arguments,
        study.cmd_ask,
    ),
    "tell": ("record the value of an asked trial", study.add_tell_arguments, study.cmd_tell),
    "show": (
        "print a stored study's best trial and its trials",
        study.add_show_arguments,
        study.cmd_show,
    ),
    "bench": (
        "run a grid of problems x surrogates x seeds",
        benchmarks.add_bench_arguments,
        benchmarks.cmd_bench,
    ),
    "plot": (
        "draw regret and time figures, one per problem",
        benchmarks.add_plot_arguments,
        benchmarks.cmd_plot,
    ),
    "summary": (
        "Markdown table of median final log10 regret",
        benchmarks.add_summary_arguments,
        benchmarks.cmd_summary,
    ),
    "report": (
        "write a study's HTML report: best trial, figures, trial table",
        study.add_report_arguments,
        study.cmd_report,
    ),
}


def _parser(command: str | None) -> argparse.ArgumentParser:
    """The ``treebo`` parser, with the arguments of subcommand ``command`` only.

    Some arguments take their choices from modules that import NumPy and SciPy
    (half a second), which ``treebo --help`` and ``treebo list`` do not need;
    argparse only ever parses the arguments of the subcommand that is run.
    """
    parser = argparse.ArgumentParser(
        prog="treebo",
        description="Bayesian optimization with tree-ensemble surrogates: "
        "your own objective (a Python function or a command), ask and tell from the shell, "
        "benchmark problems, regret-curve grids and figures.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (text, add_arguments, func) in _COMMANDS.items():
        p = sub.add_parser(name, help=text)
        if add_arguments is not None and name == command:
            add_arguments(p)
        p.set_defaults(func=func)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``treebo`` command; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; by default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success; 1 when runs fail (``minimize`` with no successful
        evaluation, ``bench`` with failed runs), an optional dependency is
        missing (``ImportError``), a ``--storage`` study is in use by another
        process, or the reader of standard output went away (``treebo list |
        head``: the rest of the output is dropped quietly); 2 for bad arguments
        (usage errors, ``ValueError``, ``FileNotFoundError`` such as an
        unavailable data set); 130 when interrupted. Errors found by argparse
        itself (unknown option, missing command) and ``--help`` raise
        ``SystemExit`` (status 2 and 0) instead.
    """
    try:
        try:
            return _dispatch(argv)
        finally:
            # Flushed here rather than at exit, where a closed pipe would give a traceback.
            sys.stdout.flush()
    except BrokenPipeError:
        # As the Python docs advise: what is left to print goes to devnull, so the flush
        # at interpreter exit cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def _dispatch(argv: Sequence[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # The top-level parser has no option that takes a value: the first word is the command.
    command = next((word for word in argv if not word.startswith("-")), None)
    args = _parser(command).parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError) as error:  # incl. DatasetUnavailable
        print(f"treebo {args.command}: error: {error}", file=sys.stderr)
        return 2
    except ImportError as error:
        print(f"treebo {args.command}: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        storage = getattr(args, "storage", None)
        hint = f"; the same command resumes the study in {storage}" if storage else ""
        print(f"treebo {args.command}: interrupted{hint}", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
