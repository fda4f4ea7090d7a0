"""Seconds per SMBO iteration, per surrogate, against a bare scikit-learn reference.

One iteration is one ``Optimizer.ask()`` with N points already told: fit the
surrogate on the transformed values, draw 50,000 Sobol candidates (plus the
local neighbours of the best points), snap and de-duplicate them, predict mean
and variance, rank by log-EI. Each step kind (``--steps``: refine, local, jump,
explore; see docs/design.md) is timed on its own, every ask of that kind, so
the slowest kind's row is the cost of the dearest ask. In the same run, for the same N and D, the
reference is a bare ``sklearn.ensemble.ExtraTreesRegressor(n_estimators=100)``
``.fit(X, y)`` + ``.predict(C)`` on 50,000 random points, which has none of
that work; the ``ratio`` column divides each surrogate's median by it, so the
figure survives a noisy machine.

    python benchmarks/iteration_time.py                      # the full grid
    python benchmarks/iteration_time.py --sizes 200 --dims 6 --surrogates bwo rf
    python benchmarks/iteration_time.py --sizes 200 --spaces binary mixed --surrogates bwo

``--spaces`` picks the search spaces: ``real`` (``--dims`` real dimensions,
the default), ``binary`` (the 24 bits of the Ising problem) and ``mixed``
(the AutoML problem's categorical, integer and real dimensions, 9 encoded
columns). Discrete spaces add snapping and de-duplication to the
iteration; the reference then has as many features as the space has
encoded columns.

Results are printed and written as JSON to
``benchmarks/results/iteration_time/iteration_time.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import sklearn
from sklearn.ensemble import ExtraTreesRegressor

import treebo
from treebo import Optimizer, Real, Space
from treebo.problems import get_problem
from treebo.surrogates import surrogate_class

N_CANDIDATES = 50_000


def _objective(X: np.ndarray) -> np.ndarray:
    # A smooth function with some structure in every coordinate.
    return np.sin(3 * X).sum(axis=1) + (X - 0.3).__pow__(2).sum(axis=1)


def reference_seconds(
    X: np.ndarray, y: np.ndarray, repeats: int, rng: np.random.Generator, n_jobs: int | None
) -> list[float]:
    times = []
    for _ in range(repeats):
        C = rng.random((N_CANDIDATES, X.shape[1]))
        start = time.perf_counter()
        ExtraTreesRegressor(n_estimators=100, n_jobs=n_jobs).fit(X, y).predict(C)
        times.append(time.perf_counter() - start)
    return times


def make_space(kind: str, dims: int) -> Space:
    """The search space of one ``--spaces`` entry."""
    if kind == "real":
        return Space([Real(0.0, 1.0) for _ in range(dims)])
    return get_problem({"binary": "ising", "mixed": "automl"}[kind]).space


class _OneKind:
    """A schedule whose every proposal is one step kind."""

    def __init__(self, kind: str):
        self.kind = kind

    def step_kind(self, n_model: int, smooth: bool) -> str:
        return self.kind


def surrogate_seconds(
    name: str,
    space: Space,
    X: np.ndarray,
    y: np.ndarray,
    repeats: int,
    params: dict,
    n_candidates: int = N_CANDIDATES,
    step: str = "refine",
) -> tuple[list[float], list[float], list[float]]:
    """Seconds of ``repeats`` asks of one step kind (total, fit, acquisition)."""
    opt = Optimizer(
        space, surrogate=name, surrogate_params=params, n_candidates=n_candidates, random_state=0
    )
    opt.pipeline.schedule = _OneKind(step)
    # Told points: the feasible points the encoded rows decode to (distinct
    # rows may decode to one point in a discrete space; all are told).
    for x, value in zip(space.decode(X), y):
        opt.tell(x, float(value))
    totals: list[float] = []
    fits: list[float] = []
    acqs: list[float] = []
    while len(totals) < repeats:
        start = time.perf_counter()
        x = opt.ask()
        seconds = time.perf_counter() - start
        trial = opt.trials[-1]
        totals.append(seconds)
        fits.append(trial.fit_time)
        acqs.append(trial.acq_time)
        opt.tell(x, float(_objective(space.encode([x]))[0]))
    return totals, fits, acqs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 200, 1000])
    parser.add_argument(
        "--dims", type=int, nargs="+", default=[2, 6, 25], help="dimensions of the real spaces"
    )
    parser.add_argument(
        "--spaces", nargs="+", choices=["real", "binary", "mixed"], default=["real"]
    )
    parser.add_argument(
        "--surrogates",
        nargs="+",
        default=[
            "rf",
            "ert",
            "bwo",
            "gp",
            "ngboost",
            "bart",
            "mondrian",
            "vsglb",
            "csglb",
            "cbsglb",
        ],
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--steps",
        nargs="+",
        default=["refine", "local", "jump", "explore"],
        choices=["refine", "local", "jump", "explore"],
        help="step kinds to time, each on its own (a smooth surrogate such as "
        "the GP takes only refinement steps)",
    )
    parser.add_argument(
        "--n-candidates",
        type=int,
        default=N_CANDIDATES,
        help="Sobol candidates of the optimizer (the default's 50,000 are joined "
        "by 7,000 local and jump neighbours; 43,000 makes 50,000 in all); "
        "the reference always predicts 50,000 points",
    )
    parser.add_argument(
        "--gp-repeats",
        type=int,
        default=2,
        help="repeats for the GP, whose fit dominates at large N",
    )
    parser.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        help="threads for the forests and for the reference (default: 1)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).parent / "results" / "iteration_time" / "iteration_time.json",
    )
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    rows = []
    header = (
        f"{'N':>5} {'D':>3} {'space':<7} {'surrogate':<10} {'step':<8} {'median s':>9} "
        f"{'fit s':>7} {'acq s':>7} {'ratio':>6}"
    )
    print(
        f"treebo {treebo.__version__}, scikit-learn {sklearn.__version__}, "
        f"{platform.processor() or platform.machine()}, n_jobs={args.n_jobs}"
    )
    print("ratio = surrogate iteration / bare ExtraTreesRegressor(100).fit+predict(50k), same run")
    print(header)
    cases = [
        (kind, d)
        for kind in args.spaces
        for d in (args.dims if kind == "real" else [make_space(kind, 0).n_columns])
    ]
    for n in args.sizes:
        for kind, d in cases:
            space = make_space(kind, d)
            X = space.snap(rng.random((n, d)))
            y = _objective(X)
            reference = statistics.median(reference_seconds(X, y, args.repeats, rng, args.n_jobs))
            print(
                f"{n:>5} {d:>3} {kind:<7} {'reference':<10} {'':<8} {reference:9.3f} {'':>7} "
                f"{'':>7} {1.0:6.2f}",
                flush=True,
            )
            rows.append(dict(N=n, D=d, space=kind, surrogate="reference", median=reference))
            for name in args.surrogates:
                threads = "n_jobs" in surrogate_class(name)().get_params()
                params = {"n_jobs": args.n_jobs} if threads and args.n_jobs is not None else {}
                repeats = args.gp_repeats if name == "gp" else args.repeats
                steps = ["refine"] if surrogate_class(name).smooth else args.steps
                for step in steps:
                    totals, fits, acqs = surrogate_seconds(
                        name, space, X, y, repeats, params, args.n_candidates, step
                    )
                    median = statistics.median(totals)
                    print(
                        f"{n:>5} {d:>3} {kind:<7} {name:<10} {step:<8} {median:9.3f} "
                        f"{statistics.median(fits):7.3f} {statistics.median(acqs):7.3f} "
                        f"{median / reference:6.2f}",
                        flush=True,
                    )
                    rows.append(
                        dict(
                            N=n,
                            D=d,
                            space=kind,
                            surrogate=name,
                            step=step,
                            median=median,
                            fit=statistics.median(fits),
                            acq=statistics.median(acqs),
                            ratio=median / reference,
                        )
                    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {"n_jobs": args.n_jobs, "n_candidates": args.n_candidates, "rows": rows}, indent=1
        )
    )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
