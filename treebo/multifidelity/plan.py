"""What a multi-fidelity run is: its budget dimension, its plan of brackets, its options."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..space import Integer, Real, Space

__all__ = ["RunPlan", "RunOptions", "BudgetedPoints", "augmented_space", "BUDGET_NAME"]

#: The name of the budget dimension in the stored (augmented) space; ``"budget_"``
#: when the configuration space already has a dimension called ``"budget"``.
BUDGET_NAME = "budget"


def augmented_space(
    space: Space, min_budget: Any, max_budget: Any, integer: bool
) -> tuple[Real | Integer, Space]:
    """The budget dimension, and the configuration space with it appended.

    Parameters
    ----------
    space : Space
        The configurations.
    min_budget, max_budget : int or float
    integer : bool
        Whether budgets are integers.

    Returns
    -------
    budget : Real or Integer
        The log-uniform budget dimension, named :data:`BUDGET_NAME` (with a
        ``"_"`` appended when the space has a dimension of that name).
    augmented : Space
        ``space`` with the budget as its last dimension.
    """
    name = BUDGET_NAME if BUDGET_NAME not in space.names else BUDGET_NAME + "_"
    budget = (
        Integer(int(min_budget), int(max_budget), "log-uniform", name=name)
        if integer
        else Real(float(min_budget), float(max_budget), "log-uniform", name=name)
    )
    if space.to_dict()["points_are_dicts"]:
        return budget, Space({**dict(zip(space.names, space.dimensions)), name: budget})
    return budget, Space([*space.dimensions, budget])


@dataclass(frozen=True)
class RunPlan:
    """What a multi-fidelity run spends, and how it chooses new configurations.

    Parameters
    ----------
    brackets : list of Bracket
        Hyperband's brackets, in the order they are opened.
    eta : float
        The share ``1 / eta`` a rung promotes.
    cap : float
        The most the run spends, in budget units (``total_budget * max_budget``).
    max_budget : int or float
    promotion : {"synchronous", "asynchronous"}
    seed : int
        Seeds the choice of every new configuration.
    random_fraction : float
        The share of new configurations drawn at random.
    """

    brackets: list
    eta: float
    cap: float
    max_budget: Any
    promotion: str
    seed: int
    random_fraction: float


@dataclass(frozen=True)
class RunOptions:
    """How a multi-fidelity run calls the objective and reports on it.

    Parameters
    ----------
    catch : tuple of exception classes or None
        As for :func:`~treebo.minimize`.
    callback : callable or None
        Called with the result after every evaluation; ``True`` stops the run.
    verbose : bool
        Print one line per evaluation.
    checkpoint_dir : Path or None
        Where the configurations' checkpoints are, for an objective that continues.
    """

    catch: tuple[type[BaseException], ...] | None = None
    callback: Callable | None = None
    verbose: bool = False
    checkpoint_dir: Path | None = None


class BudgetedPoints:
    """Points of the augmented space: a configuration with its budget, and back.

    Parameters
    ----------
    space : Space
        The configurations.
    budget_name : str
        The name of the budget dimension (the augmented space's last).
    """

    def __init__(self, space: Space, budget_name: str):
        self.space = space
        self.budget_name = budget_name
        self.dicts = space.to_dict()["points_are_dicts"]

    def split(self, x: Any) -> tuple[Any, Any]:
        """The configuration and the budget of augmented point ``x``.

        Parameters
        ----------
        x : list or dict
            A point of the augmented space.

        Returns
        -------
        config : list or dict
        budget : int or float
        """
        if self.dicts:
            config = {k: v for k, v in x.items() if k != self.budget_name}
            return config, x[self.budget_name]
        return list(x[:-1]), x[-1]

    def join(self, config: Any, budget: Any) -> Any:
        """The augmented point of ``config`` at ``budget``.

        Parameters
        ----------
        config : list or dict
            A point of the configuration space.
        budget : int or float

        Returns
        -------
        list or dict
        """
        return {**config, self.budget_name: budget} if self.dicts else [*config, budget]

    def key(self, config: Any) -> str:
        """A text that identifies ``config`` (its JSON form).

        Parameters
        ----------
        config : list or dict
            A point of the configuration space.

        Returns
        -------
        str
        """
        return json.dumps(self.space.point_to_json(config))
