"""What the ``gp`` surrogate's fitting subset costs in predictive quality, on run-like data.

For each 10-D function (Levy, Ackley, Rosenbrock, Styblinski-Tang, from
``treebo.problems``) and each N, the training points are spread as a
converging optimization spreads them: 30% uniform in the unit cube, 30%,
25% and 15% Normal around the function's minimizer with standard deviations
0.2, 0.05 and 0.01 (clipped to the cube). Each GP setting is fitted on the
same points and scored by the mean negative log predictive density (NLPD,
lower is better) and the RMSE of its mean, on 1,000 uniform points and on
1,000 points around the minimizer (standard deviation 0.03): the region
where refinement happens. Settings:

- ``all``: ``max_fit_samples=None``, every L-BFGS-B start on all N points
  (scikit-learn's fit);
- ``subset``: the default subset of 200 random points, without the
  refinement on all points (5 iterations set to 0 for this experiment);
- ``default``: the defaults, the subset's optimum refined on all N points.

    OMP_NUM_THREADS=1 python benchmarks/gp_subset_quality.py              # N = 500, 1000
    OMP_NUM_THREADS=1 python benchmarks/gp_subset_quality.py --sizes 500  # the recorded run

Results are printed and written as JSON to
``benchmarks/results/gp_subset_quality/gp_subset_quality.json``. CPU seconds are those of the fit.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm

import treebo.surrogates.gp as gp_module
from treebo.problems import Ackley, Levy, Rosenbrock, StyblinskiTang

DIMS = 10
PROBLEMS = {
    "levy": Levy,
    "ackley": Ackley,
    "rosenbrock": Rosenbrock,
    "styblinski_tang": StyblinskiTang,
}
# (share of the points, standard deviation around the minimizer; None: uniform)
SPREAD = [(0.30, None), (0.30, 0.2), (0.25, 0.05), (0.15, 0.01)]


def run_like_points(n: int, center: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``n`` encoded points spread like a converging run's around ``center``."""
    parts = []
    for share, scale in SPREAD:
        count = int(round(share * n))
        if scale is None:
            parts.append(rng.random((count, DIMS)))
        else:
            parts.append(np.clip(center + scale * rng.standard_normal((count, DIMS)), 0.0, 1.0))
    return np.vstack(parts)[:n]


def values(problem, points: np.ndarray) -> np.ndarray:
    """The problem's values at encoded points."""
    return np.array([problem(x) for x in problem.space.decode(points)])


def scores(model, X: np.ndarray, y: np.ndarray) -> dict:
    p = model.predict_dist(X)
    return {
        "nlpd": float(-norm.logpdf(y, p.mean, np.sqrt(p.variance)).mean()),
        "rmse": float(np.sqrt(np.mean((p.mean - y) ** 2))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 1000])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).parent / "results" / "gp_subset_quality" / "gp_subset_quality.json",
    )
    args = parser.parse_args()
    refine = gp_module._REFINE_ITERATIONS
    settings = {
        "all": ({"max_fit_samples": None}, refine),
        "subset": ({}, 0),
        "default": ({}, refine),
    }
    rows = []
    print(
        f"{'problem':<16} {'N':>5} {'setting':<8} {'fit cpu s':>9} {'NLPD unif':>9} "
        f"{'RMSE unif':>9} {'NLPD near':>9} {'RMSE near':>9}"
    )
    for n in args.sizes:
        for name, problem_class in PROBLEMS.items():
            problem = problem_class(dim=DIMS)
            center = problem.space.encode([problem.optimizers[0]])[0]
            rng = np.random.default_rng(1)
            X = run_like_points(n, center, rng)
            uniform = rng.random((1000, DIMS))
            near = np.clip(center + 0.03 * rng.standard_normal((1000, DIMS)), 0.0, 1.0)

            y, y_uniform, y_near = (values(problem, points) for points in (X, uniform, near))
            for setting, (params, iterations) in settings.items():
                # The refinement's iteration count is a module constant, not a
                # parameter; this experiment sets it to 0 for "subset".
                gp_module._REFINE_ITERATIONS = iterations
                start = time.process_time()
                model = gp_module.GaussianProcessSurrogate(random_state=0, **params).fit(X, y)
                seconds = time.process_time() - start
                gp_module._REFINE_ITERATIONS = refine
                row = dict(
                    problem=name,
                    N=n,
                    D=DIMS,
                    setting=setting,
                    fit_cpu=seconds,
                    uniform=scores(model, uniform, y_uniform),
                    near=scores(model, near, y_near),
                )
                rows.append(row)
                print(
                    f"{name:<16} {n:>5} {setting:<8} {seconds:9.2f} "
                    f"{row['uniform']['nlpd']:9.3f} {row['uniform']['rmse']:9.4g} "
                    f"{row['near']['nlpd']:9.3f} {row['near']['rmse']:9.4g}",
                    flush=True,
                )
                # Written after every fit, so that an interrupted run keeps what it measured.
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text(json.dumps({"rows": rows}, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
