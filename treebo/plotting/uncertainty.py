"""One-dimensional pictures of predictive uncertainty (Kim & Choi 2022, Figures 1, 6-8).

Each panel shows a surrogate fitted on a few noisy observations of a known
function: the function, the predictive mean, the band mean +- 1.96 standard
deviations, and the observations. A good surrogate for Bayesian optimization
is narrow at the observations and wide between and beyond them, like the GP.

>>> from treebo.plotting import plot_uncertainty_1d   # doctest: +SKIP
>>> fig = plot_uncertainty_1d("few")                   # doctest: +SKIP
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..datasets import Example1D, make_1d_example
from ..surrogates import Surrogate, available_surrogates, make_surrogate
from ..surrogates.base import Prediction

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "plot_uncertainty_1d",
    "plot_bwo_ablation",
    "plot_prediction_1d",
    "bwo_ablation_surrogates",
    "fit_surrogates_1d",
]

#: Half-width of the plotted band in standard deviations (95% of a Normal).
BAND = 1.96

# Panel titles for the registered names (others are shown as they are).
_TITLES = {
    "gp": "GP",
    "rf": "RF",
    "ert": "ERT",
    "bwo": "BwO forest",
    "bart": "BART",
    "mondrian": "Mondrian forest",
    "ngboost": "NGBoost",
    "vsglb": "vSGLB",
    "csglb": "cSGLB",
    "cbsglb": "cbSGLB",
}


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(
            "treebo's plotting needs matplotlib; install it with: pip install 'treebo[plot]'"
        ) from error
    return plt


def _as_example(example: str | Example1D) -> Example1D:
    if isinstance(example, Example1D):
        return example
    if isinstance(example, str):
        return make_1d_example(example)
    raise ValueError(
        f"example must be a name ('few', 'many', 'cubic') or an Example1D, got "
        f"{type(example).__name__}"
    )


def bwo_ablation_surrogates(
    random_state: Any = 42, n_estimators: int = 100
) -> dict[str, Surrogate]:
    """The four forests of the paper's Figure 6, built from treebo's forest classes.

    ``B``: bagging, best splits (a random forest). ``B+O``: best splits on
    oversampled bootstraps of 4N. ``R+B``: random split locations on ordinary
    bootstraps of N. ``R+B+O``: random splits on bootstraps of 4N, the BwO
    forest. Every tree uses ``max_features="sqrt"`` (all of one feature in 1-D).

    Parameters
    ----------
    random_state : int, Generator or None, default 42
    n_estimators : int, default 100

    Returns
    -------
    dict of str to Surrogate
        Unfitted surrogates, keyed ``"B"``, ``"B+O"``, ``"R+B"``, ``"R+B+O"``.
    """
    from ..surrogates.forest import (
        BwOForestSurrogate,
        ExtraTreesSurrogate,
        RandomForestSurrogate,
    )

    common = dict(n_estimators=n_estimators, random_state=random_state)
    return {
        "B": RandomForestSurrogate(bootstrap=True, **common),
        "B+O": RandomForestSurrogate(bootstrap=True, oversampling=4.0, **common),
        "R+B": ExtraTreesSurrogate(bootstrap=True, **common),
        "R+B+O": BwOForestSurrogate(oversampling=4.0, **common),
    }


def fit_surrogates_1d(
    example: str | Example1D = "few",
    surrogates: Sequence[str] | Mapping[str, Surrogate] | None = None,
    *,
    random_state: Any = 42,
    surrogate_params: Mapping[str, dict] | None = None,
) -> tuple[Example1D, dict[str, Prediction], dict[str, str]]:
    """Fit surrogates on a 1-D example and predict on its grid.

    Parameters
    ----------
    example : {"few", "many", "cubic"} or Example1D, default "few"
    surrogates : list of names, or dict of label to unfitted Surrogate, optional
        Default: the GP followed by every other registered surrogate.
    random_state : int, Generator or None, default 42
        Passed to every surrogate built by name.
    surrogate_params : dict of name to dict, optional
        Extra constructor parameters per name, e.g. ``{"bwo": {"n_estimators": 50}}``.

    Returns
    -------
    example : Example1D
    predictions : dict of label to Prediction
        On ``example.X_test``, in the order asked for.
    skipped : dict of name to str
        Surrogates that could not be built because an optional dependency is
        missing, with the reason.
    """
    example = _as_example(example)
    surrogate_params = dict(surrogate_params or {})
    if surrogates is None:
        names = available_surrogates()
        surrogates = ["gp"] + [n for n in names if n != "gp"] if "gp" in names else names
    if isinstance(surrogates, Mapping):
        models = dict(surrogates)
        skipped: dict[str, str] = {}
    else:
        if isinstance(surrogates, str):
            raise ValueError(
                "surrogates must be a list of names or a dict of label to "
                f"surrogate, got the string {surrogates!r}"
            )
        models, skipped = {}, {}
        for name in surrogates:
            try:
                models[name] = make_surrogate(
                    name, **_with_seed(name, random_state, surrogate_params.get(name))
                )
            except ImportError as error:
                skipped[name] = str(error)
    for name, reason in skipped.items():
        warnings.warn(f"skipping surrogate {name!r}: {reason}", stacklevel=2)
    predictions = {label: example.fit_predict(model) for label, model in models.items()}
    return example, predictions, skipped


def _with_seed(name: str, random_state: Any, params: dict | None) -> dict:
    from ..surrogates import surrogate_class

    params = dict(params or {})
    cls = surrogate_class(name)
    if "random_state" in cls().get_params() and "random_state" not in params:
        params["random_state"] = random_state
    return params


def plot_prediction_1d(
    ax: Axes,
    example: Example1D,
    prediction: Prediction,
    *,
    title: str | None = None,
    band: float = BAND,
    legend: bool = False,
) -> Axes:
    """Draw one panel: function, predictive mean, mean +- band * std, observations.

    Parameters
    ----------
    ax : matplotlib Axes
    example : Example1D
    prediction : Prediction
        On ``example.X_test``.
    title : str, optional
    band : float, default 1.96
        Half-width of the shaded band in standard deviations.
    legend : bool, default False

    Returns
    -------
    matplotlib Axes
        ``ax``, with three lines (function, mean, observations) and one band.
    """
    if len(prediction) != len(example.X_test):
        raise ValueError(
            f"prediction has {len(prediction)} points but the example's grid has "
            f"{len(example.X_test)}"
        )
    x = example.X_test[:, 0]
    ax.plot(x, example.y_test, color="tab:blue", linewidth=1.5, label="function")
    ax.plot(x, prediction.mean, color="tab:orange", linewidth=1.5, label="mean")
    ax.fill_between(
        x,
        prediction.mean - band * prediction.std,
        prediction.mean + band * prediction.std,
        color="tab:orange",
        alpha=0.25,
        linewidth=0,
        label=f"mean ± {band:g} sd",
    )
    ax.plot(
        example.X_train[:, 0],
        example.y_train,
        "x",
        color="tab:green",
        markersize=7,
        markeredgewidth=2,
        linestyle="none",
        label="observations",
    )
    ax.set_xlim(x[0], x[-1])
    values = np.concatenate([example.y_test, example.y_train])
    low, high = float(values.min()), float(values.max())
    margin = 0.6 * (high - low)
    # Keep the function readable when a band explodes; what leaves the frame is off the scale.
    ax.set_ylim(low - margin, high + margin)
    if title is not None:
        ax.set_title(title)
    if legend:
        ax.legend(loc="lower left", fontsize="small")
    ax.grid(alpha=0.3)
    return ax


def _grid_figure(
    n_panels: int, ncols: int, panel_size: tuple[float, float]
) -> tuple[Figure, np.ndarray]:
    plt = _pyplot()
    if isinstance(ncols, bool) or not isinstance(ncols, int) or ncols < 1:
        raise ValueError(f"ncols must be a positive integer, got {ncols!r}")
    ncols = min(ncols, n_panels)
    nrows = math.ceil(n_panels / ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(panel_size[0] * ncols, panel_size[1] * nrows),
        squeeze=False,
        sharex=True,
        sharey=True,
    )
    axes = axes.ravel()
    for ax in axes[n_panels:]:
        ax.set_visible(False)
    return fig, axes[:n_panels]


def _finish(fig: Figure, axes: np.ndarray, title: str) -> None:
    """Title, one legend for all panels below them, tight layout."""
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.suptitle(title)
    # Leave about 0.35 inch at the bottom for the legend.
    fig.tight_layout(rect=(0.0, 0.35 / fig.get_figheight(), 1.0, 1.0))


def plot_uncertainty_1d(
    example: str | Example1D = "few",
    surrogates: Sequence[str] | Mapping[str, Surrogate] | None = None,
    *,
    random_state: Any = 42,
    surrogate_params: Mapping[str, dict] | None = None,
    ncols: int = 4,
    panel_size: tuple[float, float] = (3.2, 2.6),
) -> Figure:
    """The paper's Figure 1 (or 7, 8): one panel per surrogate, the GP first.

    Parameters
    ----------
    example : {"few", "many", "cubic"} or Example1D, default "few"
        ``few`` is Figure 1 (sine, 5 points), ``many`` Figure 7 (sine, 50
        points), ``cubic`` Figure 8 (x^3, 10 points).
    surrogates : list of names, or dict of label to unfitted Surrogate, optional
        Default: the GP and every other registered surrogate. A surrogate
        whose optional dependency is missing is skipped with a warning.
    random_state : int, Generator or None, default 42
    surrogate_params : dict of name to dict, optional
    ncols : int, default 4
    panel_size : (float, float), default (3.2, 2.6)
        Inches per panel.

    Returns
    -------
    matplotlib.figure.Figure
        One visible Axes per fitted surrogate, titled with its name.
    """
    _pyplot()  # fail before fitting anything when matplotlib is missing
    example, predictions, _ = fit_surrogates_1d(
        example, surrogates, random_state=random_state, surrogate_params=surrogate_params
    )
    if not predictions:
        raise ValueError("no surrogate could be fitted")
    fig, axes = _grid_figure(len(predictions), ncols, panel_size)
    for ax, (label, prediction) in zip(axes, predictions.items()):
        plot_prediction_1d(ax, example, prediction, title=_TITLES.get(label, label))
    _finish(fig, axes, f"{example.name}: {len(example.X_train)} noisy points")
    return fig


def plot_bwo_ablation(
    example: str | Example1D = "few",
    *,
    random_state: Any = 42,
    n_estimators: int = 100,
    ncols: int = 4,
    panel_size: tuple[float, float] = (3.2, 2.6),
) -> Figure:
    """The paper's Figure 6: which ingredient of BwO does what.

    Four forests on the same data: bagging only (B, a random forest), bagging
    with oversampling (B+O), random split locations with bagging (R+B), and
    all three (R+B+O, the BwO forest); see :func:`bwo_ablation_surrogates`.

    Parameters
    ----------
    example : {"few", "many", "cubic"} or Example1D, default "few"
    random_state : int, Generator or None, default 42
    n_estimators : int, default 100
    ncols : int, default 4
    panel_size : (float, float), default (3.2, 2.6)

    Returns
    -------
    matplotlib.figure.Figure
        Four visible Axes, titled ``B``, ``B+O``, ``R+B``, ``R+B+O``.
    """
    _pyplot()
    models = bwo_ablation_surrogates(random_state, n_estimators)
    example, predictions, _ = fit_surrogates_1d(example, models)
    fig, axes = _grid_figure(len(predictions), ncols, panel_size)
    for ax, (label, prediction) in zip(axes, predictions.items()):
        plot_prediction_1d(ax, example, prediction, title=label)
    _finish(
        fig, axes, f"{example.name}: B = bagging, O = oversampling (4N), R = random split location"
    )
    return fig
