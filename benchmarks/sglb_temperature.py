"""SGLB surrogates at BO sample sizes: accuracy of the mean against honesty of the spread.

In the regret grid the SGLB family does no better than uniform random search on
Bohachevsky and Rosenbrock (``--random-search`` prints that baseline: the median
final log10 regret of 100 uniform points over 200 seeds). This script shows why,
on the data a BO run starts from: ``--n`` uniform points of a benchmark
function, targets mapped as the optimizer maps them
(``transform_targets(..., "log")``), a surrogate fitted on them and
scored on 1,000 fresh uniform points (targets mapped with the same
min/max). For each surrogate and inverse temperature ``beta`` (given as a
multiple of N; 1 = the posterior setting, treebo's default) it prints, as
medians over the seeds:

``corr``
    correlation of the predicted mean with the truth (what EI ranks by);
``rmse``
    root mean squared error of the mean (the targets have s.d. about 1);
``sd``
    mean predicted standard deviation;
``nll``
    mean Gaussian negative log-likelihood (spread and mean together).

BwO is the reference, fitted on the same points.

    python benchmarks/sglb_temperature.py                       # Bohachevsky and Hartmann6
    python benchmarks/sglb_temperature.py --problems rosenbrock_4 --n 20 40 80 --seeds 5
    python benchmarks/sglb_temperature.py --random-search --problems bohachevsky rosenbrock_4

Results are printed and written as JSON to
``benchmarks/results/sglb_temperature/sglb_temperature.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import numpy as np

from treebo.diagnostics import gaussian_nll
from treebo.problems import get_problem
from treebo.surrogates import make_surrogate
from treebo.targets import LOG_OFFSET, transform_targets


def _unit_to_point(problem, u: np.ndarray) -> np.ndarray:
    """Map a point of the unit cube onto the problem's box (continuous problems only)."""
    low = np.array([d.low for d in problem.space.dimensions], dtype=float)
    high = np.array([d.high for d in problem.space.dimensions], dtype=float)
    return low + u * (high - low)


def score(problem_name: str, surrogate: str, multiple: float | None, n: int, seed: int) -> dict:
    """Fit on ``n`` uniform points, score on 1,000 others; one row of the table."""
    problem = get_problem(problem_name)
    rng = np.random.default_rng(seed)
    d = len(problem.space.dimensions)
    train, test = rng.random((n, d)), rng.random((1000, d))
    values = np.array([problem(_unit_to_point(problem, u)) for u in np.vstack([train, test])])
    y_train = transform_targets(values[:n], "log")
    # The test targets go through the same map, with the training set's min, max, mean and s.d.
    low, high = values[:n].min(), values[:n].max()
    logs = np.log((np.maximum(values, low) - low) / (high - low) + LOG_OFFSET)
    y_test = (logs[n:] - logs[:n].mean()) / logs[:n].std()
    assert np.allclose((logs[:n] - logs[:n].mean()) / logs[:n].std(), y_train)
    params = {} if multiple is None else {"diffusion_temperature": multiple * n}
    model = make_surrogate(surrogate, random_state=seed, **params).fit(train, y_train)
    pred = model.predict_dist(test)
    return {
        "corr": float(np.corrcoef(pred.mean, y_test)[0, 1]),
        "rmse": float(np.sqrt(np.mean((pred.mean - y_test) ** 2))),
        "sd": float(np.sqrt(pred.variance).mean()),
        "nll": float(gaussian_nll(y_test, pred)),
    }


def random_search(problem_name: str, n_calls: int = 100, n_seeds: int = 200) -> list[float]:
    """Final log10 regret of ``n_calls`` uniform points, one value per seed."""
    problem = get_problem(problem_name)
    d = len(problem.space.dimensions)
    finals = []
    for seed in range(n_seeds):
        points = _unit_to_point(problem, np.random.default_rng(seed).random((n_calls, d)))
        best = min(problem(x) for x in points)
        finals.append(float(np.log10(best - problem.optimal_value)))
    return finals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=["bohachevsky", "hartmann6"])
    parser.add_argument("--surrogates", nargs="+", default=["vsglb", "cbsglb"])
    parser.add_argument(
        "--multiples",
        nargs="+",
        type=float,
        default=[1.0, 10.0, 100.0],
        help="inverse temperature beta as a multiple of N (1 = posterior)",
    )
    parser.add_argument("--n", nargs="+", type=int, default=[40])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument(
        "--out",
        default=str(
            Path(__file__).resolve().parent
            / "results"
            / "sglb_temperature"
            / "sglb_temperature.json"
        ),
    )
    parser.add_argument(
        "--random-search",
        action="store_true",
        help="print the random-search baseline of the problems and stop",
    )
    args = parser.parse_args()
    if args.random_search:
        for problem in args.problems:
            q25, q50, q75 = np.percentile(random_search(problem), [25, 50, 75])
            print(
                f"{problem}: 100 uniform points, log10 regret median {q50:.2f} "
                f"[{q25:.2f}, {q75:.2f}] over 200 seeds"
            )
        return

    configs = [("bwo", None)] + [(s, m) for s in args.surrogates for m in args.multiples]
    rows = []
    print("| problem | N | surrogate | beta / N | corr | rmse | sd | nll |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for problem in args.problems:
        for n in args.n:
            for surrogate, multiple in configs:
                runs = [score(problem, surrogate, multiple, n, seed) for seed in range(args.seeds)]
                row = {
                    "problem": problem,
                    "n": n,
                    "surrogate": surrogate,
                    "beta_over_n": multiple,
                    "seeds": args.seeds,
                    **{k: statistics.median(r[k] for r in runs) for k in runs[0]},
                }
                rows.append(row)
                label = "–" if multiple is None else f"{multiple:g}"
                print(
                    f"| {problem} | {n} | {surrogate} | {label} | {row['corr']:.2f} | "
                    f"{row['rmse']:.2f} | {row['sd']:.2f} | {row['nll']:.2f} |",
                    flush=True,
                )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
