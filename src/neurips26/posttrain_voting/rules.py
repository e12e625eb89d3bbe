r"""Post-training methods and classical rules as probabilistic voting rules ``(P, ref, beta) -> lottery``.

Every rule reads the profile only through its pairwise matrix ``P`` (``P[a, b]`` = share preferring ``a``
to ``b``, ties 1/2; :func:`profiles.pairwise_matrix`), takes arrays of shape ``(..., m, m)`` and
``(..., m)`` and returns lotteries of shape ``(..., m)``. The closed forms are our reconstruction (the paper
itself was not found):

* ``dpo`` (Rafailov et al. 2023, population DPO). Each ordered pair ``(a, b)`` is shown equally often and
  ``a`` wins with probability ``P[a, b]``; writing ``r_pi(y) = beta log(pi(y) / ref(y))`` the population DPO
  loss is ``-sum_{a != b} P[a, b] log sigma(r_pi(a) - r_pi(b))``, the negative Bradley-Terry log-likelihood
  of the implicit reward. It is minimised when ``r_pi`` equals the Bradley-Terry MLE ``r_hat`` up to a
  constant, so ``pi(y) ∝ ref(y) exp(r_hat(y) / beta)``. ``r_hat`` carries a ridge ``lam ||r||^2`` (default
  1e-6) so that unanimous pairs give a finite reward.
* ``rlhf_bt``: reward model = the same Bradley-Terry MLE, then ``max_pi E_pi[r_hat] - beta KL(pi || ref)``
  (Ouyang et al. 2022), solved here by numerical maximisation over the logits, not by the Gibbs formula, so
  that its equality with ``dpo`` is a check.
* ``nlhf`` (Munos et al. 2023): the Nash equilibrium of the regularised preference game, :mod:`nlhf`.
* ``probabilistic_borda``: ``pi ∝ ref exp(borda_share / beta)``, ``borda_share(a) = mean_b P[a, b]`` over
  ``b != a`` (the DPO form with the Borda score as reward; our reconstruction of a reference-dependent Borda).
* ``proportional_borda``: ``p(a) = Borda(a) / sum Borda`` (pref_voting's ``pr_borda``, Holliday and Pacuit).
* ``maximal_lottery`` (Fishburn 1984; Brandt's survey "Rolling the dice"): a lottery ``p`` with
  ``p^T M >= 0`` for the margin matrix ``M = P - P^T``, found by ``scipy.optimize.linprog``; unique when
  the margins have no zero-sum degeneracy (e.g. an odd number of strict voters), else one optimal vertex.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog, minimize
from scipy.special import expit, log_softmax, softmax

from neurips26.common.validation import check_number
from neurips26.posttrain_voting.checks import check_beta, check_pairwise, check_reference
from neurips26.posttrain_voting.nlhf import nlhf_equilibrium

STEPS = 0.5 ** np.arange(16)  # backtracking step sizes tried at once by the batched Newton solvers


def bradley_terry_reward(P: np.ndarray, ridge: float = 1e-6, tol: float = 1e-10, max_iter: int = 100) -> np.ndarray:
    """Bradley-Terry MLE ``argmax_r sum_{a != b} P[a,b] log sigma(r_a - r_b) - ridge ||r||^2`` (sum r = 0), batched.

    Gradient ``g_a = sum_b (P[a,b] - sigma(r_a - r_b)) - 2 ridge r_a``; damped Newton with all backtracking
    steps evaluated at once. Raises ``RuntimeError`` if the gradient norm does not fall below ``tol``."""
    P = check_pairwise(P, "bradley_terry_reward")
    check_number("ridge", ridge, 0.0, low_open=True, who="bradley_terry_reward")
    m = P.shape[-1]
    off = 1 - np.eye(m)

    def objective(r):
        d = r[..., :, None] - r[..., None, :]
        return (P * off * np.log(expit(d))).sum((-1, -2)) - ridge * (r**2).sum(-1)

    r = np.zeros(P.shape[:-1])
    for _ in range(max_iter):
        s = expit(r[..., :, None] - r[..., None, :])
        grad = ((P - s) * off).sum(-1) - 2 * ridge * r
        if np.abs(grad).max() < tol:
            return r - r.mean(-1, keepdims=True)
        w = s * (1 - s) * off
        hess = w - np.eye(m) * w.sum(-1)[..., None] - 2 * ridge * np.eye(m)
        step = np.linalg.solve(hess, -grad[..., None])[..., 0]
        trials = r[None] + STEPS.reshape((-1,) + (1,) * r.ndim) * step[None]
        best = np.argmax(objective(trials), axis=0)
        r = np.take_along_axis(trials, best[None, ..., None], axis=0)[0]
    raise RuntimeError(
        f"bradley_terry_reward did not converge in {max_iter} Newton steps (|grad| {np.abs(grad).max():.2e})"
    )


def dpo(P, ref, beta: float, ridge: float = 1e-6) -> np.ndarray:
    """Population DPO optimum ``pi ∝ ref exp(r_hat / beta)`` with ``r_hat`` the Bradley-Terry MLE of ``P``."""
    P = check_pairwise(P, "dpo")
    ref = check_reference(ref, P.shape[-1], "dpo")
    return softmax(np.log(ref) + bradley_terry_reward(P, ridge) / check_beta(beta, "dpo"), axis=-1)


def rlhf_bt(P, ref, beta: float, ridge: float = 1e-6) -> np.ndarray:
    """KL-regularised RLHF with the Bradley-Terry reward, ``argmax_pi E_pi[r_hat] - beta KL(pi||ref)``, solved by
    L-BFGS over the logits (one problem at a time) to gradient tolerance 1e-12."""
    P = check_pairwise(P, "rlhf_bt")
    ref = check_reference(ref, P.shape[-1], "rlhf_bt")
    beta = check_beta(beta, "rlhf_bt")
    r = bradley_terry_reward(P, ridge)
    shape = np.broadcast_shapes(r.shape, ref.shape)
    r, ref = np.broadcast_to(r, shape).reshape(-1, shape[-1]), np.broadcast_to(ref, shape).reshape(-1, shape[-1])
    out = np.empty_like(r)
    for i, (ri, qi) in enumerate(zip(r, ref)):

        def loss(z, ri=ri, qi=qi):
            logp = log_softmax(z)
            p = np.exp(logp)
            value = p @ ri - beta * p @ (logp - np.log(qi))
            grad_logp = ri - beta * (logp - np.log(qi)) - beta
            return -value, -(p * (grad_logp - p @ grad_logp))

        res = minimize(
            loss, np.log(qi), jac=True, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 0, "maxiter": 1000}
        )
        out[i] = softmax(res.x)
    return out.reshape(shape)


def dpo_by_loss(P, ref, beta: float, ridge: float = 1e-6) -> np.ndarray:
    """Minimise the population DPO loss ``-sum_{a != b} P[a, b] log sigma(r(a) - r(b)) + ridge ||r||^2`` over the
    policy, ``r = beta log(pi / ref)`` centred, by L-BFGS on the log-ratios (one problem at a time, gradient
    tolerance 1e-12): an independent solver for :func:`dpo`'s closed form (check K1)."""
    P = check_pairwise(P, "dpo_by_loss")
    ref = check_reference(ref, P.shape[-1], "dpo_by_loss")
    beta = check_beta(beta, "dpo_by_loss")
    m = P.shape[-1]
    off = 1 - np.eye(m)
    shape = np.broadcast_shapes(P.shape[:-1], ref.shape)
    Ps = np.broadcast_to(P, shape + (m,)).reshape(-1, m, m)
    refs = np.broadcast_to(ref, shape).reshape(-1, m)
    out = np.empty_like(refs)
    for i, (Pi, qi) in enumerate(zip(Ps, refs)):

        def loss(u, Pi=Pi):
            r = beta * (u - u.mean())
            d = r[:, None] - r[None, :]
            value = -(Pi * off * np.log(expit(d))).sum() + ridge * (r**2).sum()
            g_r = -((Pi - expit(d)) * off).sum(1) + 2 * ridge * r  # d/dr of the loss (P[a,b] + P[b,a] = 1)
            g_r = g_r - g_r.mean()
            return value, beta * g_r

        res = minimize(loss, np.zeros(m), jac=True, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 0,
                                                                                  "maxiter": 1000})  # fmt: skip
        out[i] = softmax(np.log(qi) + res.x)
    return out.reshape(shape)


def borda_share(P: np.ndarray) -> np.ndarray:
    """Mean share of pairwise wins ``mean_{b != a} P[a, b]`` (the normalised Borda score, in [0, 1])."""
    m = P.shape[-1]
    return ((P * (1 - np.eye(m))).sum(-1)) / (m - 1)


def probabilistic_borda(P, ref, beta: float) -> np.ndarray:
    """``pi ∝ ref exp(borda_share / beta)``: the DPO closed form with the Borda score as reward (our reconstruction)."""
    P = check_pairwise(P, "probabilistic_borda")
    ref = check_reference(ref, P.shape[-1], "probabilistic_borda")
    return softmax(np.log(ref) + borda_share(P) / check_beta(beta, "probabilistic_borda"), axis=-1)


def proportional_borda(P, ref=None, beta=None) -> np.ndarray:
    """``p(a) = Borda(a) / sum_b Borda(b)`` (pref_voting ``pr_borda``); reference-free, ``ref`` and ``beta`` unused."""
    b = borda_share(check_pairwise(P, "proportional_borda"))
    return b / b.sum(-1, keepdims=True)


def maximal_lottery(P, ref=None, beta=None) -> np.ndarray:
    """A maximal lottery: ``p >= 0``, ``sum p = 1``, ``(M^T p)_b >= 0`` for all ``b`` with ``M = P - P^T``
    (Fishburn 1984), by ``linprog`` (HiGHS) one profile at a time; reference-free."""
    P = check_pairwise(P, "maximal_lottery")
    m = P.shape[-1]
    flat = P.reshape(-1, m, m)
    out = np.empty((len(flat), m))
    for i, Pi in enumerate(flat):
        M = Pi - Pi.T
        # maximise v subject to M^T p >= v, sum p = 1, p >= 0; the symmetric game has value 0
        res = linprog(
            np.r_[np.zeros(m), -1.0],
            A_ub=np.c_[-M.T, np.ones(m)],
            b_ub=np.zeros(m),
            A_eq=np.r_[np.ones(m), 0.0][None],
            b_eq=[1.0],
            bounds=[(0, None)] * m + [(None, None)],
            method="highs",
        )
        if res.status != 0 or res.x[-1] < -1e-9:
            raise RuntimeError(f"maximal_lottery: linprog failed ({res.message}) on P={Pi.tolist()}")
        out[i] = np.clip(res.x[:m], 0, None) / np.clip(res.x[:m], 0, None).sum()
    return out.reshape(P.shape[:-1])


def maximal_lottery_unique(P, tol: float = 1e-7) -> bool:
    """Whether the maximal lottery of one pairwise matrix is unique: the range of every coordinate over the optimal
    set (``p >= 0``, ``sum p = 1``, ``M^T p >= 0``; 2m linear programs) is below ``tol``."""
    P = check_pairwise(P, "maximal_lottery_unique")
    m = P.shape[-1]
    M = P - P.T
    for a in range(m):
        ends = []
        for sign in (1.0, -1.0):
            res = linprog(sign * np.eye(m)[a], A_ub=-M.T, b_ub=np.full(m, 1e-12), A_eq=np.ones((1, m)), b_eq=[1.0],
                          bounds=[(0, None)] * m, method="highs")  # fmt: skip
            ends.append(res.x[a] if res.status == 0 else np.nan)
        if not abs(ends[0] - ends[1]) <= tol:
            return False
    return True


@dataclass(frozen=True)
class Rule:
    """A named probabilistic voting rule ``fn(P, ref, beta) -> lottery``."""

    name: str
    fn: Callable
    uses_reference: bool
    source: str

    def __call__(self, P, ref=None, beta=None):
        return self.fn(P, ref, beta) if self.uses_reference else self.fn(P)


def _nlhf(P, ref, beta):
    return nlhf_equilibrium(P, ref, beta).policy


RULES = {
    "dpo": Rule("dpo", dpo, True, "Rafailov et al. 2023 (population closed form, our reconstruction)"),
    "rlhf_bt": Rule("rlhf_bt", rlhf_bt, True, "Ouyang et al. 2022 / Christiano et al. 2017, BT reward"),
    "nlhf": Rule("nlhf", _nlhf, True, "Munos et al. 2023, regularised Nash equilibrium"),
    "probabilistic_borda": Rule("probabilistic_borda", probabilistic_borda, True, "softmax Borda (our reconstruction)"),
    "proportional_borda": Rule("proportional_borda", proportional_borda, False, "pref_voting pr_borda"),
    "maximal_lottery": Rule("maximal_lottery", maximal_lottery, False, "Fishburn 1984; Brandt 2017"),
}
