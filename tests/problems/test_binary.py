"""Ising sparsification and contamination control against problems.md §4 and Appendix A."""

import numpy as np
import pytest

from treebo.problems import Contamination, Ising, get_problem, paper_case_seed
from treebo.problems.binary import (
    COMBO_CONTAMINATION_CASE_SEEDS,
    COMBO_ISING_CASE_SEEDS,
    ISING_TABULATED_SEEDS,
    PAPER_CASE_SEEDS,
    ising_interactions,
)

# Appendix A: case seed -> (log Z(J), f(0) at lam = 0), 6 decimals.
ISING_APPENDIX = {
    7270: (98.044716, 8.790241),
    5390: (100.976671, 10.232633),
    5734: (93.199591, 9.896194),
    466: (104.707494, 9.607524),
    5578: (106.888443, 10.168538),
    1685: (98.352826, 10.213554),
    6949: (102.761018, 10.270818),
    5311: (114.714916, 9.824832),
    6420: (116.883704, 10.343269),
    4555: (112.059090, 9.742569),
    1286: (83.662872, 9.273807),
    6786: (128.995907, 10.383208),
    8158: (154.129621, 10.397208),
    8193: (105.080052, 9.873733),
    8733: (100.978939, 10.288584),
}
# problems.md §4.2: case seed -> (f* at lam = 1e-4, f* at lam = 1e-2, x* at lam = 1e-2).
ISING_OPTIMA = {
    7270: (0.0023007228, 0.2101366594, "011110111111011111110111"),
    5390: (0.0020762988, 0.1715800627, "101110011101101110011101"),
    466: (0.0022009083, 0.2010688716, "111111101111111110011101"),
    4555: (0.0020103603, 0.1635486952, "101110101110110100010111"),
    8158: (0.0015077073, 0.1500077073, "110110101111100100110011"),
}
# problems.md §4.3: case seed -> (f* lam = 0, f* lam = 1e-4, f* lam = 1e-2, x* at lam = 1e-2).
CONTAMINATION_OPTIMA = {
    7270: (21.27, 21.2716, 21.43, "1110101101011011101101100"),
    5390: (21.09, 21.0916, 21.25, "0101110111011101011101100"),
    6420: (21.25, 21.2516, 21.41, "0101101011101101101110100"),
    758: (21.35, 21.3517, 21.52, "1101101101101101110111010"),
    7596: (21.02, 21.0216, 21.18, "0110110111011101011011100"),
}


def bits(text):
    return [int(c) for c in text]


def flips(x):
    """Every point at Hamming distance 1 from x."""
    x = np.array(x)
    return [list(np.abs(x - np.eye(len(x), dtype=int)[k])) for k in range(len(x))]


def test_case_seeds_follow_the_official_rule():
    assert PAPER_CASE_SEEDS == (7270, 5390, 5734, 466, 5578, 1685, 6949, 5311, 6420, 4555)
    assert [paper_case_seed(r) for r in range(10)] == list(PAPER_CASE_SEEDS)
    assert paper_case_seed(10) == 6396  # the same legacy stream, continued
    assert set(ISING_TABULATED_SEEDS) == set(PAPER_CASE_SEEDS) | set(COMBO_ISING_CASE_SEEDS)
    with pytest.raises(ValueError, match="repeat"):
        paper_case_seed(-1)


# -- Ising ------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", sorted(ISING_APPENDIX))
def test_ising_appendix_a(seed):
    log_z, kl0 = ISING_APPENDIX[seed]
    problem = Ising(seed, lam=0.0)
    assert problem.log_partition == pytest.approx(log_z, abs=1e-6)
    assert problem([0] * 24) == pytest.approx(kl0, abs=1e-6)
    assert problem([1] * 24) == 0.0  # q = p
    assert problem.optimal_value == 0.0


def test_ising_reference_values():
    problem = Ising(7270, lam=0.01)
    assert problem([0] * 24) == pytest.approx(8.790241334356992, rel=1e-12)
    assert problem([1, 0] * 12) == pytest.approx(16.37497076595663, rel=1e-12)
    assert problem([1] * 24) == pytest.approx(0.24, rel=1e-12)
    assert problem.name == "ising" and problem.params == {"instance": 7270, "lam": 0.01}


def test_ising_variable_order():
    # Appendix A's first coupling J^h(0,0) is edge (0,1), variable 0; J^v(0,0) is edge (0,4),
    # variable 1; the horizontal edges are the variables listed in problems.md §4.2.
    couplings = ising_interactions(7270)
    assert couplings[0] == -0.321025013923645
    assert couplings[1] == -4.386595249176025
    horizontal = [0, 2, 4, 7, 9, 11, 14, 16, 18, 21, 22, 23]
    jh = [
        -0.321025013923645,
        0.989447832107544,
        -3.648390531539917,
        3.370262384414673,
        -0.3262006640434265,
        -4.601014614105225,
        -1.8502391576766968,
        2.087132692337036,
        1.8919517993927002,
        0.3763500154018402,
        -2.2085843086242676,
        4.05844259262085,
    ]
    assert list(couplings[horizontal]) == jh


def test_ising_kl_matches_direct_enumeration():
    # KL(p || q) summed over the 2^16 spin states, independently of the closed form.
    problem = Ising(5390, lam=0.0)
    states = 1 - 2 * (np.arange(2**16)[:, None] >> np.arange(16) & 1)
    edges = [
        (i, j)
        for i in range(16)
        for j in range(i + 1, 16)
        if (j == i + 1 and j % 4 != 0) or j == i + 4
    ]
    products = np.array([states[:, i] * states[:, j] for i, j in edges]).T
    x = np.random.default_rng(3).integers(0, 2, 24)

    def log_probs(couplings):
        energy = 2.0 * products @ couplings
        return energy - np.log(np.sum(np.exp(energy - energy.max()))) - energy.max()

    log_p = log_probs(problem.interactions)
    log_q = log_probs(x * problem.interactions)
    kl = np.sum(np.exp(log_p) * (log_p - log_q))
    assert problem(list(x)) == pytest.approx(kl, rel=1e-9)


@pytest.mark.parametrize("seed", sorted(ISING_OPTIMA))
def test_ising_optima(seed):
    value_small, value, x_star = ISING_OPTIMA[seed]
    problem = Ising(seed, lam=0.01)
    assert problem.optimizers == [bits(x_star)]
    assert problem.optimal_value == pytest.approx(value, abs=1e-10)  # the table has 10 decimals
    assert problem(bits(x_star)) == problem.optimal_value
    # The minimizer is unique at lam = 1e-2, so every neighbour is worse.
    assert min(problem(x) for x in flips(bits(x_star))) > problem.optimal_value
    assert Ising(seed, lam=1e-4).optimal_value == value_small


def test_ising_other_seeds_are_reproducible_without_known_optimum():
    a, b = Ising(12345, lam=0.01), Ising(12345, lam=0.01)
    assert np.array_equal(a.interactions, b.interactions)
    assert not np.array_equal(a.interactions, Ising(12346).interactions)
    assert np.all((np.abs(a.interactions) >= 0.05) & (np.abs(a.interactions) < 5.0))
    assert a.optimal_value is None and a.optimizers == []
    assert Ising(12345, lam=0.0).optimal_value == 0.0
    assert Ising(7270, lam=0.5).optimal_value is None


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"lam": -0.1}, "lam"),
        ({"lam": float("nan")}, "lam"),
        ({"instance": -3}, "instance"),
        ({"instance": 1.5}, "instance"),
        ({"instance": 2**32}, r"instance.*\[0, 2\*\*32 - 1\]"),
    ],
)
def test_bad_parameters(kwargs, match):
    for cls in (Ising, Contamination):
        with pytest.raises(ValueError, match=match):
            cls(**kwargs)


def test_infeasible_points():
    with pytest.raises(ValueError):
        Ising()([0, 1, 2] + [0] * 21)
    with pytest.raises(ValueError):
        Contamination()([0] * 24)


# -- Contamination ----------------------------------------------------------------------------
def test_contamination_first_draws():
    problem = Contamination(7270)
    assert problem.initial_fraction[:3] == pytest.approx([0.047384, 0.027345, 0.050987], abs=1e-6)
    assert problem.contamination_rate[0, :3] == pytest.approx(
        [0.203062, 0.116316, 0.254248], abs=1e-6
    )
    assert problem.restoration_rate[0, :3] == pytest.approx(
        [0.996646, 0.951910, 0.998604], abs=1e-6
    )


def test_contamination_reference_values():
    assert Contamination(7270, lam=0.0)([0] * 25) == pytest.approx(23.28, abs=1e-12)
    assert Contamination(7270, lam=0.01)([0] * 25) == pytest.approx(23.28, abs=1e-12)
    assert Contamination(7270, lam=0.0)([1] * 25) == pytest.approx(23.76, abs=1e-12)
    assert Contamination(7270, lam=0.01)([1] * 25) == pytest.approx(24.01, abs=1e-12)
    assert Contamination(7270, lam=0.01)([1, 0] * 12 + [1]) == pytest.approx(22.62, abs=1e-12)
    f0 = {
        5390: 23.12,
        5734: 23.35,
        466: 23.33,
        5578: 23.13,
        1685: 23.33,
        6949: 23.35,
        5311: 23.27,
        6420: 23.19,
        4555: 23.19,
    }
    for seed, value in f0.items():
        assert Contamination(seed)([0] * 25) == pytest.approx(value, abs=1e-12)


def test_contamination_dynamics_scenario_by_scenario():
    problem = Contamination(466, lam=0.0)
    x = list(np.random.default_rng(1).integers(0, 2, 25))
    safe = 0
    for k in range(100):
        z = problem.initial_fraction[k]
        for i in range(25):
            lam_i, gam_i = problem.contamination_rate[i, k], problem.restoration_rate[i, k]
            z = lam_i * (1 - x[i]) * (1 - z) + (1 - gam_i * x[i]) * z
            safe += z < 0.1
    expected = sum(x) + 25 * 0.95 - safe / 100
    assert problem(x) == pytest.approx(expected, abs=1e-12)
    # At lam = 0 every value is a multiple of 0.01.
    assert round(problem(x) * 100) == pytest.approx(problem(x) * 100, abs=1e-9)


@pytest.mark.parametrize("seed", sorted(CONTAMINATION_OPTIMA))
def test_contamination_optima(seed):
    value_zero, value_small, value, x_star = CONTAMINATION_OPTIMA[seed]
    problem = Contamination(seed, lam=0.01)
    assert problem.optimal_value == pytest.approx(value, abs=1e-12)
    assert problem(bits(x_star)) == problem.optimal_value
    assert min(problem(x) for x in flips(bits(x_star))) >= problem.optimal_value - 1e-12
    assert Contamination(seed, lam=0.0).optimal_value == value_zero
    assert Contamination(seed, lam=1e-4).optimal_value == value_small
    assert Contamination(seed, lam=0.0)(bits(x_star)) >= value_zero - 1e-12


def test_contamination_instances():
    assert set(COMBO_CONTAMINATION_CASE_SEEDS) == {758, 1203, 2539, 6031, 7596}
    other = Contamination(31337)
    assert other.optimal_value is None
    assert np.array_equal(other.initial_fraction, Contamination(31337).initial_fraction)
    # COMBO's quirk: the three arrays come from identically seeded generators.
    assert np.array_equal(np.random.RandomState(31337).beta(1, 30, 100), other.initial_fraction)


def test_registry_defaults():
    ising, contamination = get_problem("ising"), get_problem("contamination")
    assert (ising.instance, ising.lam, ising.space.n_dims) == (7270, 0.01, 24)
    assert (contamination.instance, contamination.lam, contamination.space.n_dims) == (
        7270,
        0.01,
        25,
    )
    assert get_problem("ising", instance=466, lam=1e-4).optimal_value == 0.0022009083
