"""Benchmark problems with several objectives or black-box constraints.

Each problem is called on a point and returns a dict of named metrics, as a
function given to ``minimize(..., objectives=..., constraints=...)`` does;
its ``objectives`` and ``constraints`` are those arguments. Problems with
several objectives carry the reference point of the hypervolume they are
judged by; constrained problems with one objective carry their constrained
optimum.

The functions are the published ones (sources in each class); the optima of
the constrained engineering problems were computed for the bounds used here
with SciPy's SLSQP from 2,000 Sobol starting points
(``python benchmarks/several_objectives.py --optima``), since published
values differ between variants of the bounds.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..space import Real, Space

__all__ = ["MetricProblem", "METRIC_PROBLEMS", "get_metric_problem"]


class MetricProblem:
    """A benchmark problem whose evaluation returns several named metrics.

    Parameters
    ----------
    name : str
    dimensions : list of dimensions
    objectives : dict
        Metric name -> ``"minimize"`` or ``"maximize"`` (``objectives=`` of
        :func:`~treebo.minimize`).
    constraints : list of str, optional
        ``constraints=`` of :func:`~treebo.minimize`.
    reference_point : list of float, optional
        For several objectives: the corner of the hypervolume, in the
        objectives' order and units (all minimized here).
    optimal_value : float, optional
        For one objective under constraints: the constrained optimum.
    """

    def __init__(
        self,
        name: str,
        dimensions: list,
        objectives: dict[str, str],
        constraints: list[str] | None = None,
        reference_point: list[float] | None = None,
        optimal_value: float | None = None,
    ):
        self.name = name
        self.space = Space(dimensions)
        self.objectives = objectives
        self.constraints = constraints
        self.reference_point = reference_point
        self.optimal_value = optimal_value

    def __call__(self, x: Any) -> dict[str, float]:
        self.space.encode([x])  # a clear ValueError for a point outside the space
        return self.evaluate(np.asarray(x, dtype=float))

    def evaluate(self, x: np.ndarray) -> dict[str, float]:
        """The metrics at a point of the space, as floats in the dimensions' order."""
        raise NotImplementedError


class ZDT(MetricProblem):
    """ZDT1, ZDT2 and ZDT3 (Zitzler, Deb & Thiele 2000) on [0, 1]^d, two objectives.

    ``f1 = x1``, ``g = 1 + 9 mean(x2..xd)``, ``f2 = g h(f1, g)`` with
    ``h = 1 - sqrt(f1/g)`` (ZDT1, a convex front), ``1 - (f1/g)^2`` (ZDT2,
    concave) or ``1 - sqrt(f1/g) - (f1/g) sin(10 pi f1)`` (ZDT3, five
    disconnected pieces). The front is at ``g = 1``. Reference point (1.1, 1.1).
    """

    def __init__(self, variant: int, dim: int = 6):
        if variant not in (1, 2, 3):
            raise ValueError(f"variant must be 1, 2 or 3, got {variant!r}")
        self.variant = variant
        super().__init__(
            f"zdt{variant}",
            [Real(0.0, 1.0, name=f"x{i + 1}") for i in range(dim)],
            {"f1": "minimize", "f2": "minimize"},
            reference_point=[1.1, 1.1],
        )

    def evaluate(self, x: np.ndarray) -> dict[str, float]:
        f1 = float(x[0])
        g = 1.0 + 9.0 * float(np.mean(x[1:]))
        ratio = f1 / g
        if self.variant == 1:
            h = 1.0 - math.sqrt(ratio)
        elif self.variant == 2:
            h = 1.0 - ratio**2
        else:
            h = 1.0 - math.sqrt(ratio) - ratio * math.sin(10.0 * math.pi * f1)
        return {"f1": f1, "f2": g * h}


class DTLZ2(MetricProblem):
    """DTLZ2 (Deb, Thiele, Laumanns & Zitzler 2002) on [0, 1]^d, three objectives.

    ``g = sum((x_i - 0.5)^2 for i >= 3)``; ``f1 = (1+g) cos(x1 pi/2)
    cos(x2 pi/2)``, ``f2 = (1+g) cos(x1 pi/2) sin(x2 pi/2)``,
    ``f3 = (1+g) sin(x1 pi/2)``. The front is the positive octant of the
    unit sphere. Reference point (1.1, 1.1, 1.1).
    """

    def __init__(self, dim: int = 6):
        super().__init__(
            "dtlz2",
            [Real(0.0, 1.0, name=f"x{i + 1}") for i in range(dim)],
            {"f1": "minimize", "f2": "minimize", "f3": "minimize"},
            reference_point=[1.1, 1.1, 1.1],
        )

    def evaluate(self, x: np.ndarray) -> dict[str, float]:
        g = float(np.sum((x[2:] - 0.5) ** 2))
        a, b = x[0] * math.pi / 2, x[1] * math.pi / 2
        return {
            "f1": (1 + g) * math.cos(a) * math.cos(b),
            "f2": (1 + g) * math.cos(a) * math.sin(b),
            "f3": (1 + g) * math.sin(a),
        }


class WeldedBeam(MetricProblem):
    """The welded beam design (Ragsdell & Phillips 1976, as in Coello 2000): cost under limits.

    Weld thickness h and length l, bar thickness t and breadth b (inches).
    Cost ``1.10471 h^2 l + 0.04811 t b (14 + l)``; limits on the weld's shear
    stress (13,600 psi), the bar's bending stress (30,000 psi), its
    buckling load (at least the 6,000 lb load), its deflection (0.25 in),
    and ``h <= b``.
    """

    def __init__(self) -> None:
        super().__init__(
            "welded_beam",
            [
                Real(0.1, 2.0, name="h"),
                Real(0.1, 10.0, name="l"),
                Real(0.1, 10.0, name="t"),
                Real(0.1, 2.0, name="b"),
            ],
            {"cost": "minimize"},
            constraints=[
                "shear <= 13600",
                "bending <= 30000",
                "buckling >= 6000",
                "deflection <= 0.25",
                "weld_over_bar <= 0",
            ],
            optimal_value=1.724852,
        )

    def evaluate(self, x: np.ndarray) -> dict[str, float]:
        h, weld, t, b = (float(v) for v in x)
        load, length, e, g = 6000.0, 14.0, 30e6, 12e6
        tau1 = load / (math.sqrt(2) * h * weld)
        moment = load * (length + weld / 2)
        r = math.sqrt(weld**2 / 4 + ((h + t) / 2) ** 2)
        j = 2 * (math.sqrt(2) * h * weld * (weld**2 / 12 + ((h + t) / 2) ** 2))
        tau2 = moment * r / j
        shear = math.sqrt(tau1**2 + 2 * tau1 * tau2 * weld / (2 * r) + tau2**2)
        buckling = (
            4.013
            * e
            * math.sqrt(t**2 * b**6 / 36)
            / length**2
            * (1 - t / (2 * length) * math.sqrt(e / (4 * g)))
        )
        return {
            "cost": 1.10471 * h**2 * weld + 0.04811 * t * b * (14.0 + weld),
            "shear": shear,
            "bending": 6 * load * length / (b * t**2),
            "buckling": buckling,
            "deflection": 4 * load * length**3 / (e * t**3 * b),
            "weld_over_bar": h - b,
        }


class PressureVessel(MetricProblem):
    """The pressure vessel design (Sandgren 1990), continuous: cost under limits.

    Shell and head thicknesses, inner radius and length (in inches). Cost of
    material, forming and welding ``0.6224 Ts R L + 1.7781 Th R^2 +
    3.1661 Ts^2 L + 19.84 Ts^2 R``; the shell at least 0.0193 R thick, the
    head at least 0.00954 R, the volume at least 1,296,000 cubic inches.
    """

    def __init__(self) -> None:
        super().__init__(
            "pressure_vessel",
            [
                Real(0.0625, 6.1875, name="shell"),
                Real(0.0625, 6.1875, name="head"),
                Real(10.0, 200.0, name="radius"),
                Real(10.0, 200.0, name="length"),
            ],
            {"cost": "minimize"},
            constraints=["shell_margin >= 0", "head_margin >= 0", "volume >= 1296000"],
            optimal_value=5885.332767,
        )

    def evaluate(self, x: np.ndarray) -> dict[str, float]:
        shell, head, radius, length = (float(v) for v in x)
        return {
            "cost": 0.6224 * shell * radius * length
            + 1.7781 * head * radius**2
            + 3.1661 * shell**2 * length
            + 19.84 * shell**2 * radius,
            "shell_margin": shell - 0.0193 * radius,
            "head_margin": head - 0.00954 * radius,
            "volume": math.pi * radius**2 * length + 4 / 3 * math.pi * radius**3,
        }


class ConstrainedBranin(MetricProblem):
    """The Branin function under a disk constraint (Gramacy et al. 2016's toy, its disk).

    Branin on [-5, 10] x [0, 15] (three global minima, 0.397887), restricted to
    the disk ``(x1 - 2.5)^2 + (x2 - 7.5)^2 <= 50``, which holds one of them.
    """

    def __init__(self) -> None:
        super().__init__(
            "branin_disk",
            [Real(-5.0, 10.0, name="x1"), Real(0.0, 15.0, name="x2")],
            {"value": "minimize"},
            constraints=["disk <= 50"],
            optimal_value=0.397887,
        )

    def evaluate(self, x: np.ndarray) -> dict[str, float]:
        x1, x2 = float(x[0]), float(x[1])
        b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
        value = (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10
        return {"value": value, "disk": (x1 - 2.5) ** 2 + (x2 - 7.5) ** 2}


class ForestSize(MetricProblem):
    """AutoML, two objectives: a random forest's cross-validated error against its size.

    scikit-learn's bundled breast cancer data (569 rows, 30 features);
    3-fold stratified cross-validation of a ``RandomForestClassifier`` with
    ``random_state=0``, so an evaluation is deterministic. Space: the number
    of trees (1-200), the depth (1-16), the share of features per split
    (0.05-1) and the least samples per leaf (1-20). Reference point
    (error 0.2, 200 trees).
    """

    def __init__(self) -> None:
        from ..space import Integer

        super().__init__(
            "forest_size",
            [
                Integer(1, 200, name="n_estimators"),
                Integer(1, 16, name="max_depth"),
                Real(0.05, 1.0, name="max_features"),
                Integer(1, 20, name="min_samples_leaf"),
            ],
            {"error": "minimize", "trees": "minimize"},
            reference_point=[0.2, 200.0],
        )
        self._data: tuple | None = None

    def __call__(self, x: Any) -> dict[str, float]:
        from sklearn.datasets import load_breast_cancer
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.model_selection import StratifiedKFold, cross_val_score

        self.space.encode([x])
        if self._data is None:
            self._data = load_breast_cancer(return_X_y=True)
        n_estimators, max_depth, max_features, min_samples_leaf = x
        model = RandomForestClassifier(
            n_estimators=int(n_estimators),
            max_depth=int(max_depth),
            max_features=float(max_features),
            min_samples_leaf=int(min_samples_leaf),
            random_state=0,
        )
        folds = StratifiedKFold(3, shuffle=True, random_state=0)
        accuracy = cross_val_score(model, *self._data, cv=folds).mean()
        return {"error": 1.0 - float(accuracy), "trees": float(n_estimators)}


def _factories() -> dict[str, Any]:
    return {
        "zdt1": lambda: ZDT(1),
        "zdt2": lambda: ZDT(2),
        "zdt3": lambda: ZDT(3),
        "dtlz2": DTLZ2,
        "welded_beam": WeldedBeam,
        "pressure_vessel": PressureVessel,
        "branin_disk": ConstrainedBranin,
        "forest_size": ForestSize,
    }


#: Registered names of the problems of this module.
METRIC_PROBLEMS = tuple(_factories())


def get_metric_problem(name: str) -> MetricProblem:
    """A problem of :data:`METRIC_PROBLEMS` by name.

    Raises
    ------
    ValueError
        Naming the problems there are.
    """
    factories = _factories()
    if name not in factories:
        raise ValueError(f"unknown problem {name!r}; the problems are {list(factories)}")
    return factories[name]()
