"""The result of an optimization: :class:`OptimizeResult`, with scikit-optimize's field names."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import OptimizeResult as _ScipyResult

__all__ = ["OptimizeResult"]


#: The columns of :meth:`OptimizeResult.to_dataframe` besides the dimensions.
_RESULT_COLUMNS = (
    "number",
    "value",
    "state",
    "error",
    "origin",
    "fit_time",
    "acq_time",
    "eval_time",
    "asked_at",
    "told_at",
)


class OptimizeResult(_ScipyResult):
    """Result of an optimization, with scikit-optimize's field names.

    Attributes
    ----------
    x : list or dict
        Best point found (lowest value among complete trials, highest when
        maximizing).
    fun : float
        Its value.
    x_iters : list
        Every evaluated point (complete and failed), in the order they were
        asked (for a parallel run this is not the order they finished).
    func_vals : ndarray of shape (n_evaluated,)
        Their values; ``nan`` for failed evaluations.
    statuses : list of str
        ``"complete"`` or ``"failed"`` per evaluated point.
    errors : list of str or None
        The error text of failed evaluations.
    fit_time, acq_time : ndarray of shape (n_evaluated,)
        Seconds spent on the surrogate fit and on the acquisition to propose
        each point (0 for initial-design points).
    space : Space
        The search space.
    n_failed : int
        Number of failed evaluations.
    direction : {"minimize", "maximize"}
        Whether ``x`` and ``fun`` are the lowest or the highest value found.
    message : str
        Why the run ended.

    A result read from a storage file (:func:`treebo.results.io.read_result`) also
    has ``numbers``, ``origins``, ``eval_time``, ``asked_at`` and
    ``told_at`` per evaluated point.
    """

    def __repr__(self) -> str:
        # One line per field, each cut to a line's length: SciPy's own repr prints
        # every array whole and fails on a field that is an empty dict.
        if not self:
            return f"{type(self).__name__}()"
        width = max(len(key) for key in self) + 1
        return "\n".join(f"{key:>{width}}: {_brief(value)}" for key, value in self.items())

    def to_dataframe(self) -> Any:
        """The evaluated points as a pandas DataFrame, one row per trial.

        Needs pandas (``pip install pandas``, or ``pip install 'treebo[pandas]'``).

        Returns
        -------
        pandas.DataFrame
            One row per evaluated point, in the order of ``x_iters``, with
            the columns: ``number`` (the trial number; the position among
            the evaluated points when the result does not hold the numbers),
            one column per dimension (named as the dimension, or
            ``param:<name>`` for a dimension named like one of the other
            columns; ``None`` where a conditional dimension is inactive),
            ``value`` (NaN for a failed trial), ``state`` (``"complete"``
            or ``"failed"``), ``error``, ``fit_time`` and ``acq_time``
            (seconds), and, when the result
            holds them (results read from a storage), ``origin``,
            ``eval_time`` (seconds), ``asked_at`` and ``told_at``
            (``pandas.Timestamp`` in UTC).
        """
        try:
            import pandas as pd
        except ImportError as error:
            raise ImportError(
                "OptimizeResult.to_dataframe needs pandas; install it with: "
                "pip install pandas (or pip install 'treebo[pandas]')"
            ) from error
        n = len(self.x_iters)
        names = list(self.space.names)
        columns: dict[str, Any] = {"number": list(self.get("numbers", range(n)))}
        for j, name in enumerate(names):
            column = f"param:{name}" if name in _RESULT_COLUMNS else name
            columns[column] = [(x.get(name) if isinstance(x, dict) else x[j]) for x in self.x_iters]
        columns["value"] = np.asarray(self.func_vals, dtype=float)
        columns["state"] = list(self.get("statuses", ["complete"] * n))
        columns["error"] = list(self.get("errors", [None] * n))
        if "origins" in self:
            columns["origin"] = list(self.origins)
        for key in ("fit_time", "acq_time", "eval_time"):
            if key in self:
                columns[key] = np.asarray(self[key], dtype=float)
        for key in ("asked_at", "told_at"):
            if key in self:
                columns[key] = pd.to_datetime(
                    np.asarray(self[key], dtype=float), unit="s", utc=True
                )
        return pd.DataFrame(columns)


def _brief(value: Any, limit: int = 100) -> str:
    """``repr(value)`` on one line, cut to ``limit`` characters."""
    if isinstance(value, np.ndarray):
        text = np.array2string(value, threshold=6, edgeitems=2, max_line_width=10**6)
    else:
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
