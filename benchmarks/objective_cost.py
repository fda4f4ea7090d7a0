"""Seconds per ask with several objectives and constraints, as ratios to one objective.

Tells ``--points`` random points of a 6-D space to a fresh ``Optimizer`` and
times its next ``ask()`` (the surrogate's fit, the constraints' models and
the candidates' scoring) in three studies on the same points:

* ``single``: one objective (the baseline);
* ``2 obj + 2 con``: two objectives and two constraints (``"c1 <= 0"``,
  ``"c2 <= 0"``), each constraint modelled by ``constraint_surrogate`` (the
  GP by default);
* ``3 obj``: three objectives.

Every repeat uses another random state, shared by the three studies, so the
same step kind (refinement, jump, exploration) is timed in each; the ratios
are of the medians over the repeats, measured in the same run.

    python benchmarks/objective_cost.py                      # N=200, 5 repeats
    python benchmarks/objective_cost.py --points 500 --constraint-surrogate bwo
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

from treebo import Optimizer, Real

STUDIES = {
    "single": ({"f1": "minimize"}, None),
    "2 obj + 2 con": ({"f1": "minimize", "f2": "minimize"}, ["c1 <= 0", "c2 <= 0"]),
    "3 obj": ({"f1": "minimize", "f2": "minimize", "f3": "minimize"}, None),
}


def metrics_of(X: np.ndarray) -> list[dict[str, float]]:
    """Smooth objectives and constraints of the points (rows of X in the unit cube)."""
    f1 = np.sum((X - 0.3) ** 2, axis=1)
    f2 = np.sum((X - 0.7) ** 2, axis=1) + 0.1 * np.sin(6 * X[:, 0])
    f3 = np.abs(X[:, 1] - X[:, 2]) + X[:, 3]
    c1 = X[:, 0] + X[:, 1] - 1.2
    c2 = 0.3 - np.linalg.norm(X[:, 2:4] - 0.5, axis=1)
    return [
        {"f1": a, "f2": b, "f3": c, "c1": d, "c2": e}
        for a, b, c, d, e in zip(f1, f2, f3, c1, c2, strict=True)
    ]


def ask_seconds(
    study: str, X: np.ndarray, told: list[dict[str, float]], seed: int, constraint_surrogate: str
) -> float:
    objectives, constraints = STUDIES[study]
    options = {"constraint_surrogate": constraint_surrogate} if constraints else {}
    opt = Optimizer(
        [Real(0.0, 1.0) for _ in range(X.shape[1])],
        objectives=objectives,
        constraints=constraints,
        random_state=seed,
        **options,
    )
    for x, values in zip(X, told, strict=True):
        opt.tell(list(x), values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the GP's convergence warnings
        start = time.perf_counter()
        opt.ask()
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=200, help="told points N")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--constraint-surrogate", default="gp")
    args = parser.parse_args()
    X = np.random.default_rng(0).random((args.points, 6))
    told = metrics_of(X)
    seconds: dict[str, list[float]] = {study: [] for study in STUDIES}
    for seed in range(args.repeats):
        for study in STUDIES:
            seconds[study].append(ask_seconds(study, X, told, seed, args.constraint_surrogate))
        print(
            f"repeat {seed}: " + ", ".join(f"{s} {seconds[s][-1]:.3f} s" for s in STUDIES),
            flush=True,
        )
    base = statistics.median(seconds["single"])
    print(f"N={args.points}, D=6, median of {args.repeats} asks:")
    for study in STUDIES:
        median = statistics.median(seconds[study])
        print(f"  {study:>14}: {median:.3f} s ({median / base:.2f}x single)")


if __name__ == "__main__":
    main()
