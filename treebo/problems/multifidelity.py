"""Multi-fidelity benchmark problems: ``problem(x, budget)``, lower is better.

Each problem has ``min_budget`` and ``max_budget``; ``problem(x)`` evaluates
at ``max_budget``, so the same object serves :func:`~treebo.minimize` (the
full-budget baseline) and :func:`~treebo.minimize_multifidelity`. Every
evaluation trains from scratch, so its cost grows with the budget. The
machine-learning problems use scikit-learn's bundled data sets only (no
download), one fixed stratified split into 2/3 training and 1/3 validation
data, and seeded models, so each value is a deterministic function of
``(x, budget)``.

* ``mf_branin``: Branin with a fidelity ``z = budget / max_budget`` that
  shifts three of its constants, ``b(z) = b - 0.1 (1 - z)``, ``c(z) = c - 0.1
  (1 - z)``, ``t(z) = t + 0.05 (1 - z)``: the multi-fidelity Branin of
  Kandasamy et al., "Multi-fidelity Bayesian Optimisation with Continuous
  Approximations", ICML 2017, with one fidelity for the three shifts.
* ``mf_hartmann6``: Hartmann 6 whose weights move with the fidelity,
  ``alpha(z) = alpha + 0.1 (1 - z) (1, -1, -1, 1)``, after the biased
  Hartmann functions of Kandasamy et al., "Gaussian Process Bandit
  Optimisation with Multi-fidelity Evaluations", NeurIPS 2016.
* ``mf_hgb_cancer``: validation log loss of a ``HistGradientBoostingClassifier``
  on breast_cancer; the budget is ``max_iter`` (3 to 81 boosting rounds).
* ``mf_mlp_digits``: validation log loss of an ``MLPClassifier`` on digits
  trained with ``partial_fit``; the budget is the number of epochs (1 to 27).
* ``mf_svc_digits``: validation error of an ``SVC`` on digits trained on a
  stratified subsample; the budget is the fraction of the training data
  (1/27 to 1).
"""

from __future__ import annotations

import math
import pickle
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from ..files import write_atomically
from ..space import Integer, Real
from .base import Problem
from .continuous import HARTMANN6_A, HARTMANN6_ALPHA, HARTMANN6_P

if TYPE_CHECKING:  # the problems need the class only in their signatures
    from ..multifidelity.checkpoints import Checkpoint

__all__ = [
    "MultiFidelityProblem",
    "MFBranin",
    "MFHartmann6",
    "HGBCancer",
    "MLPDigits",
    "SVCDigits",
    "MULTIFIDELITY_PROBLEMS",
    "get_multifidelity_problem",
]

#: The seed of the validation split and of the models.
_SEED = 0


class MultiFidelityProblem(Problem):
    """A problem evaluated at a budget: ``problem(x, budget)``; ``problem(x)`` is at ``max_budget``.

    Parameters
    ----------
    name : str
        Registry name, e.g. ``"mf_branin"``.
    dimensions : list or dict of dimensions
        The search space.
    optimal_value : float or None
        Known global minimum at ``max_budget``, or None when unknown.
    optimizers : list of points
        Known global minimizers at ``max_budget`` (possibly only some of them).

    Attributes
    ----------
    min_budget, max_budget : int or float
        The budgets it takes, inclusive.
    eta : int
        The rung factor its benchmark uses (``max_budget / min_budget`` is a
        power of it).
    """

    min_budget: Any = 1
    max_budget: Any = 27
    eta: int = 3
    #: Whether a training can continue from a lower budget to a higher one
    #: (:meth:`continue_training`); False where a higher budget is a new training.
    continuable: bool = True

    def __call__(self, x: Any, budget: Any = None) -> float:
        budget = self.max_budget if budget is None else budget
        self._check(x, budget)
        return self.evaluate_at(x, budget)

    def continue_training(self, x: Any, budget: Any, checkpoint: Checkpoint) -> float:
        """The value at ``budget``, continuing the training saved in ``checkpoint``.

        The objective of :func:`~treebo.minimize_multifidelity` with
        ``checkpoint_dir``. A model problem loads the model that
        ``checkpoint.path`` holds at ``checkpoint.budget``, trains it on to
        ``budget`` and saves it there; its value is the one a training from
        scratch gets (``tests/problems/test_multifidelity.py`` checks it).
        A synthetic function returns its value: a training whose value does
        not depend on where it resumed.

        Parameters
        ----------
        x : list or dict
            A point of :attr:`space`.
        budget : int or float
            In ``[min_budget, max_budget]``.
        checkpoint : Checkpoint
            The configuration's directory and the budget it was saved at.

        Returns
        -------
        float

        Raises
        ------
        ValueError
            For a problem that is not :attr:`continuable`, a budget out of
            range or an infeasible point.
        """
        if not self.continuable:
            raise ValueError(
                f"{self.name} cannot continue a training: a higher budget is a new training"
            )
        self._check(x, budget)
        return self.resume_at(x, budget, checkpoint)

    def _check(self, x: Any, budget: Any) -> None:
        if not self.min_budget <= budget <= self.max_budget:
            raise ValueError(
                f"budget must be in [{self.min_budget}, {self.max_budget}], got {budget!r}"
            )
        self.space.encode([x])  # a clear ValueError for an infeasible point

    def evaluate(self, x: np.ndarray) -> float:
        return self.evaluate_at(list(x), self.max_budget)

    def evaluate_at(self, x: Any, budget: Any) -> float:
        """The value at a feasible point and budget; what subclasses implement.

        Parameters
        ----------
        x : list or dict
            A feasible point.
        budget : int or float
            In ``[min_budget, max_budget]``.

        Returns
        -------
        float
        """
        raise NotImplementedError

    def resume_at(self, x: Any, budget: Any, checkpoint: Checkpoint) -> float:
        """:meth:`continue_training` at a feasible point and budget (default: :meth:`evaluate_at`).

        Parameters
        ----------
        x, budget, checkpoint
            As for :meth:`continue_training`, which has checked the point and
            the budget.

        Returns
        -------
        float
        """
        return self.evaluate_at(x, budget)


class MFBranin(MultiFidelityProblem):
    """Branin with fidelity-shifted constants (module docstring); integer budgets 1 to 27."""

    def __init__(self) -> None:
        super().__init__(
            "mf_branin", [Real(-5.0, 10.0), Real(0.0, 15.0)], optimal_value=5.0 / (4.0 * math.pi)
        )

    def evaluate_at(self, x: Any, budget: Any) -> float:
        x1, x2 = float(x[0]), float(x[1])
        gap = 1.0 - budget / self.max_budget
        b = 5.1 / (4.0 * math.pi**2) - 0.1 * gap
        c = 5.0 / math.pi - 0.1 * gap
        t = 1.0 / (8.0 * math.pi) + 0.05 * gap
        return float((x2 - b * x1**2 + c * x1 - 6.0) ** 2 + 10.0 * (1.0 - t) * math.cos(x1) + 10.0)


class MFHartmann6(MultiFidelityProblem):
    """Hartmann 6 with fidelity-shifted weights (module docstring); integer budgets 1 to 27."""

    _SHIFT = np.array([1.0, -1.0, -1.0, 1.0])

    def __init__(self) -> None:
        super().__init__(
            "mf_hartmann6", [Real(0.0, 1.0) for _ in range(6)], optimal_value=-3.32236801141551
        )

    def evaluate_at(self, x: Any, budget: Any) -> float:
        alpha = HARTMANN6_ALPHA + 0.1 * (1.0 - budget / self.max_budget) * self._SHIFT
        inner = np.sum(HARTMANN6_A * (np.asarray(x, float)[None, :] - HARTMANN6_P) ** 2, axis=1)
        return float(-np.sum(alpha * np.exp(-inner)))


class _DataProblem(MultiFidelityProblem):
    """A bundled data set split once into training and validation data (standardized).

    Evaluations run on one thread: several benchmark runs share the machine,
    and OpenMP threads fighting over its cores make a fit many times slower.
    """

    dataset = "digits"

    def __init__(self, name: str, dimensions: Any):
        super().__init__(name, dimensions)
        self._data: tuple | None = None

    def evaluate_at(self, x: Any, budget: Any) -> float:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):
            return self.loss(self.train(x, budget))

    def resume_at(self, x: Any, budget: Any, checkpoint: Checkpoint) -> float:
        from threadpoolctl import threadpool_limits

        saved = checkpoint.path / "model.pkl"
        start = pickle.loads(saved.read_bytes()) if checkpoint.continues else None
        with threadpool_limits(1):
            model = self.train(x, budget, start)
            value = self.loss(model)
        # Written whole or not at all: a killed evaluation leaves the previous state.
        write_atomically(saved, pickle.dumps((budget, model)))
        return value

    def train(self, x: Any, budget: Any, start: tuple[Any, Any] | None = None) -> Any:
        """The model at ``x`` trained up to ``budget``.

        Parameters
        ----------
        x : dict
            A feasible point.
        budget : int or float
        start : (budget, model), optional
            A model trained up to a lower budget, to continue (only for a
            :attr:`continuable` problem).

        Returns
        -------
        A fitted scikit-learn model.
        """
        raise NotImplementedError

    def loss(self, model: Any) -> float:
        """The validation loss of a model :meth:`train` made.

        Parameters
        ----------
        model : a fitted scikit-learn model

        Returns
        -------
        float
        """
        raise NotImplementedError

    def data(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``X_train, X_valid, y_train, y_valid``, made on first use."""
        if self._data is None:
            from sklearn import datasets
            from sklearn.model_selection import train_test_split
            from sklearn.preprocessing import StandardScaler

            X, y = getattr(datasets, f"load_{self.dataset}")(return_X_y=True)
            X_train, X_valid, y_train, y_valid = train_test_split(
                X, y, test_size=1 / 3, stratify=y, random_state=_SEED
            )
            scaler = StandardScaler().fit(X_train)
            self._data = (scaler.transform(X_train), scaler.transform(X_valid), y_train, y_valid)
        return self._data

    def __getstate__(self) -> dict:  # workers rebuild the data rather than receive it
        return {**self.__dict__, "_data": None}


class HGBCancer(_DataProblem):
    """Gradient boosting on breast_cancer, ``max_iter`` as the budget (3 to 81 rounds)."""

    dataset = "breast_cancer"
    min_budget, max_budget = 3, 81

    def __init__(self) -> None:
        super().__init__(
            "mf_hgb_cancer",
            {
                "learning_rate": Real(0.01, 1.0, "log-uniform"),
                "max_leaf_nodes": Integer(4, 64, "log-uniform"),
                "min_samples_leaf": Integer(2, 64, "log-uniform"),
                "l2_regularization": Real(1e-6, 10.0, "log-uniform"),
                "max_features": Real(0.1, 1.0),
            },
        )

    def train(self, x: Any, budget: Any, start: tuple[Any, Any] | None = None) -> Any:
        from sklearn.ensemble import HistGradientBoostingClassifier

        X_train, _, y_train, _ = self.data()
        if start is None:
            # warm_start changes nothing in a first fit; a later one adds rounds.
            model = HistGradientBoostingClassifier(
                max_iter=int(budget), early_stopping=False, random_state=_SEED, warm_start=True, **x
            )
        else:
            model = start[1].set_params(max_iter=int(budget))
        return model.fit(X_train, y_train)

    def loss(self, model: Any) -> float:
        from sklearn.metrics import log_loss

        _, X_valid, _, y_valid = self.data()
        return float(log_loss(y_valid, model.predict_proba(X_valid), labels=model.classes_))


class MLPDigits(_DataProblem):
    """A one-hidden-layer network on digits, epochs of ``partial_fit`` as the budget (1 to 27)."""

    min_budget, max_budget = 1, 27

    def __init__(self) -> None:
        super().__init__(
            "mf_mlp_digits",
            {
                "hidden": Integer(16, 256, "log-uniform"),
                "learning_rate_init": Real(1e-4, 1e-1, "log-uniform"),
                "alpha": Real(1e-6, 1e-1, "log-uniform"),
                "batch_size": Integer(16, 256, "log-uniform"),
            },
        )

    def train(self, x: Any, budget: Any, start: tuple[Any, Any] | None = None) -> Any:
        from sklearn.neural_network import MLPClassifier

        X_train, _, y_train, _ = self.data()
        if start is None:
            trained, model = (
                0,
                MLPClassifier(
                    hidden_layer_sizes=(int(x["hidden"]),),
                    learning_rate_init=x["learning_rate_init"],
                    alpha=x["alpha"],
                    batch_size=int(x["batch_size"]),
                    random_state=_SEED,
                ),
            )
        else:
            trained, model = int(start[0]), start[1]
        classes = np.unique(y_train)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # overflow in a diverging network is a bad value
            for _ in range(int(budget) - trained):
                model.partial_fit(X_train, y_train, classes=classes)
        return model

    def loss(self, model: Any) -> float:
        from sklearn.metrics import log_loss

        _, X_valid, _, y_valid = self.data()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(log_loss(y_valid, model.predict_proba(X_valid), labels=model.classes_))


class SVCDigits(_DataProblem):
    """An RBF SVC on digits, the fraction of the training data as the budget (1/27 to 1)."""

    min_budget, max_budget = 1 / 27, 1.0
    continuable = False

    def __init__(self) -> None:
        super().__init__(
            "mf_svc_digits",
            {"C": Real(1e-2, 1e4, "log-uniform"), "gamma": Real(1e-5, 1e1, "log-uniform")},
        )

    def train(self, x: Any, budget: Any, start: tuple[Any, Any] | None = None) -> Any:
        from sklearn.svm import SVC

        X_train, _, y_train, _ = self.data()
        rows = _stratified_rows(y_train, budget)
        return SVC(C=x["C"], gamma=x["gamma"]).fit(X_train[rows], y_train[rows])

    def loss(self, model: Any) -> float:
        _, X_valid, _, y_valid = self.data()
        return float(np.mean(model.predict(X_valid) != y_valid))


def _stratified_rows(y: np.ndarray, fraction: float) -> np.ndarray:
    """The first ``fraction`` of each class in a fixed shuffle; nested as the fraction grows."""
    order = np.random.default_rng(_SEED).permutation(len(y))
    rows = []
    for label in np.unique(y):
        members = order[y[order] == label]
        rows.append(members[: max(2, int(round(fraction * len(members))))])
    return np.sort(np.concatenate(rows))


#: Name -> class of every multi-fidelity problem.
MULTIFIDELITY_PROBLEMS = {
    cls().name: cls for cls in (MFBranin, MFHartmann6, HGBCancer, MLPDigits, SVCDigits)
}


def get_multifidelity_problem(name: str) -> MultiFidelityProblem:
    """A new instance of the multi-fidelity problem ``name`` (:data:`MULTIFIDELITY_PROBLEMS`).

    Parameters
    ----------
    name : str
        One of the keys of :data:`MULTIFIDELITY_PROBLEMS`.

    Returns
    -------
    MultiFidelityProblem

    Raises
    ------
    ValueError
        For an unknown name, listing the known ones.
    """
    try:
        return MULTIFIDELITY_PROBLEMS[name]()
    except KeyError:
        raise ValueError(
            f"name must be one of {sorted(MULTIFIDELITY_PROBLEMS)}, got {name!r}"
        ) from None
