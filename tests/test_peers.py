"""benchmarks/peers.py: peer optimizers recorded like treebo's own runs.

The peers' libraries come with ``pip install 'treebo[peers]'``; each slow test
skips when its library is absent. The random peer needs nothing extra.
"""

import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from treebo import Optimizer
from treebo.bench import (
    RunSpec,
    append_record,
    build_problem,
    completed_runs,
    format_summary,
    load_results,
    run_one,
    summary_table,
)
from treebo.problems import Problem, paper_case_seed
from treebo.space import Binary, Categorical, Integer, Real

PEERS_PY = Path(__file__).resolve().parents[1] / "benchmarks" / "peers.py"


def _load_peers():
    spec = importlib.util.spec_from_file_location("treebo_benchmarks_peers", PEERS_PY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


peers = _load_peers()


def check_record(record, problem_name, peer, seed, n_calls):
    """What every peer's record must satisfy."""
    problem = build_problem(RunSpec(problem_name, peer, seed, n_calls))
    assert record["surrogate"] == peer and record["problem"] == problem_name
    assert record["key"] == RunSpec(problem_name, peer, seed, n_calls).key()
    assert record["n_evaluated"] == n_calls == len(record["x"]) == len(record["values"])
    # The first 5 points are treebo's initial design of the seed.
    assert record["x"][:5] == Optimizer(problem.space, random_state=seed).ask(5)
    # The values are the problem's at the recorded points.
    for x, value in zip(record["x"], record["values"]):
        assert value == pytest.approx(problem(x), rel=1e-12, abs=1e-12)
    best = record["best_so_far"]
    assert all(b1 <= b0 for b0, b1 in zip(best, best[1:]))
    assert best == list(np.minimum.accumulate(record["values"]))
    assert record["acq_time"][:5] == [0.0] * 5 and min(record["acq_time"][5:]) > 0.0
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
    argv = ["--problems", "branin", "--peers", "random", "--seeds", "0-1", "--n-calls", "7",
            "--out", str(out)]
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
    missing = peers.Peer("skopt_et", {"treebo_no_such_module": "scikit-optimize"},
                         peers.PEERS["skopt_et"].run)
    monkeypatch.setitem(peers.PEERS, "skopt_et", missing)
    status = peers.main(["--problems", "branin", "--peers", "skopt_et", "random", "--seeds",
                         "0", "--n-calls", "6", "--out", str(tmp_path)])
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


# -- slow: one short run of every peer -------------------------------------------------------
LIBRARY_PEERS = [name for name in peers.PEERS if name != "random"]


def _require(peer):
    for module in peers.PEERS[peer].requires:
        pytest.importorskip(module, reason=f"{peer} needs {module}: pip install 'treebo[peers]'")


@pytest.mark.slow
@pytest.mark.parametrize("peer", LIBRARY_PEERS)
@pytest.mark.parametrize("problem, n_calls", [("branin", 8), ("ising", 7)])
def test_peer_short_run(peer, problem, n_calls):
    _require(peer)
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
        super().__init__("mixed_test", {
            "lr": Real(1e-4, 1.0, prior="log-uniform"), "u": Real(-1.0, 2.0),
            "n": Integer(1, 1000, prior="log-uniform"), "k": Integer(-3, 3), "b": Binary(),
            "c": Categorical(["a", "b", "c"])})

    def __call__(self, x):
        self.space.encode([x])
        return (math.log10(x["lr"]) + 2) ** 2 + x["u"] ** 2 + abs(math.log(x["n"]) - 3) \
            + abs(x["k"]) + x["b"] + {"a": 1.0, "b": 0.0, "c": 2.0}[x["c"]]


@pytest.mark.slow
@pytest.mark.parametrize("peer", list(peers.PEERS))
def test_peer_maps_every_dimension_kind(peer):
    _require(peer)
    problem = MixedProblem()
    x0 = peers.initial_design(problem, 1)
    run = peers.PeerRun(problem, x0, 9)
    with peers.single_thread():
        peers.PEERS[peer].run(run, 1)
    assert len(run.x) == 9 and run.x[:5] == x0
    for x, value in zip(run.x, run.values):
        problem.space.encode([x])  # feasible
        assert isinstance(x["n"], int) and isinstance(x["b"], int) and x["c"] in "abc"
        assert value == problem(x)
