"""COCO's ``bbob`` suite: 24 noiseless functions, any dimension, numbered instances.

A problem is named ``bbob_f{function:02d}_d{dimension}_i{instance}``, e.g.
``bbob_f01_d10_i1`` (the sphere in 10 dimensions, instance 1). Names are
parsed rather than listed, so every function (1-24), dimension (2 or more)
and instance (1 or more) is available; :func:`bbob_problem_names` builds
selections, which ``treebo bench --problems bbob --functions ... --dims ...
--instances ...`` and ``benchmarks/peers/`` use.

The functions, their instances (shifted optimum ``x_opt``, optimal value
``f_opt``, rotations) and ``f_opt`` itself come from COCO's ``cocoex`` module
(``pip install 'treebo[bbob]'``, the ``coco-experiment`` distribution,
Hansen et al. 2021, "COCO: a platform for comparing continuous optimizers in
a black-box setting"); nothing of the functions is reimplemented here. The
search space is COCO's region of interest ``[-5, 5]^D``, which holds
``x_opt`` of every function and instance.

What is recorded of a run is the precision ``f_best - f_opt``; COCO's final
target is ``f_opt + 1e-8``, so precisions below ``1e-8`` are reported as
``1e-8`` (:attr:`BBOB.regret_floor`; log10 precision clipped at -8).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from ..space import Real
from .base import Problem

if TYPE_CHECKING:
    import cocoex

__all__ = [
    "BBOB",
    "BBOB_FUNCTIONS",
    "BBOB_PROTOCOL",
    "bbob_name",
    "parse_bbob_name",
    "bbob_problem_names",
    "bbob_budget",
    "bbob_summary",
    "is_bbob_name",
]

#: The 24 functions of the noiseless suite, by number (names as COCO's documentation gives them).
BBOB_FUNCTIONS: dict[int, str] = {
    1: "sphere",
    2: "separable ellipsoid",
    3: "Rastrigin",
    4: "Büche-Rastrigin",
    5: "linear slope",
    6: "attractive sector",
    7: "step ellipsoid",
    8: "Rosenbrock",
    9: "rotated Rosenbrock",
    10: "ellipsoid",
    11: "discus",
    12: "bent cigar",
    13: "sharp ridge",
    14: "different powers",
    15: "rotated Rastrigin",
    16: "Weierstrass",
    17: "Schaffers F7",
    18: "Schaffers F7, ill-conditioned",
    19: "Griewank-Rosenbrock F8F2",
    20: "Schwefel x sin(x)",
    21: "Gallagher, 101 peaks",
    22: "Gallagher, 21 peaks",
    23: "Katsuura",
    24: "Lunacek bi-Rastrigin",
}

#: The benchmark protocol: functions, dimensions, instances (the tuning set), seeds per
#: instance (one run per instance: the instances are the repetitions, as in COCO), the
#: budget per dimension, and the longer runs (dimension, functions, budget per dimension).
BBOB_PROTOCOL: dict = {
    "functions": tuple(range(1, 25)),
    "dims": (2, 5, 10),
    "instances": (1, 2, 3),
    "seeds": (0,),
    "budget_per_dim": 20,
    "long": {"dim": 10, "functions": (1, 2, 8, 10, 15, 21), "budget_per_dim": 50},
}

_PATTERN = re.compile(r"bbob_f(\d+)_d(\d+)_i(\d+)")
_INSTALL = "pip install 'treebo[bbob]'"


def bbob_name(function: int, dim: int, instance: int) -> str:
    """The problem name of a function, dimension and instance.

    Parameters
    ----------
    function : int
        1 to 24.
    dim : int
        At least 2.
    instance : int
        At least 1.

    Returns
    -------
    str
        ``bbob_f{function:02d}_d{dim}_i{instance}``, e.g. ``"bbob_f01_d10_i1"``.

    Raises
    ------
    ValueError
        For a value out of those ranges, naming the argument.
    """
    function, dim, instance = _check_triple(function, dim, instance)
    return f"bbob_f{function:02d}_d{dim}_i{instance}"


def _check_triple(function: object, dim: object, instance: object) -> tuple[int, int, int]:
    checked = []
    for value, name, low, high in (
        (function, "function", 1, 24),
        (dim, "dim", 2, None),
        (instance, "instance", 1, None),
    ):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, np.integer))
            or value < low
            or (high is not None and value > high)
        ):
            allowed = f"{low} to {high}" if high is not None else f"at least {low}"
            raise ValueError(f"bbob {name} must be an integer {allowed}, got {value!r}")
        checked.append(int(value))
    return checked[0], checked[1], checked[2]


def is_bbob_name(name: object) -> bool:
    """Whether ``name`` has the form of a bbob problem name (valid or not).

    Parameters
    ----------
    name : object
        Anything; a problem name to be a bbob one.

    Returns
    -------
    bool
    """
    return isinstance(name, str) and name.startswith("bbob_f")


def parse_bbob_name(name: str) -> tuple[int, int, int]:
    """``(function, dimension, instance)`` of a bbob problem name.

    Parameters
    ----------
    name : str
        ``bbob_f{function:02d}_d{dim}_i{instance}``, e.g. ``"bbob_f08_d5_i2"``.

    Returns
    -------
    tuple of int

    Raises
    ------
    ValueError
        For anything else, including a name that is not in this canonical
        form (``bbob_f1_d05_i01``): the message gives the canonical name when
        the numbers are valid.
    """
    match = _PATTERN.fullmatch(name) if isinstance(name, str) else None
    if match is None:
        raise ValueError(
            f"{name!r} is not a bbob problem name; expected "
            "bbob_f<function 01-24>_d<dimension>_i<instance>, e.g. bbob_f01_d10_i1"
        )
    function, dim, instance = (int(g) for g in match.groups())
    canonical = bbob_name(function, dim, instance)  # raises for numbers out of range
    if canonical != name:
        raise ValueError(f"{name!r} is not a canonical bbob problem name; use {canonical!r}")
    return function, dim, instance


def bbob_problem_names(
    functions: Iterable[int] | None = None,
    dims: Iterable[int] | None = None,
    instances: Iterable[int] | None = None,
) -> list[str]:
    """Problem names of a selection of functions, dimensions and instances.

    Parameters
    ----------
    functions, dims, instances : iterable of int, optional
        By default the protocol's (:data:`BBOB_PROTOCOL`): functions 1-24,
        dimensions 2, 5 and 10, instances 1-3.

    Returns
    -------
    list of str
        Dimension outermost, then function, then instance; each name once.

    Raises
    ------
    ValueError
        For an empty selection or a value out of range (naming it).
    """
    chosen = {}
    for key, given in (("functions", functions), ("dims", dims), ("instances", instances)):
        values = list(BBOB_PROTOCOL[key] if given is None else given)
        if not values:
            raise ValueError(f"bbob {key} must not be empty")
        chosen[key] = list(dict.fromkeys(values))
    return [
        bbob_name(f, d, i)
        for d in chosen["dims"]
        for f in chosen["functions"]
        for i in chosen["instances"]
    ]


def bbob_budget(name: str, per_dim: int = BBOB_PROTOCOL["budget_per_dim"]) -> int:
    """Evaluations per run of a bbob problem: ``per_dim`` times its dimension (20 D).

    Parameters
    ----------
    name : str
        A bbob problem name, ``bbob_f{function:02d}_d{dimension}_i{instance}``.
    per_dim : int, default 20
        Evaluations per dimension (:data:`BBOB_PROTOCOL`).

    Returns
    -------
    int
    """
    return int(per_dim) * parse_bbob_name(name)[1]


def bbob_summary(name: str) -> str:
    """A one-line description of a bbob problem, e.g. ``"bbob f01 sphere, 10-D, instance 1"``.

    Parameters
    ----------
    name : str
        A bbob problem name, ``bbob_f{function:02d}_d{dimension}_i{instance}``.

    Returns
    -------
    str
    """
    function, dim, instance = parse_bbob_name(name)
    return (
        f"COCO bbob f{function:02d} {BBOB_FUNCTIONS[function]}, {dim}-D, instance "
        f"{instance}, [-5, 5]^{dim}"
    )


def _bare_problem(function: int, dim: int, instance: int) -> cocoex.BareProblem:
    try:
        import cocoex
    except ImportError as error:
        raise ImportError(
            f"bbob problems need COCO's cocoex module (the coco-experiment "
            f"distribution); install it with: {_INSTALL}"
        ) from error
    return cocoex.BareProblem("bbob", function, dim, instance)


class BBOB(Problem):
    """One function, dimension and instance of COCO's ``bbob`` suite, on ``[-5, 5]^D``.

    Parameters
    ----------
    function : int
        1 to 24 (:data:`BBOB_FUNCTIONS`).
    dim : int
        At least 2.
    instance : int
        At least 1; the instance fixes ``x_opt``, ``f_opt`` and the rotations.

    Attributes
    ----------
    optimal_value : float
        ``f_opt``, as COCO gives it (``BareProblem.best_value()``).
    optimizers : list
        ``[x_opt]``, as COCO gives it (``BareProblem.best_parameter()``).
    regret_floor : float
        ``1e-8``: COCO's final target precision; precisions are reported no
        lower than this.
    record_points : bool
        False: a benchmark record keeps the values, not the points, as
        COCO's own logger records function values.
    params : dict
        ``{"function": f, "dim": d, "instance": i}``.

    Raises
    ------
    ValueError
        For a function, dimension or instance out of range.
    ImportError
        Without ``cocoex`` (the message names the extra).
    """

    regret_floor = 1e-8
    record_points = False

    def __init__(self, function: int, dim: int, instance: int):
        function, dim, instance = _check_triple(function, dim, instance)
        self._function = _bare_problem(function, dim, instance)
        # best_parameter() marks the object that reveals x_opt as tainted; a separate
        # one keeps the evaluated object clean.
        x_opt = [float(v) for v in _bare_problem(function, dim, instance).best_parameter()]
        super().__init__(
            bbob_name(function, dim, instance),
            [Real(-5.0, 5.0) for _ in range(dim)],
            optimal_value=float(self._function.best_value()),
            optimizers=[x_opt],
        )
        self.function, self.dim, self.instance = function, dim, instance
        self.params = {"function": function, "dim": dim, "instance": instance}

    def evaluate(self, x: np.ndarray) -> float:
        """COCO's value of the function at a point.

        Parameters
        ----------
        x : ndarray of shape (dim,)
            A feasible point.

        Returns
        -------
        float
        """
        return float(self._function(np.ascontiguousarray(x, dtype=float)))

    def values(self, x: np.ndarray) -> np.ndarray:
        """COCO's values at the rows of ``x``, one call per row.

        Parameters
        ----------
        x : array_like of shape (n, dim) or (dim,)
            Points, one per row; not checked against ``space``.

        Returns
        -------
        ndarray of shape (n,)
        """
        x = np.atleast_2d(np.asarray(x, dtype=float))
        return np.array([self.evaluate(row) for row in x])
