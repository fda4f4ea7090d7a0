"""Regret curves and time per iteration, in the layout of Kim & Choi (2022), Figures 2-5.

One figure per problem with every surrogate on it: on the left the log10 best
instantaneous regret (best-so-far regret, initial design included) against
the BO iteration, median over seeds with a band from the 25th to the 75th
percentile; on the right the seconds per iteration (surrogate fit plus
acquisition), same statistics, on a log axis. Problems whose optimum is
unknown (AutoML) show the best value found so far (the test error) instead of
the regret.

The paper plots the mean over repeats with "relative log error bars"
(``problems.md`` §6); treebo shows the median and quartiles instead, which
one diverging seed cannot drag, and the records keep every curve so any other
aggregate can be recomputed.

Needs matplotlib (``pip install 'treebo[plot]'``); it is imported only when a
figure is drawn.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_regret", "plot_results", "SURROGATE_COLORS"]

#: A fixed colour per surrogate, so a surrogate looks the same in every figure.
SURROGATE_COLORS = {
    "bwo": "#d62728",
    "rf": "#1f77b4",
    "ert": "#2ca02c",
    "gp": "#7f7f7f",
    "ngboost": "#9467bd",
    "bart": "#8c564b",
    "mondrian": "#e377c2",
    "vsglb": "#bcbd22",
    "csglb": "#17becf",
    "cbsglb": "#ff7f0e",
}
_FALLBACK = ["#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd"]


def _matplotlib() -> Any:
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError(
            "treebo's plots need matplotlib; install it with: pip install 'treebo[plot]'"
        ) from error
    return matplotlib, Figure


def _color(name: str, index: int) -> str:
    return SURROGATE_COLORS.get(name, _FALLBACK[index % len(_FALLBACK)])


def _check_band(band: Any) -> tuple[float, float]:
    try:
        low, high = (float(b) for b in band)
    except (TypeError, ValueError):
        low = high = math.nan
    if not 0.0 <= low <= high <= 100.0:
        raise ValueError(
            f"band must be two percentiles (low, high) with 0 <= low <= high <= 100, got {band!r}"
        )
    return low, high


def _band(values: np.ndarray, band: tuple[float, float]) -> tuple[np.ndarray, ...]:
    median = np.nanmedian(values, axis=0)
    low, high = np.nanpercentile(values, band, axis=0)
    return median, low, high


def plot_regret(
    results: Iterable[dict] | Sequence,
    problem: str,
    *,
    surrogates: Sequence[str] | None = None,
    n_calls: int | None = None,
    band: tuple[float, float] = (25.0, 75.0),
    axes: Sequence | None = None,
    title: str | None = None,
) -> Figure:
    """Draw the regret panel and the time-per-iteration panel of one problem.

    Parameters
    ----------
    results : iterable of dict or of :class:`~treebo.bench.Curves`
        Records from :func:`~treebo.bench.load_results` (or curves from
        :func:`~treebo.bench.regret_curves`).
    problem : str
        Problem name as recorded (e.g. ``"branin"``).
    surrogates : list of str, optional
        Which surrogates to draw, in this order; default: all recorded.
    n_calls : int, optional
        Cut the runs to this many evaluations.
    band : (float, float), default (25, 75)
        Percentiles over seeds that bound the shaded band.
    axes : pair of matplotlib Axes, optional
        Where to draw; by default a new figure with two panels side by side.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ..bench import Curves, regret_curves, surrogate_order

    band = _check_band(band)
    _, Figure = _matplotlib()
    items = list(results)
    curves = items if items and isinstance(items[0], Curves) else regret_curves(items, n_calls)
    curves = [c for c in curves if c.problem == problem]
    if not curves:
        raise ValueError(f"no results for problem {problem!r}")
    known = surrogate_order(c.surrogate for c in curves)
    if surrogates is None:
        surrogates = known
    missing = [s for s in surrogates if s not in known]
    if missing:
        raise ValueError(f"no results for surrogate(s) {missing} on {problem!r}; recorded: {known}")
    several_presets = len({c.preset for c in curves}) > 1
    if axes is None:
        fig = Figure(figsize=(10.0, 3.8), layout="constrained")
        ax_regret, ax_time = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.6, 1.0]})
    else:
        ax_regret, ax_time = axes
        fig = ax_regret.figure
    kind = curves[0].kind
    n_seeds = set()
    for index, name in enumerate(surrogates):
        for c in (c for c in curves if c.surrogate == name):
            color = _color(name, index)
            label = f"{name} ({c.preset})" if several_presets else name
            values = c.log10 if kind == "regret" else c.curves
            median, low, high = _band(values, band)
            steps = np.arange(values.shape[1])
            ax_regret.plot(steps, median, color=color, label=label, lw=1.6)
            ax_regret.fill_between(steps, low, high, color=color, alpha=0.18, lw=0)
            if c.iteration_time.size:
                t_median, t_low, t_high = _band(c.iteration_time, band)
                t_steps = np.arange(1, c.iteration_time.shape[1] + 1)
                ax_time.plot(t_steps, t_median, color=color, label=label, lw=1.2)
                ax_time.fill_between(t_steps, t_low, t_high, color=color, alpha=0.18, lw=0)
            n_seeds.add(len(c.seeds))
    seeds = "/".join(str(n) for n in sorted(n_seeds))
    ax_regret.set_xlabel("iteration")
    ax_regret.set_ylabel(
        "log10 best instantaneous regret" if kind == "regret" else "best value so far"
    )
    ax_regret.set_title(
        title or f"{problem}: median over {seeds} seeds, {band[0]:g}-{band[1]:g}% band", fontsize=10
    )
    ax_regret.grid(alpha=0.3)
    ax_regret.legend(fontsize=8, frameon=False)
    ax_time.set_yscale("log")
    ax_time.set_xlabel("iteration")
    ax_time.set_ylabel("fit + acquisition time (s)")
    ax_time.set_title("time per iteration", fontsize=10)
    ax_time.grid(alpha=0.3, which="both")
    return fig


def plot_results(
    path: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    problems: Sequence[str] | None = None,
    surrogates: Sequence[str] | None = None,
    n_calls: int | None = None,
    fmt: str = "png",
    dpi: int = 110,
) -> list[Path]:
    """Draw one figure per problem from a results directory and save them.

    Parameters
    ----------
    path : path
        A results directory (or ``.jsonl`` or ``.jsonl.gz`` file) written by
        :func:`~treebo.bench.run_grid`.
    out_dir : path
        Where the figures go, as ``<out_dir>/<problem>.<fmt>`` (created when
        missing). Each is written whole or not at all
        (:func:`treebo.files.write_atomically`): a figure that cannot be
        written leaves the previous file unchanged.
    problems, surrogates : list of str, optional
        Subsets to draw; default: everything recorded.
    n_calls : int, optional
        Cut the runs to this many evaluations.
    fmt : str, default "png"
        Any format matplotlib writes (``"png"``, ``"pdf"``, ``"svg"``).
    dpi : int, default 110

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    treebo.files.WriteError
        When a figure cannot be written; it names the file and the cause.
        The figures written before it stay.
    """
    from ..bench import load_results, regret_curves
    from ..files import write_atomically

    _matplotlib()
    curves = regret_curves(load_results(path), n_calls)
    recorded = list(dict.fromkeys(c.problem for c in curves))
    if problems is None:
        problems = recorded
    unknown = [p for p in problems if p not in recorded]
    if unknown:
        raise ValueError(
            f"no results for problem(s) {unknown} in {str(path)!r}; recorded: {recorded}"
        )
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for problem in problems:
        present = None
        if surrogates is not None:
            present = [
                s
                for s in surrogates
                if any(c.problem == problem and c.surrogate == s for c in curves)
            ]
            if not present:
                continue
        fig = plot_regret(curves, problem, surrogates=present)
        target = out_dir / f"{problem}.{fmt}"
        # A file object has no extension to take the format from: it is given.
        write_atomically(target, partial(fig.savefig, format=fmt, dpi=dpi))
        written.append(target)
    return written
