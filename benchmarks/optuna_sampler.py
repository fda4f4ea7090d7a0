"""The treebo Optuna sampler vs Optuna's TPE and GP samplers on three continuous problems.

Each run is one Optuna study (sequential, ``n_jobs=1``) minimizing one
problem of :mod:`treebo.problems` from one seed, with ``trial.suggest_float``
per dimension (log scale where the prior is log-uniform), for ``--n-trials``
trials (default 50). Samplers, each at its defaults and seeded with the run's
seed:

``treebo``  :class:`treebo.integration.optuna.TreeBOSampler` ``(seed=seed)``
``tpe``     ``optuna.samplers.TPESampler(seed=seed)``
``gp``      ``optuna.samplers.GPSampler(seed=seed, deterministic_objective=True)`` (needs
            torch; skipped with a message without it)

    python benchmarks/optuna_sampler.py --seeds 0-9 --n-trials 50
    python benchmarks/optuna_sampler.py --summary

Default problems: ``branin``, ``hartmann6`` and ``ackley_4``. Every run
appends one JSON line to ``<out>/<problem>.jsonl`` (default ``--out
benchmarks/results/optuna_sampler/grid``): ``sampler``, ``problem``, ``seed``,
``n_trials``, the trials' points ``x`` and ``values``, ``best_so_far``,
``best_value``, ``log10_regret`` (log10 of the best-so-far simple regret
against the problem's known optimum, after every trial, floored at
``max(1e-12, 1e-12 |f*|)`` as :mod:`treebo.bench` floors it),
``sample_time`` (per trial, from the end of the previous evaluation to the
start of this one: the sampler's work), ``eval_time``, ``wall_time``,
``settings``, ``versions`` and ``started``. Runs already recorded with at
least ``--n-trials`` trials are skipped, so an interrupted benchmark resumes
(a run's first ``n`` trials do not depend on the budget). BLAS, OpenMP,
joblib and torch are kept to one thread (``peers.single_thread``), so the
samplers' times are comparable.

``--summary`` prints, from the records, a Markdown table of the median final
log10 regret (after ``--n-trials`` trials) per problem and sampler, whether
the treebo sampler beats TPE (a lower median) on each problem, and the
verdict on the goal "the treebo sampler beats TPE on at least 2 of 3
continuous problems" (two thirds of the problems given), judged only on the
problems where both samplers have every requested seed.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import importlib.util
import math
import statistics
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from treebo.bench import append_record, load_results, parse_seeds, to_jsonable, trajectory, versions
from treebo.problems import Problem, available_problems, get_problem
from treebo.space import Real

PROBLEMS = ("branin", "hartmann6", "ackley_4")
SAMPLERS = ("treebo", "tpe", "gp")
DEFAULT_OUT = "benchmarks/results/optuna_sampler/grid"
N_TRIALS = 50
SCHEMA_VERSION = 1


def _peers() -> Any:
    """benchmarks/peers/, for its ``single_thread`` (loaded by path: benchmarks/ is no package)."""
    name = "treebo_benchmarks_peers"
    if name not in sys.modules:
        folder = Path(__file__).with_name("peers")
        spec = importlib.util.spec_from_file_location(
            name, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[name]


def regret_floor(optimal_value: float) -> float:
    """The lowest regret recorded, so that a run which hits the optimum has a finite log10."""
    return max(1e-12, 1e-12 * abs(optimal_value))


def make_sampler(sampler: str, seed: int) -> tuple[Any, dict]:
    """The Optuna sampler ``sampler`` seeded with ``seed``, and how it was made."""
    import optuna

    if sampler == "treebo":
        from treebo.integration.optuna import TreeBOSampler

        return TreeBOSampler(seed=seed), {
            "call": "treebo.integration.optuna.TreeBOSampler",
            "arguments": {"seed": seed},
        }
    if sampler == "tpe":
        return optuna.samplers.TPESampler(seed=seed), {
            "call": "optuna.samplers.TPESampler",
            "arguments": {"seed": seed},
        }
    if sampler == "gp":
        arguments = {"seed": seed, "deterministic_objective": True}
        with warnings.catch_warnings():
            # deterministic_objective is marked experimental
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            return optuna.samplers.GPSampler(**arguments), {
                "call": "optuna.samplers.GPSampler",
                "arguments": arguments,
            }
    raise ValueError(f"unknown sampler {sampler!r}; choose from {list(SAMPLERS)}")


def _suggest_point(trial: Any, problem: Problem) -> Any:
    """The problem's point, one ``suggest_float`` per dimension (in order)."""
    space = problem.space
    values = [
        trial.suggest_float(dim.name, dim.low, dim.high, log=dim.prior == "log-uniform")
        for dim in space.dimensions
    ]
    dicts = isinstance(space.decode(np.zeros((1, space.n_columns)))[0], dict)
    return dict(zip(space.names, values)) if dicts else values


def _library_versions(sampler: str) -> dict[str, str]:
    out = {"optuna": importlib.metadata.version("optuna")}
    if sampler == "gp":
        out["torch"] = importlib.metadata.version("torch")
    return out


def run_study(problem_name: str, sampler: str, seed: int, n_trials: int = N_TRIALS) -> dict:
    """One study of ``n_trials`` trials; its record.

    Raises
    ------
    ValueError
        For a problem with a dimension that is not real, or without a known optimum.
    """
    import optuna

    problem = get_problem(problem_name)
    if not all(isinstance(dim, Real) for dim in problem.space.dimensions):
        raise ValueError(f"{problem_name} is not a continuous problem (every dimension Real)")
    if problem.optimal_value is None:
        raise ValueError(f"{problem_name} has no known optimum to measure regret against")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    chosen, settings = make_sampler(sampler, int(seed))
    study = optuna.create_study(direction="minimize", sampler=chosen)
    x: list = []
    sample_time: list[float] = []
    eval_time: list[float] = []
    since = time.perf_counter()

    def objective(trial: Any) -> float:
        nonlocal since
        point = _suggest_point(trial, problem)
        start = time.perf_counter()
        value = float(problem(point))
        sample_time.append(start - since)
        eval_time.append(time.perf_counter() - start)
        x.append(point)
        since = time.perf_counter()
        return value

    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    wall = time.perf_counter()
    study.optimize(objective, n_trials=int(n_trials), n_jobs=1)
    wall = time.perf_counter() - wall
    trials = sorted(study.trials, key=lambda t: t.number)
    if len(trials) != n_trials or any(t.state != optuna.trial.TrialState.COMPLETE for t in trials):
        raise RuntimeError(f"{sampler} on {problem_name}: not {n_trials} complete trials")
    values, best_so_far, regret = trajectory([t.value for t in trials], problem.optimal_value)
    floor = regret_floor(problem.optimal_value)
    return to_jsonable(
        {
            "schema": SCHEMA_VERSION,
            "sampler": sampler,
            "problem": problem_name,
            "seed": int(seed),
            "n_trials": int(n_trials),
            "optimal_value": problem.optimal_value,
            "x": x,
            "values": values,
            "best_so_far": best_so_far,
            "best_value": best_so_far[-1],
            "log10_regret": [math.log10(max(r, floor)) for r in regret],
            "sample_time": sample_time,
            "eval_time": eval_time,
            "wall_time": wall,
            "settings": {
                **settings,
                "study": "optuna.create_study(direction='minimize'), optimize(n_jobs=1)",
                "suggest": "suggest_float per dimension, log=True for a log-uniform prior",
            },
            "versions": {**versions(), **_library_versions(sampler)},
            "started": started,
        }
    )


def _done(records: list[dict]) -> dict[tuple[str, str, int], int]:
    """(problem, sampler, seed) -> the most trials recorded."""
    done: dict[tuple[str, str, int], int] = {}
    for r in records:
        key = (r["problem"], r["sampler"], int(r["seed"]))
        done[key] = max(done.get(key, 0), int(r["n_trials"]))
    return done


def final_regrets(
    records: list[dict], n_trials: int, seeds: Sequence[int]
) -> dict[tuple[str, str], dict[int, float]]:
    """(problem, sampler) -> {seed: log10 regret after ``n_trials`` trials} of ``seeds``."""
    out: dict[tuple[str, str], dict[int, float]] = {}
    wanted = set(seeds)
    for r in records:
        if int(r["seed"]) in wanted and int(r["n_trials"]) >= n_trials:
            out.setdefault((r["problem"], r["sampler"]), {})[int(r["seed"])] = r["log10_regret"][
                n_trials - 1
            ]
    return out


def summary(
    records: list[dict],
    problems: Sequence[str],
    samplers: Sequence[str],
    seeds: Sequence[int],
    n_trials: int,
) -> str:
    """Markdown: the median final log10 regrets, treebo vs TPE per problem, the verdict."""
    finals = final_regrets(records, n_trials, seeds)

    def cell(problem: str, sampler: str) -> str:
        got = finals.get((problem, sampler), {})
        if not got:
            return "-"
        median = statistics.median(got.values())
        return f"{median:.2f}" + ("" if len(got) == len(seeds) else f" ({len(got)}/{len(seeds)})")

    lines = [
        f"Median log10 simple regret after {n_trials} trials, {len(seeds)} seeds "
        "(n/N: only n of the N seeds recorded)",
        "",
        "| problem | " + " | ".join(samplers) + " | treebo beats TPE |",
        "|---" * (len(samplers) + 2) + "|",
    ]
    wins, complete = 0, 0
    for problem in problems:
        treebo, tpe = finals.get((problem, "treebo"), {}), finals.get((problem, "tpe"), {})
        if len(treebo) == len(tpe) == len(seeds):
            complete += 1
            beats = statistics.median(treebo.values()) < statistics.median(tpe.values())
            wins += beats
            verdict = "yes" if beats else "no"
        else:
            verdict = "incomplete"
        lines.append(
            f"| {problem} | " + " | ".join(cell(problem, s) for s in samplers) + f" | {verdict} |"
        )
    need = math.ceil(2 * len(problems) / 3)
    missing = len(problems) - complete
    if wins >= need:
        state = "met"
    elif wins + missing < need:
        state = "not met"
    else:
        state = f"undecided: {missing} problem(s) lack seeds of treebo or tpe"
    lines += [
        "",
        f"Goal: the treebo sampler beats TPE on at least {need} of {len(problems)} "
        f"problems. It does on {wins} of the {complete} with every seed of both: {state}.",
    ]
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="The treebo Optuna sampler vs Optuna's TPE and GP samplers on continuous "
        "problems (records as JSON lines; --summary for the table and the verdict)."
    )
    parser.add_argument(
        "--problems",
        nargs="+",
        default=list(PROBLEMS),
        metavar="NAME",
        help=f"continuous problems (default: {' '.join(PROBLEMS)})",
    )
    parser.add_argument(
        "--samplers",
        nargs="+",
        default=list(SAMPLERS),
        choices=SAMPLERS,
        help=f"samplers, in this order (default: {' '.join(SAMPLERS)})",
    )
    parser.add_argument(
        "--seeds",
        nargs="+",
        default=["0-9"],
        metavar="SEEDS",
        help="seeds and ranges, e.g. 0-9 (default: 0-9)",
    )
    parser.add_argument(
        "--n-trials", type=int, default=N_TRIALS, help=f"trials per study (default: {N_TRIALS})"
    )
    parser.add_argument(
        "--out",
        default=DEFAULT_OUT,
        help=f"results directory, <out>/<problem>.jsonl (default: {DEFAULT_OUT})",
    )
    parser.add_argument(
        "--summary",
        action="store_true",
        help="print the summary of the records in --out and run nothing",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run every missing (sampler, problem, seed) study, or print the summary; 0 if all ran."""
    args = _parser().parse_args(argv)
    try:
        seeds = parse_seeds(args.seeds)
    except ValueError as error:
        print(f"optuna_sampler: {error}", file=sys.stderr)
        return 2
    unknown = [p for p in args.problems if p not in available_problems()]
    if unknown or args.n_trials < 1:
        print(
            f"optuna_sampler: unknown problem(s) {unknown}"
            if unknown
            else "optuna_sampler: --n-trials must be at least 1",
            file=sys.stderr,
        )
        return 2
    samplers = list(dict.fromkeys(args.samplers))
    out = Path(args.out)
    records = load_results(out) if out.exists() else []
    if args.summary:
        print(summary(records, args.problems, samplers, seeds, args.n_trials))
        return 0
    if importlib.util.find_spec("optuna") is None:
        print(
            "optuna_sampler: needs Optuna; install it with: pip install 'treebo[optuna]'",
            file=sys.stderr,
        )
        return 2
    status = 0
    if "gp" in samplers:
        if importlib.util.find_spec("torch") is None:
            print(
                "optuna_sampler: skipping gp: Optuna's GPSampler needs torch, which is not "
                "installed (pip install torch)",
                file=sys.stderr,
            )
            samplers.remove("gp")
            status = 1
        else:
            import torch  # noqa: F401 - imported now so that single_thread limits its threads
    done = _done(records)
    todo = [
        (problem, sampler, seed)
        for sampler in samplers
        for problem in args.problems
        for seed in seeds
        if done.get((problem, sampler, seed), 0) < args.n_trials
    ]
    with _peers().single_thread():
        for problem, sampler, seed in todo:
            name = f"{problem}/{sampler}/seed {seed}"
            try:
                record = run_study(problem, sampler, seed, args.n_trials)
            except Exception as error:  # noqa: BLE001 - one failed run must not stop the rest
                print(
                    f"optuna_sampler: {name} failed: {type(error).__name__}: {error}",
                    file=sys.stderr,
                    flush=True,
                )
                status = 1
            else:
                append_record(out, record)
                print(
                    f"{name}: log10 regret {record['log10_regret'][-1]:.2f} after "
                    f"{args.n_trials} trials, {record['wall_time']:.1f} s",
                    flush=True,
                )
    return status


if __name__ == "__main__":
    sys.exit(main())
