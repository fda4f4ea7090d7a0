"""The AutoML problem (problems.md §5)."""

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler
from sklearn.tree import DecisionTreeClassifier

from treebo.problems import AUTOML_CLASSIFIERS, AutoML, DatasetUnavailable, get_problem
from treebo.space import Categorical, Integer, Real

POINT = {
    "classifier": "decisiontree",
    "n_estimators": 50,
    "max_depth": 3,
    "max_features": 0.5,
    "log10_learning_rate": -1.0,
}


@pytest.fixture(scope="module")
def wine():
    return AutoML("wine")


def test_space_is_table_1(wine):
    space = wine.space
    assert space.names == [
        "classifier",
        "n_estimators",
        "max_depth",
        "max_features",
        "log10_learning_rate",
    ]
    assert space.n_columns == 9  # 5 one-hot columns + 4 numbers, as in the official code
    classifier, size, depth, features, rate = space.dimensions
    assert isinstance(classifier, Categorical) and tuple(
        classifier.categories
    ) == AUTOML_CLASSIFIERS == (
        "adaboost",
        "gradientboosting",
        "decisiontree",
        "extratrees",
        "randomforest",
    )
    assert isinstance(size, Integer) and (size.low, size.high) == (10, 200)
    assert isinstance(depth, Integer) and (depth.low, depth.high) == (2, 8)
    assert isinstance(features, Real) and (features.low, features.high) == (0.2, 1.0)
    assert isinstance(rate, Real) and (rate.low, rate.high) == (-3.0, 1.0)
    assert wine.optimal_value is None


def test_value_is_the_papers_holdout_error(wine):
    # Independently: scale on all data, unstratified 80/20 split with seed 4242, seed 42.
    X, y = load_wine(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        MinMaxScaler().fit_transform(X), y, test_size=0.2, random_state=4242
    )
    model = DecisionTreeClassifier(max_depth=3, max_features=0.5, random_state=42)
    expected = 1.0 - model.fit(X_train, y_train).score(X_test, y_test)
    assert wine.n_test == 36
    assert wine(POINT) == pytest.approx(expected, abs=1e-15)
    assert wine.test_error(POINT) == wine(POINT)


def test_deterministic_and_on_the_accuracy_grid(wine):
    rng = np.random.default_rng(0)
    for point in wine.space.sample(4, rng):
        point["n_estimators"] = 10  # keep the test fast
        value = wine(point)
        assert value == wine(point)
        assert 0.0 <= value <= 1.0
        assert value * wine.n_test == pytest.approx(round(value * wine.n_test), abs=1e-9)


def test_hyperparameters_a_classifier_lacks_are_ignored(wine):
    other = dict(POINT, n_estimators=180, log10_learning_rate=0.5)
    assert wine(other) == wine(POINT)
    boost = {
        "classifier": "adaboost",
        "n_estimators": 20,
        "max_depth": 2,
        "max_features": 0.3,
        "log10_learning_rate": -0.5,
    }
    assert wine(boost) == wine(dict(boost, max_depth=8, max_features=0.9))
    model = wine.make_classifier(boost)
    assert model.n_estimators == 20 and model.learning_rate == pytest.approx(10**-0.5)
    gb = wine.make_classifier(dict(boost, classifier="gradientboosting"))
    assert (gb.max_depth, gb.max_features, gb.random_state) == (2, 0.3, 42)


def test_list_points_and_infeasible_points(wine):
    assert wine(list(POINT.values())) == wine(POINT)
    with pytest.raises(ValueError, match="max_depth"):
        wine(dict(POINT, max_depth=9))
    with pytest.raises(ValueError, match="classifier"):
        wine(dict(POINT, classifier="svm"))


def test_cross_validation_variant():
    problem = AutoML("wine", cv=3)
    value = problem(POINT)
    assert value == problem(POINT)
    assert 0.0 <= value <= 1.0
    assert problem.params["cv"] == 3


def test_datasets():
    assert AutoML("breast_cancer").n_test == 114
    assert get_problem("automl_digits").n_test == 360
    assert get_problem("automl_iris").name == "automl_iris"
    for name in ("authorship", "phoneme"):
        with pytest.raises(DatasetUnavailable, match="data_path"):
            AutoML(name)
    with pytest.raises(ValueError, match="dataset must be one of"):
        AutoML("mnist")
    with pytest.raises(ValueError, match="cv"):
        AutoML("wine", cv=1)


def test_local_copy_of_an_openml_dataset(tmp_path):
    X, y = load_wine(return_X_y=True)
    path = tmp_path / "phoneme.csv"
    rows = ["a,b,c,label"] + [f"{r[0]},{r[1]},{r[2]},class{t}" for r, t in zip(X, y)]
    path.write_text("\n".join(rows) + "\n")
    problem = AutoML("phoneme", data_path=str(path))
    assert problem.name == "automl_phoneme" and problem.n_test == 36
    assert 0.0 <= problem(POINT) <= 1.0
    from_arrays = AutoML("phoneme", data=(X[:, :3], y))
    assert from_arrays(POINT) == problem(POINT)
    with pytest.raises(DatasetUnavailable):
        AutoML("phoneme", data_path=str(tmp_path / "missing.csv"))
