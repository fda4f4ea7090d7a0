"""Do local candidates around the incumbents lower regret?

Runs BwO-EI on Branin and Hartmann6 with and without local candidates, same
seeds, same initial designs, and prints the median (and quartiles) of the
final log10 simple regret and the share of seeds where local search wins.

    python benchmarks/local_search.py --seeds 10 --n-calls 100 --jobs 2
"""

from __future__ import annotations

import argparse
import math
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from treebo import minimize
from treebo.problems import get_problem


def run(problem_name: str, surrogate: str, local: bool, seed: int, n_calls: int) -> float:
    problem = get_problem(problem_name)
    result = minimize(
        problem,
        problem.space,
        n_calls=n_calls,
        surrogate=surrogate,
        local_search=local,
        random_state=seed,
    )
    return math.log10(max(problem.regret(result.fun), 1e-12))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=["branin", "hartmann6"])
    parser.add_argument("--surrogate", default="bwo")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--n-calls", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    tasks = [
        (p, args.surrogate, local, seed, args.n_calls)
        for p in args.problems
        for local in (False, True)
        for seed in range(args.seeds)
    ]
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(run, *zip(*tasks)))
    table = {}
    for (p, _, local, _, _), value in zip(tasks, results):
        table.setdefault((p, local), []).append(value)
    print(f"surrogate={args.surrogate}, n_calls={args.n_calls}, seeds={args.seeds}")
    print(f"{'problem':<12} {'local':<6} {'median':>8} {'q25':>8} {'q75':>8}  log10 regret")
    for p in args.problems:
        for local in (False, True):
            v = np.array(table[(p, local)])
            print(
                f"{p:<12} {str(local):<6} {np.median(v):8.3f} {np.quantile(v, 0.25):8.3f} "
                f"{np.quantile(v, 0.75):8.3f}"
            )
        wins = np.mean(np.array(table[(p, True)]) < np.array(table[(p, False)]))
        print(f"{p:<12} local search better on {wins:.0%} of seeds")


if __name__ == "__main__":
    main()
