"""The AutoML problem of Kim & Choi (2022), Table 1: pick a classifier and tune it.

Definitions follow ``problems.md`` §5 and the official code's ``automl.py``:
features scaled to [0, 1] on the whole data set, a fixed unstratified 80/20
split (``random_state=4242``), every classifier seeded with ``random_state=42``,
objective = 1 - test accuracy. The objective is therefore deterministic.

Data sets
---------
``breast_cancer``, ``digits`` (both used in the paper), ``wine`` and ``iris``
ship with scikit-learn and work offline. The paper's other two data sets,
Authorship (OpenML 458) and Phoneme (OpenML 1489), need a download from
OpenML, which treebo never does: pass ``data_path`` to a local copy (a CSV file
with a header row, numeric features and the label in the last column), or
``data=(X, y)``; without one, :class:`DatasetUnavailable` is raised.
"""

from __future__ import annotations

import csv
import os
from typing import Any

import numpy as np

from ..space import Categorical, Integer, Real
from .base import Problem

__all__ = [
    "AutoML",
    "DatasetUnavailable",
    "AUTOML_CLASSIFIERS",
    "AUTOML_DATASETS",
    "BUNDLED_DATASETS",
]

#: Classifier choices, in the paper's (and the one-hot block's) order.
AUTOML_CLASSIFIERS = ("adaboost", "gradientboosting", "decisiontree", "extratrees", "randomforest")
#: Data sets that ship with scikit-learn.
BUNDLED_DATASETS = ("breast_cancer", "digits", "wine", "iris")
#: Every data set name accepted by :class:`AutoML`.
AUTOML_DATASETS = BUNDLED_DATASETS + ("authorship", "phoneme")

_OPENML_IDS = {"authorship": 458, "phoneme": 1489}


class DatasetUnavailable(FileNotFoundError):
    """A data set that needs a download (OpenML) was asked for without a local copy."""


def _load_bundled(name: str) -> tuple[np.ndarray, np.ndarray]:
    from sklearn import datasets

    loader = getattr(datasets, f"load_{name}")
    X, y = loader(return_X_y=True)
    return np.asarray(X, dtype=float), np.asarray(y)


def _load_csv(path: str) -> tuple[np.ndarray, np.ndarray]:
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    if len(rows) < 3:
        raise ValueError(f"data_path {path!r} must hold a header row and at least two rows")
    body = rows[1:]
    try:
        X = np.array([[float(v) for v in row[:-1]] for row in body])
    except ValueError as error:
        raise ValueError(f"data_path {path!r}: features must be numeric ({error})") from None
    labels = [row[-1] for row in body]
    _, y = np.unique(labels, return_inverse=True)
    return X, y


class AutoML(Problem):
    """Choose and tune a tree-based classifier (Kim & Choi 2022, Table 1).

    The space, as a dict (points are dicts), in this order (the encoded
    columns are the 5 one-hot classifier columns, then the 4 numbers, as in the
    official code's 9-dimensional box):

    - ``classifier``: Categorical, one of :data:`AUTOML_CLASSIFIERS`;
    - ``n_estimators``: Integer, 10 .. 200 (ensemble size);
    - ``max_depth``: Integer, 2 .. 8;
    - ``max_features``: Real, 0.2 .. 1.0 (fraction of the features);
    - ``log10_learning_rate``: Real, -3 .. 1 (learning rate ``10 ** value``).

    A hyperparameter a classifier does not have is ignored: AdaBoost uses the
    ensemble size and learning rate (with its default depth-1 stumps); gradient
    boosting uses all four; the decision tree uses depth and features; extra
    trees and random forests use size, depth and features.

    Parameters
    ----------
    dataset : str, default "breast_cancer"
        One of :data:`AUTOML_DATASETS`.
    cv : int or None, default None
        None: 1 - accuracy on the fixed 20 % test split (the paper's
        objective). An integer k: 1 - mean accuracy of a stratified k-fold
        cross-validation on the 80 % training part (folds seeded with
        ``split_random_state``), a less noisy variant not used in the paper.
    data_path : str, optional
        Local CSV copy of a data set that cannot be loaded offline.
    data : tuple (X, y), optional
        Arrays to use instead of a named data set (``dataset`` then only names
        the problem).
    test_size : float, default 0.2
    split_random_state : int, default 4242
        Seed of the train/test split (and of the CV folds).
    random_state : int, default 42
        Seed given to every classifier.

    Attributes
    ----------
    n_test : int
        Size of the test split; the objective moves in steps of ``1 / n_test``.
    optimal_value : None
        Unknown (the lower bound is 0).
    """

    def __init__(
        self,
        dataset: str = "breast_cancer",
        *,
        cv: int | None = None,
        data_path: str | None = None,
        data: tuple | None = None,
        test_size: float = 0.2,
        split_random_state: int = 4242,
        random_state: int = 42,
    ):
        from sklearn.model_selection import train_test_split
        from sklearn.preprocessing import MinMaxScaler

        if data is None and dataset not in AUTOML_DATASETS:
            raise ValueError(f"dataset must be one of {list(AUTOML_DATASETS)}, got {dataset!r}")
        if cv is not None and (
            isinstance(cv, bool) or not isinstance(cv, (int, np.integer)) or cv < 2
        ):
            raise ValueError(f"cv must be None or an integer >= 2, got {cv!r}")
        if not 0.0 < test_size < 1.0:
            raise ValueError(f"test_size must be in (0, 1), got {test_size!r}")
        if data is not None:
            X, y = np.asarray(data[0], dtype=float), np.asarray(data[1])
        elif data_path is not None:
            if not os.path.exists(data_path):
                raise DatasetUnavailable(f"data_path {data_path!r} does not exist")
            X, y = _load_csv(data_path)
        elif dataset in BUNDLED_DATASETS:
            X, y = _load_bundled(dataset)
        else:
            raise DatasetUnavailable(
                f"dataset {dataset!r} (OpenML {_OPENML_IDS[dataset]}) is not bundled with "
                "scikit-learn and treebo does not download; pass data_path= to a local CSV copy "
                f"or use one of {list(BUNDLED_DATASETS)}"
            )
        if X.ndim != 2 or len(X) != len(y) or len(X) < 10:
            raise ValueError(
                f"data must be X of shape (n, p) and y of shape (n,) with n >= 10, "
                f"got {X.shape} and {np.shape(y)}"
            )
        self.dataset = dataset
        self.cv = None if cv is None else int(cv)
        self.random_state = random_state
        self.split_random_state = split_random_state
        # As in the official code: the scaler sees the whole data set before the split.
        X = MinMaxScaler().fit_transform(X)
        self._X_train, self._X_test, self._y_train, self._y_test = train_test_split(
            X, y, test_size=test_size, random_state=split_random_state
        )
        self.n_test = len(self._y_test)
        dimensions = {
            "classifier": Categorical(AUTOML_CLASSIFIERS),
            "n_estimators": Integer(10, 200),
            "max_depth": Integer(2, 8),
            "max_features": Real(0.2, 1.0),
            "log10_learning_rate": Real(-3.0, 1.0),
        }
        super().__init__(f"automl_{dataset}", dimensions, optimal_value=None)
        self.params = {
            "dataset": dataset,
            "cv": self.cv,
            "test_size": test_size,
            "split_random_state": split_random_state,
            "random_state": random_state,
        }

    def make_classifier(self, x: dict | list) -> Any:
        """The unfitted scikit-learn classifier that the point ``x`` describes.

        Parameters
        ----------
        x : dict or list
            A point: a dict keyed by the space's names, or a list of values
            in their order.

        Returns
        -------
        sklearn.base.ClassifierMixin
        """
        from sklearn.ensemble import (
            AdaBoostClassifier,
            ExtraTreesClassifier,
            GradientBoostingClassifier,
            RandomForestClassifier,
        )
        from sklearn.tree import DecisionTreeClassifier

        if not isinstance(x, dict):
            if len(x) != self.space.n_dims:
                raise ValueError(
                    f"x must be a dict with keys {self.space.names} or a list of "
                    f"{self.space.n_dims} values in that order, got {x!r}"
                )
            x = dict(zip(self.space.names, x))
        self.space.encode([x])  # a clear ValueError for infeasible points
        p = x
        name, seed = p["classifier"], self.random_state
        size, depth, features = int(p["n_estimators"]), int(p["max_depth"]), p["max_features"]
        rate = 10.0 ** p["log10_learning_rate"]
        if name == "adaboost":
            return AdaBoostClassifier(n_estimators=size, learning_rate=rate, random_state=seed)
        if name == "gradientboosting":
            return GradientBoostingClassifier(
                n_estimators=size,
                max_depth=depth,
                max_features=features,
                learning_rate=rate,
                random_state=seed,
            )
        if name == "decisiontree":
            return DecisionTreeClassifier(max_depth=depth, max_features=features, random_state=seed)
        cls = ExtraTreesClassifier if name == "extratrees" else RandomForestClassifier
        return cls(n_estimators=size, max_depth=depth, max_features=features, random_state=seed)

    def __call__(self, x: dict | list) -> float:
        if self.cv is None:
            return self.test_error(x)
        model = self.make_classifier(x)
        from sklearn.model_selection import StratifiedKFold, cross_val_score

        folds = StratifiedKFold(self.cv, shuffle=True, random_state=self.split_random_state)
        scores = cross_val_score(model, self._X_train, self._y_train, cv=folds)
        return float(1.0 - np.mean(scores))

    def test_error(self, x: dict | list) -> float:
        """1 - accuracy on the held-out 20 % split (the objective itself when ``cv`` is None).

        Parameters
        ----------
        x : dict or list
            A point: a dict keyed by the space's names, or a list of values
            in their order.

        Returns
        -------
        float
        """
        model = self.make_classifier(x)
        model.fit(self._X_train, self._y_train)
        return float(1.0 - model.score(self._X_test, self._y_test))
