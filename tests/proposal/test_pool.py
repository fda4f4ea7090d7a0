import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import treebo
import treebo.acquisition.candidates as candidates
from treebo.acquisition import AcquisitionMaximizer
from treebo.acquisition.candidates import CANDIDATE_MEMORY, rows_within_memory
from treebo.proposal import CandidatePool, LocalStep, StepData
from treebo.space import Categorical, Real, Space
from treebo.surrogates import make_surrogate
from treebo.surrogates.gp import GaussianProcessSurrogate


def _build(space, n_told=5, seed=0, **settings):
    rng = np.random.default_rng(seed)
    X = space.sample_encoded(n_told, rng)
    return X, CandidatePool(**settings).build(space, X, rng.random(n_told), rng)


def _neighbours(pool, centres):
    """Which rows share a column with some centre: the local and jump ones (a random
    centre and a Sobol point share none)."""
    return np.array([(row == centres).any() for row in pool])


def test_a_pool_keeps_every_setting_while_it_fits_in_the_memory_bound():
    # 57,000 rows of 588 columns take 256 MiB or less: nothing shrinks.
    assert rows_within_memory(588) >= 57_000 > rows_within_memory(589)
    X, pool = _build(Space([Real(0, 1)] * 20))
    assert pool.shape == (57_000, 20)
    assert _neighbours(pool, X).sum() == 7_000


def test_a_pool_on_a_wide_space_shrinks_to_the_memory_bound_in_proportion():
    space = Space([Real(0, 1)] * 1_000)
    rows = rows_within_memory(1_000)
    assert rows == CANDIDATE_MEMORY // 8_000 == 33_554
    X, pool = _build(space)
    assert pool.nbytes <= CANDIDATE_MEMORY and rows - 10 <= len(pool) <= rows
    # Sobol points, local and jump neighbours keep their shares (50,000 : 7,000).
    n_neighbours = _neighbours(pool, X).sum()
    assert abs(n_neighbours / len(pool) - 7 / 57) < 0.001
    assert not _neighbours(pool[: len(pool) - n_neighbours], X).any()
    # Without local search the Sobol points take every row.
    _, sobol = _build(space, local_search=False)
    assert sobol.shape == (rows, 1_000)


def test_a_discrete_space_is_scored_exhaustively_only_when_all_its_points_fit():
    # 6,000 categories: 6,000 one-hot rows of 6,000 columns would take 275 MiB.
    wide = Space([Categorical([str(i) for i in range(6_000)])])
    rows = rows_within_memory(6_000)
    X, pool = _build(wide, local_search=False)
    assert wide.cardinality <= 50_000 and len(pool) == rows < 6_000
    assert pool.nbytes <= CANDIDATE_MEMORY
    # 3,000 of them fit: every point, once.
    narrow = Space([Categorical([str(i) for i in range(3_000)])])
    _, grid = _build(narrow, local_search=False)
    np.testing.assert_array_equal(grid, narrow.grid())


def test_the_polish_scores_a_wide_gradient_in_blocks_and_finds_the_same_point(monkeypatch):
    space = Space([Real(0, 1)] * 200)
    rng = np.random.default_rng(0)
    pool = rng.random((64, 200))
    sizes = []

    def score(points):
        sizes.append(len(points))
        return -((points - 0.3) ** 2).sum(axis=1)

    scores = score(pool)

    def polish():
        sizes.clear()
        return AcquisitionMaximizer().polish(score, space, pool, scores, lambda A: A)

    whole = polish()
    # The best start alone, then the point and one copy per column at each step.
    assert sizes[:2] == [1, 201] and max(sizes) == 201
    # Room for 50 rows of 200 columns: the 201 points go in five blocks.
    monkeypatch.setattr(candidates, "CANDIDATE_MEMORY", 8 * 200 * 50)
    blocks = polish()
    assert sizes[:6] == [1, 50, 50, 50, 50, 1] and max(sizes) == 50
    np.testing.assert_array_equal(blocks, whole)
    assert ((whole - 0.3) ** 2).sum() < ((pool - 0.3) ** 2).sum(axis=1).min()


def test_a_local_step_on_a_wide_space_fits_and_scores_within_the_memory_bound(monkeypatch):
    space = Space([Real(0, 1)] * 20)
    rng = np.random.default_rng(0)
    X = 0.5 + 0.1 * rng.standard_normal((80, 20))
    values = ((X - 0.4) ** 2).sum(axis=1)
    fitted, scored = [], []
    fit = GaussianProcessSurrogate.fit

    def spy_fit(self, X, y):
        fitted.append(len(X))
        return fit(self, X, y)

    class Spy(AcquisitionMaximizer):
        def maximize(self, score, pool, **kwargs):
            scored.append(len(pool))
            return super().maximize(score, pool, **kwargs)

    monkeypatch.setattr(GaussianProcessSurrogate, "fit", spy_fit)
    data = StepData(
        space=space,
        X=X,
        values=values,
        complete=np.ones(len(X), bool),
        pool=np.empty((0, 20)),
        surrogate=make_surrogate("bwo", n_estimators=10),
        seed=0,
        target_kind="standardize",
        unseen=lambda A: A,
        rng=rng,
        fallback=lambda: None,
    )
    LocalStep().propose(data, Spy())
    # At least the 10 + 2 * 20 nearest points (and those inside twice the box), and
    # 1024 box candidates.
    assert len(fitted) == 1 and fitted[0] >= 50 and scored == [1024]
    # Room for 400 rows of 20 columns: 20 points (20 x 20 x 20 gradient), 266 candidates.
    monkeypatch.setattr(candidates, "CANDIDATE_MEMORY", 8 * 20 * 400)
    fitted.clear(), scored.clear()
    LocalStep().propose(data, Spy())
    assert fitted == [20] and scored == [266]


# -- faults: an ask on a very wide space under a real memory limit ------------------------

_WIDE_RUN = textwrap.dedent(
    """
    import json, resource
    import numpy as np
    from treebo import Optimizer, Real

    opt = Optimizer([Real(-1.0, 1.0)] * 10_000, n_initial_points=2, random_state=0)
    for _ in range(3):
        x = opt.ask()
        opt.tell(x, float(np.sum(np.square(x))))
    print(json.dumps({
        "origins": [t.origin for t in opt.trials],
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))
    """
)

#: Address space the child may map. Python with numpy, scipy, scikit-learn and
#: qmcpy maps about 0.5 GiB before it allocates anything (one BLAS thread); an
#: unbounded pool of 57,000 candidates in 10,000 columns alone needs 4.2 GiB.
_ADDRESS_SPACE = 2 * 2**30


@pytest.mark.fault
def test_a_model_based_ask_in_10_000_dimensions_fits_in_2_gib_of_address_space():
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (_ADDRESS_SPACE, _ADDRESS_SPACE))

    # One thread per library: each BLAS or OpenMP thread reserves address space
    # of its own, which the limit would count against the ask.
    threads = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env = {**os.environ, **threads, "PYTHONPATH": str(Path(treebo.__file__).parents[1])}
    proc = subprocess.run(
        [sys.executable, "-c", _WIDE_RUN],
        env=env,
        preexec_fn=limit,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    # Two initial points, then an ask that built and scored a candidate pool.
    assert out["origins"] == ["initial", "initial", "model"]
    assert out["peak_mib"] < 1536
