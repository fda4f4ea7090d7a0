"""The ``treebo`` command: minimize your objective, ask and tell from the shell, run
benchmark problems and grids of runs, and draw regret curves.

::

    treebo minimize train.py:objective --space space.toml --n-calls 50 --storage s.db
    treebo minimize --command 'python train.py --lr {lr}' --space space.toml --storage s.db
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

Exit status: 0 on success, 2 for bad arguments (unknown names list the valid
ones), 1 when runs fail.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .bench import RunSpec
    from .history import OptimizeResult

__all__ = ["main"]


class _UsageError(ValueError):
    pass


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _parse_params(items: Sequence[str] | None, per_problem: bool) -> dict:
    """``KEY=VALUE`` (or ``PROBLEM:KEY=VALUE``) strings -> dict; values parsed as JSON."""
    out: dict = {}
    for item in items or []:
        if "=" not in item:
            raise _UsageError(f"--param expects KEY=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        if per_problem:
            if ":" not in key:
                raise _UsageError(f"--param expects PROBLEM:KEY=VALUE, got {item!r}")
            problem, key = key.split(":", 1)
            out.setdefault(problem, {})[key] = _parse_value(value)
        else:
            out[key] = _parse_value(value)
    return out


def _parse_seeds(tokens: Sequence[str]) -> list[int]:
    from .bench import parse_seeds

    try:
        return parse_seeds(tokens)
    except ValueError as error:
        raise _UsageError(str(error)) from None


def _expand_problems(names: Sequence[str], args: argparse.Namespace | None = None) -> list[str]:
    from .bench import parse_int_ranges
    from .problems import select_problems

    try:
        selection = {
            key: None
            if getattr(args, key, None) is None
            else parse_int_ranges(getattr(args, key), f"--{key}")
            for key in ("functions", "dims", "instances")
        }
        return select_problems(list(names), **selection)
    except ValueError as error:
        raise _UsageError(str(error)) from None


def _check_surrogates(names: Sequence[str]) -> list[str]:
    from .surrogates import available_surrogates

    unknown = [n for n in names if n not in available_surrogates()]
    if unknown:
        raise _UsageError(f"unknown surrogate(s) {unknown}; choose from {available_surrogates()}")
    return list(names)


# -- subcommands -----------------------------------------------------------------------------
def _cmd_list(args: argparse.Namespace) -> int:
    from .problems import available_problems, problem_family, problem_suites, problem_summary
    from .surrogates import available_surrogates, missing_extra, surrogate_class_name

    print("problems:")
    for name in available_problems():
        print(f"  {name:<22} {problem_family(name):<11} {problem_summary(name)}")
    print("problem groups (for bench --problems):")
    for group, names in problem_suites().items():
        print(f"  {group:<22} {' '.join(names)}")
    print("surrogates:")
    for name in available_surrogates():
        # Not imported: that takes seconds for some (ngboost), and listing needs no model.
        note = surrogate_class_name(name)
        extra = missing_extra(name)
        if extra is not None:
            note += f" (not installed: pip install 'treebo[{extra}]')"
        print(f"  {name:<22} {note}")
    return 0


def _cmd_minimize(args: argparse.Namespace) -> int:
    from .cli_study import is_user_target, minimize_user

    if args.command_line is not None or is_user_target(args.problem):
        return minimize_user(args)
    if args.problem is None:
        raise _UsageError(
            "minimize needs a problem name, FILE.py:FUNCTION, MODULE:FUNCTION or --command CMD"
        )
    _refuse_objective_options(args)
    return _minimize_problem(args)


def _refuse_objective_options(args: argparse.Namespace) -> None:
    given = [
        flag
        for flag, value in (
            ("--space", args.space),
            ("--json-field", args.json_field),
            ("--shell", args.shell),
            ("--timeout", args.timeout),
            ("--maximize", args.maximize),
            ("--n-initial-points", args.n_initial_points),
            ("--n-jobs", args.n_jobs),
            ("--catch", args.catch),
        )
        if value
    ]
    if given:
        raise _UsageError(
            f"{', '.join(given)} apply to a user's objective (FILE.py:FUNCTION, "
            f"MODULE:FUNCTION or --command), not to the problem {args.problem!r}"
        )


def _minimize_problem(args: argparse.Namespace) -> int:
    from ._progress import ProgressBar
    from .bench import RunSpec, append_record, default_n_initial, run_one
    from .problems import available_problems, get_problem
    from .storage import StorageLockedError

    if args.problem not in available_problems():
        raise _UsageError(f"unknown problem {args.problem!r}; choose from {available_problems()}")
    _check_surrogates([args.surrogate])
    n_initial = default_n_initial(args.problem)
    if args.n_calls <= n_initial:
        raise _UsageError(
            f"--n-calls must be larger than the {n_initial} initial points, got {args.n_calls}"
        )
    if args.storage and args.out:
        raise _UsageError(
            "--storage and --out cannot be combined: a record is written only "
            "for a run made in one call"
        )
    params = _parse_params(args.param, per_problem=False)
    get_problem(args.problem, **params)  # fail early on bad parameters
    overrides = {}
    if args.n_candidates is not None:
        overrides["n_candidates"] = args.n_candidates
    seed = 0 if args.seed is None else args.seed
    spec = RunSpec(
        args.problem,
        args.surrogate,
        seed,
        args.n_calls,
        preset=args.preset,
        problem_params=params,
        overrides=overrides,
    )
    if args.out:
        _check_out_dir(Path(args.out))
        _refuse_recorded_run(Path(args.out), spec)
    label = f"{args.problem}/{args.surrogate}"
    bar = None if args.quiet else ProgressBar(args.n_calls, label=label)
    made = [0]

    def show(result: OptimizeResult) -> None:
        made[0] += 1
        if bar is not None:
            # Counted from the result, so a resumed study starts at what it already holds.
            bar.update(len(result.func_vals) - bar.count, best=float(result.fun))

    try:
        outcome = run_one(spec, callback=show, storage=args.storage)
    except (StorageLockedError, OSError) as error:  # a storage that cannot be used
        print(f"treebo minimize: error: {error}", file=sys.stderr)
        return 1
    if bar is not None and made[0]:
        bar.close()
    if args.storage:
        print(
            f"study {args.storage}: {outcome['n_evaluated']} evaluations, {made[0]} of them "
            "in this call"
        )
    best = outcome["best_so_far"][-1]
    if best is None:
        print(
            f"no successful evaluation in {outcome['n_evaluated']}; errors: "
            f"{sorted({e for e in outcome.get('errors', []) if e})}"
        )
        return 1
    index = outcome["values"].index(best)
    print(f"best value {best:.10g} at evaluation {index + 1} of {outcome['n_evaluated']}")
    print(f"x = {outcome['x'][index]}")
    if outcome["regret"] is not None:
        print(f"regret {outcome['regret'][-1]:.4g} (optimum {outcome['optimal_value']:.12g})")
    fit, acq = sum(outcome["fit_time"]), sum(outcome["acq_time"])
    if args.storage:  # the fit and acquisition times of earlier calls are stored too
        print(
            f"time: {outcome['wall_time']:.1f}s in this call; fit {fit:.1f}s, acquisition "
            f"{acq:.1f}s over all {outcome['n_evaluated']} evaluations"
        )
    else:
        print(f"time: {outcome['wall_time']:.1f}s (fit {fit:.1f}s, acquisition {acq:.1f}s)")
    if args.out:
        out = Path(args.out)
        try:
            append_record(out, outcome)
        except OSError as error:  # checked before the run, yet lost since: keep the record
            print(json.dumps(outcome, sort_keys=True))
            print(
                f"treebo minimize: error: the record could not be appended to {out} "
                f"({error}); it is printed above",
                file=sys.stderr,
            )
            return 1
        print(f"record appended to {out / (outcome['problem'] + '.jsonl')}")
    return 0


def _check_out_dir(out: Path) -> None:
    """Raise a usage error, before anything runs, if records cannot be appended in ``out``."""
    existing = next(path for path in (out, *out.parents) if path.exists() or path == path.parent)
    if not existing.is_dir():
        raise _UsageError(f"--out {out}: {existing} is a file, not a directory; nothing was run")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise _UsageError(f"--out {out}: {existing} is not writable by this user; nothing was run")


def _refuse_recorded_run(out: Path, spec: RunSpec) -> None:
    """Raise a usage error if ``out`` already has a record of ``spec`` that is long enough.

    The same rule as ``treebo bench``'s skipping: a record of the same run (same
    problem, parameters, surrogate, seed, preset and overrides) with at least
    ``spec.n_calls`` evaluations. Checked before running, so nothing is wasted.
    """
    from .bench import completed_runs, load_results

    for path in (out / f"{spec.problem}.jsonl.gz", out / f"{spec.problem}.jsonl"):
        if not path.is_file():
            continue
        recorded = completed_runs(load_results(path)).get(spec.key(), 0)
        if recorded >= spec.n_calls:
            raise _UsageError(
                f"{path} already holds a record of this run ({spec.problem}/"
                f"{spec.surrogate}, seed {spec.seed}, {recorded} evaluations); "
                "nothing was run: remove that record or choose another --out"
            )


def _load_config(path: str | None) -> dict:
    if path is None:
        return {}
    try:
        with open(path) as handle:
            config = json.load(handle)
    except (OSError, json.JSONDecodeError) as error:
        raise _UsageError(f"cannot read --config {path!r}: {error}") from None
    allowed = {
        "problems",
        "surrogates",
        "seeds",
        "n_calls",
        "preset",
        "out",
        "n_jobs",
        "problem_params",
        "overrides",
        "description",
    }
    unknown = set(config) - allowed
    if unknown:
        raise _UsageError(
            f"--config {path!r} has unknown keys {sorted(unknown)}; allowed: {sorted(allowed)}"
        )
    return config


def _cmd_bench(args: argparse.Namespace) -> int:
    from .bench import BenchError, format_summary, load_results, run_grid, summary_table
    from .surrogates import available_surrogates

    config = _load_config(args.config)
    problems = args.problems or config.get("problems")
    if not problems:
        raise _UsageError("bench needs --problems (or a --config that lists them)")
    problems = _expand_problems(problems, args)
    surrogates = _check_surrogates(
        args.surrogates or config.get("surrogates") or available_surrogates()
    )
    seeds = _parse_seeds(args.seeds or [str(s) for s in config.get("seeds", ["0-4"])])
    out = args.out or config.get("out")
    if not out:
        raise _UsageError("bench needs --out DIR (or a --config that sets out)")
    problem_params = dict(config.get("problem_params", {}))
    for name, params in _parse_params(args.param, per_problem=True).items():
        problem_params.setdefault(name, {}).update(params)
    overrides = dict(config.get("overrides", {}))
    if args.n_candidates is not None:
        overrides["n_candidates"] = args.n_candidates
    try:
        run_grid(
            problems,
            surrogates,
            seeds,
            out,
            args.n_calls or config.get("n_calls"),
            preset=args.preset or config.get("preset", "default"),
            problem_params=problem_params,
            overrides=overrides,
            n_jobs=args.n_jobs or config.get("n_jobs"),
            executor=args.executor,
            progress=not args.quiet,
        )
    except BenchError as error:
        print(f"treebo bench: {error}", file=sys.stderr)
        for spec, text in error.failures:
            print(f"  {spec.problem}/{spec.surrogate}/seed {spec.seed}: {text}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(format_summary(summary_table(load_results(out))))
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    from .plotting.regret import plot_results

    if not Path(args.results).exists():
        raise _UsageError(f"results directory {args.results!r} does not exist")
    written = plot_results(
        args.results,
        args.out,
        problems=args.problems,
        surrogates=args.surrogates,
        n_calls=args.n_calls,
        fmt=args.format,
    )
    for path in written:
        print(path)
    return 0


def _cmd_summary(args: argparse.Namespace) -> int:
    from .bench import format_paired, format_summary, load_results, paired_wins, summary_table

    if not Path(args.results).exists():
        raise _UsageError(f"results directory {args.results!r} does not exist")
    records = load_results(args.results)
    if not records:
        raise _UsageError(f"no records in {args.results!r}")
    if args.paired is None:
        print(format_summary(summary_table(records, args.n_calls)))
    else:
        print(format_paired(paired_wins(records, args.paired, args.n_calls), args.paired))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .report import write_report

    if not Path(args.storage_file).is_file():
        raise _UsageError(f"storage file {args.storage_file!r} does not exist")
    written = write_report(args.storage_file, args.output, max_dimensions=args.max_dimensions)
    print(written)
    return 0


# -- parser ----------------------------------------------------------------------------------
def _minimize_arguments(p: argparse.ArgumentParser) -> None:
    from .bench import PRESETS
    from .cli_study import add_objective_arguments

    p.add_argument(
        "problem",
        nargs="?",
        metavar="TARGET",
        help="a problem name (see `treebo list`), or your objective as "
        "FILE.py:FUNCTION or MODULE:FUNCTION",
    )
    p.add_argument("--surrogate", default="bwo", help="surrogate name (default: bwo)")
    p.add_argument(
        "--n-calls",
        type=int,
        default=100,
        help="evaluations, the 5 initial points included (default: 100)",
    )
    p.add_argument(
        "--seed",
        type=int,
        help="seed / repeat index (default: 0 for a problem; "
        "for your objective a fresh seed, stored with the study)",
    )
    p.add_argument("--preset", choices=PRESETS, default="default")
    p.add_argument(
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="problem parameter, e.g. lam=0.0001 or instance=466 (repeatable)",
    )
    p.add_argument("--n-candidates", type=int, help="Sobol candidates per iteration")
    p.add_argument(
        "--out",
        help="append the run's JSON record to OUT/<problem>.jsonl; "
        "refused, before anything runs, when that file already holds a record of "
        "the same run with at least --n-calls evaluations (a longer run is appended; "
        "readers keep the longest record)",
    )
    p.add_argument(
        "--storage",
        metavar="FILE",
        help="SQLite study that records every trial as soon as it is asked and "
        "told; if FILE already holds this run's study, it is resumed: only the "
        "evaluations missing to --n-calls are made (not with --out)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_objective_arguments(p)


def _bench_arguments(p: argparse.ArgumentParser) -> None:
    from .bench import PRESETS
    from .problems import problem_suites

    p.add_argument(
        "--config",
        help="JSON file with problems, surrogates, seeds, n_calls, "
        "preset, out, problem_params, overrides (arguments given here win)",
    )
    p.add_argument(
        "--problems",
        nargs="+",
        metavar="NAME",
        help=f"problem names or the groups {list(problem_suites())}; bbob names "
        "(bbob_f01_d10_i1) or 'bbob' for COCO's functions chosen by --functions, "
        "--dims and --instances",
    )
    p.add_argument(
        "--functions",
        nargs="+",
        metavar="N",
        help="with --problems bbob: functions, e.g. 1-24 or 1,8,21 (default: 1-24)",
    )
    p.add_argument(
        "--dims",
        nargs="+",
        metavar="N",
        help="with --problems bbob: dimensions, e.g. 2 5 10 (default: 2 5 10)",
    )
    p.add_argument(
        "--instances",
        nargs="+",
        metavar="N",
        help="with --problems bbob: instances, e.g. 1-3 (default: 1-3)",
    )
    p.add_argument("--surrogates", nargs="+", metavar="NAME", help="surrogate names (default: all)")
    p.add_argument(
        "--seeds",
        nargs="+",
        metavar="SEEDS",
        help="seeds and ranges, e.g. 0-4 or 0 1 2 (default: 0-4)",
    )
    p.add_argument(
        "--n-calls",
        type=int,
        help="evaluations per run, 5 initial included (default: per preset; "
        "20 per dimension for bbob problems)",
    )
    p.add_argument("--out", help="results directory (runs already there are skipped)")
    p.add_argument("--preset", choices=PRESETS, help="protocol (default: default)")
    p.add_argument(
        "--param",
        action="append",
        metavar="PROBLEM:KEY=VALUE",
        help="problem parameter, e.g. ising:lam=0.0001 (repeatable)",
    )
    p.add_argument("--n-candidates", type=int, help="Sobol candidates per iteration")
    p.add_argument("--n-jobs", type=int, help="runs in parallel (default: CPU count)")
    p.add_argument("--executor", choices=("process", "thread"), default="process")
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")


def _plot_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", help="results directory written by `treebo bench`")
    p.add_argument("--out", required=True, help="directory for the figures")
    p.add_argument("--problems", nargs="+", metavar="NAME")
    p.add_argument("--surrogates", nargs="+", metavar="NAME")
    p.add_argument("--n-calls", type=int, help="cut runs to this many evaluations")
    p.add_argument("--format", default="png", help="png, pdf or svg (default: png)")


def _summary_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", help="results directory written by `treebo bench`")
    p.add_argument("--n-calls", type=int, help="cut runs to this many evaluations")
    p.add_argument(
        "--paired",
        metavar="SURROGATE",
        help="instead: on how many seeds SURROGATE ends lower than each other one",
    )


def _report_arguments(p: argparse.ArgumentParser) -> None:
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


def _ask_arguments(p: argparse.ArgumentParser) -> None:
    from .cli_study import add_ask_arguments

    add_ask_arguments(p)


def _tell_arguments(p: argparse.ArgumentParser) -> None:
    from .cli_study import add_tell_arguments

    add_tell_arguments(p)


def _show_arguments(p: argparse.ArgumentParser) -> None:
    from .cli_study import add_show_arguments

    add_show_arguments(p)


def _cmd_ask(args: argparse.Namespace) -> int:
    from .cli_study import cmd_ask

    return cmd_ask(args)


def _cmd_tell(args: argparse.Namespace) -> int:
    from .cli_study import cmd_tell

    return cmd_tell(args)


def _cmd_show(args: argparse.Namespace) -> int:
    from .cli_study import cmd_show

    return cmd_show(args)


# name -> (help, function adding the subcommand's arguments or None, the subcommand)
_COMMANDS: dict[str, tuple[str, Callable | None, Callable]] = {
    "list": ("list problems and surrogates", None, _cmd_list),
    "minimize": (
        "minimize your objective (a Python function or a command) or a benchmark problem",
        _minimize_arguments,
        _cmd_minimize,
    ),
    "ask": (
        'propose a point of a stored study; prints {"trial": N, "x": {...}}',
        _ask_arguments,
        _cmd_ask,
    ),
    "tell": ("record the value of an asked trial", _tell_arguments, _cmd_tell),
    "show": ("print a stored study's best trial and its trials", _show_arguments, _cmd_show),
    "bench": ("run a grid of problems x surrogates x seeds", _bench_arguments, _cmd_bench),
    "plot": ("draw regret and time figures, one per problem", _plot_arguments, _cmd_plot),
    "summary": ("Markdown table of median final log10 regret", _summary_arguments, _cmd_summary),
    "report": (
        "write a study's HTML report: best trial, figures, trial table",
        _report_arguments,
        _cmd_report,
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
    except (_UsageError, ValueError, FileNotFoundError) as error:  # incl. DatasetUnavailable
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
