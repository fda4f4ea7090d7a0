"""Which model of a black-box constraint finds the best feasible point: a forest or the GP.

Three 2-D problems minimize the squared distance to (1, 1) under one constraint
whose limit passes between the data and the unconstrained optimum: a linear
limit (a + b <= 1), a circle ((a - .5)^2 + (b - .5)^2 <= .16) and a box given
only as feasible / infeasible (a > .3 and b < .7, a cliff). For each value of
``constraint_surrogate`` the script prints the gap between the best feasible
value found and the problem's optimum, per seed and averaged, and the share of
feasible evaluations.

    python benchmarks/constraint_models.py [--seeds 6] [--calls 30] [--models gp bwo]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from treebo import Real, minimize

SPACE = [Real(0.0, 1.0), Real(0.0, 1.0)]
# Small candidate sets: the comparison is between constraint models, and these keep it quick.
SETTINGS = dict(n_candidates=500, n_local_candidates=200, n_jump_candidates=100)


def _cost(a: float, b: float) -> float:
    return (a - 1) ** 2 + (b - 1) ** 2


PROBLEMS = {
    # name: (metrics of a point, the constraint, the constrained optimum)
    "linear": (lambda a, b: {"cost": _cost(a, b), "g": a + b}, "g <= 1", 0.5),
    "circle": (
        lambda a, b: {"cost": _cost(a, b), "g": (a - 0.5) ** 2 + (b - 0.5) ** 2},
        "g <= 0.16",
        (math.sqrt(0.5) - 0.4) ** 2,
    ),
    "box": (
        lambda a, b: {"cost": _cost(a, b), "g": 0.0 if (a > 0.3 and b < 0.7) else 1.0},
        "g <= 0.5",
        0.09,
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--models", nargs="+", default=["gp", "bwo"])
    args = parser.parse_args()
    print(f"best feasible value - optimum after {args.calls} calls, seeds 0-{args.seeds - 1}")
    for name, (metrics, constraint, optimum) in PROBLEMS.items():
        for model in args.models:
            gaps, shares = [], []
            for seed in range(args.seeds):
                res = minimize(
                    lambda x, metrics=metrics: metrics(*x),
                    SPACE,
                    n_calls=args.calls,
                    objectives=["cost"],
                    constraints=[constraint],
                    constraint_surrogate=model,
                    random_state=seed,
                    **SETTINGS,
                )
                gaps.append(res.fun - optimum)
                shares.append(res.n_feasible / len(res.x_iters))
            print(
                f"{name:7s} {model:4s} mean gap {np.mean(gaps):.4f}  per seed "
                f"{np.round(gaps, 3).tolist()}  feasible {np.mean(shares):.0%}"
            )


if __name__ == "__main__":
    main()
