"""Several objectives and constraints: treebo against Optuna's samplers and random search.

Runs each method on the problems of :mod:`treebo.problems.metric_problems`
(ZDT1-3 and an AutoML forest-size task with two objectives, DTLZ2 with three,
and three constrained engineering and test problems with one objective) and
appends one record per run to ``benchmarks/results/several_objectives/runs.jsonl.gz``
(a gzip member per record; a run already recorded is skipped, so an
interrupted grid resumes). ``--report`` prints the table of the docs page
from the records.

Methods, at their defaults: ``treebo`` (``minimize`` with ``objectives``
and ``constraints``), ``treebo_ehvi`` (the same with
``multi_objective="ehvi"``), Optuna's ``tpe`` (multivariate) and ``nsga2``
with ``constraints_func``, Optuna's ``gp`` (needs torch: the ``[peers]``
extra), and ``random`` (Optuna's RandomSampler). Measures: the hypervolume
of the feasible front against the problem's reference point (several
objectives); log10 of (best feasible value - the constrained optimum) and
the share of seeds with any feasible point (one objective under
constraints).

    python benchmarks/several_objectives.py --methods treebo tpe nsga2 random --seeds 0-9
    python benchmarks/several_objectives.py --report
    python benchmarks/several_objectives.py --optima   # the constrained optima, by SLSQP
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import time
import warnings
from pathlib import Path

import numpy as np

from treebo.metrics import Metrics
from treebo.pareto import hypervolume
from treebo.problems.metric_problems import METRIC_PROBLEMS, MetricProblem, get_metric_problem

RECORDS = Path(__file__).parent / "results" / "several_objectives" / "runs.jsonl.gz"
METHODS = ("treebo", "treebo_ehvi", "tpe", "nsga2", "gp", "random")


def budget(problem: MetricProblem) -> int:
    """Evaluations per run: 200 for three objectives, 100 otherwise."""
    return 200 if len(problem.objectives) >= 3 else 100


# -- one run -------------------------------------------------------------------------------
def run_treebo(
    problem: MetricProblem, seed: int, n_calls: int, multi_objective: str = "parego"
) -> list[dict | None]:
    from treebo import minimize

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = minimize(
            problem,
            problem.space,
            n_calls=n_calls,
            objectives=problem.objectives,
            constraints=problem.constraints,
            multi_objective=multi_objective,
            random_state=seed,
        )
    return list(res.metrics)


def run_optuna(problem: MetricProblem, seed: int, n_calls: int, method: str) -> list[dict | None]:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    metrics = Metrics(problem.objectives, problem.constraints)
    constrained = bool(problem.constraints)

    def constraints_func(trial: optuna.trial.FrozenTrial) -> list[float]:
        return trial.user_attrs["violations"]

    options = {"constraints_func": constraints_func} if constrained else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the constraints_func FutureWarning of Optuna 5
        if method == "tpe":
            sampler = optuna.samplers.TPESampler(seed=seed, multivariate=True, **options)
        elif method == "nsga2":
            sampler = optuna.samplers.NSGAIISampler(seed=seed, **options)
        elif method == "gp":
            sampler = optuna.samplers.GPSampler(seed=seed, **options)
        else:
            sampler = optuna.samplers.RandomSampler(seed=seed)
        study = optuna.create_study(
            directions=[d for d in problem.objectives.values()], sampler=sampler
        )
    recorded: list[dict | None] = []

    def objective(trial: optuna.trial.Trial) -> tuple[float, ...]:
        x = []
        for dim in problem.space.dimensions:
            if isinstance(dim.low, int):
                x.append(trial.suggest_int(dim.name, dim.low, dim.high))
            else:
                x.append(trial.suggest_float(dim.name, dim.low, dim.high))
        values = problem(x)
        recorded.append(values)
        if constrained:
            trial.set_user_attr("violations", metrics.violations([values])[0].tolist())
        return tuple(values[name] for name in problem.objectives)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(objective, n_trials=n_calls)
    return recorded


def run(problem_name: str, method: str, seed: int) -> dict:
    problem = get_metric_problem(problem_name)
    n_calls = budget(problem)
    start = time.perf_counter()
    if method.startswith("treebo"):
        metrics = run_treebo(
            problem, seed, n_calls, "ehvi" if method == "treebo_ehvi" else "parego"
        )
    else:
        metrics = run_optuna(problem, seed, n_calls, method)
    seconds = time.perf_counter() - start
    summary = Metrics(problem.objectives, problem.constraints)
    Y = summary.objective_matrix(metrics) * summary.signs  # the user's units
    V = summary.violations(metrics) if problem.constraints else np.empty((len(metrics), 0))
    return {
        "problem": problem_name,
        "method": method,
        "seed": seed,
        "n_calls": n_calls,
        "seconds": round(seconds, 2),
        "objectives": _rounded(Y),
        "violations": _rounded(V),
        "versions": _versions(),
    }


def _rounded(array: np.ndarray) -> list:
    return [[None if not math.isfinite(v) else float(f"{v:.7g}") for v in row] for row in array]


def _versions() -> dict[str, str]:
    import subprocess

    import treebo

    # The commit of the treebo that ran (a grid runs from a frozen worktree of it).
    commit = subprocess.run(
        ["git", "-C", str(Path(treebo.__file__).parent), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    out = {"treebo": treebo.__version__, "commit": commit}
    try:
        import optuna

        out["optuna"] = optuna.__version__
    except ImportError:
        pass
    return out


# -- records ---------------------------------------------------------------------------------
def read_records(path: Path = RECORDS) -> list[dict]:
    """The records of one file, or of every ``*.jsonl.gz`` file of a folder."""
    paths = sorted(path.glob("*.jsonl.gz")) if path.is_dir() else [path] if path.exists() else []
    out = []
    for each in paths:
        with gzip.open(each, "rt") as handle:
            out += [json.loads(line) for line in handle if line.strip()]
    return out


def append_record(record: dict, path: Path = RECORDS) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Each record is a gzip member of its own: appending never rewrites earlier ones,
    # and a run killed while writing loses at most its own record.
    with gzip.open(path, "at") as handle:
        handle.write(json.dumps(record, separators=(",", ":")) + "\n")


# -- measures ---------------------------------------------------------------------------------
def measure(record: dict, problem: MetricProblem, upto: int | None = None) -> float:
    """Hypervolume of the feasible front (several objectives) or the log10 gap (one objective)."""
    Y = np.array(
        [[math.nan if v is None else v for v in row] for row in record["objectives"]], dtype=float
    ).reshape(-1, len(problem.objectives))[:upto]
    V = np.array(
        [[math.nan if v is None else v for v in row] for row in record["violations"]], dtype=float
    ).reshape(len(record["objectives"]), -1)[:upto]
    feasible = np.all(np.isfinite(Y), axis=1) & np.all(np.nan_to_num(V, nan=1.0) <= 0, axis=1)
    signs = np.array([1.0 if d == "minimize" else -1.0 for d in problem.objectives.values()])
    if len(problem.objectives) > 1:
        assert problem.reference_point is not None
        front = Y[feasible] * signs
        return hypervolume(front, np.array(problem.reference_point) * signs)
    if not feasible.any():
        return math.nan
    assert problem.optimal_value is not None
    gap = float(np.min(Y[feasible, 0] * signs[0])) - problem.optimal_value * signs[0]
    return math.log10(max(gap, 1e-8))


def summary(records: list[dict]) -> dict[str, dict[str, tuple[float, int, int]]]:
    """Per problem and method: the median measure over seeds, the seeds run, the feasible ones.

    The median is over the seeds with a feasible point (NaN when none had one).
    """
    out: dict[str, dict[str, tuple[float, int, int]]] = {}
    for name in METRIC_PROBLEMS:
        problem = get_metric_problem(name)
        for method in METHODS:
            runs = [r for r in records if r["problem"] == name and r["method"] == method]
            if not runs:
                continue
            values = [measure(r, problem) for r in runs]
            finite = [v for v in values if math.isfinite(v)]
            median = float(np.median(finite)) if finite else math.nan
            out.setdefault(name, {})[method] = (median, len(runs), len(finite))
    return out


def format_table(records: list[dict]) -> str:
    """The docs page's table: one row per problem, one column per method, the best in bold."""
    table = summary(records)
    methods = [m for m in METHODS if any(m in row for row in table.values())]
    lines = [
        "| problem | measure | " + " | ".join(methods) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in methods) + " |",
    ]
    for name, row in table.items():
        problem = get_metric_problem(name)
        several = len(problem.objectives) > 1
        finite = {m: v[0] for m, v in row.items() if math.isfinite(v[0])}
        best = (max if several else min)(finite.values()) if finite else None
        cells = []
        for method in methods:
            if method not in row:
                cells.append("–")
                continue
            median, n_runs, n_feasible = row[method]
            text = "none feasible" if not math.isfinite(median) else f"{median:.3f}"
            if best is not None and median == best:
                text = f"**{text}**"
            if not several:
                text += f" ({n_feasible}/{n_runs} feasible)"
            elif n_runs < 10:
                text += f" ({n_runs} seed{'s' if n_runs != 1 else ''})"
            cells.append(text)
        measure_text = "hypervolume ↑" if several else "log10 gap ↓"
        lines.append(f"| {name} | {measure_text} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report(records: list[dict]) -> None:
    print(
        "median over seeds; hypervolume of the feasible front for several objectives, "
        "log10(best feasible - optimum) over the seeds with a feasible point for one"
    )
    print(format_table(records))


# -- the constrained optima --------------------------------------------------------------------
def constrained_optima() -> None:
    from scipy.optimize import minimize as scipy_minimize
    from scipy.stats import qmc

    for name in METRIC_PROBLEMS:
        problem = get_metric_problem(name)
        if len(problem.objectives) != 1 or not problem.constraints:
            continue
        low = np.array([d.low for d in problem.space.dimensions], dtype=float)
        high = np.array([d.high for d in problem.space.dimensions], dtype=float)
        metrics = Metrics(problem.objectives, problem.constraints)
        objective_name = next(iter(problem.objectives))

        def f(x: np.ndarray, problem: MetricProblem = problem, name: str = objective_name) -> float:
            return problem.evaluate(x)[name]

        def g(
            x: np.ndarray, problem: MetricProblem = problem, metrics: Metrics = metrics
        ) -> np.ndarray:
            return -metrics.violations([problem.evaluate(x)])[0]  # SLSQP: >= 0 holds

        starts = qmc.Sobol(len(low), seed=0).random(2048) * (high - low) + low
        # Scaled: the constraints' units differ by orders of magnitude.
        scales = np.maximum(np.abs(np.array([g(x) for x in starts[:256]])).mean(axis=0), 1e-12)

        def g_scaled(x: np.ndarray, g=g, scales=scales) -> np.ndarray:
            return g(x) / scales

        best = math.inf
        for x0 in starts:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = scipy_minimize(
                    f,
                    x0,
                    method="SLSQP",
                    bounds=list(zip(low, high)),
                    constraints=[{"type": "ineq", "fun": g_scaled}],
                    options={"maxiter": 500, "ftol": 1e-12},
                )
            if np.all(g(out.x) >= -1e-9) and out.fun < best:
                best, where = float(out.fun), out.x
        print(f"{name}: {best:.6f} at {np.round(where, 6).tolist()}")


def _seeds(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=list(METRIC_PROBLEMS))
    parser.add_argument("--methods", nargs="+", default=["treebo", "tpe", "nsga2", "random"])
    parser.add_argument("--seeds", default="0-9", help="a range such as 0-9")
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--optima", action="store_true")
    parser.add_argument(
        "--records",
        type=Path,
        default=RECORDS,
        help="the file a run appends to (one per process; --report reads its whole folder)",
    )
    args = parser.parse_args()
    if args.optima:
        constrained_optima()
        return
    if args.report:
        report(read_records(args.records.parent))
        return
    # A run recorded in any file of the folder is done (a grid may be split over files).
    done = {(r["problem"], r["method"], r["seed"]) for r in read_records(args.records.parent)}
    # Seed by seed, so that a grid cut short has every problem and method at the same seeds.
    for seed in _seeds(args.seeds):
        for name in args.problems:
            for method in args.methods:
                if (name, method, seed) in done:
                    continue
                record = run(name, method, seed)
                append_record(record, args.records)
                value = measure(record, get_metric_problem(name))
                print(
                    f"{name} {method} seed {seed}: {value:.4f} in {record['seconds']:.0f} s",
                    flush=True,
                )


if __name__ == "__main__":
    main()
