"""Is each surrogate's predictive variance calibrated? Coverage and NLL on held-out points.

For each continuous benchmark function, every surrogate is fitted on 50
evaluations and judged on 1,000 held-out points drawn uniformly from the
domain: the share of held-out values inside its central 50%, 80% and 95%
predictive intervals (a calibrated model gives 0.50, 0.80, 0.95; less means
overconfident), the mean negative log predictive density (NLL, lower is
better), and the share of its predictive variance that is epistemic.

Training points (``--design``):

- ``sobol`` (default): 50 scrambled Sobol points, the same for every
  surrogate. The held-out points then come from the distribution the
  training points fill, the textbook setting for calibration, and no
  surrogate's own search decides what the others see.
- ``bo``: the 50 points of a treebo ``minimize`` run with the BwO forest
  (5 Sobol points, then 45 proposals), the same run for every surrogate.
  They cluster where BwO searched, so held-out points are mostly far from
  data: this is what a surrogate sees inside the optimizer.

Targets (``--targets``):

- ``standardize`` (default): every surrogate is fitted on
  ``(y - mean) / std`` of its 50 training values, and held-out values are
  mapped the same way; NLL is in these units, so it compares across
  surrogates and problems.
- ``optimizer``: each surrogate is fitted on the targets the optimizer gives
  it (``y_transform="auto"``: the log transform for tree models, plain
  standardization for the GP), and held-out values are mapped with the
  training values' transform. Held-out values below the log transform's
  domain (better than the best training value by more than its 1e-3
  offset) are left out and counted. NLLs of the GP and of tree models are
  then on different scales.

Results are averaged over seeds (each seed: new training design and held-out
points, new surrogate seeds).

    python benchmarks/calibration.py                      # ~2 min for 4 surrogates
    python benchmarks/calibration.py --design bo --seeds 3
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

from treebo import minimize
from treebo.acquisition import sobol_candidates
from treebo.diagnostics import DEFAULT_LEVELS, epistemic_share, gaussian_nll, interval_coverage
from treebo.problems import available_problems, get_problem
from treebo.space import Real
from treebo.surrogates import available_surrogates, make_surrogate, surrogate_class
from treebo.targets import LOG_OFFSET

RESULTS = Path(__file__).resolve().parent / "results" / "calibration"


def continuous_problems() -> list[str]:
    return [
        name
        for name in available_problems()
        if all(isinstance(d, Real) for d in get_problem(name).space.dimensions)
    ]


def training_points(problem, design: str, n_train: int, seed: int) -> np.ndarray:
    """Encoded training points, shape (n_train, D)."""
    space = problem.space
    if design == "sobol":
        return sobol_candidates(n_train, space.n_columns, np.random.default_rng(seed))
    result = minimize(problem, space, n_calls=n_train, surrogate="bwo", random_state=seed)
    return space.encode(result.x_iters)


def evaluate(problem, X: np.ndarray) -> np.ndarray:
    return np.array([problem(x) for x in problem.space.decode(X)])


def transform(
    y_train: np.ndarray, y_test: np.ndarray, kind: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Targets for training and held-out values; a mask of held-out values kept."""
    keep = np.ones(len(y_test), dtype=bool)
    if kind == "log":
        low, span = y_train.min(), y_train.max() - y_train.min()
        shifted_train = (y_train - low) / span + LOG_OFFSET
        shifted_test = (y_test - low) / span + LOG_OFFSET
        keep = shifted_test > 0
        y_train, y_test = np.log(shifted_train), np.log(np.where(keep, shifted_test, 1.0))
    mean, scale = y_train.mean(), y_train.std()
    scale = scale if scale > 0 else 1.0
    return (y_train - mean) / scale, (y_test - mean) / scale, keep


def run_one(
    problem_name: str,
    names: list[str],
    design: str,
    targets: str,
    n_train: int,
    n_test: int,
    seed: int,
) -> dict:
    problem = get_problem(problem_name)
    X = training_points(problem, design, n_train, seed)
    y = evaluate(problem, X)
    rng = np.random.default_rng(10_000 + seed)
    X_test = rng.random((n_test, problem.space.n_columns))
    y_test = evaluate(problem, X_test)
    out = {}
    for name in names:
        model = make_surrogate(name, **_seed(name, seed))
        kind = "standardize"
        if targets == "optimizer" and not model.smooth:
            kind = "log"
        z, z_test, keep = transform(y, y_test, kind)
        model.fit(X, z)
        prediction = model.predict_dist(X_test[keep])
        out[name] = {
            "coverage": interval_coverage(z_test[keep], prediction).tolist(),
            "nll": gaussian_nll(z_test[keep], prediction),
            "epistemic_share": epistemic_share(prediction),
            "n_dropped": int(np.sum(~keep)),
        }
    return out


def _seed(name: str, seed: int) -> dict:
    return {"random_state": seed} if "random_state" in surrogate_class(name)().get_params() else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--surrogates", nargs="+", default=None, help="default: every registered surrogate"
    )
    parser.add_argument(
        "--problems",
        nargs="+",
        default=None,
        help="default: every registered problem whose variables are all real",
    )
    parser.add_argument("--design", choices=("sobol", "bo"), default="sobol")
    parser.add_argument("--targets", choices=("standardize", "optimizer"), default="standardize")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n-train", type=int, default=50)
    parser.add_argument("--n-test", type=int, default=1000)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    names = args.surrogates or available_surrogates()
    usable = []
    for name in names:
        try:
            surrogate_class(name)
            usable.append(name)
        except ImportError as error:
            print(f"skipped {name}: {error}")
    problems = args.problems or continuous_problems()
    warnings.filterwarnings("ignore", category=UserWarning)
    start = time.perf_counter()
    runs = {
        p: [
            run_one(p, usable, args.design, args.targets, args.n_train, args.n_test, s)
            for s in range(args.seeds)
        ]
        for p in problems
    }

    levels = "/".join(f"{int(100 * lv)}" for lv in DEFAULT_LEVELS)
    print(
        f"design={args.design}, targets={args.targets}, {args.n_train} training points, "
        f"{args.n_test} uniform held-out points, mean over {args.seeds} seeds; "
        f"coverage of the central {levels}% intervals (ideal 0.50/0.80/0.95)\n"
    )
    print("| problem | surrogate | cov 50% | cov 80% | cov 95% | NLL | epistemic share |")
    print("|---|---|---:|---:|---:|---:|---:|")
    summary = {name: [] for name in usable}
    for p in problems:
        for name in usable:
            cov = np.mean([r[name]["coverage"] for r in runs[p]], axis=0)
            nll = float(np.mean([r[name]["nll"] for r in runs[p]]))
            share = float(np.nanmean([r[name]["epistemic_share"] for r in runs[p]]))
            dropped = int(np.sum([r[name]["n_dropped"] for r in runs[p]]))
            summary[name].append((*cov, nll, share))
            note = f" ({dropped} held-out values left out)" if dropped else ""
            print(
                f"| {p} | {name} | {cov[0]:.2f} | {cov[1]:.2f} | {cov[2]:.2f} | "
                f"{nll:.3g}{note} | {share:.2f} |"
            )
    print(
        "\nMean over the problems (NLL: median over the problems, since one problem can "
        "dominate a mean):\n"
    )
    print("| surrogate | cov 50% | cov 80% | cov 95% | median NLL | epistemic share |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in usable:
        rows = np.array(summary[name])
        print(
            f"| {name} | {rows[:, 0].mean():.2f} | {rows[:, 1].mean():.2f} | "
            f"{rows[:, 2].mean():.2f} | {np.median(rows[:, 3]):.3g} | "
            f"{np.nanmean(rows[:, 4]):.2f} |"
        )
    path = args.json or RESULTS / f"calibration_{args.design}_{args.targets}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {"args": {k: str(v) for k, v in vars(args).items()}, "surrogates": usable, "runs": runs}
        )
    )
    print(f"\nwrote {path} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
