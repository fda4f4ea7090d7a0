"""benchmarks/parallel_speedup.py: the batch part's repeats are seeded apart."""

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "parallel_speedup.py"


def _load():
    spec = importlib.util.spec_from_file_location("treebo_benchmarks_parallel_speedup", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _load()


def test_each_repeat_asks_from_its_own_seed_after_the_same_told_points():
    first, second = bench.told_optimizers("branin", "rf", 2, n_told=8, n_candidates=256)
    assert [t.x for t in first.trials] == [t.x for t in second.trials]
    assert [t.value for t in first.trials] == [t.value for t in second.trials]
    assert first.random_state == 0 and second.random_state == 1
    again = bench.told_optimizers("branin", "rf", 1, n_told=8, n_candidates=256)[0]
    asked = first.ask(n_points=2)
    assert again.ask(n_points=2) == asked  # a repeat is reproducible from its seed
    assert second.ask(n_points=2) != asked  # and the repeats are not one seed timed twice
