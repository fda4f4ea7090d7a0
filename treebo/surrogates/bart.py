"""BART surrogate: Bayesian additive regression trees sampled by stochtree.

BART (Chipman, George & McCulloch 2010) models ``y = sum_j g(x; T_j, M_j) + eps``,
``eps ~ N(0, sigma^2)``, with regularizing priors on the trees, their leaf
values and ``sigma^2``, and samples the posterior by Bayesian backfitting
MCMC. Every kept draw ``s`` is a member of the ensemble: its sum of trees
``f_s(x)`` is the member mean and its ``sigma_s^2`` the member variance, so

    mean = avg_s f_s(x),  epistemic = avg_s (f_s(x) - mean)^2,  aleatoric = avg_s sigma_s^2.

The sampler is stochtree's ``BARTModel`` (the optional extra ``[bart]``).
Its defaults differ from Chipman et al.'s; this module sets the priors to
theirs (surrogates.md §4.5) and picks a number of trees and draws that keep
prediction over 55,000 candidates within a few seconds.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from scipy.stats import chi2
from sklearn.utils._param_validation import Interval
from stochtree import BARTModel, Dataset, ForestContainer

from .base import RANDOM_STATE, Prediction, Surrogate, mixture_moments

__all__ = ["BARTSurrogate"]

# Prediction is done in row blocks so that the (rows, draws) matrix of draw
# predictions stays below this many doubles (16 MB), whatever N and the draws.
_MAX_BLOCK_CELLS = 2_000_000


def _writeable(X: np.ndarray) -> np.ndarray:
    # stochtree's C++ dataset refuses read-only buffers (e.g. memory maps).
    return np.require(X, dtype=np.float64, requirements=["C", "W"])


def _sigma_estimate(X: np.ndarray, z: np.ndarray) -> float:
    """Chipman et al.'s rough noise guess: residual s.d. of least squares, or s.d. of z."""
    n, d = X.shape
    if n - d - 1 <= 0:
        return float(z.std(ddof=1)) if n > 1 else 1.0
    design = np.hstack([np.ones((n, 1)), X])
    coef, *_ = np.linalg.lstsq(design, z, rcond=None)
    residual = z - design @ coef
    return float(np.sqrt(residual @ residual / (n - d - 1)))


class BARTSurrogate(Surrogate):
    """Bayesian additive regression trees; ensemble members are posterior draws.

    Priors are those of Chipman, George & McCulloch (2010) by default, set
    on targets standardized to mean 0 and s.d. 1 (``z``):

    * tree shape: a node at depth ``d`` splits with probability
      ``alpha * (1 + d)^-beta`` (0.95, 2);
    * leaf values: ``N(0, sigma_mu^2)`` with
      ``sigma_mu = range(z) / (2 k sqrt(n_trees))`` and ``k = 2``, so that the
      prior s.d. of ``f(x)`` is a quarter of the range of the data (Chipman
      et al. centre it at the midrange, this at the mean); the leaf scale is
      fixed, not sampled (stochtree samples it by default);
    * noise: ``sigma^2 ~ nu lambda / chi2_nu`` with ``nu = 3`` and ``lambda``
      such that ``P(sigma < sigma_hat) = 0.9``, where ``sigma_hat`` is the
      residual s.d. of a least-squares fit of ``z`` on ``X`` (the s.d. of
      ``z`` when N <= D + 1), floored at ``1e-3`` so the prior stays proper
      when ``z`` is exactly linear in ``X``. (stochtree's own default is the
      improper ``IG(0, 0)``.)

    **Cost and settings.** Chipman et al. use 200 trees and 1,000 kept draws.
    Prediction costs about 10 ns per tree, draw and point here, so 200 trees
    x 100 draws take over 10 s on 55,000 candidates, while sampling is cheap
    (about 0.5 ms per sweep of 50 trees at N = 200). The defaults therefore
    spend little on prediction, 50 trees x 48 kept draws, and more on the
    sampler: 4 independent chains from the root, each with 200 burn-in sweeps
    and 12 draws kept from every 2nd sweep. One chain mixes too slowly to
    be honest: on Friedman-1 (N = 200) its 90% predictive intervals held
    0.80-0.82 of held-out points, four chains 0.92 at a better NLL and RMSE.
    One iteration at N = 200, D = 6 then costs about a second and a half
    (docs/benchmarks/settings.md; ``benchmarks/ngboost_bart_settings.py``).

    The sampler runs on one thread: two threads made it 6-9 times slower on
    this 2-core machine. No state is carried between fits: the optimizer
    refits a clone on targets that it re-transforms at every iteration, so a
    warm start from the previous iteration's forests would still need its
    own burn-in, and stochtree's warm start goes through a JSON copy of the
    whole model.

    Like a forest's, the variance does not grow outside the range of the
    data: trees split only between training points, so beyond the outermost
    point every draw is constant.

    stochtree needs ``N > 2 * min_samples_leaf``; below that the leaf minimum
    is lowered to ``(N - 1) // 2``. With N <= 2 no tree can split and the
    sampler does not run: the surrogate then predicts the no-split model's
    plug-in Normal, ``mean(y)`` with aleatoric ``var(y)`` and epistemic
    ``var(y) / N``. Constant targets give a constant prediction with zero
    variance.

    Parameters
    ----------
    n_trees : int, default 50
        Trees in the sum (Chipman et al.: 200).
    n_draws : int, default 48
        Posterior draws kept, over all chains, i.e. ensemble members; rounded
        up to a multiple of ``n_chains``.
    n_burnin : int, default 200
        MCMC sweeps discarded at the start of every chain.
    thinning : int, default 2
        Keep every ``thinning``-th sweep after burn-in, so each chain runs
        ``n_burnin + thinning * n_draws / n_chains`` sweeps.
    n_chains : int, default 4
        Independent chains, each started from the root (or from its own
        grow-from-root forest when ``n_gfr > 0``); run one after the other.
    n_gfr : int, default 0
        Grow-from-root (XBART) sweeps that initialize the chains instead of
        the root (stochtree's default is 5); they are not kept. Must be 0 or
        at least ``n_chains``.
    k : float, default 2.0
        Leaf prior width: the prior s.d. of ``f(x)`` is ``range(z) / (2 k)``.
    alpha, beta : float, default 0.95, 2.0
        Tree-shape prior ``alpha * (1 + depth)^-beta``.
    sigma_df : float, default 3.0
        ``nu`` of the noise prior.
    sigma_quantile : float, default 0.9
        ``P(sigma < sigma_hat)`` under the noise prior.
    min_samples_leaf : int, default 1
        Smallest leaf the sampler allows. stochtree's default is 5; in short
        SMBO runs leaves of one point let BART resolve the region around the
        best point (Branin, 40 calls: log10 regret -3.2, -0.7, -2.4 at seeds
        0-2, against -0.8, 0.2, 0.7 with 5), at about the same held-out NLL.
    random_state : int, numpy.random.Generator or None
        Seeds the sampler (stochtree takes one integer, drawn from
        ``np.random.default_rng(random_state)``).

    Attributes
    ----------
    forests_ : stochtree.ForestContainer or None
        The kept draws' forests, on standardized targets; None when the
        sampler did not run.
    sigma2_draws_ : ndarray of shape (n_draws,)
        The kept draws of the noise variance, in squared units of ``y``.
    y_mean_, y_scale_ : float
        The affine map from standardized targets back to ``y``.
    """

    _parameter_constraints: dict = {
        "n_trees": [Interval(Integral, 1, None, closed="left")],
        "n_draws": [Interval(Integral, 1, None, closed="left")],
        "n_burnin": [Interval(Integral, 0, None, closed="left")],
        "thinning": [Interval(Integral, 1, None, closed="left")],
        "n_chains": [Interval(Integral, 1, None, closed="left")],
        "n_gfr": [Interval(Integral, 0, None, closed="left")],
        "k": [Interval(Real, 0, None, closed="neither")],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "beta": [Interval(Real, 0, None, closed="left")],
        "sigma_df": [Interval(Real, 0, None, closed="neither")],
        "sigma_quantile": [Interval(Real, 0, 1, closed="neither")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self,
        n_trees: int = 50,
        *,
        n_draws: int = 48,
        n_burnin: int = 200,
        thinning: int = 2,
        n_chains: int = 4,
        n_gfr: int = 0,
        k: float = 2.0,
        alpha: float = 0.95,
        beta: float = 2.0,
        sigma_df: float = 3.0,
        sigma_quantile: float = 0.9,
        min_samples_leaf: int = 1,
        random_state: Any = None,
    ):
        self.n_trees = n_trees
        self.n_draws = n_draws
        self.n_burnin = n_burnin
        self.thinning = thinning
        self.n_chains = n_chains
        self.n_gfr = n_gfr
        self.k = k
        self.alpha = alpha
        self.beta = beta
        self.sigma_df = sigma_df
        self.sigma_quantile = sigma_quantile
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    # stochtree keeps the forests in C++ objects that do not pickle; their JSON
    # form does. (BARTModel.to_json fails for a single feature in stochtree
    # 0.4.5, so only the forest container is kept and serialized.)
    def __getstate__(self) -> dict:
        state = dict(super().__getstate__())
        forests = state.get("forests_")
        if forests is not None:
            state["forests_"] = (forests.num_trees, forests.dump_json_string())
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        if isinstance(state.get("forests_"), tuple):
            num_trees, text = state["forests_"]
            forests = ForestContainer(num_trees, 1, True, False)
            forests.load_from_json_string(text)
            state["forests_"] = forests
        super().__setstate__(state)

    def _fit(self, X: np.ndarray, y: np.ndarray) -> None:
        # Checked before the base class looks at the targets, so that constant
        # targets (which fit nothing) do not hide a bad setting.
        if self.n_gfr and self.n_gfr < self.n_chains:
            raise ValueError(
                "n_gfr must be 0 or at least n_chains (each chain starts from its "
                f"own grow-from-root forest), got n_gfr={self.n_gfr!r}, "
                f"n_chains={self.n_chains!r}"
            )
        # What constant targets leave: the sampler does not run.
        self.forests_ = None
        self.sigma2_draws_ = np.zeros(1)
        super()._fit(X, y)

    def _fit_standardized(self, X: np.ndarray, z: np.ndarray) -> None:
        seed = int(np.random.default_rng(self.random_state).integers(np.iinfo(np.int32).max))
        n = X.shape[0]
        if n <= 2:
            # No tree can split: the plug-in Normal of a constant mean (var(z) = 1).
            self._no_split_variances = (1.0 / n, 1.0)
            self.sigma2_draws_ = np.array([self.y_scale_**2])
            return

        n_trees = int(self.n_trees)
        nu = float(self.sigma_df)
        sigma_hat = max(_sigma_estimate(X, z), 1e-3)
        lam = sigma_hat**2 * chi2.ppf(1.0 - self.sigma_quantile, nu) / nu
        sigma_mu = np.ptp(z) / (2.0 * self.k * np.sqrt(n_trees))
        general = dict(
            standardize=False,
            sample_sigma2_global=True,
            sigma2_global_shape=nu / 2.0,
            sigma2_global_scale=nu * lam / 2.0,
            keep_every=int(self.thinning),
            num_chains=int(self.n_chains),
            num_threads=1,
            random_seed=seed,
        )
        forest = dict(
            num_trees=n_trees,
            alpha=float(self.alpha),
            beta=float(self.beta),
            min_samples_leaf=min(int(self.min_samples_leaf), (n - 1) // 2),
            sample_sigma2_leaf=False,
            sigma2_leaf_init=float(sigma_mu**2),
        )
        draws_per_chain = -(-int(self.n_draws) // int(self.n_chains))
        model = BARTModel()
        model.sample(
            _writeable(X),
            z,
            num_gfr=int(self.n_gfr),
            num_burnin=int(self.n_burnin),
            num_mcmc=draws_per_chain,
            general_params=general,
            mean_forest_params=forest,
        )
        self.forests_ = model.forest_container_mean
        self._sigma2_z = np.asarray(model.global_var_samples, dtype=np.float64)
        self.sigma2_draws_ = self._sigma2_z * self.y_scale_**2

    def _predict_standardized(self, X: np.ndarray) -> Prediction:
        n = X.shape[0]
        if self.forests_ is None:
            epistemic, aleatoric = self._no_split_variances
            return Prediction(
                mean=np.zeros(n),
                variance=np.full(n, epistemic + aleatoric),
                epistemic=np.full(n, epistemic),
                aleatoric=np.full(n, aleatoric),
            )
        n_draws = len(self._sigma2_z)
        block = max(1, _MAX_BLOCK_CELLS // n_draws)
        mean, epistemic, aleatoric = np.empty(n), np.empty(n), np.empty(n)
        for start in range(0, n, block):
            stop = min(n, start + block)
            dataset = Dataset()
            dataset.add_covariates(_writeable(X[start:stop]))
            # (rows, draws): every draw's sum of trees, in standardized units.
            draws = np.asarray(self.forests_.predict(dataset)).reshape(stop - start, n_draws).T
            moments = mixture_moments(draws, np.broadcast_to(self._sigma2_z[:, None], draws.shape))
            mean[start:stop] = moments.mean
            epistemic[start:stop] = moments.epistemic
            aleatoric[start:stop] = moments.aleatoric
        return Prediction(
            mean=mean, variance=epistemic + aleatoric, epistemic=epistemic, aleatoric=aleatoric
        )
