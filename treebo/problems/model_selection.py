"""Conditional AutoML: choose a scikit-learn model family, then tune its own hyperparameters.

The flat AutoML problem of :mod:`treebo.problems.automl` gives every
hyperparameter to every classifier, and the five tree ensembles it chooses
from all end within a few misclassified test samples of each other. Here the
space is conditional (see :class:`~treebo.space.Space`): a ``model``
dimension picks one of six families, and each family's hyperparameters exist
only for it (``svc_degree`` only for the polynomial kernel inside ``svc``).
The families differ in how well they can do: on ``digits`` a tuned RBF or
polynomial SVC reaches about 1 % cross-validated error, the other families 2
to 4 %, and a badly tuned SVC or boosting 84 to 90 %.

Protocol
--------
The objective is the mean, over ``cv`` stratified folds, of the error rate
(1 - accuracy) on the held-out fold. The folds are drawn once, when the
problem is built (``StratifiedKFold(cv, shuffle=True,
random_state=split_random_state)``), every estimator gets
``random_state=random_state``, and every fit runs on one thread (BLAS and
OpenMP are limited to one thread while the folds are fitted), so a point gives
the same value bit for bit on every call, whatever the number of cores.
Scale-sensitive models (SVC, k-NN, logistic regression, MLP) standardize the
features inside the pipeline, on the training folds only.
Convergence warnings are silenced; any other failure of a fit raises, and the
ranges are chosen so that none fails.

Evaluation time
---------------
Seconds per evaluation (5 folds, one thread), measured on a 2-core machine
while two other benchmark processes ran on it (an idle machine is faster).
"Median" is over 60 points drawn uniformly from the space (10 per family);
"slowest corner" is the slowest corner of the ranges (largest ensembles,
deepest trees, most boosting rounds, largest C and gamma, degree 5, widest
and slowest-learning MLP):

=============  ======  =====================================================
data set       median  slowest corner (family)
=============  ======  =====================================================
wine           0.04    0.5 (random_forest)
breast_cancer  0.09    1.1 (random_forest)
digits         0.27    4.3 (hist_gradient_boosting; random_forest 2.8, mlp 1.4)
=============  ======  =====================================================
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..space import Categorical, Dimension, Integer, Real
from .base import Problem

__all__ = ["ModelSelection", "MODEL_SELECTION_DATASETS", "MODEL_SELECTION_FAMILIES"]

#: Data sets bundled with scikit-learn that :class:`ModelSelection` accepts
#: (no download): 569, 178 and 1797 samples; 2, 3 and 10 classes.
MODEL_SELECTION_DATASETS = ("breast_cancer", "wine", "digits")
#: The values of the ``model`` dimension, in the space's order.
MODEL_SELECTION_FAMILIES = (
    "svc",
    "knn",
    "logreg",
    "random_forest",
    "hist_gradient_boosting",
    "mlp",
)

# Iteration caps of the iterative solvers. The MLP's is a training budget that
# keeps its slowest corner (64 units learning at 1e-3 on digits) near 1.4 s;
# at the smallest learning rates the loss still falls at 100 epochs (CV error
# 2.3 % on digits against 2.1 % with 200), so the step size matters as it does
# under any fixed budget. lbfgs needs under 200 iterations at every C of the
# range on these standardized data sets: its cap only guards against a hang.
_LOGREG_MAX_ITER = 1000
_MLP_MAX_ITER = 100


def _family_dimensions() -> dict[str, dict[str, Dimension]]:
    """Each family's hyperparameters, by name, unconditional (the caller adds ``active_if``).

    Ranges are wide enough to hold both good and clearly bad settings, and
    bounded where the cost grows (ensemble sizes, boosting rounds, hidden
    units) so that the slowest corner stays a few seconds on ``digits``.
    """
    return {
        "svc": {
            "svc_C": Real(1e-3, 1e3, "log-uniform"),
            "svc_kernel": Categorical(["linear", "rbf", "poly"]),
            # On standardized features, good values are near 1 / n_features
            # (0.016 on digits, 0.08 on wine); 10 makes every point its own island.
            "svc_gamma": Real(1e-4, 10.0, "log-uniform", active_if={"svc_kernel": ["rbf", "poly"]}),
            "svc_degree": Integer(2, 5, active_if={"svc_kernel": "poly"}),
        },
        "knn": {
            "knn_n_neighbors": Integer(1, 50, "log-uniform"),
            "knn_weights": Categorical(["uniform", "distance"]),
            "knn_p": Integer(1, 2),  # Minkowski exponent: Manhattan or Euclidean distance
        },
        "logreg": {
            "logreg_C": Real(1e-4, 1e4, "log-uniform"),
            "logreg_class_weight": Categorical(["none", "balanced"]),
        },
        "random_forest": {
            "rf_n_estimators": Integer(10, 100, "log-uniform"),
            "rf_max_depth": Integer(2, 32, "log-uniform"),
            # A fraction of the features; above 0.5 a forest costs more and
            # decorrelates its trees less, which these data sets do not reward.
            "rf_max_features": Real(0.05, 0.5),
            "rf_min_samples_leaf": Integer(1, 20, "log-uniform"),
        },
        "hist_gradient_boosting": {
            "hgb_learning_rate": Real(0.01, 1.0, "log-uniform"),
            # Boosting rounds and leaves are capped by cost: on digits every
            # round grows one tree per class (10), about 1.5 ms each at 16 leaves.
            "hgb_max_iter": Integer(10, 50),
            "hgb_max_leaf_nodes": Integer(2, 16, "log-uniform"),
            "hgb_l2_regularization": Real(1e-4, 10.0, "log-uniform"),
            "hgb_min_samples_leaf": Integer(1, 50, "log-uniform"),
        },
        "mlp": {
            "mlp_hidden_units": Integer(8, 64, "log-uniform"),  # one hidden layer
            "mlp_activation": Categorical(["relu", "tanh"]),
            "mlp_alpha": Real(1e-6, 1e-1, "log-uniform"),  # L2 penalty
            "mlp_learning_rate_init": Real(1e-3, 1e-1, "log-uniform"),  # Adam's step size
        },
    }


def _conditional_dimensions() -> dict[str, Dimension]:
    """The whole space: ``model``, then each family's hyperparameters, active only for it.

    A hyperparameter that already depends on another one of its family
    (``svc_gamma``, ``svc_degree`` on ``svc_kernel``) keeps that condition
    alone: a condition on an inactive parent is false, so it is active only
    for ``svc`` too.
    """
    dimensions: dict[str, Dimension] = {"model": Categorical(MODEL_SELECTION_FAMILIES)}
    for family, hyperparameters in _family_dimensions().items():
        for name, dim in hyperparameters.items():
            if dim.active_if is None:
                dim = dim.replace(active_if={"model": family})
            dimensions[name] = dim
    return dimensions


def _load(dataset: str) -> tuple[np.ndarray, np.ndarray]:
    """Features of shape (n_samples, n_features) as float64 and integer labels (n_samples,)."""
    from sklearn import datasets

    X, y = getattr(datasets, f"load_{dataset}")(return_X_y=True)
    return np.asarray(X, dtype=np.float64), np.asarray(y)


class ModelSelection(Problem):
    """Choose one of six scikit-learn classifier families and tune it (a conditional space).

    The space, a dict (points are dicts without their inactive dimensions):

    - ``model``: Categorical, one of :data:`MODEL_SELECTION_FAMILIES`;
    - ``svc`` (standardized features, then ``SVC``): ``svc_C`` log-uniform
      1e-3 .. 1e3; ``svc_kernel`` in linear, rbf, poly; ``svc_gamma``
      log-uniform 1e-4 .. 10, active for rbf and poly; ``svc_degree`` 2 .. 5,
      active for poly (``coef0 = 1``, so lower degrees are included);
    - ``knn`` (standardized, ``KNeighborsClassifier``): ``knn_n_neighbors``
      1 .. 50 (log-uniform); ``knn_weights`` uniform or distance; ``knn_p``
      1 or 2 (Manhattan or Euclidean);
    - ``logreg`` (standardized, L2-penalized ``LogisticRegression``, lbfgs):
      ``logreg_C`` log-uniform 1e-4 .. 1e4; ``logreg_class_weight`` none or
      balanced;
    - ``random_forest`` (``RandomForestClassifier``): ``rf_n_estimators``
      10 .. 100 (log-uniform); ``rf_max_depth`` 2 .. 32 (log-uniform);
      ``rf_max_features`` 0.05 .. 0.5 (fraction of the features);
      ``rf_min_samples_leaf`` 1 .. 20 (log-uniform);
    - ``hist_gradient_boosting`` (``HistGradientBoostingClassifier``, no early
      stopping): ``hgb_learning_rate`` log-uniform 0.01 .. 1;
      ``hgb_max_iter`` 10 .. 50 (boosting rounds); ``hgb_max_leaf_nodes``
      2 .. 16 (log-uniform); ``hgb_l2_regularization`` log-uniform
      1e-4 .. 10; ``hgb_min_samples_leaf`` 1 .. 50 (log-uniform);
    - ``mlp`` (standardized, ``MLPClassifier`` with one hidden layer, Adam,
      100 epochs at most): ``mlp_hidden_units`` 8 .. 64 (log-uniform);
      ``mlp_activation`` relu or tanh; ``mlp_alpha`` log-uniform 1e-6 .. 0.1;
      ``mlp_learning_rate_init`` log-uniform 1e-3 .. 0.1.

    23 dimensions, 33 encoded columns; a point has 3 to 6 active dimensions.

    Parameters
    ----------
    dataset : str, default "breast_cancer"
        One of :data:`MODEL_SELECTION_DATASETS`, loaded with scikit-learn's
        own loader (bundled, no download).
    cv : int, default 5
        Number of stratified folds, from 2 to the size of the smallest class.
    split_random_state : int, default 4242
        Seed of the fold assignment, drawn once when the problem is built.
    random_state : int, default 42
        Seed given to every estimator.

    Attributes
    ----------
    n_samples : int
        Size of the data set; a fold's error moves in steps of about
        ``cv / n_samples``.
    optimal_value : None
        Unknown (the lower bound is 0).

    Examples
    --------
    >>> problem = ModelSelection("wine")
    >>> problem({"model": "knn", "knn_n_neighbors": 15, "knn_weights": "distance",
    ...          "knn_p": 2}) < 0.1
    True
    """

    def __init__(
        self,
        dataset: str = "breast_cancer",
        *,
        cv: int = 5,
        split_random_state: int = 4242,
        random_state: int = 42,
    ):
        from sklearn.model_selection import StratifiedKFold

        if not isinstance(dataset, str) or dataset not in MODEL_SELECTION_DATASETS:
            raise ValueError(
                f"dataset must be one of {list(MODEL_SELECTION_DATASETS)}, got {dataset!r}"
            )
        X, y = _load(dataset)
        smallest_class = int(np.bincount(np.unique(y, return_inverse=True)[1]).min())
        if (
            isinstance(cv, bool)
            or not isinstance(cv, (int, np.integer))
            or not 2 <= cv <= smallest_class
        ):
            raise ValueError(
                f"cv must be an integer from 2 to {smallest_class} (the smallest "
                f"class of {dataset!r}), got {cv!r}"
            )
        for label, seed in (
            ("split_random_state", split_random_state),
            ("random_state", random_state),
        ):
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
                raise ValueError(f"{label} must be a non-negative integer, got {seed!r}")
        self.dataset = dataset
        self.cv = int(cv)
        self.split_random_state = int(split_random_state)
        self.random_state = int(random_state)
        self.n_samples = len(y)
        self._X, self._y = X, y
        # Fixed once: every point is scored on the same folds, so differences
        # between points are differences between models, not between splits.
        splitter = StratifiedKFold(self.cv, shuffle=True, random_state=self.split_random_state)
        self._folds = [(train, test) for train, test in splitter.split(X, y)]
        super().__init__(
            f"model_selection_{dataset}", _conditional_dimensions(), optimal_value=None
        )
        self.params = {
            "dataset": dataset,
            "cv": self.cv,
            "split_random_state": self.split_random_state,
            "random_state": self.random_state,
        }

    def make_estimator(self, x: dict) -> Any:
        """The unfitted scikit-learn estimator that the point ``x`` describes.

        Parameters
        ----------
        x : dict
            A point of :attr:`space`: ``model`` and that family's active
            hyperparameters. Values for inactive dimensions may be present
            and are ignored.

        Returns
        -------
        estimator
            A classifier, or a ``Pipeline`` of ``StandardScaler`` and the
            classifier for scale-sensitive families.

        Raises
        ------
        ValueError
            If ``x`` is not a dict, lacks an active dimension or holds a value
            outside its dimension.
        """
        if not isinstance(x, dict):
            raise ValueError(
                f"x must be a dict with 'model' and that model's hyperparameters "
                f"(names in {self.space.names}), got {x!r}"
            )
        p = self.space.drop_inactive(x)  # checks the point; only active values are read below
        return _build(p, self.random_state)

    def __call__(self, x: dict) -> float:
        """Mean cross-validated error rate of the model ``x`` describes.

        Parameters
        ----------
        x : dict
            A point of :attr:`space` (see :meth:`make_estimator`).

        Returns
        -------
        float
            The mean over the ``cv`` fixed folds of the fraction of the
            held-out fold misclassified, in ``[0, 1]``.
        """
        from sklearn.base import clone
        from sklearn.exceptions import ConvergenceWarning
        from threadpoolctl import threadpool_limits

        estimator = self.make_estimator(x)
        errors = []
        # One thread: a benchmark runs its own evaluations in parallel, and
        # BLAS or OpenMP reductions split over another number of threads may
        # sum in another order, which would make the value machine-dependent.
        with threadpool_limits(limits=1), warnings.catch_warnings():
            # The MLP's epoch cap is a budget (see _MLP_MAX_ITER), not a failure.
            warnings.simplefilter("ignore", ConvergenceWarning)
            for train, test in self._folds:
                fitted = clone(estimator).fit(self._X[train], self._y[train])
                errors.append(float(np.mean(fitted.predict(self._X[test]) != self._y[test])))
        return float(np.mean(errors))


def _build(p: dict, seed: int) -> Any:
    """The estimator of an active point ``p`` (a dict from ``Space.drop_inactive``)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    family = p["model"]
    if family == "random_forest":
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(
            n_estimators=int(p["rf_n_estimators"]),
            max_depth=int(p["rf_max_depth"]),
            max_features=float(p["rf_max_features"]),
            min_samples_leaf=int(p["rf_min_samples_leaf"]),
            n_jobs=1,
            random_state=seed,
        )
    if family == "hist_gradient_boosting":
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(
            learning_rate=float(p["hgb_learning_rate"]),
            max_iter=int(p["hgb_max_iter"]),
            max_leaf_nodes=int(p["hgb_max_leaf_nodes"]),
            l2_regularization=float(p["hgb_l2_regularization"]),
            min_samples_leaf=int(p["hgb_min_samples_leaf"]),
            early_stopping=False,
            random_state=seed,
        )
    if family == "svc":
        from sklearn.svm import SVC

        kernel = p["svc_kernel"]
        model = SVC(
            C=float(p["svc_C"]),
            kernel=kernel,
            # gamma and degree are inactive for the kernels that ignore them.
            gamma=float(p.get("svc_gamma", 1.0)),
            degree=int(p.get("svc_degree", 3)),
            coef0=1.0,
            random_state=seed,
        )
    elif family == "knn":
        from sklearn.neighbors import KNeighborsClassifier

        model = KNeighborsClassifier(
            n_neighbors=int(p["knn_n_neighbors"]),
            weights=p["knn_weights"],
            p=int(p["knn_p"]),
            n_jobs=1,
        )
    elif family == "logreg":
        from sklearn.linear_model import LogisticRegression

        weight = None if p["logreg_class_weight"] == "none" else p["logreg_class_weight"]
        # Penalty left at its default (L2): scikit-learn 1.8 deprecates the
        # ``penalty`` argument, and lbfgs handles only L2.
        model = LogisticRegression(
            C=float(p["logreg_C"]),
            class_weight=weight,
            max_iter=_LOGREG_MAX_ITER,
            random_state=seed,
        )
    else:  # "mlp", the last family
        from sklearn.neural_network import MLPClassifier

        model = MLPClassifier(
            hidden_layer_sizes=(int(p["mlp_hidden_units"]),),
            activation=p["mlp_activation"],
            alpha=float(p["mlp_alpha"]),
            learning_rate_init=float(p["mlp_learning_rate_init"]),
            max_iter=_MLP_MAX_ITER,
            random_state=seed,
        )
    return make_pipeline(StandardScaler(), model)
