"""Figures of several objectives: the front and the hypervolume they draw are the study's."""

import numpy as np
import pytest

matplotlib = pytest.importorskip(
    "matplotlib", reason="the figures need matplotlib: pip install 'treebo[plot]'"
)
matplotlib.use("Agg")

from treebo import Optimizer, Real, minimize  # noqa: E402
from treebo.plotting import plot_hypervolume, plot_pareto_front  # noqa: E402
from treebo.results.front import (  # noqa: E402
    hypervolume_curve,
    hypervolume_reference,
    objective_values,
)

# (a, b, c) told at x = 0.0, 0.1, ...; None is a failed evaluation. a is minimized, b
# maximized, and c <= 0 is the constraint.
TOLD = [(1, 1, 0), (2, 3, 0), (0, 5, 1), (3, 2, 0), None, (0.5, 0.5, -1)]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture(scope="module")
def result():
    opt = Optimizer(
        [Real(0, 1)],
        objectives={"a": "minimize", "b": "maximize"},
        constraints=["c <= 0"],
        random_state=0,
    )
    for k, told in enumerate(TOLD):
        if told is None:
            opt.tell([k / 10], None, error="crashed")
        else:
            opt.tell([k / 10], dict(zip("abc", told)))
    return opt.get_result()


def test_the_numbers_behind_the_figures(result):
    values, feasible = objective_values(result)
    assert feasible.tolist() == [True, True, False, True, False, True]
    assert np.isnan(values[4]).all() and values[2].tolist() == [0, 5]
    # Feasible a: 0.5 to 3 (worst 3, minimized); feasible b: 0.5 to 3 (worst 0.5, maximized):
    # each moved 10% of its range beyond the worst.
    assert hypervolume_reference(result) == pytest.approx([3.25, 0.25])
    # By hand: (1, 1) alone dominates 2.25 x 0.75; (2, 3) adds 1.25 x 2.75 minus the
    # overlap; the infeasible (0, 5), the dominated (3, 2) and the failure add nothing;
    # (0.5, 0.5) adds 0.5 x 0.25.
    assert hypervolume_curve(result) == pytest.approx(
        [1.6875, 4.1875, 4.1875, 4.1875, 4.1875, 4.3125]
    )
    assert hypervolume_curve(result, reference=[4.0, 0.0])[0] == pytest.approx(3.0)


def _collection(ax, gid):
    (found,) = [c for c in ax.collections if c.get_gid() == gid]
    return found.get_offsets().data


def test_pareto_front_of_two_objectives(result):
    assert list(result.pareto_index) == [5, 0, 1]
    fig = plot_pareto_front(result)
    (ax,) = fig.axes
    # Axes: first objective across, second up, in their own units.
    assert _collection(ax, "front").tolist() == [[0.5, 0.5], [1, 1], [2, 3]]
    assert _collection(ax, "infeasible").tolist() == [[0, 5]]
    assert sorted(map(tuple, _collection(ax, "feasible").tolist())) == [
        (0.5, 0.5),
        (1, 1),
        (2, 3),
        (3, 2),
    ]
    (line,) = [line for line in ax.get_lines() if line.get_gid() == "front-line"]
    assert line.get_drawstyle() == "steps-post"
    assert line.get_xdata().tolist() == [0.5, 1, 2] and line.get_ydata().tolist() == [0.5, 1, 3]
    assert "b (higher is better)" == ax.get_ylabel()


def test_hypervolume_figure(result):
    fig = plot_hypervolume(result)
    (line,) = [
        line for ax in fig.axes for line in ax.get_lines() if line.get_gid() == "hypervolume"
    ]
    assert line.get_xdata().tolist() == list(range(1, 7))
    assert line.get_ydata() == pytest.approx(hypervolume_curve(result))
    assert "reference point: a 3.25, b 0.25" in fig.axes[0].get_title()


def test_three_objectives_are_drawn_as_pairs():
    def f(x):
        return {"u": x[0], "v": 1 - x[0] + x[1], "w": x[1] ** 2}

    res = minimize(
        f,
        [Real(0, 1), Real(0, 1)],
        n_calls=8,
        objectives=["u", "v", "w"],
        random_state=0,
        n_candidates=256,
    )
    fig = plot_pareto_front(res)
    shown = [ax for ax in fig.axes if ax.get_visible()]
    # Panels by rows: objective j across, i > j up.
    assert [(ax.get_xlabel().split()[0], ax.get_ylabel().split()[0]) for ax in shown] == [
        ("u", "v"),
        ("u", "w"),
        ("v", "w"),
    ]
    values, _ = objective_values(res)
    for ax in shown:
        assert len(_collection(ax, "front")) == len(res.pareto_index)
        assert not [line for line in ax.get_lines() if line.get_gid() == "front-line"]
    assert _collection(shown[2], "front").tolist() == values[res.pareto_index][:, [1, 2]].tolist()


def test_plot_pareto_front_needs_two_objectives():
    res = minimize(lambda x: {"u": x[0]}, [Real(0, 1)], n_calls=3, objectives=["u"], random_state=0)
    with pytest.raises(ValueError, match="needs two objectives or more"):
        plot_pareto_front(res)
    with pytest.raises(ValueError, match="made without objectives"):
        objective_values(minimize(lambda x: x[0], [Real(0, 1)], n_calls=3, random_state=0))
