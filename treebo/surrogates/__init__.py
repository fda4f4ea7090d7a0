"""Surrogate models and their registry.

Every surrogate follows the contract of :class:`~treebo.surrogates.base.Surrogate`:
``fit(X, y)``, ``predict(X, return_std=False)`` and ``predict_dist(X)`` returning a
:class:`~treebo.surrogates.base.Prediction` (mean, variance, epistemic, aleatoric).

Use :func:`make_surrogate` to build one by its short name.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

__all__ = [
    "Prediction",
    "Surrogate",
    "MixtureMoments",
    "mixture_moments",
    "make_surrogate",
    "as_surrogate",
    "available_surrogates",
    "surrogate_class",
    "surrogate_class_name",
    "missing_extra",
    "fitted_clone",
]

# The base classes come from .base on first use (PEP 562): it imports scikit-learn,
# which listing the registry (`treebo list`, `treebo --help`) does not need.
_BASE_NAMES = ("Prediction", "Surrogate", "MixtureMoments", "mixture_moments")

if TYPE_CHECKING:  # what type checkers and editors resolve the lazy names to
    from .base import MixtureMoments, Prediction, Surrogate, mixture_moments


def __getattr__(name: str) -> Any:
    """The base-class name ``name``, imported from :mod:`.base` on first use."""
    if name not in _BASE_NAMES:
        raise AttributeError(f"module 'treebo.surrogates' has no attribute {name!r}")
    value = getattr(importlib.import_module("treebo.surrogates.base"), name)
    globals()[name] = value  # later look-ups no longer come here
    return value


# name -> (module, class, extra that provides its optional dependency or None).
# Modules are imported on first use, so a missing optional dependency only
# matters to the surrogate that needs it.
_REGISTRY: dict[str, tuple[str, str, str | None]] = {
    "rf": ("treebo.surrogates.forest", "RandomForestSurrogate", None),
    "ert": ("treebo.surrogates.forest", "ExtraTreesSurrogate", None),
    "bwo": ("treebo.surrogates.forest", "BwOForestSurrogate", None),
    "gp": ("treebo.surrogates.gp", "GaussianProcessSurrogate", None),
    "ngboost": ("treebo.surrogates.ngboost", "NGBoostSurrogate", "ngboost"),
    "bart": ("treebo.surrogates.bart", "BARTSurrogate", "bart"),
    "mondrian": ("treebo.surrogates.mondrian", "MondrianForestSurrogate", None),
    "vsglb": ("treebo.surrogates.sglb", "VirtualSGLBSurrogate", None),
    "csglb": ("treebo.surrogates.sglb", "CyclicalSGLBSurrogate", None),
    "cbsglb": ("treebo.surrogates.sglb", "CyclicalBootstrapSGLBSurrogate", None),
}

# extra -> the top-level modules it installs that its surrogates import.
_EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "bart": ("stochtree",),
    "ngboost": ("ngboost",),
}


def available_surrogates() -> list[str]:
    """Names accepted by :func:`make_surrogate`, in registry order.

    Returns
    -------
    list of str
    """
    return list(_REGISTRY)


def surrogate_class_name(name: str) -> str:
    """The name of the class registered under ``name``, without importing it.

    Parameters
    ----------
    name : str
        One of :func:`available_surrogates`.

    Returns
    -------
    str
        E.g. ``"RandomForestSurrogate"`` for ``"rf"``.

    Raises
    ------
    ValueError
        If the name is unknown; the message lists the known names.
    """
    return _registered(name)[1]


def missing_extra(name: str) -> str | None:
    """The extra to install before surrogate ``name`` can be used, if any.

    Looks the optional dependency up without importing it (importing ngboost
    alone takes seconds), so it cannot tell whether an installed dependency
    imports cleanly: :func:`surrogate_class` can.

    Parameters
    ----------
    name : str
        One of :func:`available_surrogates`.

    Returns
    -------
    str or None
        The extra's name (``pip install 'treebo[EXTRA]'``) when a module it
        provides is not installed; None when the surrogate needs no extra or
        its extra is installed.

    Raises
    ------
    ValueError
        If the name is unknown; the message lists the known names.
    """
    extra = _registered(name)[2]
    if extra is None:
        return None
    modules = _EXTRA_MODULES.get(extra, ())
    if all(importlib.util.find_spec(module) is not None for module in modules):
        return None
    return extra


def _registered(name: str) -> tuple[str, str, str | None]:
    if not isinstance(name, str) or name not in _REGISTRY:
        raise ValueError(f"unknown surrogate {name!r}; choose one of {available_surrogates()}")
    return _REGISTRY[name]


def surrogate_class(name: str) -> type:
    """The class registered under ``name``.

    Its module is imported on first use.

    Parameters
    ----------
    name : str
        One of :func:`available_surrogates`.

    Returns
    -------
    type
        The surrogate class (a :class:`~treebo.surrogates.base.Surrogate`
        subclass), not an instance.

    Raises
    ------
    ValueError
        If the name is unknown; the message lists the known names.
    ImportError
        If the surrogate needs an optional dependency that is not installed;
        the message names the extra to install.
    """
    module_name, class_name, extra = _registered(name)
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        if extra is None:
            raise
        raise ImportError(
            f"surrogate {name!r} needs an optional dependency that is missing "
            f"({error.name}); install it with: pip install 'treebo[{extra}]'"
        ) from error
    return getattr(module, class_name)


def make_surrogate(name: str, **params: Any) -> Surrogate:
    """Build a surrogate by name.

    Parameters
    ----------
    name : str
        One of :func:`available_surrogates`: ``"rf"`` (random forest),
        ``"ert"`` (extremely randomized trees), ``"bwo"`` (BwO forest),
        ``"gp"`` (Gaussian process), and the optional models.
    **params
        Constructor parameters of that surrogate, e.g. ``n_estimators=50``.

    Returns
    -------
    Surrogate
        An unfitted estimator.
    """
    cls = surrogate_class(name)
    try:
        return cls(**params)
    except TypeError as error:
        raise ValueError(f"invalid parameters for surrogate {name!r}: {error}") from None


def as_surrogate(surrogate: Any, params: dict | None = None) -> Surrogate:
    """The unfitted surrogate a name or an instance stands for.

    Parameters
    ----------
    surrogate : str or Surrogate
        A name from :func:`available_surrogates`, or an unfitted instance
        (cloned, so the caller's object is never fitted).
    params : dict, optional
        Constructor parameters when ``surrogate`` is a name.

    Returns
    -------
    Surrogate
    """
    from sklearn.base import clone

    from .base import Surrogate

    if isinstance(surrogate, str):
        return make_surrogate(surrogate, **(params or {}))
    if isinstance(surrogate, Surrogate):
        if params:
            raise ValueError(
                "surrogate_params only applies when surrogate is a name; set "
                "the parameters on the instance instead"
            )
        return clone(surrogate)
    raise ValueError(
        f"surrogate must be a registered name or a Surrogate instance, got {surrogate!r}"
    )


def fitted_clone(surrogate: Surrogate, X: Any, y: Any, seed: int | None = None) -> Surrogate:
    """A clone of an unfitted surrogate, seeded when it takes a seed, fitted on ``(X, y)``.

    Parameters
    ----------
    surrogate : Surrogate
        Left unfitted.
    X : array-like of shape (n_points, n_columns)
    y : array-like of shape (n_points,)
    seed : int, optional
        Its ``random_state``, for a surrogate that has one
        (:attr:`~treebo.surrogates.Surrogate.seeded`).

    Returns
    -------
    Surrogate
        Fitted.
    """
    from sklearn.base import clone

    model = clone(surrogate)
    if seed is not None and model.seeded:
        model.set_params(random_state=seed)
    return model.fit(X, y)
