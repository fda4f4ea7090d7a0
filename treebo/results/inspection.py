"""What a study's surrogate says about the objective: partial dependence and importance.

Everything here reads a result (or a storage file), refits the study's
surrogate on its complete trials and averages its predictions; no plotting
library is needed (the figures are in :mod:`treebo.plotting`).

The refit. :func:`fit_surrogate` fits the surrogate the study was run with
(same name and parameters, where the storage keeps them) on the encoded
points of the complete trials and their values in objective units; failed
trials are left out, since they have no value. It is seeded from the
study's seed, so the same result always gives the same model, the same
partial dependence and the same importance. The optimizer's own fits differ
from this one: they see the values log-scaled and failures imputed (see
:mod:`treebo.targets`), which suits proposing points, while the functions
here report in the objective's units.

Partial dependence. The partial dependence of the objective on a dimension
``j`` at a value ``v`` is the surrogate's mean prediction over the space with
dimension ``j`` set to ``v`` and every other dimension drawn from its prior:
``PD_j(v) = E[f(v, X_rest)]`` (Friedman 2001, section 8.2), estimated by
averaging over one scrambled Sobol sample of the other dimensions, the same
sample at every ``v`` (so a surrogate that ignores ``j`` gives an exactly flat
curve). Pairs are averaged the same way on a grid of both. A conditional
dimension is averaged only over the sample points where it is active: its
partial dependence is that of the objective given that the dimension
exists.

Importance. :func:`parameter_importance` gives each dimension the variance of
its partial dependence over the dimension's prior (its *main effect*, the
first-order term of the functional ANOVA decomposition that fANOVA computes
exactly from tree structure, Hutter, Hoos & Leyton-Brown 2014), normalized so
that the importances sum to 1. It says how much the surrogate's prediction
moves, on average over the other dimensions, when one dimension alone
changes. It does not see interactions (a dimension that matters only jointly
with another can score low; ``main_effects_share`` tells how much of the
prediction's variance the main effects explain), it is the surrogate's view
(with few trials the surrogate, not the objective, is being described), and
it is measured over the whole space, not near the optimum.
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from .._checks import check_int
from ..acquisition import sobol_candidates
from ..result import OptimizeResult
from ..space import Dimension, Space
from .io import as_result

if TYPE_CHECKING:
    from ..surrogates import Surrogate

__all__ = [
    "fit_surrogate",
    "partial_dependence",
    "partial_dependence_2d",
    "parameter_importance",
    "PartialDependence",
    "PartialDependence2D",
    "Importance",
    "dimension_grid",
]

#: Rows per call of the surrogate's ``predict``: bounds the memory a tree
#: ensemble's per-tree predictions take (100 trees x 65,536 rows x 8 bytes = 52 MB).
_PREDICT_CHUNK = 65_536

#: The surrogate used when the study's cannot be rebuilt.
_FALLBACK_SURROGATE = "bwo"

Source = OptimizeResult | str | os.PathLike


@dataclass(frozen=True)
class PartialDependence:
    """The partial dependence of the objective on one dimension.

    Made by :func:`partial_dependence`; the fields are read-only.

    Parameters
    ----------
    name : str
        The dimension.
    values : list
        The dimension's values the curve is evaluated at (user-facing: a
        real, an int, a category), ``n_points`` of them.
    positions : ndarray of shape (n_points,)
        Where each value goes on a plot's axis: the value itself for a real
        or an integer, the index for a category or a binary.
    average : ndarray of shape (n_points,)
        The mean prediction, in objective units; NaN where the dimension is
        never active in the sample.
    """

    name: str
    values: list
    positions: np.ndarray
    average: np.ndarray


@dataclass(frozen=True)
class PartialDependence2D:
    """The partial dependence of the objective on a pair of dimensions.

    Made by :func:`partial_dependence_2d`; the fields are read-only.

    Parameters
    ----------
    names : tuple of str
        The two dimensions ``(first, second)``.
    values, positions : tuple of two
        Per dimension, as in :class:`PartialDependence`.
    average : ndarray of shape (n_first, n_second)
        ``average[a, b]`` is the mean prediction with the first dimension at
        ``values[0][a]`` and the second at ``values[1][b]``; NaN where the
        two are never active together.
    """

    names: tuple
    values: tuple
    positions: tuple
    average: np.ndarray


@dataclass(frozen=True)
class Importance:
    """Main-effect importance of every dimension.

    Made by :func:`parameter_importance`; the fields are read-only.

    Parameters
    ----------
    names : list of str
        The dimensions, in the space's order.
    importance : ndarray of shape (n_dims,)
        Each dimension's share of the main effects; non-negative and summing
        to 1 (all 0 when the surrogate is flat).
    main_effects : ndarray of shape (n_dims,)
        The variance of each dimension's partial dependence, in squared
        objective units (times the fraction of the space where a conditional
        dimension is active).
    total_variance : float
        The variance of the surrogate's prediction over the whole space.
    main_effects_share : float
        ``main_effects.sum() / total_variance``: near 1 for an additive
        objective, lower the more the dimensions interact (NaN when the
        surrogate is flat).
    """

    names: list
    importance: np.ndarray
    main_effects: np.ndarray
    total_variance: float
    main_effects_share: float

    def to_dict(self) -> dict[str, float]:
        """Dimension name -> importance, most important first."""
        order = np.argsort(-self.importance, kind="stable")
        return {self.names[i]: float(self.importance[i]) for i in order}


def fit_surrogate(
    result: Source, *, surrogate: str | Surrogate | None = None, random_state: int | None = None
) -> Surrogate:
    """Fit the study's surrogate on the result's complete trials (see the module notes).

    Parameters
    ----------
    result : OptimizeResult, str or os.PathLike
        A result or the path of a storage file.
    surrogate : str or Surrogate, optional
        The surrogate to fit instead of the study's (a name of
        :func:`~treebo.surrogates.available_surrogates` or an instance, which
        is cloned). The study's is used by default: its name, with the
        parameters a storage file recorded (a result of ``minimize`` holds
        only the name, so its surrogate gets the registered defaults). When
        it cannot be rebuilt (a custom instance, a missing extra) a BwO
        forest is used with a warning.
    random_state : int, optional
        Seed of the fit; by default the study's seed (0 when it had none).

    Returns
    -------
    Surrogate
        Fitted on the encoded points of the complete trials, shape
        (n_complete, n_columns), and their values in objective units.

    Raises
    ------
    ValueError
        If the result has no complete trial.
    """
    result = as_result(result)
    X, y = _complete_data(result)
    model = _surrogate(result, surrogate)
    seed = _seed(result, random_state)
    if model.seeded:
        model.set_params(random_state=seed)
    return model.fit(X, y)


def dimension_grid(dim: Dimension, n_points: int) -> tuple[np.ndarray, list, np.ndarray]:
    """Values of one dimension to evaluate a partial dependence at.

    Parameters
    ----------
    dim : Dimension
    n_points : int
        Points for a real dimension, and at most that many for an integer
        one; a categorical or binary dimension gives every value.

    Returns
    -------
    encoded : ndarray of shape (n_values, dim.n_columns)
        Evenly spaced on the encoded scale, so evenly spaced under the prior
        (log-spaced for a log-uniform prior).
    values : list
        The user-facing values.
    positions : ndarray of shape (n_values,)
        Plot coordinates: the value for reals and integers, the index for
        categories and binaries.
    """
    encoded = dim.evenly_spaced(n_points)
    return encoded, dim.decode(encoded), dim.decode_numbers(encoded)


@overload
def partial_dependence(
    result: Source,
    dimension: None = ...,
    *,
    model: Any = ...,
    n_points: int = ...,
    n_samples: int = ...,
    random_state: int | None = ...,
) -> list[PartialDependence]: ...


@overload
def partial_dependence(
    result: Source,
    dimension: str | int,
    *,
    model: Any = ...,
    n_points: int = ...,
    n_samples: int = ...,
    random_state: int | None = ...,
) -> PartialDependence: ...


def partial_dependence(
    result: Source,
    dimension: str | int | None = None,
    *,
    model: Any = None,
    n_points: int = 40,
    n_samples: int = 256,
    random_state: int | None = None,
) -> PartialDependence | list[PartialDependence]:
    """The partial dependence of the objective on one dimension, or on each.

    Parameters
    ----------
    result : OptimizeResult, str or os.PathLike
        A result or the path of a storage file.
    dimension : str or int, optional
        A dimension's name or index; by default every dimension.
    model : object with ``predict(X)``, optional
        A fitted model of the objective on encoded points (shape (n,
        n_columns) -> (n,)); by default :func:`fit_surrogate`.
    n_points : int, default 40
        Values of a real (and at most that many of an integer) dimension.
    n_samples : int, default 256
        Sobol points of the other dimensions averaged over.
    random_state : int, optional
        Seeds the refit and the sample; by default the study's seed.

    Returns
    -------
    PartialDependence, or list of PartialDependence
        One per dimension, in the space's order, when ``dimension`` is not
        given.
    """
    result = as_result(result)
    space = result.space
    indices = range(space.n_dims) if dimension is None else [_index(space, dimension)]
    n_points = check_int(n_points, "n_points", 2)
    sample = _sample(result, n_samples, random_state)
    model = model if model is not None else fit_surrogate(result, random_state=random_state)
    grids = [dimension_grid(space.dimensions[j], n_points) for j in indices]
    rows, masks = [], []
    for j, (encoded, _, _) in zip(indices, grids):
        X = _with_columns(space, sample, [(j, encoded)])
        rows.append(X)
        masks.append(_active(space, X, [j]).reshape(len(encoded), len(sample)))
    predictions = _predict(model, np.vstack(rows))
    curves, start = [], 0
    for j, (_, values, positions), mask in zip(indices, grids, masks):
        stop = start + mask.size
        average = _masked_mean(predictions[start:stop].reshape(mask.shape), mask)
        curves.append(PartialDependence(space.names[j], values, positions, average))
        start = stop
    return curves if dimension is None else curves[0]


def partial_dependence_2d(
    result: Source,
    first: str | int,
    second: str | int,
    *,
    model: Any = None,
    n_points: int = 20,
    n_samples: int = 128,
    random_state: int | None = None,
) -> PartialDependence2D:
    """The partial dependence of the objective on a pair of dimensions.

    Parameters
    ----------
    result : OptimizeResult, str or os.PathLike
    first, second : str or int
        Two different dimensions, by name or index.
    model : object with ``predict(X)``, optional
        As for :func:`partial_dependence`.
    n_points : int, default 20
        Values per real dimension (at most that many per integer one).
    n_samples : int, default 128
        Sobol points of the other dimensions averaged over at each grid cell.
    random_state : int, optional

    Returns
    -------
    PartialDependence2D
    """
    result = as_result(result)
    space = result.space
    i, j = _index(space, first), _index(space, second)
    if i == j:
        raise ValueError(
            f"first and second must be different dimensions, got {first!r} and {second!r}"
        )
    n_points = check_int(n_points, "n_points", 2)
    sample = _sample(result, n_samples, random_state)
    model = model if model is not None else fit_surrogate(result, random_state=random_state)
    enc_i, values_i, pos_i = dimension_grid(space.dimensions[i], n_points)
    enc_j, values_j, pos_j = dimension_grid(space.dimensions[j], n_points)
    # Every (value of i, value of j) pair, i varying slowest.
    pair_i = np.repeat(enc_i, len(enc_j), axis=0)
    pair_j = np.tile(enc_j, (len(enc_i), 1))
    X = _with_columns(space, sample, [(i, pair_i), (j, pair_j)])
    shape = (len(enc_i), len(enc_j), len(sample))
    mask = _active(space, X, [i, j]).reshape(shape)
    average = _masked_mean(_predict(model, X).reshape(shape), mask)
    return PartialDependence2D(
        (space.names[i], space.names[j]), (values_i, values_j), (pos_i, pos_j), average
    )


def parameter_importance(
    result: Source,
    *,
    model: Any = None,
    n_points: int = 40,
    n_samples: int = 256,
    random_state: int | None = None,
) -> Importance:
    """How much each dimension alone moves the surrogate's prediction.

    The variance of each dimension's partial dependence over its prior
    (its main effect in the functional ANOVA sense), normalized to sum to 1;
    see the module notes for what it means and what it does not.

    Parameters
    ----------
    result : OptimizeResult, str or os.PathLike
    model : object with ``predict(X)``, optional
        As for :func:`partial_dependence`.
    n_points, n_samples : int
        As for :func:`partial_dependence`.
    random_state : int, optional

    Returns
    -------
    Importance
    """
    result = as_result(result)
    space = result.space
    model = model if model is not None else fit_surrogate(result, random_state=random_state)
    curves = partial_dependence(
        result, model=model, n_points=n_points, n_samples=n_samples, random_state=random_state
    )
    sample = space.snap(_sample(result, n_samples, random_state))
    active_share = space.active_mask(sample).mean(axis=0)
    effects = (
        np.array([np.nanvar(c.average) if np.isfinite(c.average).any() else 0.0 for c in curves])
        * active_share
    )
    total = float(np.var(_predict(model, sample)))
    scale = effects.sum()
    importance = effects / scale if scale > 0 else np.zeros_like(effects)
    share = float(scale / total) if total > 0 else math.nan
    return Importance(list(space.names), importance, effects, total, share)


# -- helpers -------------------------------------------------------------------------------
def _complete_data(result: OptimizeResult) -> tuple[np.ndarray, np.ndarray]:
    values = np.asarray(result.func_vals, dtype=float)
    complete = np.flatnonzero(np.isfinite(values))
    if not len(complete):
        raise ValueError("the result has no complete trial: there is nothing to fit a surrogate on")
    X = result.space.encode([result.x_iters[i] for i in complete])
    return X, values[complete]


def _surrogate(result: OptimizeResult, surrogate: str | Surrogate | None) -> Surrogate:
    """An unfitted surrogate: ``surrogate``, or the study's, or the fallback."""
    from sklearn.base import clone

    from ..surrogates import Surrogate, available_surrogates, make_surrogate

    if isinstance(surrogate, Surrogate):
        return clone(surrogate)
    if surrogate is not None:
        return make_surrogate(surrogate)
    name = result.get("surrogate") or _FALLBACK_SURROGATE
    if name not in available_surrogates():
        warnings.warn(
            f"the study's surrogate {name!r} is not a registered name; refitting a "
            f"{_FALLBACK_SURROGATE!r} surrogate instead (pass surrogate= to choose)",
            UserWarning,
            stacklevel=3,
        )
        return make_surrogate(_FALLBACK_SURROGATE)
    try:
        default = make_surrogate(name)
    except ImportError as error:
        warnings.warn(
            f"the study's surrogate {name!r} is not installed ({error}); refitting "
            f"a {_FALLBACK_SURROGATE!r} surrogate instead",
            UserWarning,
            stacklevel=3,
        )
        return make_surrogate(_FALLBACK_SURROGATE)
    return default.set_params(**_stored_params(default, result.get("surrogate_params") or {}))


def _stored_params(default: Any, stored: dict) -> dict:
    """The study's surrogate parameters that ``default`` can be given.

    ``stored`` is what :func:`treebo.settings.settings_from_store` read (the
    parameters that differ from the defaults, reprs of literals read back as
    values). A parameter the surrogate does not take, its seed (the refit is
    seeded by the study), and a repr that could not be read back (text where
    the default is neither text nor None: an object) are left at the default.
    """
    params = default.get_params(deep=False)
    return {
        key: value
        for key, value in stored.items()
        if key in params
        and key != "random_state"
        and (not isinstance(value, str) or isinstance(params[key], (str, type(None))))
    }


def _seed(result: OptimizeResult, random_state: int | None) -> int:
    if random_state is not None:
        return check_int(random_state, "random_state", 0)
    seed = result.get("random_state")
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
        return int(seed)
    return 0


def _sample(result: OptimizeResult, n_samples: int, random_state: int | None) -> np.ndarray:
    """Scrambled Sobol points of the unit cube, shape (n_samples, n_columns), unsnapped.

    Unsnapped so that a conditional dimension switched on by a changed
    parent has a value of its own to take.
    """
    n_samples = check_int(n_samples, "n_samples", 1)
    rng = np.random.default_rng([_seed(result, random_state), 1])
    return sobol_candidates(n_samples, result.space.n_columns, rng)


def _with_columns(
    space: Space, sample: np.ndarray, settings: list[tuple[int, np.ndarray]]
) -> np.ndarray:
    """Every sample row once per row of the settings, the set dimensions' columns replaced.

    ``settings`` holds (dimension index, encoded values of shape (G, width))
    pairs of equal G. Returns the snapped rows, shape (G * n_samples,
    n_columns), grid row ``g`` of all settings in rows ``g * n_samples`` to
    ``(g + 1) * n_samples - 1``.
    """
    n_grid = len(settings[0][1])
    X = np.repeat(sample[None, :, :], n_grid, axis=0)
    for j, encoded in settings:
        X[:, :, space.columns_of(j)] = encoded[:, None, :]
    return space.snap(X.reshape(-1, space.n_columns))


def _active(space: Space, X: np.ndarray, dims: list[int]) -> np.ndarray:
    """Rows of ``X`` where every dimension in ``dims`` is active, shape (len(X),)."""
    if not space.conditional:
        return np.ones(len(X), dtype=bool)
    return np.all(space.active_mask(X)[:, dims], axis=1)


def _masked_mean(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean over the last axis of ``values`` where ``mask``; NaN where nothing is."""
    counts = mask.sum(axis=-1)
    totals = np.where(mask, values, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, totals / np.maximum(counts, 1), np.nan)


def _predict(model: Any, X: np.ndarray) -> np.ndarray:
    out = np.empty(len(X))
    for start in range(0, len(X), _PREDICT_CHUNK):
        out[start : start + _PREDICT_CHUNK] = np.asarray(
            model.predict(X[start : start + _PREDICT_CHUNK]), dtype=float
        ).reshape(-1)
    return out


def _index(space: Space, dimension: str | int) -> int:
    if isinstance(dimension, str):
        if dimension not in space.names:
            raise ValueError(f"unknown dimension {dimension!r}; the space has {space.names}")
        return space.names.index(dimension)
    if (
        isinstance(dimension, (int, np.integer))
        and not isinstance(dimension, bool)
        and 0 <= dimension < space.n_dims
    ):
        return int(dimension)
    raise ValueError(
        f"dimension must be a name in {space.names} or an index from 0 to "
        f"{space.n_dims - 1}, got {dimension!r}"
    )
