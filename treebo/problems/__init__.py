"""Benchmark problems, by name.

>>> from treebo.problems import get_problem
>>> branin = get_problem("branin")
>>> round(branin([3.141592653589793, 2.275]), 6)
0.397887
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import Problem
from .continuous import Ackley, Bohachevsky, Branin, Hartmann6, Michalewicz, Rosenbrock

__all__ = ["Problem", "get_problem", "available_problems", "Ackley", "Bohachevsky", "Branin",
           "Hartmann6", "Michalewicz", "Rosenbrock"]

_REGISTRY: dict[str, Callable[..., Problem]] = {
    "ackley_4": lambda: Ackley(4),
    "bohachevsky": Bohachevsky,
    "branin": Branin,
    "hartmann6": Hartmann6,
    "michalewicz_2": lambda: Michalewicz(2),
    "rosenbrock_4": lambda: Rosenbrock(4),
}


def available_problems() -> list[str]:
    """Names accepted by :func:`get_problem`."""
    return list(_REGISTRY)


def get_problem(name: str, **params: Any) -> Problem:
    """Build a benchmark problem by name (see :func:`available_problems`)."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown problem {name!r}; choose one of {available_problems()}")
    return _REGISTRY[name](**params)
