"""High-dimensional binary problems of Kim & Choi (2022): Ising sparsification and
contamination control, as defined by BOCS (Baptista & Poloczek 2018) and ported
by COMBO (Oh et al. 2019).

Definitions, constants, instances and optima follow ``problems.md`` §4.

Instances
---------
Both problems are families indexed by a *case seed*. Kim & Choi's official code
builds a new instance for every repeat ``r`` from
``numpy.random.RandomState(42).randint(0, 10000, size=(10, 2))[r, 0]``, which
gives :data:`PAPER_CASE_SEEDS`; :func:`paper_case_seed` extends that rule to
any repeat.

* **Contamination control** draws its random quantities with numpy's legacy
  ``RandomState(seed)``, exactly as COMBO does, so every case seed gives
  COMBO's instance.
* **Ising** interactions are drawn by COMBO with torch's global generator.
  treebo needs no torch: the interactions of the 15 case seeds of the spec's
  Appendix A (the paper's 10 and COMBO's 5, torch-generated) ship as data
  (:data:`ISING_TABULATED_SEEDS`). Any other case seed draws interactions from
  the same distribution with ``numpy.random.default_rng(seed)``: reproducible,
  but *not* the instance COMBO or the paper would build from that seed, and
  without a known optimum (``optimal_value`` is then ``None`` for λ > 0).

Known optimal values (from exhaustive enumeration, ``problems.md`` §4) are
attached for the tabulated instances at λ ∈ {0, 1e-4, 1e-2}; for other λ
``optimal_value`` is ``None``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import logsumexp

from ..space import Binary
from .base import Problem

__all__ = [
    "Ising",
    "Contamination",
    "PAPER_CASE_SEEDS",
    "ISING_TABULATED_SEEDS",
    "COMBO_ISING_CASE_SEEDS",
    "COMBO_CONTAMINATION_CASE_SEEDS",
    "paper_case_seed",
]

#: Case seeds of the paper's 10 repeats (``RandomState(42).randint(0, 10000, (10, 2))[:, 0]``).
PAPER_CASE_SEEDS = (7270, 5390, 5734, 466, 5578, 1685, 6949, 5311, 6420, 4555)
#: Case seeds of COMBO's own Ising and contamination experiments.
COMBO_ISING_CASE_SEEDS = (1286, 6786, 8158, 8193, 8733)
COMBO_CONTAMINATION_CASE_SEEDS = (758, 1203, 2539, 6031, 7596)


def paper_case_seed(repeat: int) -> int:
    """Case seed of repeat ``repeat`` (0-based) under the official code's rule.

    Repeats 0..9 give :data:`PAPER_CASE_SEEDS`; later repeats continue the same
    legacy numpy stream (e.g. repeat 10 gives 6396).

    Parameters
    ----------
    repeat : int
        Repeat index, ``>= 0``.

    Returns
    -------
    int
        The case seed, in ``[0, 10000)``.

    Raises
    ------
    ValueError
        If ``repeat`` is not a non-negative integer.
    """
    if isinstance(repeat, bool) or not isinstance(repeat, (int, np.integer)) or repeat < 0:
        raise ValueError(f"repeat must be a non-negative integer, got {repeat!r}")
    pairs = np.random.RandomState(42).randint(0, 10000, size=(int(repeat) + 1, 2))
    return int(pairs[int(repeat), 0])


def _check_lam(lam: float) -> float:
    if (
        isinstance(lam, bool)
        or not isinstance(lam, (int, float, np.integer, np.floating))
        or not math.isfinite(lam)
        or lam < 0
    ):
        raise ValueError(f"lam must be a finite number >= 0, got {lam!r}")
    return float(lam)


def _check_instance(instance: int) -> int:
    # The case seed seeds numpy's legacy RandomState, as COMBO does, which takes 32 bits.
    if (
        isinstance(instance, bool)
        or not isinstance(instance, (int, np.integer))
        or not 0 <= instance < 2**32
    ):
        raise ValueError(
            f"instance must be an integer case seed in [0, 2**32 - 1], got {instance!r}"
        )
    return int(instance)


def _bits(text: str) -> list[int]:
    return [int(c) for c in text]


class _CaseSeeded(Problem):
    """A binary problem built from a case seed, with an l1 penalty ``lam`` on the bits set.

    A subclass sets ``instance``, ``lam`` and what ``evaluate`` reads, then
    calls this ``__init__``.

    Parameters
    ----------
    name : str
        Registry name.
    n_bits : int
        Number of binary variables.
    known_optima : dict of float to (float or None, str or None)
        ``lam`` -> the known minimum and a minimizer as a bit string, either
        None when unknown; the minimum of a known minimizer is its value.
    """

    instance: int
    lam: float

    def __init__(
        self, name: str, n_bits: int, known_optima: dict[float, tuple[float | None, str | None]]
    ):
        optimal_value, bits = known_optima.get(self.lam, (None, None))
        optimizers = [] if bits is None else [_bits(bits)]
        if optimal_value is None and optimizers:
            optimal_value = self.evaluate(np.array(optimizers[0], dtype=float))
        super().__init__(
            name,
            [Binary() for _ in range(n_bits)],
            optimal_value=optimal_value,
            optimizers=optimizers,
        )
        self.params = {"instance": self.instance, "lam": self.lam}


# -- Ising sparsification ---------------------------------------------------------------------

# Edges of the 4x4 grid as (i, j), i < j, in lexicographic order: BOCS's variable order.
_ISING_EDGES = np.array(
    sorted(
        [(4 * r + c, 4 * r + c + 1) for r in range(4) for c in range(3)]
        + [(4 * r + c, 4 * r + c + 4) for r in range(3) for c in range(4)]
    )
)

# Interactions of the spec's Appendix A (float32 values as exact decimal reprs): per case seed,
# 12 horizontal couplings J^h in row-major (r, c) order, r < 4, c < 3, then 12 vertical ones
# J^v in row-major (r, c) order, r < 3, c < 4.
_ISING_APPENDIX_A = """
7270 h   -0.321025013923645    0.989447832107544   -3.648390531539917    3.370262384414673
7270 h  -0.3262006640434265   -4.601014614105225  -1.8502391576766968    2.087132692337036
7270 h   1.8919517993927002   0.3763500154018402  -2.2085843086242676     4.05844259262085
7270 v   -4.386595249176025   2.8877596855163574   2.6453213691711426    3.817167043685913
7270 v    2.048069477081299    2.368239402770996  -1.1811823844909668    4.385336875915527
7270 v   -2.850064277648926    1.872907042503357    2.642751693725586   0.3668050765991211
5390 h   -3.178842544555664   2.3279948234558105   2.7523746490478516    -4.06463623046875
5390 h  0.29675358533859253    4.254141807556152  -1.8518619537353516    2.724428176879883
5390 h   1.7794926166534424    3.760145664215088   1.3778190612792969   3.6977665424346924
5390 v   0.7822672128677368   3.6278622150421143   2.2853126525878906   -1.919905662536621
5390 v   3.2904648780822754   1.7015774250030518  -1.1135079860687256 -0.37829965353012085
5390 v   -4.045333385467529  -0.7315274477005005   3.0172548294067383   1.7907686233520508
5734 h   0.8374384641647339    2.027921199798584   -4.297887802124023    2.798997402191162
5734 h   0.9283521175384521   -4.405139923095703  -0.8949414491653442  -4.5364274978637695
5734 h  -2.3502986431121826  -1.6985809803009033     -1.7995525598526    4.762465953826904
5734 v  -1.5627566576004028    2.027971029281616   1.5078424215316772  -3.9921212196350098
5734 v    3.135348081588745  -1.9737474918365479  -1.7715574502944946  -1.0422343015670776
5734 v    2.344799041748047   3.2309839725494385  -3.5912539958953857  -2.3937723636627197
 466 h  -0.8337622284889221   2.0759832859039307 -0.23320221900939941   1.5810410976409912
 466 h   3.7779200077056885  -1.2347660064697266   -3.900984764099121    4.557291507720947
 466 h  -0.7166472673416138    3.675107002258301  -1.8582402467727661  -3.3379275798797607
 466 v -0.35591739416122437   1.6931400299072266  -3.6923294067382812    2.556840419769287
 466 v   2.2396605014801025   -4.737171173095703   1.2082221508026123    4.211359024047852
 466 v   4.5764241218566895  -0.5496968626976013   3.9723620414733887   2.3188705444335938
5578 h  0.43125662207603455  -0.2580867409706116  0.09771818667650223    4.218146324157715
5578 h   3.8194785118103027   -4.408914089202881  -2.0497140884399414  -2.3127899169921875
5578 h    1.011098027229309  -2.3752551078796387    4.769799709320068   3.0076069831848145
5578 v  -1.2156176567077637   3.8073055744171143   -3.377995252609253   -4.618452072143555
5578 v    2.175762414932251   -1.280133843421936   3.9547810554504395   3.0386343002319336
5578 v  -0.3082505464553833   3.6381595134735107   -1.443523645401001  -0.8501542210578918
1685 h  -1.6857073307037354    3.540433645248413  -1.8284357786178589   0.9993276596069336
1685 h     4.25834321975708   3.4122555255889893   4.3912835121154785     1.73993980884552
1685 h   4.0404510498046875  0.08006871491670609   2.3254995346069336  -0.3318837881088257
1685 v  -1.5826700925827026   3.7007431983947754   -4.587991237640381   -3.174119710922241
1685 v   1.6694153547286987   0.4476931691169739  -4.8151021003723145   -1.179424524307251
1685 v  -2.7332732677459717    2.317016363143921  -3.3353943824768066   -4.111137390136719
6949 h   2.4422237873077393   -1.315367579460144   3.4041597843170166   0.4582347571849823
6949 h   -3.834879159927368  -3.3374171257019043   -1.493159294128418   -2.366156578063965
6949 h    3.530102014541626  -0.5187135338783264    2.104379177093506     1.41190767288208
6949 v  -1.0707831382751465   -1.744594931602478  -2.2588608264923096    4.375940799713135
6949 v     2.44492244720459   -4.830583572387695    2.560258388519287    2.953913688659668
6949 v    1.414123773574829  -3.3487088680267334  -1.0003798007965088    4.959052562713623
5311 h    4.012040615081787  -3.1057848930358887   -4.878147125244141    4.109293460845947
5311 h    4.433130264282227   1.2073237895965576   -1.008810043334961   3.2420496940612793
5311 h     3.44659161567688   2.1922667026519775   1.0032340288162231   0.6824355721473694
5311 v  -2.6985247135162354   3.0721042156219482  -3.4868760108947754    4.685573577880859
5311 v  -1.3012090921401978   2.5532946586608887  -2.5023577213287354    4.784306049346924
5311 v   2.9803199768066406   -3.850572109222412   0.6225574612617493   3.4268665313720703
6420 h   -0.811199963092804  -0.6158508658409119   2.7679178714752197   1.5745141506195068
6420 h    4.186893939971924    3.756171226501465   4.1353068351745605   -2.323279857635498
6420 h  -1.8906140327453613  -0.7451245188713074   -4.329745769500732   -4.247269153594971
6420 v   0.7156323194503784   -4.223137855529785   1.4738218784332275  -0.7791520953178406
6420 v   -4.796609878540039   -4.784343719482422   3.3357186317443848  -1.6456599235534668
6420 v   1.3707882165908813  -1.9770153760910034   -3.899472713470459   0.7356952428817749
4555 h    2.093355178833008   1.8360990285873413   0.0998823270201683  0.38428163528442383
4555 h    4.059633731842041  -0.9100302457809448   2.8061397075653076  -1.0806505680084229
4555 h   1.6459927558898926  -2.8342976570129395    3.741093635559082  -4.4499664306640625
4555 v  0.22377677261829376  -4.2060699462890625  -0.9837346076965332   -4.557171821594238
4555 v  -3.0349042415618896   -2.984574556350708   3.9467546939849854  -2.4523425102233887
4555 v  -2.9784696102142334    2.453280448913574   -4.649391174316406  -2.6222424507141113
1286 h   -4.850562572479248    4.611713886260986  0.20757684111595154   2.0541961193084717
1286 h    0.959435760974884  -0.7171724438667297  -2.6457114219665527   1.1605794429779053
1286 h   -4.539359092712402   3.5447232723236084  0.47597479820251465   1.9632713794708252
1286 v   1.5414401292800903  -1.1810498237609863   3.0240869522094727  0.23517900705337524
1286 v    3.147033452987671   0.2717861831188202  -1.0543583631515503   0.7832033634185791
1286 v    4.432159900665283   1.6687836647033691  -3.1316134929656982    1.240020751953125
6786 h   -4.371328353881836    4.572062969207764  -1.6899281740188599   3.3407719135284424
6786 h   0.2937987446784973   0.6355204582214355   -3.641993999481201   -4.539772987365723
6786 h   1.0464537143707275  -3.1470203399658203  -1.5642826557159424   -4.224460601806641
6786 v    3.209667205810547   -4.806670188903809   2.4900615215301514   -4.862889766693115
6786 v   1.6329996585845947    -4.47767972946167   -4.745381832122803  -2.6245827674865723
6786 v    1.483945369720459  -2.9861059188842773    2.682753801345825    4.001399040222168
8158 h    4.191512584686279  -2.1594841480255127    3.512413740158081  -3.2568368911743164
8158 h     3.69443941116333   -4.151374340057373  -1.3008760213851929   1.3396741151809692
8158 h   3.6885898113250732  -3.1076436042785645    3.118267059326172     4.56130838394165
8158 v   -3.959796190261841     4.42269229888916  -0.9655673503875732    4.091311454772949
8158 v   3.3542914390563965    4.995878219604492    4.742196559906006  0.28422459959983826
8158 v   3.6887338161468506   3.0331149101257324    4.075717449188232    1.590741515159607
8193 h  -2.1948018074035645  -3.1743791103363037    4.204679012298584   0.6305041313171387
8193 h    1.027085542678833   0.8935523629188538 -0.37613344192504883    4.649273872375488
8193 h   -3.259775161743164    3.980381488800049   -1.786971926689148    4.778213977813721
8193 v    4.264554023742676  -2.0081636905670166   -1.891952633857727 -0.23409147560596466
8193 v   2.9187536239624023    4.345273494720459    4.568551540374756   1.4705309867858887
8193 v    3.777897596359253   3.1263315677642822   3.4892566204071045   2.3787503242492676
8733 h  -1.5285346508026123  -4.0969719886779785  -0.9681295156478882   -4.225979804992676
8733 h  -0.9947459101676941  -0.9301801919937134   1.9345557689666748   0.7421687841415405
8733 h    2.987602949142456    2.314056634902954  -2.6291391849517822   -4.695222854614258
8733 v   1.8079603910446167  -0.4312170743942261   4.6813764572143555    2.383237361907959
8733 v  -0.8817881345748901    4.477686405181885    4.150832653045654   0.5807885527610779
8733 v   0.7451534271240234    2.560678005218506    4.250122547149658   1.3568698167800903
"""

#: Case seeds whose torch-generated Ising interactions ship with treebo.
ISING_TABULATED_SEEDS = tuple(
    dict.fromkeys(int(line.split()[0]) for line in _ISING_APPENDIX_A.split("\n") if line)
)

# Optimal values by exhaustive enumeration of all 2^24 x (problems.md §4.2): case seed ->
# (f* at lam = 1e-4, x* at lam = 1e-2 as the bit string x_0 .. x_23). f* at lam = 1e-2 is
# f(x*), computed here in float64 (the spec rounds it to 10 decimals); f* at lam = 0 is 0 at
# x = 1.
_ISING_OPTIMA = {
    7270: (0.0023007228, "011110111111011111110111"),
    5390: (0.0020762988, "101110011101101110011101"),
    5734: (0.0021119976, "111110111001010111111111"),
    466: (0.0022009083, "111111101111111110011101"),
    5578: (0.0020537194, "110101111101110011101111"),
    1685: (0.0022002561, "111111101101101101111010"),
    6949: (0.0019639734, "110110101111011111001110"),
    5311: (0.0020037994, "111110111100010111111111"),
    6420: (0.0020289511, "110111001101011110110011"),
    4555: (0.0020103603, "101110101110110100010111"),
    1286: (0.0024000000, "111001011011111111110111"),
    6786: (0.0021000264, "101100110010111011001111"),
    8158: (0.0015077073, "110110101111100100110011"),
    8193: (0.0022745405, "111010101011110111111111"),
    8733: (0.0020192666, "011011110011111001111111"),
}


@functools.lru_cache(maxsize=1)
def _spin_products() -> np.ndarray:
    """``s_i s_j`` for every edge (columns) and every one of the 2^16 spin states (rows)."""
    states = np.arange(2**16)[:, None] >> np.arange(16)[None, :] & 1
    spins = 1.0 - 2.0 * states
    return spins[:, _ISING_EDGES[:, 0]] * spins[:, _ISING_EDGES[:, 1]]


# Row-by-row transfer matrices: the 16 states of a row of 4 spins, the products of horizontal
# neighbours inside a row (16, 3) and of vertical neighbours between two rows (16, 16, 4).
_ROW_SPINS = 1.0 - 2.0 * (np.arange(16)[:, None] >> np.arange(4)[None, :] & 1)
_ROW_PRODUCTS = _ROW_SPINS[:, :-1] * _ROW_SPINS[:, 1:]
_BETWEEN_PRODUCTS = _ROW_SPINS[:, None, :] * _ROW_SPINS[None, :, :]
_IS_HORIZONTAL = _ISING_EDGES[:, 1] == _ISING_EDGES[:, 0] + 1


def _ising_log_partition(couplings: np.ndarray) -> float:
    """``log Z`` of the 4x4 grid with edge couplings in the variable order.

    Sums out one row at a time (3 transfers between 16 row states): the same
    value as enumerating the 2^16 states, for ~10^3 operations instead of 10^6.
    """
    jh = couplings[_IS_HORIZONTAL].reshape(4, 3)  # the horizontal edges come in (r, c) order
    jv = couplings[~_IS_HORIZONTAL].reshape(3, 4)
    inside = 2.0 * _ROW_PRODUCTS @ jh.T  # (16 states, 4 rows)
    log_alpha = inside[:, 0]
    for r in range(3):
        between = 2.0 * _BETWEEN_PRODUCTS @ jv[r]  # (16, 16): row r state, row r + 1 state
        log_alpha = logsumexp(log_alpha[:, None] + between, axis=0) + inside[:, r + 1]
    return float(logsumexp(log_alpha))


def ising_interactions(instance: int) -> np.ndarray:
    """The 24 edge interactions of an Ising instance, in the variable order.

    Parameters
    ----------
    instance : int
        Case seed. Seeds in :data:`ISING_TABULATED_SEEDS` give the tabulated
        torch-generated interactions; other seeds give interactions drawn from
        the same distribution with ``numpy.random.default_rng(instance)``
        (12 signs, 12 magnitudes ``0.05 + 4.95 U``, 12 signs, 12 magnitudes,
        the order COMBO draws them in).

    Returns
    -------
    ndarray of shape (24,)
    """
    instance = _check_instance(instance)
    if instance in ISING_TABULATED_SEEDS:
        rows = [line.split() for line in _ISING_APPENDIX_A.split("\n") if line]
        horizontal = [
            float(v) for r in rows if int(r[0]) == instance and r[1] == "h" for v in r[2:]
        ]
        vertical = [float(v) for r in rows if int(r[0]) == instance and r[1] == "v" for v in r[2:]]
        jh, jv = np.array(horizontal).reshape(4, 3), np.array(vertical).reshape(3, 4)
    else:
        rng = np.random.default_rng(instance)
        draws = []
        for _ in range(2):
            signs = 2.0 * rng.integers(0, 2, size=12) - 1.0
            draws.append(signs * (0.05 + 4.95 * rng.random(12)))
        jh, jv = draws[0].reshape(4, 3), draws[1].reshape(3, 4)
    couplings = np.empty(len(_ISING_EDGES))
    for k, (i, j) in enumerate(_ISING_EDGES):
        r, c = divmod(int(i), 4)
        couplings[k] = jh[r, c] if j == i + 1 else jv[r, c]
    return couplings


class Ising(_CaseSeeded):
    """Ising sparsification on a 4x4 grid (24 binary variables, one per edge).

    ``x_e = 1`` keeps edge ``e`` of the zero-field Ising model
    ``p_J(s) ∝ exp(2 Σ_e J_e s_i s_j)``; ``x_e = 0`` deletes it. The objective is
    ``KL(p_J || p_{x⊙J}) + lam * sum(x)`` (``problems.md`` §4.2), in float64: the
    second moments of ``p_J`` by enumerating the 2^16 spin states once,
    ``log Z(x⊙J)`` per evaluation by row-by-row transfer matrices.

    Parameters
    ----------
    instance : int, default 7270
        Case seed of the instance (7270 is the paper's first repeat); see the
        module docstring for which seeds reproduce COMBO's torch-generated
        instances.
    lam : float, default 0.01
        Weight of the l1 penalty (the paper runs 0.01).

    Attributes
    ----------
    interactions : ndarray of shape (24,)
        ``J_e`` in the variable order (BOCS's lexicographic edge order).
    log_partition : float
        ``log Z(J)``.
    optimal_value : float or None
        Known for tabulated instances at ``lam`` in {0, 1e-4, 1e-2}, and for
        every instance at ``lam = 0`` (where it is 0, at ``x = 1``).
    """

    def __init__(self, instance: int = 7270, lam: float = 0.01):
        self.instance = _check_instance(instance)
        self.lam = _check_lam(lam)
        self.interactions = ising_interactions(self.instance)
        products = _spin_products()
        energies = 2.0 * products @ self.interactions
        weights = np.exp(energies - logsumexp(energies))
        self.log_partition = _ising_log_partition(self.interactions)
        # 2 J_e E_p[s_i s_j]: the KL's linear part, paid for every deleted edge.
        self._deletion_cost = 2.0 * self.interactions * (weights @ products)
        known: dict[float, tuple[float | None, str | None]] = {0.0: (0.0, "1" * 24)}
        if self.instance in _ISING_OPTIMA:
            value_small, bits = _ISING_OPTIMA[self.instance]
            known.update({1e-4: (value_small, None), 1e-2: (None, bits)})
        super().__init__("ising", 24, known)

    def evaluate(self, x: np.ndarray) -> float:
        log_z = _ising_log_partition(x * self.interactions)
        kl = np.sum((1.0 - x) * self._deletion_cost) + log_z - self.log_partition
        return float(kl + self.lam * np.sum(x))


# -- Contamination control --------------------------------------------------------------------

_N_STAGES, _N_SCENARIOS = 25, 100
_UPPER, _EPSILON, _RHO = 0.1, 0.05, 1.0

# Optimal values by exhaustive enumeration of all 2^25 x (problems.md §4.3): case seed ->
# (f* at lam = 0, f* at lam = 1e-4, one minimizer at lam = 1e-2 as x_1 .. x_25). f* at
# lam = 1e-2 is f(x*), computed here in float64. The lam = 0 values are multiples of 0.01
# and the lam = 1e-4 ones of 1e-4, so the decimals below are exact.
_CONTAMINATION_OPTIMA = {
    7270: (21.27, 21.2716, "1110101101011011101101100"),
    5390: (21.09, 21.0916, "0101110111011101011101100"),
    5734: (21.36, 21.3616, "1101101101101101011010110"),
    466: (21.14, 21.1415, "1011011010101101101101010"),
    5578: (21.30, 21.3015, "0111011010110101101101100"),
    1685: (21.39, 21.3915, "0111011101101101101011000"),
    6949: (21.14, 21.1415, "1101101101010110110111000"),
    5311: (21.23, 21.2315, "0110110101101101101110100"),
    6420: (21.25, 21.2516, "0101101011101101101110100"),
    4555: (21.16, 21.1614, "0111011010110101011010100"),
    758: (21.35, 21.3517, "1101101101101101110111010"),
    1203: (21.18, 21.1815, "1101011011101101011010100"),
    2539: (21.19, 21.1915, "0110110111011011010101100"),
    6031: (21.44, 21.4415, "0101011011110110110110100"),
    7596: (21.02, 21.0216, "0110110111011101011011100"),
}


class Contamination(_CaseSeeded):
    """Contamination control in a 25-stage food supply chain (25 binary variables).

    ``x_i = 1`` applies prevention at stage ``i`` (cost 1). With 100 fixed
    Monte-Carlo scenarios of the initial contaminated fraction ``Z_0 ~ Beta(1,
    30)``, contamination rates ``Λ_i ~ Beta(1, 17/3)`` and restoration rates
    ``Γ_i ~ Beta(1, 3/7)``, the fraction evolves as
    ``Z_i = Λ_i (1 - x_i)(1 - Z_{i-1}) + (1 - Γ_i x_i) Z_{i-1}`` and

    ``f(x) = Σ x_i + ρ Σ_i [(1 - ε) - P̂(Z_i < U)] + lam Σ x_i``

    with ``ρ = 1, U = 0.1, ε = 0.05`` (``problems.md`` §4.3). The scenarios are
    drawn as COMBO draws them: three legacy ``RandomState(instance)`` generators,
    identically seeded, one per array.

    Parameters
    ----------
    instance : int, default 7270
        Case seed (7270 is the paper's first repeat). Every seed reproduces
        COMBO's instance.
    lam : float, default 0.01
        Weight of the l1 penalty (the paper runs 0.01).

    Attributes
    ----------
    initial_fraction : ndarray of shape (100,)
    contamination_rate, restoration_rate : ndarray of shape (25, 100)
        Stage ``i`` in row ``i``, scenario ``k`` in column ``k``.
    optimal_value : float or None
        Known for the 15 tabulated case seeds at ``lam`` in {0, 1e-4, 1e-2}.
    """

    def __init__(self, instance: int = 7270, lam: float = 0.01):
        self.instance = _check_instance(instance)
        self.lam = _check_lam(lam)
        shape = (_N_STAGES, _N_SCENARIOS)
        self.initial_fraction = np.random.RandomState(self.instance).beta(1.0, 30.0, _N_SCENARIOS)
        self.contamination_rate = np.random.RandomState(self.instance).beta(1.0, 17.0 / 3.0, shape)
        self.restoration_rate = np.random.RandomState(self.instance).beta(1.0, 3.0 / 7.0, shape)
        known: dict[float, tuple[float | None, str | None]] = {}
        if self.instance in _CONTAMINATION_OPTIMA:
            value_zero, value_small, bits = _CONTAMINATION_OPTIMA[self.instance]
            known = {0.0: (value_zero, None), 1e-4: (value_small, None), 1e-2: (None, bits)}
        super().__init__("contamination", _N_STAGES, known)

    def evaluate(self, x: np.ndarray) -> float:
        fraction = self.initial_fraction
        safe = np.empty(_N_STAGES)
        for i in range(_N_STAGES):  # 25 stages, vectorized over the 100 scenarios
            fraction = (
                self.contamination_rate[i] * (1.0 - x[i]) * (1.0 - fraction)
                + (1.0 - self.restoration_rate[i] * x[i]) * fraction
            )
            safe[i] = np.count_nonzero(fraction < _UPPER) / _N_SCENARIOS
        penalty = _RHO * np.sum((1.0 - _EPSILON) - safe)
        return float(np.sum(x) + penalty + self.lam * np.sum(x))
