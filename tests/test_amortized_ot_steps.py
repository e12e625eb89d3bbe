"""What the pipeline steps of paper 18 call: pairs per task, predictions, the convergence filter of the metrics,
coupling plans of the flows, and saved models read back with weights_only=True and identical predictions."""

import numpy as np
import pandas as pd
import pytest
import torch

from neurips26.amortized_ot import (
    artifacts,
    baselines,
    cfm,
    data,
    evaluation,
    experiment,
    method,
    prediction,
    speed,
    summary,
)
from neurips26.amortized_ot.experiment import pack, unpack


def test_res_by_task_is_each_potential_tasks_training_resolution():
    cfg = {"digits": {"train_res": 8}, "colour": {"colours": 32}, "sphere": {"points": 64}, "cfm": {"batch_size": 16}}
    assert experiment.res_by_task(cfg) == {"digits": 8, "colour": 32, "sphere": 64}


def test_task_groups_make_train_pairs_and_test_groups_that_share_pairs_across_resolutions():
    cfg = {"source": "sklearn", "train_pairs": 5, "test_pairs": 4}
    groups = data.task_groups("digits", cfg, 0, 8, {"test": 8, "test_r12": 12}, [])
    assert list(groups) == ["train", "test", "test_r12"]
    assert groups["train"]["x"].shape == (5, 64, 2) and groups["test_r12"]["x"].shape == (4, 144, 2)
    np.testing.assert_array_equal(groups["test"]["ids"], groups["test_r12"]["ids"])
    assert not np.array_equal(groups["train"]["ids"][:4], groups["test"]["ids"])


def test_task_groups_of_the_cfm_minibatches_have_no_test_group():
    groups = data.task_groups("cfm", {"train_pairs": 3}, 0, 16, {}, [])
    assert list(groups) == ["train"] and groups["train"]["x"].shape == (3, 16, 2)


def test_unknown_coupling_plans_and_fitted_plans_without_a_model_are_refused():
    with pytest.raises(ValueError, match="unknown coupling plan"):
        cfm.coupling_plan("sinkhorn")
    with pytest.raises(ValueError, match="needs a fitted model"):
        cfm.coupling_plan("ra")
    assert cfm.coupling_plan("exact") is cfm.exact_plan


def sphere_batch(n_pairs=3, points=40):
    return data.sphere_pairs(n_pairs, points, (2.0, 8.0), seed=0).as_dict()


def test_sliced_mean_predictions_are_timed_per_instance_beside_cold_sinkhorn_for_every_run():
    pairs = pack({"test": sphere_batch()})
    out = prediction.predict_runs(pairs, [("sliced_mean_L4", "test")], {}, "sphere", 0.1, 0, 1e-3, 200)
    assert set(out) == {"sliced_mean_L4.test"}
    run = out["sliced_mean_L4.test"]
    assert run["f_hat"].shape == (3, 40) and float(run["seconds_per_instance"]) > 0
    assert float(run["cold_seconds_per_instance"]) > 0
    # each pair's matched cold iterations: whole numbers within the iteration cap
    iterations = run["cold_iterations"]
    assert iterations.shape == (3,) and np.all((iterations >= 0) & (iterations <= 200))
    assert np.array_equal(iterations, np.round(iterations))


def test_a_fitted_model_predicts_what_predict_f_gives(tmp_path):
    p = sphere_batch()
    x, a, y, b = (p[k] for k in "xayb")
    model, trace = method.fit_model("ra", x, a, y, b, np.zeros_like(a), None, 4, 1, 1e-3, seed=0)
    assert trace.size == 0 and model.theta.shape == (4, 3)
    path = tmp_path / "ra_L4.npz"
    np.savez(path, **model.as_dict())
    f_hat = prediction.predictor("ra_L4", path, x, a, y, b, 0)()
    np.testing.assert_array_equal(f_hat, method.predict_f(model, x, a, y, b))
    with pytest.raises(ValueError, match="unknown fitted model"):
        method.fit_model("mlp", x, a, y, b, None, None, 4, 1, 1e-3, seed=0)


def test_metrics_leave_out_test_pairs_whose_ground_truth_did_not_converge():
    pairs = pack({"test": sphere_batch()})
    truth = pack({"test": {"f": np.ones((3, 40)), "g": np.zeros((3, 40)), "converged": np.array([True, False, True])}})
    group = evaluation.converged_group(pairs, truth, "test")
    np.testing.assert_array_equal(group.keep, [0, 2])
    np.testing.assert_array_equal(group.x, unpack(pairs, "test")["x"][[0, 2]])
    assert group.f_star.shape == (2, 40)


def test_a_saved_flow_loads_with_weights_only_and_predicts_identically(tmp_path):
    torch.manual_seed(0)
    flow = cfm.VectorField(width=16)
    path = tmp_path / "flow.pt"
    torch.save(artifacts.flow_state(flow, 16, [1.0, 0.5], 2.5), path)
    loaded, saved = artifacts.load_flow(path)
    x, t = torch.randn(7, 2), torch.rand(7)
    torch.testing.assert_close(loaded(x, t), flow(x, t), rtol=0, atol=0)
    assert saved["train_seconds"] == 2.5 and saved["losses"] == [1.0, 0.5]


def test_flow_seed_reads_the_training_seed_from_the_file_name():
    assert evaluation.flow_seed("cfm/exact/flow.pt", 3) == 3
    assert evaluation.flow_seed("cfm/exact/flow_s7.pt", 3) == 7


def test_a_saved_metaot_model_predicts_what_the_trained_net_predicts(tmp_path):
    x = np.broadcast_to(data.grid_points(2), (1, 4, 2)).copy()
    torch.manual_seed(0)
    net = baselines.MetaOTPotential(4, 4, (8,)).double()
    path = tmp_path / "metaot.pt"
    torch.save(artifacts.metaot_state(net, [8], x[0], x[0], 1.0), path)
    a = np.full((3, 4), 0.25)
    with torch.no_grad():
        expected = net(torch.as_tensor(a), torch.as_tensor(a)).numpy()
    np.testing.assert_array_equal(artifacts.load_metaot(path, x, x).predict(a, a), expected)


def speed_profile_tables() -> dict[str, pd.DataFrame]:
    """The speed profile of an RA-OT model on four small sphere pairs (one timed run per step)."""
    p = sphere_batch(n_pairs=4)
    x, a, y, b = (p[k] for k in "xayb")
    model, _ = method.fit_model("ra", x, a, y, b, np.zeros_like(a), None, 4, 2, 1e-3, seed=0)
    return speed.profile_prediction(model, x, a, y, b, "sqgeodesic", 0.2, 1e-3, 200, repeats=1)


def test_report_tables_read_the_base_fit_seed_except_in_the_per_seed_table(tmp_path):
    rows = [
        dict(task="digits", method="ra", projections=8, res=8, n_atoms=64, seed=s, pair=0, metric="rmse_f", value=v)
        for s, v in ((0, 1.0), (1, 3.0))
    ]
    path = tmp_path / "metrics.parquet"
    pd.DataFrame(rows).to_parquet(path)

    class Params:
        seed, main_projections, res_by_task = 0, 8, {"digits": 8, "colour": 4, "sphere": 4}

    speed = speed_profile_tables()
    for name, table in speed.items():
        table.to_parquet(tmp_path / f"{name}.parquet")

    class Inputs:
        metrics = path
        speed_summary, speed_stages, speed_top = (tmp_path / f"{name}.parquet" for name in ("summary", "stages", "top"))

    tables = summary.report_tables(Inputs, Params)
    assert tables["res"]["digits"] == 8
    assert tables["speed"]["pairs"] == 4 and tables["speed_summary"]["route"].tolist() == ["before", "after"]
    assert tables["accuracy"]["rmse_f"].tolist() == [1.0]
    assert tables["seeds"]["RA-OT"].tolist() == [1.0, 3.0]


def test_flow_and_metaot_training_with_common_optim_equal_torch_optim_adam(monkeypatch):
    """common.optim.Adam replaced torch.optim.Adam: the same losses, bit for bit (no step below differs in the
    last bit of sqrt(1 - beta2^t), see common.optim)."""
    samplers = data.TOY_SAMPLERS["8gaussians"], data.TOY_SAMPLERS["moons"]
    a = np.random.default_rng(0).dirichlet(np.ones(4), size=6)
    cost = torch.as_tensor(np.random.default_rng(1).random((1, 4, 4)))

    def train():
        _, flow_losses = cfm.train_flow(*samplers, cfm.independent_plan, 12, 8, 1e-2, 8, 0)
        _, metaot_losses = baselines.train_metaot(a, a, cost, 0.1, (8,), 12, 4, 1e-2, 0)
        return flow_losses + metaot_losses

    ours = train()
    monkeypatch.setattr(cfm, "Adam", torch.optim.Adam)
    monkeypatch.setattr(baselines, "Adam", torch.optim.Adam)
    assert train() == ours
