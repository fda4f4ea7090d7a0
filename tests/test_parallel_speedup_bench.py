"""benchmarks/parallel_speedup.py: the batch part's repeats are seeded apart."""

from benchmark_scripts import load_script

bench = load_script("parallel_speedup.py")


def test_each_repeat_asks_from_its_own_seed_after_the_same_told_points():
    first, second = bench.told_optimizers("branin", "rf", 2, n_told=8, n_candidates=256)
    assert [t.x for t in first.trials] == [t.x for t in second.trials]
    assert [t.value for t in first.trials] == [t.value for t in second.trials]
    assert first.random_state == 0 and second.random_state == 1
    again = bench.told_optimizers("branin", "rf", 1, n_told=8, n_candidates=256)[0]
    asked = first.ask(n_points=2)
    assert again.ask(n_points=2) == asked  # a repeat is reproducible from its seed
    assert second.ask(n_points=2) != asked  # and the repeats are not one seed timed twice
