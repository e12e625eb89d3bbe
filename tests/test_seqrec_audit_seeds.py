"""Paper 10's seeds as a batch dimension (issue 23): SASRec and BERT4Rec seeds trained together as one batched
ensemble give each seed the run it gets alone (weights, epoch rows, kept epoch, test metrics, within float
tolerance); a seed's dropout masks are the ones its module's own dropout layers draw; a killed batched run resumes
bit-identically and keeps every member on the job's device; and the train rule makes one job per seed group."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from conftest import ROOT, planned_jobs
from fake_gpu import fake_gpu
from neurips26.common import faults, loop
from neurips26.seqrec_audit import catalog, experiment, prepare, trained
from neurips26.seqrec_audit.bert4rec import BERT4Rec, BERT4RecConfig, train_bert4rec, train_bert4rec_seeds
from neurips26.seqrec_audit.sasrec import SASRec, SASRecConfig, train_sasrec, train_sasrec_seeds
from neurips26.seqrec_audit.seeds import check_seed_configs, dropout_masks, seeded_members

PROTOCOL = {"exclude_history": False, "tie_break": "pessimistic"}
SASREC = SASRecConfig(d_model=16, n_blocks=2, n_heads=2, maxlen=8, dropout=0.2, lr=3e-3, batch=16, epochs=3)
BERT = BERT4RecConfig(d_model=16, n_blocks=2, n_heads=2, maxlen=8, dropout=0.2, mask_prob=0.3, lr=3e-3, batch=16,
                      epochs=3)  # fmt: skip
TRAIN = {"sasrec": (train_sasrec, train_sasrec_seeds, SASREC), "bert4rec": (train_bert4rec, train_bert4rec_seeds, BERT)}
TIMING = {"seconds", "tokens_per_s"}


def sequences(n: int, items: int, seed: int) -> list[np.ndarray]:
    """Sequences of 2 to 11 items (windows of different widths, so seeds' batches trim to different widths)."""
    rng = np.random.default_rng(seed)
    return [(rng.integers(items) + np.arange(length) * rng.integers(1, 3)) % items for length in rng.integers(2, 12, n)]


@pytest.fixture(scope="module")
def data():
    train = sequences(48, 13, 0)  # 57 SASRec windows, 60 BERT4Rec windows: 4 batches of 16 an epoch
    histories = sequences(20, 13, 1)
    targets = np.array([(h[-1] + 1) % 13 for h in histories])
    return train, histories, targets


def without_timing(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in TIMING} for row in rows]


def comparable(state: dict[str, torch.Tensor], d_model: int) -> dict[str, torch.Tensor]:
    """The weights without the attention's key bias: adding a constant to every key leaves the softmax unchanged,
    so its gradient is zero but for float rounding, which Adam (a step of about lr whatever the gradient's size)
    turns into a random walk of its own in any two differently rounded runs; it changes no output."""
    return {
        key: torch.cat([value[:d_model], value[2 * d_model :]]) if key.endswith("attention.qkv.bias") else value
        for key, value in state.items()
    }


@pytest.mark.parametrize("name", ["sasrec", "bert4rec"])
def test_each_seed_of_a_batched_run_equals_its_run_alone(data, name):
    """The issue's test: seeds [0, 1, 2] trained as one batch against each trained alone, with dropout, Cloze
    masks and validation: same weights, rows and kept epoch within float tolerance."""
    train, histories, targets = data
    single, batched, config = TRAIN[name]
    configs = [replace(config, seed=seed) for seed in (0, 1, 2)]
    together = batched(train, 13, histories, targets, configs, device="cpu")
    assert len(together) == 3
    tokens = torch.tensor([[0, 0, 3, 7, 1, 5, 2, 13], [2, 9, 4, 4, 11, 6, 1, 13], [0, 0, 0, 0, 8, 10, 12, 13]])
    for config, (model, rows) in zip(configs, together):
        alone, alone_rows = single(train, 13, histories, targets, config, device="cpu")
        assert model.config == config and not model.training
        mine = comparable(model.state_dict(), config.d_model)
        for key, value in comparable(alone.state_dict(), config.d_model).items():
            torch.testing.assert_close(mine[key], value, rtol=1e-4, atol=1e-5, msg=key)
        torch.testing.assert_close(model(tokens), alone(tokens), rtol=1e-4, atol=1e-5)  # key bias included
        assert [r["best"] for r in rows] == [r["best"] for r in alone_rows]
        for mine, theirs in zip(without_timing(rows), without_timing(alone_rows)):
            assert mine.keys() == theirs.keys()
            for key, value in theirs.items():
                assert mine[key] == pytest.approx(value, rel=1e-5, abs=1e-6), (config.seed, key)
    # the seeds are different runs: different data order, masks and initialisation
    losses = {rows[0]["train_loss"] for _, rows in together}
    assert len(losses) == 3


def test_each_seeds_test_metrics_equal_its_run_alone():
    ready = prepare.prepare_synthetic(
        catalog.regime_spec("shortcut_rich", n_users=60, n_items=30, neighbours=10), min_length=3
    )
    configs = [replace(SASREC, n_blocks=1, epochs=2, seed=seed) for seed in (4, 7)]
    together = trained.fit_and_evaluate_seeds("sasrec", ready, configs, PROTOCOL, device="cpu")
    for config, fitted in zip(configs, together):
        alone = trained.fit_and_evaluate("sasrec", ready, config, PROTOCOL, device="cpu")
        assert fitted.metrics == pytest.approx(alone.metrics, abs=1e-9)
        assert fitted.train_seconds > 0 and fitted.inference_seconds > 0


@pytest.mark.parametrize("model_class, config", [(SASRec, SASREC), (BERT4Rec, BERT)])
def test_a_seeds_masks_are_what_its_modules_own_dropout_draws(model_class, config):
    """At the CPU, a seed's generator continues its torch stream after the initialisation and each mask is drawn
    as at::dropout draws it: the forward with the masks passed in is bit for bit the module's own training-mode
    forward (global RNG seeded with the seed, model built, then dropout drawn in the layers), i.e. what the
    trainer before batching computed."""
    tokens = torch.tensor([[0, 0, 3, 7, 1, 5], [2, 9, 4, 4, 11, 6], [0, 0, 0, 0, 8, 10]])
    (model,), (generator,) = seeded_members(
        lambda c: model_class(12, c), [replace(config, seed=5)], torch.device("cpu")
    )
    masks = dropout_masks(model.dropout_layout(), config.dropout, 3, 6, 16, config.n_heads, generator, 6)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(5)
        reference = model_class(12, replace(config, seed=5)).train()
        expected = reference(tokens)  # draws from the global stream, after the initialisation
        after = torch.get_rng_state()
    assert torch.equal(generator.get_state(), after)  # the masks took what the layers took
    model.train()
    torch.testing.assert_close(model(tokens, masks), expected, rtol=0, atol=0)
    for key, value in reference.state_dict().items():
        assert torch.equal(model.state_dict()[key], value), key


@pytest.mark.parametrize("model_class, config", [(SASRec, SASREC), (BERT4Rec, BERT)])
def test_masks_padded_to_a_wider_batch_change_no_real_position(model_class, config):
    """A seed whose batch is narrower than the widest seed's is left-padded: its real positions' outputs are
    those of its own width (its masks padded with ones on the padded positions)."""
    torch.manual_seed(0)
    model = model_class(12, config).train()
    tokens = torch.tensor([[0, 3, 7, 1, 5], [9, 4, 4, 11, 6]])
    wide = torch.nn.functional.pad(tokens, (3, 0))
    narrow_masks = dropout_masks(model.dropout_layout(), 0.3, 2, 5, 16, config.n_heads, torch.Generator(), 5)
    wide_masks = dropout_masks(
        model.dropout_layout(), 0.3, 2, 5, 16, config.n_heads, torch.Generator(), 8
    )  # the same draws (a fresh default generator each), padded to 8
    torch.testing.assert_close(model(wide, wide_masks)[:, 3:][tokens > 0], model(tokens, narrow_masks)[tokens > 0])
    none = dropout_masks(model.dropout_layout(), 0.0, 2, 5, 16, config.n_heads, torch.Generator(), 8)
    assert all(m.numel() == 0 for m in none)  # dropout 0 draws nothing
    model.eval()
    torch.testing.assert_close(model(tokens, none), model(tokens), rtol=1e-6, atol=1e-6)  # explicit attention = SDPA


def test_the_configs_of_one_batch_differ_only_in_their_seeds():
    assert len(check_seed_configs([SASREC, replace(SASREC, seed=3)])) == 2
    with pytest.raises(ValueError, match="seeds repeat"):
        check_seed_configs([SASREC, SASREC])
    with pytest.raises(ValueError, match="share their settings"):
        check_seed_configs([SASREC, replace(SASREC, seed=1, lr=1e-2)])
    with pytest.raises(ValueError, match="at least one"):
        check_seed_configs([])


class Killed(RuntimeError):
    pass


@pytest.mark.parametrize("name", ["sasrec", "bert4rec"])
def test_a_killed_batched_run_resumes_bit_identically(data, name, tmp_path, monkeypatch):
    train, histories, targets = data
    _, batched, config = TRAIN[name]
    configs = [replace(config, seed=seed, epochs=2) for seed in (0, 1)]
    whole = batched(train, 13, histories, targets, configs, device="cpu")
    settings = loop.LoopSettings(checkpoint=tmp_path / ".out.ckpt", fingerprint="job", every_steps=3)
    steps = []

    def count():
        steps.append(1)
        if len(steps) == 6:  # epoch 2's second batch (4 batches an epoch), after the checkpoint of step 3
            raise Killed

    monkeypatch.setattr(faults, "step_done", count)
    with pytest.raises(Killed):
        batched(train, 13, histories, targets, configs, device="cpu", settings=settings)
    monkeypatch.setattr(faults, "step_done", lambda: None)
    resumed = batched(train, 13, histories, targets, configs, device="cpu", settings=settings)
    for (model, rows), (again, again_rows) in zip(whole, resumed):
        for key, value in model.state_dict().items():
            assert torch.equal(again.state_dict()[key], value), key
        assert without_timing(again_rows) == without_timing(rows)


@pytest.mark.gpu_rule("seqrec_audit_train")
@pytest.mark.parametrize("name", ["sasrec", "bert4rec"])
def test_a_batched_run_keeps_every_member_on_the_jobs_device(name):
    ready = prepare.prepare_synthetic(
        catalog.regime_spec("shortcut_rich", n_users=60, n_items=30, neighbours=10), min_length=3
    )
    configs = [replace(TRAIN[name][2], n_blocks=1, epochs=1, seed=seed) for seed in (0, 1)]
    with fake_gpu() as device:
        fits = trained.fit_and_evaluate_seeds(name, ready, configs, PROTOCOL)
        assert all(p.device == device for fitted in fits for p in fitted.model.parameters())
    assert len(fits) == 2 and all(len(f.epochs) == 1 for f in fits)


def test_seed_groups_follow_seeds_per_job_and_tiger_trains_one_seed_a_job():
    cfg = {"trained": {"models": ["sasrec", "tiger"], "seeds": [0, 1, 2, 5], "seeds_per_job": 3}}
    assert experiment.seed_groups(cfg, "sasrec") == [[0, 1, 2], [5]]
    assert experiment.seed_groups(cfg, "tiger") == [[0], [1], [2], [5]]
    assert experiment.trained_jobs(cfg) == [
        ("sasrec", "0-1-2"),
        ("sasrec", "5"),
        ("tiger", "0"),
        ("tiger", "1"),
        ("tiger", "2"),
        ("tiger", "5"),
    ]
    assert experiment.seed_groups({"trained": {"models": ["sasrec"], "seeds": [0, 1]}}, "sasrec") == [[0], [1]]
    assert experiment.parse_seed_group("0-1-2") == [0, 1, 2] and experiment.parse_seed_group("7") == [7]
    for bad in ("0--1", "a", "1-1"):
        with pytest.raises(ValueError, match="seed group"):
            experiment.parse_seed_group(bad)


def test_quick_trains_each_dataset_and_model_in_one_job_and_paper_one_job_per_seed():
    import yaml

    config = yaml.safe_load((ROOT / "config/seqrec_audit.yaml").read_text())
    quick, paper = config["quick"], config["paper"]
    datasets = len(quick["datasets"]) + len(experiment.replicate_datasets(quick))
    jobs = planned_jobs(ROOT, "--forceall", "results/quick/seqrec_audit/table_runs.parquet")
    assert jobs["seqrec_audit_train"] == datasets * len(quick["trained"]["models"])
    assert len(quick["trained"]["seeds"]) <= quick["trained"]["seeds_per_job"]
    assert all(len(group) == 1 for m in paper["trained"]["models"] for group in experiment.seed_groups(paper, m))
