"""Does epistemic variance find the region without data? ROC-AUC, hole vs training region.

Two 2-D data sets, each with a heart-shaped region left empty (after
Malinin et al. 2021, §4 and Fig. 2):

``heart``
    The paper's own set-up: two categorical features with 9 values each
    (81 cells, one-hot encoded by :class:`treebo.Space`, 18 columns); the
    cells whose centres lie inside a heart have no data, every other cell has
    ``--per-cell`` points with mean ``a(cell) ~ U(0, 1)`` and noise variance
    ``b(cell) ~ U(0.02, 0.12)``. Scored: the 34 empty cells against the 47
    training cells.
``continuous``
    ``--n`` uniform points of the unit square outside a heart of width 0.5,
    ``y = sin(2 pi x1) cos(2 pi x2) + (0.05 + 0.45 x1) * noise``. Scored:
    2,000 uniform points inside the heart against 2,000 fresh points outside.

For every surrogate and seed the script fits on the training points and
reports the ROC-AUC of the epistemic variance for telling the two groups
apart (1 = every hole point more uncertain than every training-region point;
0.5 = no better than chance), then the mean and standard deviation over the
seeds.

    python benchmarks/knowledge_uncertainty_auc.py                  # 10 seeds, all five
    python benchmarks/knowledge_uncertainty_auc.py --seeds 3 --surrogates vsglb csglb

Results are printed and written as JSON to
``benchmarks/results/knowledge_uncertainty_auc/knowledge_uncertainty_auc.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from treebo import Categorical, Space
from treebo.surrogates import make_surrogate

SURROGATES = ["vsglb", "csglb", "cbsglb", "bwo", "rf"]


def in_heart(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Inside the curve ``(u^2 + v^2 - 1)^3 = u^2 v^3`` (heart of half-width ~1.14)."""
    return (u * u + v * v - 1.0) ** 3 - u * u * v**3 < 0.0


def heart_cells() -> np.ndarray:
    """(9, 9) boolean grid: True for the cells without data."""
    centres = (np.arange(9) + 0.5) / 9
    u, v = np.meshgrid((centres - 0.5) / 0.35, (centres - 0.45) / 0.35, indexing="ij")
    return in_heart(u, v)


def heart_data(seed: int, per_cell: int) -> tuple[np.ndarray, ...]:
    """Categorical heart: (X, y, X_hole, X_region), one-hot encoded."""
    rng = np.random.default_rng(seed)
    space = Space([Categorical(range(9)), Categorical(range(9))])
    mean, noise_var = rng.random((9, 9)), rng.uniform(0.02, 0.12, (9, 9))
    empty = heart_cells()
    train_cells, hole_cells = np.argwhere(~empty), np.argwhere(empty)
    cells = np.repeat(train_cells, per_cell, axis=0)
    y = mean[cells[:, 0], cells[:, 1]] + np.sqrt(
        noise_var[cells[:, 0], cells[:, 1]]
    ) * rng.standard_normal(len(cells))
    return (
        space.encode(cells.tolist()),
        y,
        space.encode(hole_cells.tolist()),
        space.encode(train_cells.tolist()),
    )


def continuous_data(seed: int, n: int, n_test: int = 2000) -> tuple[np.ndarray, ...]:
    """Continuous heart: (X, y, X_hole, X_region)."""
    rng = np.random.default_rng(seed)

    def sample(count: int, inside: bool) -> np.ndarray:
        points = np.empty((0, 2))
        while len(points) < count:
            P = rng.random((4 * count, 2))
            keep = in_heart((P[:, 0] - 0.5) / 0.22, (P[:, 1] - 0.45) / 0.22) == inside
            points = np.vstack([points, P[keep]])
        return points[:count]

    X = sample(n, False)
    y = np.sin(2 * np.pi * X[:, 0]) * np.cos(2 * np.pi * X[:, 1]) + (
        0.05 + 0.45 * X[:, 0]
    ) * rng.standard_normal(n)
    return X, y, sample(n_test, True), sample(n_test, False)


def hole_auc(name: str, data: tuple[np.ndarray, ...], seed: int) -> float:
    X, y, hole, region = data
    model = make_surrogate(name, random_state=seed).fit(X, y)
    scores = np.concatenate(
        [model.predict_dist(hole).epistemic, model.predict_dist(region).epistemic]
    )
    labels = np.r_[np.ones(len(hole)), np.zeros(len(region))]
    return float(roc_auc_score(labels, scores))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--surrogates", nargs="+", default=SURROGATES)
    parser.add_argument(
        "--per-cell", type=int, default=10, help="training points per cell of the categorical heart"
    )
    parser.add_argument(
        "--n", type=int, default=300, help="training points of the continuous heart"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).parent
        / "results"
        / "knowledge_uncertainty_auc"
        / "knowledge_uncertainty_auc.json",
    )
    args = parser.parse_args()

    sets = {
        "heart": lambda s: heart_data(s, args.per_cell),
        "continuous": lambda s: continuous_data(s, args.n),
    }
    results: dict = {"seeds": args.seeds, "per_cell": args.per_cell, "n": args.n, "rows": []}
    print(
        f"ROC-AUC of epistemic variance, hole vs training region; {args.seeds} seeds (mean +- sd)"
    )
    print(f"{'surrogate':<10} {'heart':>15} {'continuous':>15} {'s/fit':>7}")
    for name in args.surrogates:
        row: dict = {"surrogate": name}
        start, fits = time.perf_counter(), 0
        for set_name, make in sets.items():
            aucs = [hole_auc(name, make(seed), seed) for seed in range(args.seeds)]
            fits += len(aucs)
            row[set_name] = aucs
        seconds = (time.perf_counter() - start) / fits
        cells = [f"{statistics.mean(row[s]):.3f} +- {statistics.pstdev(row[s]):.3f}" for s in sets]
        print(f"{name:<10} {cells[0]:>15} {cells[1]:>15} {seconds:7.2f}", flush=True)
        results["rows"].append(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
