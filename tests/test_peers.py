"""benchmarks/peers/: peer optimizers recorded like treebo's own runs.

The peers' libraries come with ``pip install 'treebo[peers]'``; each slow test
skips when its library is absent. The random peer needs nothing extra.
"""

import json
import math

import numpy as np
import pytest
from benchmark_scripts import load_script

from treebo import Optimizer, minimize
from treebo.bench import (
    RunSpec,
    append_record,
    build_problem,
    completed_runs,
    default_n_initial,
    format_summary,
    load_results,
    run_one,
    summary_table,
)
from treebo.problems import Problem, available_problems, paper_case_seed
from treebo.space import Binary, Categorical, Integer, Real

peers = load_script("peers/__init__.py")


def check_record(record, problem_name, peer, seed, n_calls):
    """What every peer's record must satisfy."""
    problem = build_problem(RunSpec(problem_name, peer, seed, n_calls))
    assert record["surrogate"] == peer and record["problem"] == problem_name
    assert record["key"] == RunSpec(problem_name, peer, seed, n_calls).key()
    assert record["n_evaluated"] == n_calls == len(record["values"])
    n0 = record["n_initial"]
    if not problem.record_points:
        assert record["x"] is None
    else:
        assert len(record["x"]) == n_calls
        # The first points are treebo's initial design of the seed.
        design = Optimizer(problem.space, n_initial_points=n0, random_state=seed).ask(n0)
        assert record["x"][:n0] == design
        # The values are the problem's at the recorded points.
        for x, value in zip(record["x"], record["values"]):
            assert value == pytest.approx(problem(x), rel=1e-12, abs=1e-12)
    best = record["best_so_far"]
    assert all(b1 <= b0 for b0, b1 in zip(best, best[1:]))
    assert best == list(np.minimum.accumulate(record["values"]))
    assert record["acq_time"][:n0] == [0.0] * n0 and min(record["acq_time"][n0:]) > 0.0
    assert record["fit_time"] == [0.0] * n_calls and len(record["eval_time"]) == n_calls
    json.dumps(record, allow_nan=False)


# -- fast: the random peer, the record layout, the command line -----------------------------
def test_treebo_initial_design_is_what_minimize_evaluates_first():
    record = run_one(RunSpec("branin", "rf", 3, 6, overrides={"n_candidates": 256}))
    problem = build_problem(RunSpec("branin", "rf", 3, 6))
    assert record["x"][:5] == peers.initial_design(problem, 3)


def test_random_peer_record_has_run_ones_layout():
    ours = run_one(RunSpec("branin", "rf", 0, 6, overrides={"n_candidates": 256}))
    record = peers.run_peer("random", "branin", 0, 8)
    assert set(record) == set(ours)
    assert record["preset"] == "default" and record["overrides"] == {}
    assert record["problem_params"] == {} and record["n_initial"] == 5
    assert set(ours["versions"]) <= set(record["versions"])
    check_record(record, "branin", "random", 0, 8)
    assert record["regret"] == [b - record["optimal_value"] for b in record["best_so_far"]]
    # Seeded: the same run again gives the same points.
    assert peers.run_peer("random", "branin", 0, 8)["x"] == record["x"]


def test_binary_problems_use_the_seeds_instance_and_55_calls():
    assert peers.peer_n_calls("ising") == 55 and peers.peer_n_calls("branin") == 100
    record = peers.run_peer("random", "ising", 2, 7)
    assert record["instance_params"]["instance"] == paper_case_seed(2)
    check_record(record, "ising", "random", 2, 7)


def test_command_line_resumes_and_summary_shows_peers_after_treebo(tmp_path, capsys):
    out = tmp_path / "regret"
    argv = [
        "--problems",
        "branin",
        "--peers",
        "random",
        "--seeds",
        "0-1",
        "--n-calls",
        "7",
        "--out",
        str(out),
    ]
    assert peers.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("branin/random/seed 0:")
    assert peers.main(argv) == 0  # everything is there already: nothing runs
    assert capsys.readouterr().out == ""
    records = load_results(out)
    assert len(records) == 2
    key = RunSpec("branin", "random", 1, 7).key()
    assert completed_runs(records)[key] == 7
    # treebo's own runs in the same directory: peers come after treebo's surrogates.
    for seed in (0, 1):
        spec = RunSpec("branin", "rf", seed, 7, overrides={"n_candidates": 256})
        append_record(out, run_one(spec))
    table = summary_table(load_results(out))
    assert table["branin"]["n_seeds"] == {"rf": 2, "random": 2}
    header = format_summary(table).splitlines()[0]
    assert header.index("| rf |") < header.index("| random |")


def test_a_missing_library_is_reported_with_the_extra(tmp_path, capsys, monkeypatch):
    missing = peers.Peer(
        "skopt_et", {"treebo_no_such_module": "scikit-optimize"}, peers.PEERS["skopt_et"].run
    )
    monkeypatch.setitem(peers.PEERS, "skopt_et", missing)
    status = peers.main(
        [
            "--problems",
            "branin",
            "--peers",
            "skopt_et",
            "random",
            "--seeds",
            "0",
            "--n-calls",
            "6",
            "--out",
            str(tmp_path),
        ]
    )
    captured = capsys.readouterr()
    assert status == 1
    assert "skipping skopt_et: scikit-optimize not installed" in captured.err
    assert "pip install 'treebo[peers]'" in captured.err and "Traceback" not in captured.err
    assert captured.out.startswith("branin/random/seed 0:")
    with pytest.raises(ImportError, match=r"treebo\[peers\]"):
        peers.run_peer("skopt_et", "branin", 0, 6)


def test_bad_arguments_exit_2(tmp_path, capsys):
    assert peers.main(["--problems", "nope", "--out", str(tmp_path)]) == 2
    assert peers.main(["--problems", "branin", "--peers", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown peer" in capsys.readouterr().err


def test_command_line_selects_bbob_problems(tmp_path, capsys):
    pytest.importorskip("cocoex", reason="bbob needs cocoex: pip install 'treebo[bbob]'")
    argv = [
        "--problems",
        "bbob",
        "--functions",
        "1",
        "--dims",
        "2",
        "--instances",
        "1-2",
        "--peers",
        "random",
        "--seeds",
        "0",
        "--out",
        str(tmp_path),
    ]
    assert peers.main(argv) == 0
    records = load_results(tmp_path)
    assert sorted(r["problem"] for r in records) == ["bbob_f01_d2_i1", "bbob_f01_d2_i2"]
    for record in records:
        assert record["regret_floor"] == 1e-8 and record["n_calls"] == 40  # 20 D
        check_record(record, record["problem"], "random", 0, 40)
    assert peers.main(["--problems", "branin", "--dims", "2", "--out", str(tmp_path)]) == 2
    assert "needs the word 'bbob'" in capsys.readouterr().err


# -- slow: one short run of every peer -------------------------------------------------------
LIBRARY_PEERS = [name for name in peers.PEERS if name != "random"]
# Peers for real and integer dimensions only: they refuse binary and categorical ones.
NUMERIC_PEERS = {"optuna_cmaes"}


def _require(peer):
    for module in peers.PEERS[peer].requires:
        pytest.importorskip(module, reason=f"{peer} needs {module}: pip install 'treebo[peers]'")


@pytest.mark.slow
@pytest.mark.parametrize("peer", LIBRARY_PEERS)
@pytest.mark.parametrize("problem, n_calls", [("branin", 8), ("ising", 7)])
def test_peer_short_run(peer, problem, n_calls):
    _require(peer)
    if peer in NUMERIC_PEERS and problem == "ising":
        with pytest.raises(peers.UnsupportedSpace, match="binary and categorical"):
            peers.run_peer(peer, problem, 0, n_calls)
        return
    with peers.single_thread():
        record = peers.run_peer(peer, problem, 0, n_calls)
    check_record(record, problem, peer, 0, n_calls)
    assert record["settings"]["peer"] == peer
    assert set(peers.PEERS[peer].versions()) <= set(record["versions"])
    table = summary_table(load_results_of([record]))
    assert list(table[problem]["median"]) == [peer]


def load_results_of(records):
    """Records through a JSON round trip, as load_results gives them."""
    return [json.loads(json.dumps(r)) for r in records]


class MixedProblem(Problem):
    """Every dimension kind treebo has, with a log-uniform real and integer."""

    def __init__(self):
        super().__init__(
            "mixed_test",
            {
                "lr": Real(1e-4, 1.0, prior="log-uniform"),
                "u": Real(-1.0, 2.0),
                "n": Integer(1, 1000, prior="log-uniform"),
                "k": Integer(-3, 3),
                "b": Binary(),
                "c": Categorical(["a", "b", "c"]),
            },
        )

    def __call__(self, x):
        self.space.encode([x])
        return (
            (math.log10(x["lr"]) + 2) ** 2
            + x["u"] ** 2
            + abs(math.log(x["n"]) - 3)
            + abs(x["k"])
            + x["b"]
            + {"a": 1.0, "b": 0.0, "c": 2.0}[x["c"]]
        )


@pytest.mark.slow
@pytest.mark.parametrize("peer", list(peers.PEERS))
def test_peer_maps_every_dimension_kind(peer):
    _require(peer)
    problem = MixedProblem()
    x0 = peers.initial_design(problem, 1)
    run = peers.PeerRun(problem, x0, 9)
    if peer in NUMERIC_PEERS:
        with pytest.raises(peers.UnsupportedSpace, match=r"\['b', 'c'\]"):
            peers.PEERS[peer].run(run, 1)
        assert run.x == []  # refused before anything was evaluated
        return
    with peers.single_thread():
        peers.PEERS[peer].run(run, 1)
    assert len(run.x) == 9 and run.x[:5] == x0
    for x, value in zip(run.x, run.values):
        problem.space.encode([x])  # feasible
        assert isinstance(x["n"], int) and isinstance(x["b"], int) and x["c"] in "abc"
        assert value == problem(x)


# -- conditional spaces ------------------------------------------------------------------------
CONDITIONAL_PEERS = [name for name, peer in peers.PEERS.items() if peer.conditional]


class ConditionalProblem(Problem):
    """Model selection in miniature: a child listed before its parent, a condition on
    several values of a parent, nested conditions, and one on two parents (AND)."""

    def __init__(self):
        super().__init__(
            "conditional_test",
            {
                "degree": Integer(2, 5, active_if={"kernel": "poly"}),
                "model": Categorical(["svm", "tree", "knn"]),
                "C": Real(1e-3, 1e3, prior="log-uniform", active_if={"model": "svm"}),
                "kernel": Categorical(["rbf", "poly", "linear"], active_if={"model": "svm"}),
                "gamma": Real(
                    1e-4, 1.0, prior="log-uniform", active_if={"kernel": ["rbf", "poly"]}
                ),
                "depth": Integer(1, 10, active_if={"model": "tree"}),
                "bootstrap": Binary(active_if={"model": ["tree", "knn"]}),
                "k": Integer(1, 30, active_if={"model": "knn", "bootstrap": 1}),
                "u": Real(-1.0, 1.0),
            },
        )
        self.received = []

    def __call__(self, x):
        # The objective never sees an inactive dimension, nor misses an active one.
        assert x == self.space.drop_inactive(x), x
        self.received.append(dict(x))
        value = x["u"] ** 2
        if x["model"] == "svm":
            value += abs(math.log10(x["C"]) - 1) + {"rbf": 0, "poly": 0.3, "linear": 1}[x["kernel"]]
            value += abs(math.log10(x["gamma"]) + 2) if "gamma" in x else 0.0
            value += 0.1 * x.get("degree", 0)
        elif x["model"] == "tree":
            value += 1 + abs(x["depth"] - 5) / 5 + 0.2 * x["bootstrap"]
        else:
            value += 2 + (abs(x["k"] - 7) / 10 if "k" in x else 0.5)
        return value


def run_conditional(peer, seed=3, n_initial=10, n_calls=14):
    problem = ConditionalProblem()
    x0 = peers.initial_design(problem, seed, n_initial)
    run = peers.PeerRun(problem, x0, n_calls)
    with peers.single_thread():
        settings = peers.PEERS[peer].run(run, seed)
    assert len(run.x) == n_calls and run.x[:n_initial] == x0
    assert problem.received == run.x  # every evaluation went through the checking objective
    for x, value in zip(run.x, run.values):
        assert list(x) == [n for n in problem.space.names if n in x]  # the space's order
        assert isinstance(x["model"], str) and all(
            isinstance(x[n], int) for n in ("degree", "depth", "bootstrap", "k") if n in x
        )
        assert value == problem(x)
    return run, settings


def test_initial_design_of_a_conditional_space_is_what_minimize_evaluates_first():
    problem = ConditionalProblem()
    result = minimize(
        problem, problem.space, n_calls=11, n_initial_points=10, random_state=2, n_candidates=256
    )
    design = peers.initial_design(problem, 2, 10)
    assert result.x_iters[:10] == design
    assert any("k" in x for x in design) or any("degree" in x for x in design)
    assert len({len(x) for x in design}) > 1  # points of several branches


def test_library_conditions_are_parents_first_in_library_values():
    conditions = peers.library_conditions(ConditionalProblem().space)
    order = [dim.name for dim, _ in conditions]
    assert order == ["model", "C", "kernel", "degree", "gamma", "depth", "bootstrap", "k", "u"]
    by_name = {dim.name: c for dim, c in conditions}
    assert by_name["degree"] == [("kernel", [1])] and by_name["gamma"] == [("kernel", [0, 1])]
    assert by_name["k"] == [("model", [2]), ("bootstrap", [1])] and by_name["u"] == []
    assert peers.is_active(by_name["k"], {"model": 2, "bootstrap": 1})
    assert not peers.is_active(by_name["k"], {"model": 2})  # an inactive parent


def test_active_point_refuses_inactive_and_missing_values():
    problem = ConditionalProblem()
    run = peers.PeerRun(problem, peers.initial_design(problem, 0, 10), 12)
    assert run.active_point({"model": 1, "depth": 3, "bootstrap": 0, "u": 0.5}) == {
        "model": "tree",
        "depth": 3,
        "bootstrap": 0,
        "u": 0.5,
    }
    with pytest.raises(RuntimeError, match=r"\['C'\].*inactive"):
        run.active_point({"model": 1, "depth": 3, "bootstrap": 0, "u": 0.5, "C": 1.0})
    with pytest.raises(RuntimeError, match="not feasible"):
        run.active_point({"model": 1, "bootstrap": 0, "u": 0.5})
    assert run.library_dict({"model": "knn", "bootstrap": 1, "k": 4, "u": 0.0, "C": 2.0}) == {
        "model": 2,
        "bootstrap": 1,
        "k": 4,
        "u": 0.0,
    }


def test_random_peer_on_a_conditional_space():
    run, settings = run_conditional("random")
    assert settings["sampler"].startswith("treebo Space.sample")


@pytest.mark.parametrize("peer", [p for p in peers.PEERS if p not in CONDITIONAL_PEERS])
def test_peers_without_conditions_refuse_a_conditional_space(peer):
    assert {"random", "optuna_tpe", "optuna_gp", "smac_rf"} == set(CONDITIONAL_PEERS)
    with pytest.raises(
        peers.UnsupportedSpace, match=f"peer {peer} does not support conditional search spaces"
    ):
        peers.PEERS[peer].check_space(ConditionalProblem().space)
    problem = ConditionalProblem()
    run = peers.PeerRun(problem, peers.initial_design(problem, 0, 10), 12)
    with pytest.raises(peers.UnsupportedSpace, match="conditional search spaces are not supported"):
        peers.PEERS[peer].run(run, 0)  # the mapping itself refuses too
    assert problem.received == []


def test_grid_skips_a_peer_that_refuses_the_space_once(tmp_path, capsys, monkeypatch):
    # A registered conditional problem, as far as run_peer can tell.
    monkeypatch.setattr(peers.registry, "build_problem", lambda spec: ConditionalProblem())
    monkeypatch.setattr(peers.registry, "default_n_initial", lambda problem: 10)
    # Installed or not, skopt_et reaches the space check.
    monkeypatch.setitem(
        peers.PEERS, "skopt_et", peers.Peer("skopt_et", {}, peers.PEERS["skopt_et"].run)
    )
    status = peers.run_all(["skopt_et", "random"], ["conditional_test"], [0, 1], 12, tmp_path, {})
    captured = capsys.readouterr()
    assert status == 1
    assert (
        captured.err.count(
            "skipping skopt_et on conditional_test: peer skopt_et does not "
            "support conditional search spaces"
        )
        == 1
    )
    records = load_results(tmp_path)
    assert [(r["surrogate"], r["seed"]) for r in records] == [("random", 0), ("random", 1)]
    for record in records:
        assert record["n_initial"] == 10 and record["settings"]["n_initial_points"] == 10
        assert record["x"][:10] == peers.initial_design(ConditionalProblem(), record["seed"], 10)
        assert "(10 given, 2 proposed)" in record["message"]


@pytest.mark.slow
@pytest.mark.parametrize("peer", [p for p in CONDITIONAL_PEERS if p != "random"])
def test_peer_short_run_on_a_conditional_space(peer):
    _require(peer)
    run, settings = run_conditional(peer)
    assert "conditions" in settings
    if peer.startswith("optuna"):
        assert settings["arguments"]["n_startup_trials"] == 10


@pytest.mark.slow
@pytest.mark.parametrize("problem_name", ["model_selection_wine"])
def test_registered_conditional_problem_starts_from_treebos_initial_design(problem_name):
    if problem_name not in available_problems():
        pytest.skip(f"{problem_name} is not registered in this treebo")
    n0 = default_n_initial(problem_name)
    spec = RunSpec(problem_name, "rf", 0, n0 + 1, overrides={"n_candidates": 256})
    problem = build_problem(spec)
    assert problem.space.conditional
    assert run_one(spec)["x"][:n0] == peers.initial_design(problem, 0, n0)
