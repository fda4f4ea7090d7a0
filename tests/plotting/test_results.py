"""Figures of a result: what each one draws is checked against the numbers it shows."""

import math
import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip(
    "matplotlib", reason="the figures need matplotlib: pip install 'treebo[plot]'"
)
matplotlib.use("Agg")

from treebo import Binary, Categorical, Integer, Real, minimize  # noqa: E402
from treebo.plotting import (  # noqa: E402
    plot_convergence,
    plot_evaluations,
    plot_importance,
    plot_objective,
)
from treebo.results.inspection import (  # noqa: E402
    fit_surrogate,
    parameter_importance,
    partial_dependence,
    partial_dependence_2d,
)

SPACE = {
    "a": Real(-1, 1),
    "n": Integer(1, 100, "log-uniform"),
    "c": Categorical(["u", "v"]),
    "b": Binary(),
}


def _objective(x):
    if x["a"] > 0.7:
        raise RuntimeError("a > 0.7 fails")
    return (x["a"] - 0.3) ** 2 + (0.2 if x["c"] == "u" else 0.0) + 0.1 * x["b"]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    path = tmp_path_factory.mktemp("plots") / "study.db"
    res = minimize(_objective, SPACE, n_calls=16, random_state=0, storage=path, n_candidates=1000)
    return path, res


def _lines(fig, gid):
    return [line for ax in fig.axes for line in ax.get_lines() if line.get_gid() == gid]


def test_convergence_is_the_best_value_so_far(study):
    path, res = study
    fig = plot_convergence(res)
    (line,) = _lines(fig, "best-so-far")
    x, y = line.get_data()
    assert list(x) == list(range(1, len(res.func_vals) + 1))
    finite = np.isfinite(y)
    assert np.all(np.diff(y[finite]) <= 0)  # non-increasing
    assert y[-1] == res.fun  # ends at the best value
    assert y[0] == res.func_vals[0]
    # A failed evaluation (NaN) keeps the best value before it.
    failed = np.flatnonzero(np.isnan(res.func_vals))
    assert len(failed) and all(y[k] == y[k - 1] for k in failed if k > 0)


def test_convergence_overlays_labelled_results(study):
    path, res = study
    short = minimize(_objective, SPACE, n_calls=8, random_state=1, n_candidates=500)
    fig = plot_convergence({"long": res, "short": short, "stored": path})
    lines = _lines(fig, "best-so-far")
    assert [line.get_label() for line in lines] == ["long", "short", "stored"]
    assert [line.get_ydata()[-1] for line in lines] == [res.fun, short.fun, res.fun]
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["long", "short", "stored"]
    fig = plot_convergence([res, short])
    assert [line.get_label() for line in _lines(fig, "best-so-far")] == ["run 1", "run 2"]
    with pytest.raises(ValueError, match="labels has 1 entries for 2 results"):
        plot_convergence([res, short], labels=["one"])


def test_objective_draws_the_partial_dependence(study):
    path, res = study
    fig = plot_objective(path, n_points=12, n_samples=32, n_points_2d=6, n_samples_2d=16)
    axes = np.array(fig.axes[:16]).reshape(4, 4)
    assert sum(ax.get_visible() for ax in axes.ravel()) == 10  # diagonal and below
    model = fit_surrogate(path)
    for k, name in enumerate(SPACE):
        (line,) = [ln for ln in axes[k, k].get_lines() if ln.get_gid() == "partial-dependence"]
        curve = partial_dependence(path, name, model=model, n_points=12, n_samples=32)
        np.testing.assert_allclose(line.get_ydata(), curve.average)
        np.testing.assert_allclose(line.get_xdata(), curve.positions)
    assert axes[1, 1].get_xscale() == "log"  # n is log-uniform
    assert [t.get_text() for t in axes[2, 2].get_xticklabels()] == ["u", "v"]
    # Below the diagonal: the pair's partial dependence as a colour map.
    (mesh,) = axes[2, 0].collections[:1]
    pair = partial_dependence_2d(path, "a", "c", model=model, n_points=6, n_samples=16)
    np.testing.assert_allclose(np.asarray(mesh.get_array()).reshape(2, 6), pair.average.T)


def test_objective_of_chosen_dimensions(study):
    _, res = study
    fig = plot_objective(
        res, dimensions=["c", "a"], n_points=8, n_samples=16, n_points_2d=4, n_samples_2d=8
    )
    axes = np.array(fig.axes[:4]).reshape(2, 2)
    assert axes[1, 1].get_xlabel() == "a" and axes[1, 0].get_xlabel() == "c"
    with pytest.raises(ValueError, match="dimensions must be names of the space"):
        plot_objective(res, dimensions=["zzz"])


def test_evaluations_show_every_evaluated_point(study):
    _, res = study
    fig = plot_evaluations(res)
    axes = np.array(fig.axes[:16]).reshape(4, 4)
    n = len(res.x_iters)
    for k in range(4):
        heights = [p.get_height() for p in axes[k, k].patches]
        assert sum(heights) == n  # every evaluated point
    counts = [p.get_height() for p in axes[2, 2].patches]
    assert counts == [
        sum(x["c"] == "u" for x in res.x_iters),
        sum(x["c"] == "v" for x in res.x_iters),
    ]
    # The pair (a, c): a at its value, c spread around its index by at most 0.15.
    (points,) = [c for c in axes[2, 0].collections if c.get_gid() == "evaluations"]
    xy = points.get_offsets()
    np.testing.assert_allclose(xy[:, 0], [x["a"] for x in res.x_iters])
    index = np.array([["u", "v"].index(x["c"]) for x in res.x_iters])
    assert np.all(np.abs(xy[:, 1] - index) <= 0.15)
    np.testing.assert_array_equal(points.get_array(), np.arange(1, n + 1))  # order


def test_importance_bars_are_the_importance(study):
    path, res = study
    imp = parameter_importance(res, n_samples=64)
    fig = plot_importance(imp)
    bars = fig.axes[0].patches
    widths = sorted(p.get_width() for p in bars)
    np.testing.assert_allclose(widths, np.sort(imp.importance))
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels[-1] == max(imp.to_dict(), key=imp.to_dict().get)  # largest on top
    assert math.isclose(sum(widths), 1.0)
    fig = plot_importance(path)  # computed from the storage file
    assert len(fig.axes[0].patches) == 4


def test_figures_are_pyplot_figures(study):
    import matplotlib.pyplot as plt

    _, res = study
    fig = plot_convergence(res)
    assert fig.number in plt.get_fignums()  # plt.show() shows it, plt.close() closes it
    _, ax = plt.subplots()
    assert plot_convergence(res, ax=ax) is ax.figure and len(plt.get_fignums()) == 2


def test_missing_matplotlib_names_the_extra(study, monkeypatch):
    _, res = study
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install 'treebo\[plot\]'"):
        plot_convergence(res)


def test_an_integer_dimension_with_few_values_has_a_bar_per_value():
    res = minimize(
        lambda x: (x[0] - 3) ** 2, [Integer(1, 6)], n_calls=8, random_state=0, n_candidates=200
    )
    fig = plot_evaluations(res)
    bars = fig.axes[0].patches
    assert [round(p.get_x() + p.get_width() / 2) for p in bars] == [1, 2, 3, 4, 5, 6]
    assert [p.get_height() for p in bars] == [
        sum(x[0] == k for x in res.x_iters) for k in range(1, 7)
    ]
