"""Which Mondrian prediction mode optimizes better?

Runs EI with the Mondrian forest in each ``mode`` (and BwO as a baseline) on
a few problems, same seeds and initial designs, and prints the median and
quartiles of the final log10 simple regret.

    python benchmarks/mondrian_modes.py --seeds 5 --n-calls 50 --n-candidates 10000
    python benchmarks/mondrian_modes.py --time     # fit + predict(50,000) per mode instead

``--time`` measures the Mondrian forest's cost goal: fit on N = 200 points in D = 6 and
predict mean and variance at 50,000 points with 100 trees, median of 5, each
mode against a bare ``ExtraTreesRegressor(100).fit + predict`` of the same run.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from sklearn.ensemble import ExtraTreesRegressor

from treebo import minimize
from treebo.problems import get_problem
from treebo.surrogates import make_surrogate


def run(problem_name: str, variant: str, seed: int, n_calls: int, n_candidates: int) -> float:
    problem = get_problem(problem_name)
    surrogate, _, mode = variant.partition(":")
    params = {"mode": mode} if mode else {}
    result = minimize(
        problem,
        problem.space,
        n_calls=n_calls,
        surrogate=surrogate,
        surrogate_params=params,
        n_candidates=n_candidates,
        random_state=seed,
    )
    return math.log10(max(problem.regret(result.fun), 1e-12))


def _median_seconds(work, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def time_modes() -> None:
    rng = np.random.default_rng(0)
    X = rng.random((200, 6))
    y = np.sin(3 * X).sum(axis=1) + 0.1 * rng.standard_normal(200)
    C = rng.random((50_000, 6))
    reference = _median_seconds(lambda: ExtraTreesRegressor(100).fit(X, y).predict(C))
    print(f"reference ExtraTreesRegressor(100) fit + predict(50,000): {reference:.3f} s")
    for mode in ["skgarden", "reference", "exact"]:
        seconds = _median_seconds(
            lambda mode=mode: (
                make_surrogate("mondrian", mode=mode, random_state=0).fit(X, y).predict_dist(C)
            )
        )
        print(f"mondrian {mode:<10} {seconds:.3f} s  ratio {seconds / reference:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=["branin", "hartmann6"])
    parser.add_argument(
        "--variants",
        nargs="+",
        default=["mondrian:skgarden", "mondrian:reference", "mondrian:exact", "bwo"],
    )
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n-calls", type=int, default=50)
    parser.add_argument("--n-candidates", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--time", action="store_true", help="time fit + predict(50,000) per mode instead"
    )
    args = parser.parse_args()
    if args.time:
        time_modes()
        return
    tasks = [
        (p, v, seed, args.n_calls, args.n_candidates)
        for p in args.problems
        for v in args.variants
        for seed in range(args.seeds)
    ]
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(run, *zip(*tasks)))
    table: dict = {}
    for (p, v, _, _, _), value in zip(tasks, results):
        table.setdefault((p, v), []).append(value)
    print(f"n_calls={args.n_calls}, n_candidates={args.n_candidates}, seeds={args.seeds}")
    print(f"{'problem':<12} {'surrogate':<20} {'median':>8} {'q25':>8} {'q75':>8}  log10 regret")
    for p in args.problems:
        for v in args.variants:
            values = np.array(table[(p, v)])
            print(
                f"{p:<12} {v:<20} {np.median(values):8.3f} {np.quantile(values, 0.25):8.3f} "
                f"{np.quantile(values, 0.75):8.3f}"
            )


if __name__ == "__main__":
    main()
