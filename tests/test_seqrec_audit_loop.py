"""Paper 10's trainers on the common training loop: the GPU rule (seqrec_audit_train: SASRec, BERT4Rec, TIGER) and
the RQ-VAE keep model and batches on the job's device (a fake GPU: the meta device, where a tensor left on the CPU
fails), and a run killed after a checkpoint, in the middle of an epoch, resumes to the uninterrupted result."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from fake_gpu import fake_gpu
from neurips26.common import faults, loop
from neurips26.seqrec_audit import catalog, prepare, trained
from neurips26.seqrec_audit.bert4rec import BERT4RecConfig, train_bert4rec
from neurips26.seqrec_audit.epochs import run_epochs
from neurips26.seqrec_audit.sasrec import SASRecConfig, train_sasrec
from neurips26.seqrec_audit.semantic_ids import RQVAEConfig, train_rqvae, unique_semantic_ids
from neurips26.seqrec_audit.tiger import TIGERConfig, _bucketed_batches, _n_bucketed_batches, train_tiger

PROTOCOL = {"exclude_history": False, "tie_break": "pessimistic"}
TIMING = {"seconds", "tokens_per_s"}
SASREC = SASRecConfig(d_model=16, n_blocks=1, n_heads=1, maxlen=8, dropout=0.2, lr=1e-2, batch=16, epochs=2)
BERT = BERT4RecConfig(
    d_model=16, n_blocks=1, n_heads=2, maxlen=8, dropout=0.2, mask_prob=0.3, lr=1e-2, batch=16, epochs=2
)
TIGER = TIGERConfig(
    d_model=16, n_layers=1, n_heads=2, ff=32, dropout=0.1, max_items=4, lr=3e-3, batch=16, epochs=2, beam=10
)
RQ = RQVAEConfig(levels=2, codebook_size=8, latent_dim=4, hidden=(8,), epochs=2, batch=16)


@pytest.fixture
def boolean_masks_on_meta():
    """Indexing by a boolean mask (the positions with a target) has a data-dependent shape, which the meta device
    cannot know: let it assume every element is selected (a shape-only stand-in; placement is what is tested)."""
    import torch.fx.experimental._config as fx_config

    with fx_config.patch(meta_nonzero_assume_all_nonzero=True):
        yield


@pytest.fixture(scope="module")
def ready():
    return prepare.prepare_synthetic(
        catalog.regime_spec("shortcut_rich", n_users=60, n_items=30, neighbours=10), min_length=3
    )


def semantic_ids(n_items: int) -> np.ndarray:
    return unique_semantic_ids(np.stack([np.arange(n_items) % 4, (np.arange(n_items) // 4) % 3], axis=1))


def cycle(n: int, length: int, items: int, seed: int = 0) -> list[np.ndarray]:
    starts = np.random.default_rng(seed).integers(items, size=n)
    return [(start + np.arange(length)) % items for start in starts]


@pytest.mark.gpu_rule("seqrec_audit_train")
@pytest.mark.parametrize("name", ["sasrec", "bert4rec", "tiger"])
def test_the_train_rule_keeps_model_and_batches_on_the_jobs_device(ready, name, boolean_masks_on_meta):
    config = {
        "sasrec": replace(SASREC, epochs=1),
        "bert4rec": replace(BERT, epochs=1),
        "tiger": replace(TIGER, epochs=1),
    }[name]
    ids = semantic_ids(ready.n_items) if name == "tiger" else None
    with fake_gpu() as device:
        fitted = trained.fit_and_evaluate(name, ready, config, PROTOCOL, semantic_ids=ids)
        assert all(p.device == device for p in fitted.model.parameters())
    assert len(fitted.epochs) == 1 and set(fitted.metrics) >= {"NDCG@10", "Recall@10"}


@pytest.mark.gpu_rule("seqrec_audit_semantic_ids")
def test_the_rqvae_keeps_model_and_batches_on_the_jobs_device(ready, boolean_masks_on_meta):
    with fake_gpu():
        codes, rows = train_rqvae(ready.features, replace(RQ, epochs=1))
    assert codes.shape == (ready.n_items, RQ.levels) and len(rows) == 1


class Killed(RuntimeError):
    pass


def kill_at(monkeypatch, step: int) -> None:
    """Raise Killed from the loop right after its `step`-th step (1-based), as a job killed there."""
    done = []

    def count():
        done.append(1)
        if len(done) == step:
            raise Killed

    monkeypatch.setattr(faults, "step_done", count)


def without_timing(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in TIMING} for row in rows]


def resumed_equals_uninterrupted(train, tmp_path, monkeypatch, kill_step: int, every: int):
    """train(settings) -> (model or codes, rows): killed after `kill_step` steps, resumed from the checkpoint of
    the last multiple of `every` before it, it returns what an uninterrupted run returns."""
    whole, whole_rows = train(None)
    starts = []
    restore = loop.restore
    monkeypatch.setattr(loop, "restore", lambda *args: starts.append(restore(*args)) or starts[-1])
    settings = loop.LoopSettings(checkpoint=tmp_path / ".out.ckpt", fingerprint="job", every_steps=every)
    kill_at(monkeypatch, kill_step)
    with pytest.raises(Killed):
        train(settings)
    assert settings.checkpoint.exists()
    monkeypatch.setattr(faults, "step_done", lambda: None)
    resumed, resumed_rows = train(settings)
    assert starts == [0, (kill_step - 1) // every * every]  # the rerun resumed from the checkpoint
    if isinstance(whole, torch.nn.Module):
        for name, tensor in whole.state_dict().items():
            assert torch.equal(tensor, resumed.state_dict()[name]), name
    else:
        np.testing.assert_array_equal(whole, resumed)
    assert without_timing(resumed_rows) == without_timing(whole_rows)
    assert len(whole_rows) == 2


def test_sasrec_killed_mid_epoch_resumes_bit_identically(tmp_path, monkeypatch):
    sequences, histories = cycle(40, 6, 7), cycle(10, 4, 7, seed=1)
    targets = np.array([(h[-1] + 1) % 7 for h in histories])
    assert -(-40 // SASREC.batch) == 3  # 3 batches per epoch: step 4 is epoch 2's first batch
    resumed_equals_uninterrupted(
        lambda settings: train_sasrec(sequences, 7, histories, targets, SASREC, device="cpu", settings=settings),
        tmp_path,
        monkeypatch,
        kill_step=5,
        every=4,
    )


def test_bert4rec_killed_mid_epoch_resumes_bit_identically(tmp_path, monkeypatch):
    sequences, histories = cycle(40, 6, 7), cycle(10, 4, 7, seed=1)
    targets = np.array([(h[-1] + 1) % 7 for h in histories])
    resumed_equals_uninterrupted(
        lambda settings: train_bert4rec(sequences, 7, histories, targets, BERT, device="cpu", settings=settings),
        tmp_path,
        monkeypatch,
        kill_step=5,
        every=4,
    )


def test_tiger_killed_mid_epoch_resumes_bit_identically(tmp_path, monkeypatch):
    ids = semantic_ids(12)
    sequences, histories = cycle(12, 5, 12), cycle(6, 3, 12, seed=1)
    targets = np.array([(h[-1] + 1) % 12 for h in histories])
    resumed_equals_uninterrupted(
        lambda settings: train_tiger(sequences, ids, histories, targets, TIGER, device="cpu", settings=settings),
        tmp_path,
        monkeypatch,
        kill_step=4,
        every=2,
    )  # 48 examples, 3 batches per epoch


def test_rqvae_killed_mid_epoch_resumes_bit_identically(tmp_path, monkeypatch):
    features = np.random.default_rng(0).normal(size=(40, 6))
    resumed_equals_uninterrupted(
        lambda settings: train_rqvae(features, RQ, device="cpu", settings=settings),
        tmp_path,
        monkeypatch,
        kill_step=5,
        every=4,
    )  # 3 batches per epoch


def test_a_one_epoch_run_still_writes_checkpoints(tmp_path, monkeypatch):
    written = []
    settings = loop.LoopSettings(checkpoint=tmp_path / ".out.ckpt", fingerprint="job")
    monkeypatch.setattr(faults, "checkpoint_written", written.append)
    train_sasrec(cycle(40, 6, 7), 7, None, None, replace(SASREC, epochs=1), device="cpu", settings=settings)
    assert written  # one loop step per mini-batch: 3 steps, checkpoints after the first two


def test_an_epochs_draws_are_made_at_its_first_batch_and_its_row_after_its_last():
    calls = []
    run_epochs(
        "test",
        2,
        3,
        lambda epoch: calls.append(("begin", epoch)) or {},
        lambda current, epoch, batch, step: calls.append((epoch, batch, step)) or 0.0,
        lambda epoch, current: calls.append(("end", epoch)),
        {},
        None,
    )
    assert calls == [
        ("begin", 1),
        (1, 1, 0),
        (1, 2, 1),
        (1, 3, 2),
        ("end", 1),
        ("begin", 2),
        (2, 1, 3),
        (2, 2, 4),
        (2, 3, 5),
        ("end", 2),
    ]


@pytest.mark.parametrize("n,batch", [(1, 16), (48, 16), (600, 16), (512, 16), (513, 16), (5000, 7)])
def test_the_bucketed_batch_count_is_known_before_the_draw(n, batch):
    batches = _bucketed_batches(np.arange(n) % 5, batch, np.random.default_rng(0))
    assert len(batches) == _n_bucketed_batches(n, batch)
