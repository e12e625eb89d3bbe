"""Paper 05 (BBO-Pile): the decoder as an optimizer (OptFormerSearcher) and the imitation NLL matrix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neurips26.bbo_pile.blackboxes import make_blackbox
from neurips26.bbo_pile.catalog import catalog, specs_from_catalog
from neurips26.bbo_pile.imitation import imitation_matrix, imitation_nll, pool_imitation
from neurips26.bbo_pile.model import Decoder, DecoderConfig
from neurips26.bbo_pile.sampling import optimize_batch, optimize_boxes, optimize_with_model
from neurips26.bbo_pile.tokenizer import dequantise, encode_trajectory, quantise
from neurips26.bbo_pile.training import TrainSettings, pack_sequences, train_decoder
from neurips26.bbo_pile.vocabulary import make_vocabulary

ALGOS = ("CENTRE", "LOW", "HIGH")
Q = 11
VOCAB = make_vocabulary(ALGOS, Q)
LO, HI = np.zeros(2), np.ones(2)


def sphere(X):
    return ((np.asarray(X) - 0.3) ** 2).sum(axis=1)


def config(**changes) -> DecoderConfig:
    return DecoderConfig(
        **(
            dict(
                vocab_size=VOCAB.size,
                d_model=32,
                n_layers=2,
                n_heads=4,
                n_query_groups=2,
                head_size=8,
                mlp_hidden=64,
                context=256,
            )
            | changes
        )
    )


def untrained() -> Decoder:
    return Decoder(config(seed=1)).eval()


PROBLEMS = [
    (sphere, LO, HI),
    (lambda X: np.abs(X).sum(axis=1), -np.ones(3), 2 * np.ones(3)),
    (sphere, LO, HI),
    (lambda X: np.log(X).sum(axis=1), [1e-3, 0.1], [10.0, 1.0], [True, False]),
]


def on_grid(x, lo, hi, log_scale=None):
    return np.allclose(dequantise(quantise(x, lo, hi, Q, log_scale), lo, hi, Q, log_scale), x)


def test_constrained_decoding_is_always_valid_even_untrained_and_x_stays_inside_the_box():
    runs = optimize_batch(untrained(), VOCAB, "LOW", PROBLEMS, [0, 1, 2, 3], 6)
    for (_, lo, hi, *log), run in zip(PROBLEMS, runs):
        assert run.valid_decode.all() and run.x.shape == (6, len(lo)) and run.y.shape == (6,)
        assert (run.x >= np.asarray(lo)).all() and (run.x <= np.asarray(hi)).all()
        assert on_grid(run.x, lo, hi, log[0] if log else None)


@pytest.mark.parametrize("options", [{}, {"constrained": False}, {"best_of": 3}, {"temperature": 0.5}])
def test_a_batch_of_runs_proposes_what_each_run_proposes_alone(options):
    model = untrained()
    batch = optimize_batch(model, VOCAB, "HIGH", PROBLEMS, [5, 6, 7, 8], 4, **options)
    for (f, lo, hi, *log), seed, run in zip(PROBLEMS, [5, 6, 7, 8], batch):
        alone = optimize_with_model(
            model, VOCAB, "HIGH", f, lo, hi, 4, seed, log_scale=log[0] if log else None, **options
        )
        np.testing.assert_array_equal(run.x, alone.x)
        np.testing.assert_array_equal(run.valid_decode, alone.valid_decode)


def test_unconstrained_invalid_completions_fall_back_to_random_configurations_and_are_counted():
    run = optimize_with_model(untrained(), VOCAB, "LOW", sphere, LO, HI, 8, 0, constrained=False)
    assert not run.valid_decode.all()  # an untrained model rarely writes a well-formed trial
    assert on_grid(run.x, LO, HI) and (run.x >= 0).all() and (run.x <= 1).all()
    assert len({tuple(x) for x in run.x[~run.valid_decode]}) > 1  # random, not a constant


def test_non_finite_objectives_and_long_histories_do_not_stop_a_run():
    def sometimes_nan(X):
        y = sphere(X)
        return np.where(X[:, 0] > 0.5, np.nan, y)

    model = Decoder(config(context=80)).eval()  # header 48 tokens + 6 per trial: old trials drop out
    run = optimize_with_model(model, VOCAB, "CENTRE", sometimes_nan, LO, HI, 12, 3)
    assert run.x.shape == (12, 2) and run.valid_decode.all()


def test_bad_arguments_are_refused():
    model = untrained()
    with pytest.raises(ValueError, match="unknown algorithm"):
        optimize_with_model(model, VOCAB, "CMA", sphere, LO, HI, 3, 0)
    with pytest.raises(ValueError, match="budget"):
        optimize_with_model(model, VOCAB, "LOW", sphere, LO, HI, 0, 0)
    with pytest.raises(ValueError, match="one seed per problem"):
        optimize_batch(model, VOCAB, "LOW", PROBLEMS, [0], 3)


# --------------------------------------------------------------------------------------------------
# A model trained on three distinguishable synthetic optimizers


def synthetic_runs(algo: str, n: int, seed: int, trials: int = 8) -> list[tuple]:
    """CENTRE always proposes the box centre (bin 5); LOW draws bins 0-2, HIGH bins 8-10."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        if algo == "CENTRE":
            bins = np.full((trials, 2), 5)
        else:
            bins = rng.integers(0, 3, (trials, 2)) + (8 if algo == "HIGH" else 0)
        x = dequantise(bins, LO, HI, Q)
        out.append((LO, HI, x, sphere(x)))
    return out


@pytest.fixture(scope="module")
def trained() -> Decoder:
    seqs = [
        encode_trajectory(VOCAB, algo, *run)
        for i in range(40)
        for algo in ALGOS
        for run in synthetic_runs(algo, 1, 1000 * i + len(algo))
    ]
    valid = [encode_trajectory(VOCAB, algo, *run) for algo in ALGOS for run in synthetic_runs(algo, 4, 99)]
    settings = TrainSettings(tokens_budget=150_000, batch=8, lr=1e-2, min_lr=1e-3, warmup=10, eval_every=1000, seed=0)
    model, _ = train_decoder(
        pack_sequences(seqs, 192, VOCAB.pad), pack_sequences(valid, 192, VOCAB.pad), config(), settings, pad=VOCAB.pad
    )
    return model


def test_a_model_trained_on_a_centre_proposing_optimizer_reproduces_it(trained):
    greedy = optimize_with_model(trained, VOCAB, "CENTRE", sphere, LO, HI, 8, 0, temperature=0.0)
    np.testing.assert_array_equal(greedy.x, np.full((8, 2), 0.5))
    runs = optimize_batch(trained, VOCAB, "CENTRE", [(sphere, LO, HI)] * 4, [0, 1, 2, 3], 8)
    assert np.mean([np.isclose(r.x, 0.5).mean() for r in runs]) >= 0.9
    free = optimize_batch(trained, VOCAB, "CENTRE", [(sphere, LO, HI)] * 4, [0, 1, 2, 3], 8, constrained=False)
    assert np.mean([r.valid_decode.mean() for r in free]) >= 0.9  # claim B4b's expectation, unconstrained


def test_the_conditioning_token_steers_the_proposals(trained):
    low = optimize_batch(trained, VOCAB, "LOW", [(sphere, LO, HI)] * 4, [0, 1, 2, 3], 8)
    high = optimize_batch(trained, VOCAB, "HIGH", [(sphere, LO, HI)] * 4, [0, 1, 2, 3], 8)
    assert np.mean([(r.x <= 0.2 + 1e-9).mean() for r in low]) >= 0.9  # bins 0-2 of 0..10
    assert np.mean([(r.x >= 0.8 - 1e-9).mean() for r in high]) >= 0.9


def test_imitation_nll_is_lowest_with_the_true_optimizers_token(trained):
    valid = {algo: synthetic_runs(algo, 4, 7) for algo in ALGOS}
    table = imitation_matrix(trained, VOCAB, valid, ALGOS)
    assert table.shape == (9, 5) and list(table.columns[:3]) == ["true_algo", "cond_algo", "nll"]
    assert (table["n_tokens"] == 4 * 8 * 3).all()  # 2 x bins and 1 y bin per trial, header excluded
    nll = table.pivot(index="true_algo", columns="cond_algo", values="nll")
    for algo in ALGOS:
        wrong = [nll.loc[algo, other] for other in ALGOS if other != algo]
        assert nll.loc[algo, algo] < min(wrong), nll


def test_per_trajectory_nlls_pool_to_the_imitation_matrix():
    valid = {algo: synthetic_runs(algo, 3, 11) for algo in ALGOS[:2]}
    rows = imitation_nll(untrained(), VOCAB, valid, ALGOS)
    assert len(rows) == 2 * 3 * 3 and set(rows["trajectory"]) == {0, 1, 2}
    pooled = pool_imitation(rows)
    matrix = imitation_matrix(untrained(), VOCAB, valid, ALGOS)
    pd.testing.assert_frame_equal(pooled, matrix)
    first = rows[(rows["true_algo"] == "CENTRE") & (rows["cond_algo"] == "LOW")]
    assert pooled.iloc[1]["nll"] == pytest.approx((first["nll"] * first["n_tokens"]).sum() / first["n_tokens"].sum())


def test_optimizing_catalog_boxes_seeds_each_run_and_names_each_row():
    boxes = catalog([20], [2], [1, 2], ["sphere"], [2], [0], [20])
    boxes = boxes[boxes["split"] == "eval"]
    model = untrained()
    table = optimize_boxes(model, VOCAB, "LOW", boxes, [0, 3], 2, 4, constrained=False, temperature=1.0)
    assert len(table) == len(boxes) * 2 * 4 and set(table["decoding"]) == {"free"} and set(table["seed"]) == {0, 3}
    assert list(table.columns) == ["bb_id", "condition", "decoding", "seed", "trial", "x", "y", "valid_decode"]
    spec = specs_from_catalog(boxes)[1]
    run = table[(table["bb_id"] == spec.bb_id) & (table["seed"] == 3)]
    alone = optimize_with_model(
        model, VOCAB, "LOW", make_blackbox(spec), spec.lo, spec.hi, 4, 2 * 1000 + 3, constrained=False
    )
    np.testing.assert_array_equal(np.stack(run["x"].to_numpy()), alone.x)
    np.testing.assert_array_equal(run["y"].to_numpy(), alone.y)


def test_progress_is_reported_after_every_trial_of_the_batch():
    """A paper-scale optimize job decodes for hours: the script logs from this callback."""
    calls = []
    optimize_batch(untrained(), VOCAB, "LOW", PROBLEMS, [0, 1, 2, 3], 5, progress=lambda *a: calls.append(a))
    assert calls == [(t, 5) for t in range(1, 6)]


def test_claim_b2_scores_the_trajectories_with_every_model_seed_and_pools_over_them():
    from unittest import mock

    from neurips26.bbo_pile import imitation as imitation_module

    def fake_tables(model, vocab, boxes, trials, algorithms):
        rows = pd.DataFrame(
            {"true_algo": "LOW", "cond_algo": list(algorithms), "trajectory": 0, "nll": model, "n_tokens": 10}
        )
        return pool_imitation(rows), rows

    with mock.patch.object(imitation_module, "imitation_tables", fake_tables):
        pooled, rows = imitation_module.seed_imitation_tables({0: 1.0, 4: 3.0}, VOCAB, None, None, ["LOW", "HIGH"])
    assert sorted(set(rows["model_seed"])) == [0, 4] and len(rows) == 4
    assert (pooled["nll"] == 2.0).all() and (pooled["n_tokens"] == 20).all()  # pooled over both seeds' tokens
    with pytest.raises(ValueError, match="no model seed"):
        imitation_module.seed_imitation_tables({}, VOCAB, None, None, ["LOW"])
