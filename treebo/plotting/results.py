"""Figures of a study's result: convergence, partial dependence, evaluations, importance.

Every function takes an :class:`~treebo.result.OptimizeResult` or the path
of a storage file (read with :func:`treebo.results.io.read_result`) and returns a
``matplotlib.figure.Figure`` made with pyplot (so ``plt.show()`` shows it and
a notebook displays it); save it with ``fig.savefig("name.png")`` and close
it with ``plt.close(fig)`` when drawing many. The
partial dependence and the importance come from a refit of the study's
surrogate (see :mod:`treebo.results.inspection`, which computes the numbers without
matplotlib).

Axes: a real or integer dimension is drawn at its values (on a log axis for a
log-uniform prior), a categorical or binary one at the positions 0, 1, ...
labelled with its values.

Needs matplotlib (``pip install 'treebo[plot]'``); it is imported only when a
figure is drawn.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..result import OptimizeResult
from ..results.inspection import (
    Importance,
    dimension_grid,
    fit_surrogate,
    parameter_importance,
    partial_dependence,
    partial_dependence_2d,
)
from ..results.io import as_result
from ..space import Space

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_convergence", "plot_objective", "plot_evaluations", "plot_importance"]

Source = OptimizeResult | str | os.PathLike

#: Longest category label shown on an axis.
_LABEL_CHARS = 12

#: A dimension left out of a point (inactive in a conditional space).
_MISSING = object()


def pyplot() -> Any:
    """``matplotlib.pyplot``, or an ImportError naming the ``[plot]`` extra."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(
            "treebo's plots need matplotlib; install it with: pip install 'treebo[plot]'"
        ) from error
    return plt


def plot_convergence(
    results: Source | Sequence[Source] | Mapping[str, Source],
    *,
    labels: Sequence[str] | None = None,
    ax: Axes | None = None,
    true_minimum: float | None = None,
    yscale: str = "linear",
) -> Figure:
    """Best value found so far against the number of evaluations.

    Parameters
    ----------
    results : OptimizeResult or path, a list of them, or a dict label -> one
        Several results are drawn on the same axes, one line each.
    labels : list of str, optional
        One per result; by default the dict's keys, a storage file's name,
        or ``run 1``, ``run 2``, ... (no legend for a single result).
    ax : matplotlib Axes, optional
        Draw here; by default on a new figure.
    true_minimum : float, optional
        Draw the known minimum as a horizontal line.
    yscale : {"linear", "log", "symlog"}, default "linear"

    Returns
    -------
    matplotlib.figure.Figure
        The best-so-far lines are the axes' lines with gid
        ``"best-so-far"``, in the order of ``results``; evaluation ``k``
        (from 1) is at x = k. Failed evaluations keep the best value before
        them; the line starts at the first complete one. For a study with
        ``objectives``, the line follows the first objective in its own units
        and direction over the feasible evaluations only; the infeasible
        ones are grey crosses (gid ``"infeasible"``).
    """
    plt = pyplot()
    named = _named_sources(results, labels)
    if ax is None:
        fig = plt.figure(figsize=(6.0, 4.0), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    ylabel, marked = "best value so far", False
    for label, source in named:
        result = as_result(source)
        values = np.asarray(result.func_vals, dtype=float)
        feasible = np.isfinite(values)
        accumulate = np.fmin.accumulate
        if "objectives" in result:
            # The first objective in its own units; only feasible points count as best.
            values = _first_objective(result)
            feasible = np.asarray(result["feasible"], dtype=bool)
            if result["directions"][0] == "maximize":
                accumulate = np.fmax.accumulate
            what = "feasible " if result["constraints"] else ""
            ylabel = f"best {what}{result['objectives'][0]} so far"
        calls = np.arange(1, len(values) + 1)
        counted = np.where(feasible, values, np.nan)
        best = accumulate(counted) if len(values) else values
        (line,) = ax.plot(calls, best, drawstyle="steps-post", lw=2, label=label, gid="best-so-far")
        if len(named) == 1:
            ax.plot(
                calls[feasible],
                values[feasible],
                "o",
                ms=3,
                color=line.get_color(),
                alpha=0.35,
                label="evaluations",
                gid="evaluations",
            )
            infeasible = np.isfinite(values) & ~feasible
            if infeasible.any():
                marked = True
                ax.plot(
                    calls[infeasible],
                    values[infeasible],
                    "x",
                    ms=4,
                    color="#999999",
                    label="infeasible",
                    gid="infeasible",
                )
    if true_minimum is not None:
        ax.axhline(float(true_minimum), color="k", ls="--", lw=1, label="true minimum")
    ax.set_yscale(yscale)
    ax.set_xlabel("evaluation")
    ax.set_ylabel(ylabel)
    ax.set_title("convergence")
    ax.grid(alpha=0.3)
    if len(named) > 1 or true_minimum is not None or marked:
        ax.legend()
    return fig


def plot_objective(
    result: Source,
    *,
    dimensions: Sequence[str] | None = None,
    model: Any = None,
    n_points: int = 40,
    n_samples: int = 256,
    n_points_2d: int = 20,
    n_samples_2d: int = 128,
    random_state: int | None = None,
    show_points: bool = True,
) -> Figure:
    """The partial dependence of the objective, one dimension and every pair.

    On the diagonal, the partial dependence on each dimension
    (:func:`~treebo.results.inspection.partial_dependence`); below it, the partial
    dependence on each pair (:func:`~treebo.results.inspection.partial_dependence_2d`)
    as a colour map with the evaluated points (black) and the best point (red
    star); the red dashed lines mark the best point. All from one refit of
    the study's surrogate.

    Parameters
    ----------
    result : OptimizeResult or path
    dimensions : list of str, optional
        The dimensions to show, in this order; by default all.
    model : object with ``predict(X)``, optional
        A fitted model of the objective on encoded points; by default
        :func:`~treebo.results.inspection.fit_surrogate`.
    n_points, n_samples : int
        Grid points of a real dimension and Sobol samples of the others for
        the 1-D curves.
    n_points_2d, n_samples_2d : int
        The same for each pair.
    random_state : int, optional
        Seeds the refit and the samples; by default the study's seed.
    show_points : bool, default True
        Draw the evaluated points on the pair panels.

    Returns
    -------
    matplotlib.figure.Figure
        ``n x n`` axes for ``n`` dimensions (the ones above the diagonal
        hidden).
    """
    plt = pyplot()
    result = as_result(result)
    space = result.space
    indices = _dimension_indices(space, dimensions)
    model = model if model is not None else fit_surrogate(result, random_state=random_state)
    curves = {
        j: partial_dependence(
            result,
            j,
            model=model,
            n_points=n_points,
            n_samples=n_samples,
            random_state=random_state,
        )
        for j in indices
    }
    best = _point_positions(space, [result.x]) if result.x is not None else None
    evaluated = _point_positions(space, result.x_iters)

    def diagonal(ax: Any, i: int) -> None:
        _draw_curve(ax, space, i, curves[i])
        if best is not None and np.isfinite(best[0, i]):
            ax.axvline(best[0, i], color="r", ls="--", lw=1)

    def pair(ax: Any, i: int, j: int) -> Any:
        pd2 = partial_dependence_2d(
            result,
            j,
            i,
            model=model,
            n_points=n_points_2d,
            n_samples=n_samples_2d,
            random_state=random_state,
        )
        mesh = ax.pcolormesh(
            pd2.positions[0], pd2.positions[1], pd2.average.T, shading="nearest", cmap="viridis_r"
        )
        if show_points:
            ax.plot(evaluated[:, j], evaluated[:, i], "k.", ms=3, alpha=0.6)
        return mesh

    fig, axes, mesh = _matrix(plt, space, indices, diagonal, pair, best, "partial dependence")
    if mesh is not None:
        fig.colorbar(
            mesh, ax=axes[:, -1].tolist(), location="right", shrink=0.6, label="partial dependence"
        )
    fig.suptitle(
        "partial dependence of the objective (surrogate refit on "
        f"{int(np.isfinite(np.asarray(result.func_vals, dtype=float)).sum())} trials)"
    )
    return fig


def plot_evaluations(
    result: Source, *, dimensions: Sequence[str] | None = None, bins: int = 20
) -> Figure:
    """Where the evaluations went: a histogram per dimension and a scatter per pair.

    Parameters
    ----------
    result : OptimizeResult or path
    dimensions : list of str, optional
        The dimensions to show, in this order; by default all.
    bins : int, default 20
        Bins of a real dimension's histogram, or of an integer one with more
        values than that (an integer dimension with at most ``bins`` values,
        a categorical or a binary one has a bar per value).

    Returns
    -------
    matplotlib.figure.Figure
        ``n x n`` axes: histograms of every evaluated point (failed ones
        included) on the diagonal, the points of each pair below it,
        coloured by evaluation order (dark: early, light: late; a
        categorical or binary value is spread over +-0.15 around its
        position so that repeated points stay visible), the best point as a
        red star.
    """
    plt = pyplot()
    result = as_result(result)
    space = result.space
    indices = _dimension_indices(space, dimensions)
    positions = _point_positions(space, result.x_iters)
    order = np.arange(1, len(positions) + 1)
    best = _point_positions(space, [result.x]) if result.x is not None else None
    # Points of a discrete pair would hide each other: the scatter spreads them
    # a little around their value (the same spread on every call).
    spread = _jitter(space, len(positions))

    def diagonal(ax: Any, i: int) -> None:
        _draw_histogram(ax, space, i, positions[:, i], bins)

    def pair(ax: Any, i: int, j: int) -> Any:
        shown = np.isfinite(positions[:, i]) & np.isfinite(positions[:, j])
        return ax.scatter(
            positions[shown, j] + spread[shown, j],
            positions[shown, i] + spread[shown, i],
            c=order[shown],
            cmap="viridis",
            s=14,
            vmin=1,
            vmax=max(len(order), 2),
            gid="evaluations",
        )

    fig, axes, scatter = _matrix(plt, space, indices, diagonal, pair, best, "evaluations")
    if scatter is not None:
        from matplotlib.ticker import MaxNLocator

        bar = fig.colorbar(
            scatter,
            ax=axes[:, -1].tolist(),
            location="right",
            shrink=0.6,
            label="evaluation number",
        )
        bar.locator = MaxNLocator(integer=True)
        bar.update_ticks()
    fig.suptitle(f"evaluations ({len(positions)} points)")
    return fig


def plot_importance(
    result: Source | Importance,
    *,
    ax: Axes | None = None,
    model: Any = None,
    random_state: int | None = None,
) -> Figure:
    """Main-effect importance of each dimension as horizontal bars, largest on top.

    Parameters
    ----------
    result : OptimizeResult, path or Importance
        A result (the importance is computed with
        :func:`~treebo.results.inspection.parameter_importance`) or an importance
        already computed.
    ax : matplotlib Axes, optional
    model : object with ``predict(X)``, optional
        As for :func:`~treebo.results.inspection.parameter_importance`.
    random_state : int, optional

    Returns
    -------
    matplotlib.figure.Figure
        One bar per dimension, of length its importance (the shares sum
        to 1).
    """
    plt = pyplot()
    if not isinstance(result, Importance):
        result = parameter_importance(result, model=model, random_state=random_state)
    order = np.argsort(result.importance, kind="stable")
    if ax is None:
        fig = plt.figure(figsize=(6.0, 0.9 + 0.35 * len(order)), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    names = [result.names[k] for k in order]
    ax.barh(names, result.importance[order], color="#1f77b4")
    ax.set_xlabel("share of the main effects (variance of the partial dependence)")
    ax.set_xlim(0, 1)
    share = result.main_effects_share
    note = "" if not np.isfinite(share) else f"; main effects explain {share:.0%} of the variance"
    ax.set_title(f"parameter importance{note}", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return fig


# -- helpers -------------------------------------------------------------------------------
def _first_objective(result: OptimizeResult) -> np.ndarray:
    name = result["objectives"][0]
    return np.array([np.nan if m is None else m[name] for m in result["metrics"]], dtype=float)


def _matrix(
    plt: Any,
    space: Space,
    indices: list[int],
    diagonal: Any,
    pair: Any,
    best: np.ndarray | None,
    diagonal_label: str,
) -> tuple[Any, np.ndarray, Any]:
    """A lower-triangular grid of panels: ``diagonal(ax, i)`` on the diagonal (the
    first one's y axis labelled ``diagonal_label``), ``pair(ax, i, j)`` below it (row
    ``i``, column ``j``), the best point starred there.

    Returns the figure, its ``n x n`` axes and the last thing ``pair`` returned
    (what a colour bar is drawn for).
    """
    n = len(indices)
    fig = plt.figure(figsize=(2.6 * n + 1.2, 2.4 * n + 0.6), layout="constrained")
    axes = np.atleast_2d(fig.subplots(n, n, squeeze=False))
    mappable = None
    for row, i in enumerate(indices):
        for col, j in enumerate(indices):
            ax = axes[row, col]
            if col > row:
                ax.set_visible(False)
                continue
            if row == col:
                diagonal(ax, i)
                if row == 0:
                    ax.set_ylabel(diagonal_label)
            else:
                mappable = pair(ax, i, j)
                if best is not None:
                    ax.plot(best[0, j], best[0, i], "r*", ms=10)
                _set_axis(ax.xaxis, ax.set_xscale, space, j)
                _set_axis(ax.yaxis, ax.set_yscale, space, i)
                if col == 0:
                    ax.set_ylabel(space.names[i])
            if row == n - 1:
                ax.set_xlabel(space.names[j])
    return fig, axes, mappable


def _named_sources(results: Any, labels: Sequence[str] | None) -> list[tuple[str | None, Any]]:
    if isinstance(results, Mapping) and not isinstance(results, OptimizeResult):
        pairs: list[tuple[str | None, Any]] = [(str(k), v) for k, v in results.items()]
    else:
        if isinstance(results, (OptimizeResult, str, os.PathLike)):
            results = [results]
        results = list(results)
        pairs = [(_default_label(r, k, len(results)), r) for k, r in enumerate(results)]
    if not pairs:
        raise ValueError("results must hold at least one result")
    if labels is not None:
        labels = list(labels)
        if len(labels) != len(pairs):
            raise ValueError(f"labels has {len(labels)} entries for {len(pairs)} results")
        pairs = [(str(label), r) for label, (_, r) in zip(labels, pairs)]
    return pairs


def _default_label(source: Any, k: int, n: int) -> str | None:
    if isinstance(source, (str, os.PathLike)):
        return os.path.basename(os.fspath(source))
    return None if n == 1 else f"run {k + 1}"


def _dimension_indices(space: Space, dimensions: Sequence[str] | None) -> list[int]:
    if dimensions is None:
        return list(range(space.n_dims))
    if isinstance(dimensions, str):
        dimensions = [dimensions]
    unknown = [d for d in dimensions if d not in space.names]
    if unknown or not dimensions:
        raise ValueError(
            f"dimensions must be names of the space {space.names}, got {list(dimensions)!r}"
        )
    return [space.names.index(d) for d in dimensions]


def _point_positions(space: Space, points: Sequence[Any]) -> np.ndarray:
    """Plot coordinates of points, shape (n_points, n_dims); NaN where inactive."""
    out = np.full((len(points), space.n_dims), np.nan)
    if not len(points):
        return out
    for j, dim in enumerate(space.dimensions):
        name = space.names[j]
        column = [(p.get(name, _MISSING) if isinstance(p, dict) else p[j]) for p in points]
        present = np.array([v is not _MISSING for v in column])
        if not present.any():
            continue
        out[present, j] = [dim.to_number(v) for v in column if v is not _MISSING]
    return out


def _jitter(space: Space, n_points: int) -> np.ndarray:
    """Offsets of shape (n_points, n_dims): up to 0.15 for a categorical or binary
    dimension (a fifth of the distance between two values), 0 for the others."""
    rng = np.random.default_rng(0)
    labels = np.array([not d.is_numeric for d in space.dimensions])
    return rng.uniform(-0.15, 0.15, (n_points, space.n_dims)) * labels


def _draw_curve(ax: Any, space: Space, j: int, curve: Any) -> None:
    dim = space.dimensions[j]
    if not dim.is_numeric:
        ax.plot(curve.positions, curve.average, "o-", color="#1f77b4", gid="partial-dependence")
    else:
        ax.plot(
            curve.positions, curve.average, "-", color="#1f77b4", lw=2, gid="partial-dependence"
        )
    _set_axis(ax.xaxis, ax.set_xscale, space, j)
    ax.grid(alpha=0.3)


def _draw_histogram(ax: Any, space: Space, j: int, positions: np.ndarray, bins: int) -> None:
    dim = space.dimensions[j]
    shown = positions[np.isfinite(positions)]
    if not dim.is_numeric:
        width = int(dim.cardinality)
        counts = np.bincount(shown.astype(int), minlength=width)
        ax.bar(np.arange(width), counts, color="#1f77b4", gid="histogram")
    else:
        # A numeric dimension's encoded range [0, 1] decodes to its bounds.
        low, high = (float(v) for v in dim.decode_numbers(np.array([0.0, 1.0])))
        if dim.is_discrete and dim.cardinality <= bins:  # a bar per integer
            edges = np.arange(low - 0.5, high + 1.0)
        elif getattr(dim, "prior", "uniform") == "log-uniform":
            edges = np.geomspace(low, high, bins + 1)
        else:
            edges = np.linspace(low, high, bins + 1)
        ax.hist(shown, bins=edges, color="#1f77b4", gid="histogram")
    _set_axis(ax.xaxis, ax.set_xscale, space, j)


def _set_axis(axis: Any, set_scale: Any, space: Space, j: int) -> None:
    """Log scale for a log-uniform prior; a labelled tick per value of a categorical or
    binary dimension."""
    dim = space.dimensions[j]
    if not dim.is_numeric:
        _, values, positions = dimension_grid(dim, 2)
        axis.set_ticks(positions)
        axis.set_ticklabels([_short(v) for v in values])
    elif getattr(dim, "prior", "uniform") == "log-uniform":
        set_scale("log")


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1] + "…"
