"""Targets: the objective values turned into what a surrogate is fitted on.

A surrogate never sees raw objective values: they are standardized, and for
tree ensembles first log-scaled so that the values near the best one are
spread out (see :func:`transform_targets` and docs/design.md).
"""

from __future__ import annotations

import numpy as np

__all__ = ["transform_targets", "Y_TRANSFORMS", "LOG_OFFSET"]


#: Accepted values of ``y_transform``.
Y_TRANSFORMS = ("auto", "log", "standardize")

#: Offset of the log transform, as a fraction of the range of the values.
LOG_OFFSET = 1e-3


def transform_targets(values: np.ndarray, kind: str = "log") -> np.ndarray:
    """Map objective values to the standardized targets a surrogate is fitted on.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Finite objective values (failed evaluations already imputed).
    kind : {"log", "standardize"}
        ``"standardize"``: ``(y - mean) / std``. ``"log"``: first
        ``log((y - min) / (max - min) + LOG_OFFSET)``, a monotone map that
        stretches the values near the minimum (the best value maps to
        ``log(1e-3)``, the worst to ``log(1.001)``), then standardized. Both
        keep the order of the values, so the incumbent stays the minimum.
        (The optimizer resolves ``"auto"`` before calling this.)

    Returns
    -------
    ndarray of shape (n,)
        Mean 0 and standard deviation 1, or all zeros when the values are
        constant.
    """
    if kind not in ("log", "standardize"):
        raise ValueError(f"kind must be 'log' or 'standardize', got {kind!r}")
    values = np.asarray(values, dtype=float)
    # Values this large overflow the span or the variance (squares beyond
    # 1e308); both transforms are invariant to scaling, so scale them down.
    # Ordinary values are left untouched, bit for bit.
    magnitude = np.abs(values).max() if values.size else 0.0
    if magnitude > 1e150:
        values = values / magnitude
    span = values.max() - values.min()
    if kind == "log" and span > 0:
        values = np.log((values - values.min()) / span + LOG_OFFSET)
    scale = values.std()
    return (values - values.mean()) / (scale if scale > 0 else 1.0)
