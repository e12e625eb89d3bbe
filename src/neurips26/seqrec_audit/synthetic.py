"""The synthetic sequence generator with the three shortcut knobs of the paper's abstract (branching of the
transition graph, feature smoothness of transitions, dependence on long histories); its settings and named regimes
are :class:`.catalog.SyntheticSpec` and :func:`.catalog.regime_spec`. The generator is our design (the paper
audits real benchmarks); workflow/report/seqrec_audit/deviations.md says how its regimes are used."""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from neurips26.seqrec_audit.catalog import SyntheticSpec, unit_rows

__all__ = ["generate"]


def _sample_rows(cumulative: np.ndarray, rows: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Inverse-CDF draws from many categorical rows at once: `cumulative` is (R, n) with rows ending at exactly 1;
    returns, for each query, the column j with cum[row, j-1] <= u < cum[row, j]. Offsetting row r by r turns all rows
    into one sorted array, so a single searchsorted serves every query."""
    n = cumulative.shape[1]
    flat = (np.arange(len(cumulative))[:, None] + cumulative).ravel()
    index = np.searchsorted(flat, rows + uniforms, side="right")
    return np.minimum(index - rows * n, n - 1)


def generate(spec: SyntheticSpec) -> tuple[pd.DataFrame, np.ndarray, sp.csr_matrix]:
    """Synthetic sequences: returns sequences[user, items] (users 0..n_users-1, items 0..n_items-1),
    item features (n_items, dim) with unit rows, and the true transition kernel (n_items x n_items CSR, row-stochastic,
    exactly `branching` stored successors per row, never the item itself)."""
    rng = np.random.default_rng(spec.seed)
    n_items, n_users = spec.n_items, spec.n_users

    centres = unit_rows(rng.standard_normal((spec.n_clusters, spec.dim)))
    cluster = rng.integers(spec.n_clusters, size=n_items)
    features = unit_rows(centres[cluster] + spec.cluster_spread * rng.standard_normal((n_items, spec.dim)))

    # successor sets: m_i ~ Binomial(b, s) slots (at most `neighbours`) from a random subset of the feature
    # neighbours, the remaining b - m_i uniformly among all other items not chosen yet
    similarity = features @ features.T
    np.fill_diagonal(similarity, -np.inf)
    nearest = np.argpartition(-similarity, spec.neighbours - 1, axis=1)[:, : spec.neighbours]
    from_nearest = np.minimum(rng.binomial(spec.branching, spec.smoothness, size=n_items), spec.neighbours)
    nearest_rank = np.argsort(np.argsort(rng.random(nearest.shape), axis=1), axis=1)
    keys = rng.random((n_items, n_items))
    picked = nearest_rank < from_nearest[:, None]
    keys[np.nonzero(picked)[0], nearest[picked]] = -1.0
    np.fill_diagonal(keys, 2.0)
    successors = np.sort(np.argpartition(keys, spec.branching - 1, axis=1)[:, : spec.branching], axis=1)
    weights = rng.gamma(spec.dirichlet, size=successors.shape)
    weights = weights / weights.sum(axis=1, keepdims=True)
    indptr = np.arange(0, n_items * spec.branching + 1, spec.branching)
    kernel = sp.csr_matrix((weights.ravel(), successors.ravel(), indptr), shape=(n_items, n_items))
    kernel_cdf = np.cumsum(weights, axis=1)
    kernel_cdf[:, -1] = 1.0

    # users: z_u = normalised convex mix of two distinct cluster centres; p(i | z_u) ∝ exp(kappa f_i . z_u)
    first = rng.integers(spec.n_clusters, size=n_users)
    second = (first + rng.integers(1, max(spec.n_clusters, 2), size=n_users)) % spec.n_clusters
    mix = rng.random(n_users)[:, None]
    z = unit_rows(mix * centres[first] + (1.0 - mix) * centres[second])
    logits = spec.kappa * (z @ features.T)
    preference = np.exp(logits - logits.max(axis=1, keepdims=True))
    preference_cdf = np.cumsum(preference, axis=1)
    preference_cdf /= preference_cdf[:, -1:]
    preference_cdf[:, -1] = 1.0

    lengths = spec.min_length + rng.poisson(spec.mean_extra_length, size=n_users)
    steps = int(lengths.max())
    user_rows = np.repeat(np.arange(n_users), steps)
    from_preference = _sample_rows(preference_cdf, user_rows, rng.random(n_users * steps)).reshape(n_users, steps)
    uniform_items = rng.integers(n_items, size=(n_users, steps))
    mode = rng.random((n_users, steps))
    is_noise = mode < spec.noise
    is_preference = ~is_noise & (mode < spec.noise + (1.0 - spec.noise) * spec.history)
    markov_uniforms = rng.random((n_users, steps))

    items = np.empty((n_users, steps), dtype=np.int64)
    items[:, 0] = from_preference[:, 0]
    for t in range(1, steps):
        column = _sample_rows(kernel_cdf, items[:, t - 1], markov_uniforms[:, t])
        markov = successors[items[:, t - 1], column]
        items[:, t] = np.where(
            is_noise[:, t], uniform_items[:, t], np.where(is_preference[:, t], from_preference[:, t], markov)
        )
    sequences = pd.DataFrame(
        {
            "user": np.arange(n_users, dtype=np.int64),
            "items": [row[:length].tolist() for row, length in zip(items, lengths)],
        }
    )
    return sequences, features, kernel
