"""Paper 18 at paper scale: the fits and the evaluation take the pairs a block at a time (issue 38's rehearsal found
amortized_ot_fit building 17-64 GB of cost matrices and, for RA-OT at L = 512 on digits, a 515 GB design matrix,
and amortized_ot_evaluate 6.4 GB of sphere test costs, against 8 GB requests). The largest array each builds is
bounded by its block budget whatever the number of pairs, and the blocked results equal the unblocked ones:
bit for bit for the evaluation (its blocks are whole chunks of the chunked Sinkhorn runs), and to float tolerance
for the fits: 1e-9 relative on the coefficients of OA-OT (blocked against unblocked, and against the dense
design-matrix route it replaces: the sliced potentials of a block differ from those of all pairs in the last bit) and
of RA-OT (its normal equations summed block by block, solved with a ridge of 1e-6) and on the potentials they
predict; 1e-12 on OA-OT's objective trace."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from neurips26.amortized_ot import costs, evaluation, method, sinkhorn
from neurips26.amortized_ot.experiment import pack

pytestmark = pytest.mark.filterwarnings("ignore:The balance properties of Sobol")


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    """Chunks of 2 or 3 pairs (the chunked sums run in chunks of 2^16 cost entries: the small problems here would
    be one chunk, and blocks are whole chunks), so that the budgets below make several blocks."""
    monkeypatch.setattr(sinkhorn, "CHUNK_ENTRIES", 2 * 12 * 10)


def problem(P: int, n: int = 9, m: int = 7, d: int = 2, seed: int = 0):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=(P, n, d)), rng.normal(size=(P, m, d))
    a, b = rng.dirichlet(np.ones(n), P), rng.dirichlet(np.ones(m), P)
    truth = sinkhorn.solve_ground_truth(a, b, costs.cost_matrix(x, y, "sqeuclidean"), 0.5, 1e-9, 5000)
    return x, a, y, b, truth


def fit(kind, x, a, y, b, f_star, budget=method.FIT_ENTRIES, L=8, K=4):
    model, trace = method.fit_model(kind, x, a, y, b, f_star, "sqeuclidean", L, K, 1e-6, 0, 0.5, 30, budget=budget)
    return model.coef, trace


def dense_dual(x, a, y, b, L=8, K=4, eps=0.5, ridge=1e-6, max_iter=30):
    """OA-OT as it was before the blocks: the design matrix and cost matrices of all pairs, one L-BFGS solve."""
    theta = method.sliced_directions(L, x.shape[2], 0)
    centres, bandwidth = method.rbf_centres(x, K, 0)
    D = torch.as_tensor(method.functional_design(x, a, y, b, theta, centres, bandwidth))
    cost, a_t, b_t = costs.cost_matrix(x, y, "sqeuclidean"), torch.as_tensor(a), torch.as_tensor(b)
    coef = torch.zeros(D.shape[-1], dtype=torch.float64, requires_grad=True)
    scale = float((D**2).mean())
    optimiser = torch.optim.LBFGS(
        [coef],
        lr=1.0,
        max_iter=max_iter,
        history_size=20,
        line_search_fn="strong_wolfe",
        tolerance_grad=1e-10,
        tolerance_change=1e-12,
    )

    def closure():
        optimiser.zero_grad()
        total = 0.0
        for part in sinkhorn.chunks(*cost.shape):
            loss = -sinkhorn.semi_dual(D[part] @ coef, a_t[part], b_t[part], cost[part], eps).sum() / D.shape[0]
            loss.backward()
            total += float(loss.detach())
        penalty = ridge * scale * (coef**2).sum()
        penalty.backward()
        return torch.tensor(total + float(penalty.detach()))

    optimiser.step(closure)
    return coef.detach().numpy()


def potentials(x, a, y, b, coef, L=8, K=4):
    theta = method.sliced_directions(L, x.shape[2], 0)
    centres, bandwidth = method.rbf_centres(x, K, 0)
    return method.functional_design(x, a, y, b, theta, centres, bandwidth) @ coef


@pytest.fixture(scope="module")
def pairs13():
    return problem(13)


@pytest.mark.parametrize("kind", ["ra", "oa"])
def test_the_fits_in_blocks_give_the_unblocked_coefficients(pairs13, kind):
    x, a, y, b, truth = pairs13
    whole, whole_trace = fit(kind, x, a, y, b, truth.f)
    per_pair = 9 * 4 * (8 + 1)  # one pair's design entries
    for budget, blocks in ((1, 5), (6 * per_pair, 3), (9 * per_pair, 2)):
        assert len(method.PairFeatures(x, a, y, b, np.ones((8, 2)), np.ones((4, 2)), 1.0, budget).blocks) == blocks
        coef, trace = fit(kind, x, a, y, b, truth.f, budget)
        np.testing.assert_allclose(coef, whole, rtol=1e-9, atol=1e-9 * np.abs(whole).max())
        np.testing.assert_allclose(trace, whole_trace, rtol=1e-12)
        np.testing.assert_allclose(potentials(x, a, y, b, coef), potentials(x, a, y, b, whole), rtol=1e-9, atol=1e-9)


def test_oa_ot_equals_the_dense_design_route_it_replaces(pairs13):
    x, a, y, b, truth = pairs13
    coef, _ = fit("oa", x, a, y, b, truth.f, budget=1)
    dense = dense_dual(x, a, y, b)
    np.testing.assert_allclose(coef, dense, rtol=1e-9, atol=1e-9 * np.abs(coef).max())
    np.testing.assert_allclose(potentials(x, a, y, b, coef), potentials(x, a, y, b, dense), rtol=1e-9, atol=1e-9)


def test_ra_ot_in_blocks_equals_the_one_solve_of_the_whole_design(pairs13):
    x, a, y, b, truth = pairs13
    theta = method.sliced_directions(8, 2, 0)
    centres, bandwidth = method.rbf_centres(x, 4, 0)
    design = method.functional_design(x, a, y, b, theta, centres, bandwidth)
    coef, _ = fit("ra", x, a, y, b, truth.f, budget=1)
    whole = method.fit_regression(design, truth.f, a, 1e-6)
    np.testing.assert_allclose(coef, whole, rtol=1e-9, atol=1e-9 * np.abs(whole).max())
    np.testing.assert_allclose(design @ coef, design @ whole, rtol=1e-9, atol=1e-9)


def test_oa_ot_beyond_its_memory_cache_reads_the_features_back_from_disk_with_the_same_result(pairs13, monkeypatch):
    x, a, y, b, truth = pairs13
    theta = method.sliced_directions(8, 2, 0)
    centres, bandwidth = method.rbf_centres(x, 4, 0)
    features = method.PairFeatures(x, a, y, b, theta, centres, bandwidth, budget=1)
    in_memory = method.fit_dual(features, "sqeuclidean", 0.5, 1e-6, 30)
    saved, save = [], np.save

    def record(path, array):
        saved.append(path)
        save(path, array)

    monkeypatch.setattr(np, "save", record)
    on_disk = method.fit_dual(features, "sqeuclidean", 0.5, 1e-6, 30, cache_entries=0)
    assert len(saved) == 2 * len(features.blocks) == 2 * 5  # basis and phi of every block
    np.testing.assert_array_equal(on_disk[0], in_memory[0])
    np.testing.assert_array_equal(on_disk[1], in_memory[1])


def largest_arrays(monkeypatch, module):
    """Record the entries of every design and cost matrix `module` builds."""
    built = {"design": [0], "cost": [0]}
    design_matrix, cost_matrix = method.design_matrix, module.cost_matrix

    def record_design(basis, phi):
        out = design_matrix(basis, phi)
        built["design"].append(out.size)
        return out

    def record_cost(x, y, kind):
        out = cost_matrix(x, y, kind)
        built["cost"].append(out.numel())
        return out

    monkeypatch.setattr(method, "design_matrix", record_design)
    monkeypatch.setattr(module, "cost_matrix", record_cost)
    return built


@pytest.mark.parametrize("kind", ["ra", "oa"])
def test_the_largest_array_of_a_fit_is_bounded_by_the_budget_not_the_number_of_pairs(monkeypatch, kind):
    budget = 4 * 9 * 4 * (8 + 1)  # four pairs' design matrices
    for P in (8, 40):
        x, a, y, b, truth = problem(P)
        with monkeypatch.context() as patch:
            built = largest_arrays(patch, method)
            fit(kind, x, a, y, b, truth.f, budget)
        assert max(built["design"]) <= budget and max(built["cost"]) <= budget, (P, built)
        assert max(built["design" if kind == "ra" else "cost"]) > 0


def groups(P: int, seed: int = 0):
    x, a, y, b, truth = problem(P, n=12, m=10, seed=seed)
    rng = np.random.default_rng(seed + 1)
    converged = truth.converged.copy()
    converged[3] = False
    runs = [("ra_L8", "test"), ("oa_L8_s1", "test")]
    predictions = {
        f"{name}.test": dict(
            f_hat=truth.f + rng.normal(scale=0.05, size=truth.f.shape),
            seconds_per_instance=np.array(1e-3),
            cold_seconds_per_instance=np.array(2e-3),
            cold_iterations=np.zeros(P),
        )
        for name, _ in runs
    }
    pairs = pack({"test": dict(x=x, a=a, y=y, b=b)})
    truth = pack({"test": dict(f=truth.f, g=truth.g, converged=converged)})
    return pairs, truth, pack(predictions), runs


def evaluate(P: int, budget: int):
    table = evaluation.evaluate_task(*groups(P), {"test": 12}, "digits", 0.5, 1e-3, 500, 4, 0, budget=budget)
    return table[~table.metric.str.startswith("t_")].reset_index(drop=True)  # times are measured, not computed


def test_the_evaluation_in_blocks_gives_the_metrics_of_the_whole_group():
    whole = evaluate(9, 2**30)
    for budget in (1, 2 * 12 * 10, 5 * 12 * 10):
        assert len(sinkhorn.aligned_blocks(8, 12, 10, budget)) > 1  # 8 converged pairs
        blocked = evaluate(9, budget)
        assert blocked.drop(columns="value").equals(whole.drop(columns="value"))
        np.testing.assert_array_equal(blocked["value"].to_numpy(), whole["value"].to_numpy())


def test_the_largest_cost_matrix_of_the_evaluation_is_bounded_by_the_budget(monkeypatch):
    budget = 3 * 12 * 10
    for P in (6, 24):
        with monkeypatch.context() as patch, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            built = largest_arrays(patch, evaluation)
            evaluate(P, budget)
        assert 0 < max(built["cost"]) <= budget, (P, built)


def test_the_default_budgets_bound_the_paper_scale_blocks():
    """At the paper's shapes the blocks hold a few pairs: 5 digit pairs at L = 512 (the 16,416-column design),
    8 sphere pairs at L = 128 in the fits, 4 sphere pairs in the evaluation."""
    sizes = {
        "digits L=512": sinkhorn.aligned_blocks(5000, 784, 784, method.FIT_ENTRIES, 32 * 513)[0].stop,
        "sphere L=128": sinkhorn.aligned_blocks(2000, 2000, 2000, method.FIT_ENTRIES, 32 * 129)[0].stop,
        "sphere test": sinkhorn.aligned_blocks(200, 2000, 2000, evaluation.EVALUATION_ENTRIES)[0].stop,
    }
    assert sizes == {"digits L=512": 5, "sphere L=128": 8, "sphere test": 4}
