"""The ``treebo`` subcommands for benchmark problems: list them, minimize one, run grids
of runs, and draw and summarize their regret curves.

::

    treebo list
    treebo minimize branin --surrogate bwo --n-calls 100 --seed 0
    treebo bench --problems continuous --surrogates bwo rf --seeds 0-4 --n-calls 100 --out results/
    treebo plot results/ --out figures/
    treebo summary results/

:mod:`treebo.cli` parses the arguments and hands them here.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .usage import UsageError, check_surrogates, given_settings, parse_params

if TYPE_CHECKING:
    from ..bench import RunSpec
    from ..result import OptimizeResult

__all__ = [
    "cmd_list",
    "minimize_problem",
    "add_bench_arguments",
    "add_plot_arguments",
    "add_summary_arguments",
    "cmd_bench",
    "cmd_plot",
    "cmd_summary",
]

#: Evaluations of ``treebo minimize PROBLEM`` when ``--n-calls`` is not given.
DEFAULT_N_CALLS = 100


def _parse_seeds(tokens: Sequence[str]) -> list[int]:
    from ..bench import parse_seeds

    try:
        return parse_seeds(tokens)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _expand_problems(names: Sequence[str], args: argparse.Namespace | None = None) -> list[str]:
    from ..bench import parse_int_ranges
    from ..problems import select_problems

    try:
        selection = {
            key: None
            if getattr(args, key, None) is None
            else parse_int_ranges(getattr(args, key), f"--{key}")
            for key in ("functions", "dims", "instances")
        }
        return select_problems(list(names), **selection)
    except ValueError as error:
        raise UsageError(str(error)) from None


def cmd_list(args: argparse.Namespace) -> int:
    from ..problems import available_problems, problem_family, problem_suites, problem_summary
    from ..surrogates import available_surrogates, missing_extra, surrogate_class_name

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


def _refuse_objective_options(args: argparse.Namespace) -> None:
    given = _given(
        args,
        "space",
        "json_field",
        "shell",
        "timeout",
        "maximize",
        "n_initial_points",
        "n_jobs",
        "catch",
        "resume_pending",
    )
    if given:
        raise UsageError(
            f"{', '.join(given)} apply to a user's objective (FILE.py:FUNCTION, "
            f"MODULE:FUNCTION or --command), not to the problem {args.problem!r}"
        )
    budget = _given(
        args, "budget_param", "min_budget", "max_budget", "total_budget", "eta", "intermediate"
    )
    if budget:
        raise UsageError(
            f"{', '.join(budget)}: the problem {args.problem!r} has no budget; a "
            "multi-fidelity run needs your objective (FILE.py:FUNCTION or MODULE:FUNCTION "
            "with a budget argument, or --command)"
        )


def _given(args: argparse.Namespace, *dests: str) -> list[str]:
    """The flags (``--n-jobs`` for ``n_jobs``) of the options among ``dests`` that were given."""
    return [
        "--" + dest.replace("_", "-")
        for dest in dests
        if getattr(args, dest) is not None and getattr(args, dest) is not False
    ]


def minimize_problem(args: argparse.Namespace) -> int:
    """``treebo minimize PROBLEM``: one run of a benchmark problem, its record with ``--out``."""
    from .._progress import ProgressBar
    from ..bench import RunSpec, append_record, default_n_initial, run_one
    from ..bench.presets import OVERRIDABLE
    from ..problems import available_problems, get_problem
    from ..storage import StorageLockedError

    _refuse_objective_options(args)
    if args.problem not in available_problems():
        raise UsageError(f"unknown problem {args.problem!r}; choose from {available_problems()}")
    check_surrogates([args.surrogate])
    n_calls = DEFAULT_N_CALLS if args.n_calls is None else args.n_calls
    n_initial = default_n_initial(args.problem)
    if n_calls <= n_initial:
        raise UsageError(
            f"--n-calls must be larger than the {n_initial} initial points, got {n_calls}"
        )
    if args.storage and args.out:
        raise UsageError(
            "--storage and --out cannot be combined: a record is written only "
            "for a run made in one call"
        )
    params = parse_params(args.param, per_problem=False)
    get_problem(args.problem, **params)  # fail early on bad parameters
    overrides = {k: v for k, v in given_settings(args).items() if k in OVERRIDABLE}
    seed = 0 if args.seed is None else args.seed
    spec = RunSpec(
        args.problem,
        args.surrogate,
        seed,
        n_calls,
        preset=args.preset,
        problem_params=params,
        overrides=overrides,
    )
    if args.out:
        _check_out_dir(Path(args.out))
        _refuse_recorded_run(Path(args.out), spec)
    label = f"{args.problem}/{args.surrogate}"
    bar = None if args.quiet else ProgressBar(n_calls, label=label)
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
        raise UsageError(f"--out {out}: {existing} is a file, not a directory; nothing was run")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out}: {existing} is not writable by this user; nothing was run")


def _refuse_recorded_run(out: Path, spec: RunSpec) -> None:
    """Raise a usage error if ``out`` already has a record of ``spec`` that is long enough.

    The same rule as ``treebo bench``'s skipping: a record of the same run (same
    problem, parameters, surrogate, seed, preset and overrides) with at least
    ``spec.n_calls`` evaluations. Checked before running, so nothing is wasted.
    """
    from ..bench import completed_runs, load_results

    for path in (out / f"{spec.problem}.jsonl.gz", out / f"{spec.problem}.jsonl"):
        if not path.is_file():
            continue
        recorded = completed_runs(load_results(path)).get(spec.key(), 0)
        if recorded >= spec.n_calls:
            raise UsageError(
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
        raise UsageError(f"cannot read --config {path!r}: {error}") from None
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
        raise UsageError(
            f"--config {path!r} has unknown keys {sorted(unknown)}; allowed: {sorted(allowed)}"
        )
    return config


def cmd_bench(args: argparse.Namespace) -> int:
    from ..bench import BenchError, format_summary, load_results, run_grid, summary_table
    from ..files import check_directory
    from ..surrogates import available_surrogates

    config = _load_config(args.config)
    problems = args.problems or config.get("problems")
    if not problems:
        raise UsageError("bench needs --problems (or a --config that lists them)")
    problems = _expand_problems(problems, args)
    surrogates = check_surrogates(
        args.surrogates or config.get("surrogates") or available_surrogates()
    )
    seeds = _parse_seeds(args.seeds or [str(s) for s in config.get("seeds", ["0-4"])])
    out = args.out or config.get("out")
    if not out:
        raise UsageError("bench needs --out DIR (or a --config that sets out)")
    check_directory(out, "--out" if args.out else f"--config {args.config}: out")
    problem_params = dict(config.get("problem_params", {}))
    for name, params in parse_params(args.param, per_problem=True).items():
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


def cmd_plot(args: argparse.Namespace) -> int:
    from ..files import WriteError, check_directory
    from ..plotting.regret import plot_results

    if not Path(args.results).exists():
        raise UsageError(f"results directory {args.results!r} does not exist")
    check_directory(args.out, "--out")
    try:
        written = plot_results(
            args.results,
            args.out,
            problems=args.problems,
            surrogates=args.surrogates,
            n_calls=args.n_calls,
            fmt=args.format,
        )
    except WriteError as error:  # the figures written before it stay, each one whole
        print(f"treebo plot: error: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


def cmd_summary(args: argparse.Namespace) -> int:
    from ..bench import format_paired, format_summary, load_results, paired_wins, summary_table

    if not Path(args.results).exists():
        raise UsageError(f"results directory {args.results!r} does not exist")
    records = load_results(args.results)
    if not records:
        raise UsageError(f"no records in {args.results!r}")
    if args.paired is None:
        print(format_summary(summary_table(records, args.n_calls)))
    else:
        print(format_paired(paired_wins(records, args.paired, args.n_calls), args.paired))
    return 0


def add_bench_arguments(p: argparse.ArgumentParser) -> None:
    from ..bench import PRESETS
    from ..problems import problem_suites

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


def add_plot_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", help="results directory written by `treebo bench`")
    p.add_argument("--out", required=True, help="directory for the figures")
    p.add_argument("--problems", nargs="+", metavar="NAME")
    p.add_argument("--surrogates", nargs="+", metavar="NAME")
    p.add_argument("--n-calls", type=int, help="cut runs to this many evaluations")
    p.add_argument("--format", default="png", help="png, pdf or svg (default: png)")


def add_summary_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", help="results directory written by `treebo bench`")
    p.add_argument("--n-calls", type=int, help="cut runs to this many evaluations")
    p.add_argument(
        "--paired",
        metavar="SURROGATE",
        help="instead: on how many seeds SURROGATE ends lower than each other one",
    )
