"""Entropic OT in the log domain: ground truth, c-transforms, plans and iteration counts.

Convention (POT's log-domain Sinkhorn, ot.sinkhorn(method="sinkhorn_log"), potentials shifted accordingly):
pi = diag(a e^{f/eps}) K diag(b e^{g/eps}), K = e^{-C/eps}, so that
pi_jl = a_j b_l exp((f_j + g_l - C_jl)/eps) and the dual is
D_eps(f, g) = <f, a> + <g, b> - eps * sum_jl a_j b_l (e^{(f_j + g_l - C_jl)/eps} - 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from neurips26.amortized_ot.measures import check_positive

# POT stops on the L2 error of one marginal; we check the L1 error of both, hence some slack
CONVERGED_SLACK = 100.0
# pairs are solved in chunks of at most this many cost entries: the log-sum-exp temporaries then stay
# in cache, which is ~10x faster on CPU than one batch of all pairs (memory-bound otherwise)
CHUNK_ENTRIES = 2**16


def chunks(n_pairs: int, n: int, m: int, budget: int | None = None) -> list[slice]:
    """Consecutive slices of pairs with at most `budget` (default CHUNK_ENTRIES) cost entries each,
    at least one pair per slice."""
    size = max(1, (budget or CHUNK_ENTRIES) // (n * m))
    return [slice(start, min(start + size, n_pairs)) for start in range(0, n_pairs, size)]


def aligned_blocks(n_pairs: int, n: int, m: int, budget: int, width: int = 0) -> list[slice]:
    """Consecutive slices of pairs with at most `budget` entries each, a pair counting n x max(m, `width`) entries
    (its cost matrix, or a row block of `width` columns per atom), at least one pair per slice. Each slice is a whole
    number of `chunks(n_pairs, n, m)`, so a chunked computation run block by block sees the same chunks in the same
    order, and gives the same numbers, whatever `budget`."""
    chunk = max(1, CHUNK_ENTRIES // (n * m))
    size = chunk * max(1, budget // (chunk * n * max(m, width)))
    return [slice(start, min(start + size, n_pairs)) for start in range(0, n_pairs, size)]


@dataclass(frozen=True)
class SinkhornSolution:
    f: np.ndarray  # (P, n), centered
    g: np.ndarray  # (P, m), centered
    marginal_error: np.ndarray  # (P,) L1 error of both marginals
    converged: np.ndarray  # (P,) bool
    n_iter: int


def c_transform(f: torch.Tensor, a: torch.Tensor, cost: torch.Tensor, eps: float) -> torch.Tensor:
    """Entropic c-transform: g_l = -eps log sum_j a_j exp((f_j - C_jl)/eps); makes the nu-marginal exact."""
    logits = (f[..., :, None] - cost) / eps + torch.log(a)[..., :, None]
    return -eps * torch.logsumexp(logits, dim=-2)


def c_transform_rows(g: torch.Tensor, b: torch.Tensor, cost: torch.Tensor, eps: float) -> torch.Tensor:
    """The other side: f_j = -eps log sum_l b_l exp((g_l - C_jl)/eps); makes the mu-marginal exact."""
    logits = (g[..., None, :] - cost) / eps + torch.log(b)[..., None, :]
    return -eps * torch.logsumexp(logits, dim=-1)


def center(f: torch.Tensor, g: torch.Tensor, a: torch.Tensor, b: torch.Tensor):
    """Shift (f + c, g - c) so that <f, a> = <g, b> (the dual is invariant to this shift)."""
    shift = 0.5 * ((g * b).sum(-1) - (f * a).sum(-1))
    return f + shift[..., None], g - shift[..., None]


def log_plan(f, g, a, b, cost, eps):
    return torch.log(a)[..., :, None] + torch.log(b)[..., None, :] + (f[..., :, None] + g[..., None, :] - cost) / eps


def plan(f, g, a, b, cost, eps) -> torch.Tensor:
    return torch.exp(log_plan(f, g, a, b, cost, eps))


def marginal_error(pi: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """||pi 1 - a||_1 + ||pi^T 1 - b||_1 per pair."""
    return (pi.sum(-1) - a).abs().sum(-1) + (pi.sum(-2) - b).abs().sum(-1)


def semi_dual(f: torch.Tensor, a: torch.Tensor, b: torch.Tensor, cost: torch.Tensor, eps: float) -> torch.Tensor:
    """D_eps(f, g(f)) with g the c-transform of f; the exponential term vanishes there."""
    g = c_transform(f, a, cost, eps)
    return (f * a).sum(-1) + (g * b).sum(-1)


def solve_ground_truth(
    a: np.ndarray, b: np.ndarray, cost: torch.Tensor, eps: float, tol: float, max_iter: int
) -> SinkhornSolution:
    """Batched log-domain Sinkhorn (POT's ot.solve_batch) converted to centered potentials."""
    import ot  # POT loads torch, scikit-learn and scipy (seconds): only where it is called

    check_positive(eps, "eps")
    a_t, b_t = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
    fs, gs, n_iter = [], [], 0
    for part in chunks(*cost.shape):
        result = ot.solve_batch(
            cost[part],
            reg=eps,
            a=a_t[part],
            b=b_t[part],
            max_iter=max_iter,
            tol=tol,
            method="log_sinkhorn",
            grad="detach",
        )
        log_u, log_v = result.potentials
        fs.append(eps * (log_u - torch.log(a_t[part])))
        gs.append(eps * (log_v - torch.log(b_t[part])))
        n_iter = max(n_iter, int(result.log["n_iter"]))
    f = torch.cat(fs)
    # one last c-transform makes the nu-marginal exact; the mu-marginal error is the convergence check
    g = c_transform(f, a_t, cost, eps)
    f, g = center(f, g, a_t, b_t)
    err = marginal_error(plan(f, g, a_t, b_t, cost, eps), a_t, b_t)
    return SinkhornSolution(
        f=f.numpy(),
        g=g.numpy(),
        marginal_error=err.numpy(),
        converged=(err <= CONVERGED_SLACK * tol).numpy(),
        n_iter=n_iter,
    )


# the ground truth of a task is solved in blocks of pairs of at most this many cost entries (512 MB of float64):
# the cost, the plan and the log-sum-exp temporaries of all pairs at once (paper scale: 2000 x 1024^2 colour
# pairs, 2000 x 2000^2 sphere pairs) would need 50 to 200 GB
BLOCK_ENTRIES = 2**26


def solve_ground_truth_blocks(
    x: np.ndarray,
    y: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    cost_kind: str,
    eps: float,
    tol: float,
    max_iter: int,
    budget: int = BLOCK_ENTRIES,
) -> SinkhornSolution:
    """`solve_ground_truth` of pairs (x, a) -> (y, b), with each block's cost matrix built and freed in turn, so
    that memory is bounded by `budget` cost entries, whatever the number of pairs; the same potentials."""
    from neurips26.amortized_ot.costs import cost_matrix

    parts = [
        solve_ground_truth(a[s], b[s], cost_matrix(x[s], y[s], cost_kind), eps, tol, max_iter)
        for s in chunks(len(a), a.shape[1], b.shape[1], budget)
    ]
    return SinkhornSolution(
        **{key: np.concatenate([getattr(p, key) for p in parts]) for key in ("f", "g", "marginal_error", "converged")},
        n_iter=max(p.n_iter for p in parts),
    )


def iterations_to_tolerance(
    f0: torch.Tensor,
    a: torch.Tensor,
    b: torch.Tensor,
    cost: torch.Tensor,
    eps: float,
    tol: float | torch.Tensor,
    max_iter: int,
) -> np.ndarray:
    """Sinkhorn iterations until the marginal error falls below `tol`, from the initial potential f0.

    One iteration is a g-update (c-transform of f) followed by an f-update. The count is taken
    after each g-update (nu-marginal exact then), as in Meta-OT's warm-start comparison; 0 means
    f0 already met the tolerance. Pairs that never reach it report `max_iter`. `tol` may be a
    scalar or a tensor with one tolerance per pair.
    """
    trajectory, _ = error_trajectory(f0, a, b, cost, eps, tol, max_iter)
    return first_below(trajectory, np.asarray(torch.as_tensor(tol, dtype=torch.float64).expand(f0.shape[0])), max_iter)


def error_trajectory(
    f0: torch.Tensor,
    a: torch.Tensor,
    b: torch.Tensor,
    cost: torch.Tensor,
    eps: float,
    tol: float | torch.Tensor,
    max_iter: int,
) -> tuple[np.ndarray, int]:
    """mu-marginal L1 error after each Sinkhorn iteration, (P, T + 1), run until every pair is below
    its `tol` (or max_iter); later entries repeat the last error. Also returns the number of
    pair-iterations computed (pairs iterate in chunks until their chunk is done), for timing."""
    check_positive(eps, "eps")
    tol = torch.as_tensor(tol, dtype=torch.float64).expand(f0.shape[0])
    parts = [_trajectory(f0[p], a[p], b[p], cost[p], eps, tol[p], max_iter) for p in chunks(*cost.shape)]
    length = max(t.shape[1] for t, _ in parts)
    padded = [np.pad(t, ((0, 0), (0, length - t.shape[1])), mode="edge") for t, _ in parts]
    return np.concatenate(padded), sum(work for _, work in parts)


def first_below(trajectory: np.ndarray, tol: np.ndarray | float, max_iter: int) -> np.ndarray:
    """First iteration at which each pair's error is below its tolerance; max_iter if never."""
    below = trajectory < np.broadcast_to(np.asarray(tol, dtype=np.float64), trajectory.shape[:1])[:, None]
    return np.where(below.any(axis=1), below.argmax(axis=1), max_iter)


def _trajectory(f0, a, b, cost, eps, tol, max_iter) -> tuple[np.ndarray, int]:
    f = f0.clone()
    errors = []
    for it in range(max_iter + 1):
        g = c_transform(f, a, cost, eps)
        err = (plan(f, g, a, b, cost, eps).sum(-1) - a).abs().sum(-1)
        errors.append(err)
        if bool((err < tol).all()) or it == max_iter:
            break
        f = c_transform_rows(g, b, cost, eps)
    return torch.stack(errors, dim=1).numpy(), len(errors) * f.shape[0]
