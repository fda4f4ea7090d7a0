"""Figures of a study with several objectives: its Pareto front and its hypervolume.

Both take an :class:`~treebo.result.OptimizeResult` of a study made with
``objectives=`` or the path of its storage file, and return a
``matplotlib.figure.Figure`` (see :mod:`treebo.plotting.results` for how to
show, save and close one). Values are drawn in the objectives' own units
and directions. The numbers behind them are in :mod:`treebo.results.inspection`
(:func:`~treebo.results.front.objective_values`,
:func:`~treebo.results.front.hypervolume_curve`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..results.front import (
    hypervolume_curve,
    hypervolume_reference,
    objective_values,
)
from ..results.io import as_result
from .results import Source, pyplot

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_pareto_front", "plot_hypervolume"]

_FEASIBLE: dict[str, Any] = {"marker": "o", "s": 16, "color": "#1f77b4", "alpha": 0.45}
_INFEASIBLE: dict[str, Any] = {"marker": "x", "s": 16, "color": "#999999", "alpha": 0.8}
_FRONT: dict[str, Any] = {
    "marker": "o",
    "s": 34,
    "facecolor": "#d62728",
    "edgecolor": "k",
    "linewidth": 0.5,
}


def plot_pareto_front(result: Source, *, ax: Axes | None = None) -> Figure:
    """Every evaluation in objective space, and the Pareto front of the feasible ones.

    Two objectives: one panel, the front joined by a step line (the edge of
    the region it dominates). Three or more: a panel per pair of objectives
    (row ``i``, column ``j < i``: objective ``j`` across, ``i`` up), the
    front's points marked in each (a front in several dimensions has no
    staircase in a projection).

    Parameters
    ----------
    result : OptimizeResult or path
        Of a study with ``objectives`` (at least two).
    ax : matplotlib Axes, optional
        Draw here (two objectives only); by default on a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        In each panel, the scatter collections with gid ``"feasible"``
        (complete evaluations that meet every constraint), ``"infeasible"``
        (crosses) and ``"front"`` (the Pareto front); with two objectives,
        the line with gid ``"front-line"``. Failed evaluations are not drawn.
    """
    plt = pyplot()
    result = as_result(result)
    values, feasible = objective_values(result)
    names = list(result["objectives"])
    if len(names) < 2:
        raise ValueError(f"a Pareto front needs two objectives or more; the study has {names}")
    complete = np.all(np.isfinite(values), axis=1)
    front = np.asarray(result["pareto_index"], dtype=int)
    pairs = [(i, j) for i in range(1, len(names)) for j in range(i)]
    if len(names) == 2:
        if ax is None:
            fig = plt.figure(figsize=(6.0, 4.6), layout="constrained")
            ax = fig.add_subplot()
        else:
            fig = ax.figure
        panels = {(1, 0): ax}
    else:
        if ax is not None:
            raise ValueError("ax applies to two objectives; three or more need a grid of panels")
        n = len(names) - 1
        fig = plt.figure(figsize=(2.8 * n + 1.0, 2.6 * n + 0.6), layout="constrained")
        grid = np.atleast_2d(fig.subplots(n, n, squeeze=False))
        panels = {}
        for row in range(n):
            for col in range(n):
                if col > row:
                    grid[row, col].set_visible(False)
                else:
                    panels[(row + 1, col)] = grid[row, col]
    for i, j in pairs:
        panel = panels[(i, j)]
        shown = complete & feasible
        panel.scatter(
            values[shown, j], values[shown, i], gid="feasible", label="feasible", **_FEASIBLE
        )
        shown = complete & ~feasible
        if shown.any():
            panel.scatter(
                values[shown, j],
                values[shown, i],
                gid="infeasible",
                label="infeasible",
                **_INFEASIBLE,
            )
        if len(front):
            if len(names) == 2:
                # The front is sorted by the first objective: a step after each point.
                panel.plot(
                    values[front, j],
                    values[front, i],
                    drawstyle="steps-post",
                    color="#d62728",
                    lw=1.2,
                    gid="front-line",
                )
            panel.scatter(
                values[front, j],
                values[front, i],
                gid="front",
                label="Pareto front",
                zorder=3,
                **_FRONT,
            )
        panel.set_xlabel(_label(names[j], result["directions"][j]))
        panel.set_ylabel(_label(names[i], result["directions"][i]))
        panel.grid(alpha=0.3)
    first = panels[(1, 0)]
    first.legend(fontsize=8)
    fig.suptitle(
        f"Pareto front: {len(front)} of {int(feasible.sum())} feasible evaluations "
        f"({int(complete.sum())} complete)"
    )
    return fig


def plot_hypervolume(result: Source, *, reference: Any = None, ax: Axes | None = None) -> Figure:
    """The hypervolume of the feasible points found so far against the number of evaluations.

    Parameters
    ----------
    result : OptimizeResult or path
        Of a study with ``objectives`` and a feasible evaluation.
    reference : array-like of shape (n_objectives,), optional
        In the objectives' own units; by default
        :func:`~treebo.results.front.hypervolume_reference`: for each
        objective the worst feasible value plus 10% of the observed range,
        computed once from the whole study.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
        The line with gid ``"hypervolume"``: evaluation ``k`` (from 1) at
        x = k, as a step after each evaluation; the title gives the
        reference point.
    """
    plt = pyplot()
    result = as_result(result)
    if reference is None:
        reference = hypervolume_reference(result)
    reference = np.asarray(reference, dtype=float)
    curve = hypervolume_curve(result, reference)
    if ax is None:
        fig = plt.figure(figsize=(6.0, 4.0), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    ax.plot(np.arange(1, len(curve) + 1), curve, drawstyle="steps-post", lw=2, gid="hypervolume")
    ax.set_xlabel("evaluation")
    ax.set_ylabel("hypervolume of the feasible points so far")
    shown = ", ".join(f"{n} {v:.4g}" for n, v in zip(result["objectives"], reference))
    ax.set_title(f"hypervolume (reference point: {shown})", fontsize=10)
    ax.grid(alpha=0.3)
    return fig


def _label(name: str, direction: str) -> str:
    return f"{name} ({'lower' if direction == 'minimize' else 'higher'} is better)"
