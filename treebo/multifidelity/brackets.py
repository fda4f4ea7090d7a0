"""Hyperband's brackets: which budgets a configuration may be evaluated at, and how many.

With ``R = max_budget / min_budget`` and ``s_max = floor(log_eta R)``, the
rung budgets are ``max_budget * eta**-k`` for ``k = s_max, ..., 0``
(rounded to integers for integer budgets). Bracket ``s`` (``s = s_max, ...,
0``) starts ``n = ceil((s_max + 1) / (s + 1) * eta**s)`` configurations at
``max_budget * eta**-s`` and keeps ``floor(n * eta**-i)`` of them at its
``i``-th rung, whose budget is ``eta**i`` times the first. This is the
schedule of Li et al., "Hyperband: A Novel Bandit-Based Approach to
Hyperparameter Optimization", JMLR 18 (2018), Algorithm 1, written with the
budget in units of ``max_budget``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Bracket", "rung_budgets", "hyperband_brackets", "bracket_sequence"]

#: Slack for ``log_eta(R)`` computed in floating point: ``log(27) / log(3)`` is
#: 3.0000000000000004 or 2.9999999999999996 depending on rounding.
_LOG_SLACK = 1e-9


@dataclass(frozen=True)
class Bracket:
    """One bracket of Hyperband.

    Parameters
    ----------
    s : int
        Its index: the bracket starts ``s`` rungs below ``max_budget``.
    budgets : tuple of float or int
        The budget of each rung, lowest first; the last is ``max_budget``.
    sizes : tuple of int
        How many configurations each rung evaluates; ``sizes[0]`` new ones
        start at ``budgets[0]``, and ``sizes[i + 1]`` of the best at rung
        ``i`` are promoted to rung ``i + 1``.
    """

    s: int
    budgets: tuple
    sizes: tuple

    @property
    def cost(self) -> float:
        """The sum of the budgets this bracket spends when every rung is full."""
        return float(sum(b * n for b, n in zip(self.budgets, self.sizes)))


def _n_rungs(min_budget: float, max_budget: float, eta: float) -> int:
    return int(math.floor(math.log(max_budget / min_budget) / math.log(eta) + _LOG_SLACK))


def rung_budgets(min_budget: float, max_budget: float, eta: float, integer: bool = False) -> list:
    """Every rung budget, lowest first, ending with ``max_budget``.

    Parameters
    ----------
    min_budget, max_budget : float
        ``0 < min_budget <= max_budget``.
    eta : float
        The factor between consecutive rungs, ``> 1``.
    integer : bool, default False
        Round the budgets to the nearest integer (never below ``min_budget``).

    Returns
    -------
    list of float (or of int when ``integer``)
        ``s_max + 1`` budgets, ``max_budget * eta**-k`` for ``k = s_max, ..., 0``,
        distinct and increasing.
    """
    s_max = _n_rungs(min_budget, max_budget, eta)
    budgets = [max_budget * eta ** -(s_max - i) for i in range(s_max)] + [max_budget]
    if not integer:
        return [float(b) for b in budgets]
    rounded: list[int] = []
    for b in budgets:
        value = max(int(round(b)), int(math.ceil(min_budget)))
        if not rounded or value > rounded[-1]:
            rounded.append(value)
    if rounded[-1] != int(max_budget):
        rounded.append(int(max_budget))
    return rounded


def hyperband_brackets(
    min_budget: float, max_budget: float, eta: float, integer: bool = False
) -> list[Bracket]:
    """The brackets of one Hyperband iteration, the most exploratory first.

    Parameters
    ----------
    min_budget, max_budget, eta, integer
        As for :func:`rung_budgets`.

    Returns
    -------
    list of Bracket
        ``s_max + 1`` brackets, ``s = s_max`` down to 0.
    """
    budgets = rung_budgets(min_budget, max_budget, eta, integer)
    s_max = len(budgets) - 1
    brackets = []
    for s in range(s_max, -1, -1):
        n = int(math.ceil((s_max + 1) / (s + 1) * eta**s - _LOG_SLACK))
        sizes = tuple(max(int(math.floor(n * eta**-i + _LOG_SLACK)), 1) for i in range(s + 1))
        brackets.append(Bracket(s=s, budgets=tuple(budgets[s_max - s :]), sizes=sizes))
    return brackets


def bracket_sequence(brackets: list[Bracket], k: int) -> Bracket:
    """The ``k``-th bracket (from 0) of Hyperband iterations repeated without end."""
    return brackets[k % len(brackets)]
