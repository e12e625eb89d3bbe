"""The small decoder (neurips26.vair.model): residual stream per layer, causality, activation patching and its
checks, seeded initialisation, and the ensemble's batched forward equal to each member's own."""

from __future__ import annotations

import pytest
import torch

from neurips26.common.ensemble import Ensemble
from neurips26.vair.model import Decoder, DecoderConfig, Patch, config_for


def _model(seed: int = 0) -> Decoder:
    return Decoder(config_for("tiny", vocab_size=20, context=16, seed=seed))


def test_residual_stream_has_one_state_per_layer_and_feeds_the_head():
    model = _model()
    tokens = torch.randint(1, 20, (3, 9), generator=torch.Generator().manual_seed(0))
    logits, states = model(tokens, residual=True)
    assert logits.shape == (3, 9, 20) and states.shape == (3, 3, 9, 32)
    assert torch.equal(states[:, 0], model.embed(tokens))
    assert torch.allclose(logits, model.lm_head(model.norm(states[:, -1])), atol=1e-6)
    assert model(tokens)[1].numel() == 0


def test_outputs_are_causal_so_right_padding_changes_nothing():
    model = _model()
    tokens = torch.randint(1, 20, (2, 10), generator=torch.Generator().manual_seed(1))
    changed = tokens.clone()
    changed[:, 6:] = 0
    assert torch.allclose(model(tokens)[0][:, :6], model(changed)[0][:, :6], atol=1e-6)
    assert not torch.allclose(model(tokens)[0][:, 6:], model(changed)[0][:, 6:])


def test_patching_the_source_states_in_reproduces_the_source_run():
    model = _model()
    original = torch.randint(1, 20, (2, 8), generator=torch.Generator().manual_seed(2))
    source = original.clone()
    source[:, 5] = (source[:, 5] % 19) + 1  # one token differs, as the answer N -> N+1
    src_logits, src_states = model(source, residual=True)
    orig_logits, orig_states = model(original, residual=True)
    at = torch.full((2, 1), 5)
    every = tuple(range(3))
    patched, _ = model(original, patch=Patch(every, at, src_states[:, :, 5:6]))
    assert torch.allclose(patched, src_logits, atol=1e-5)  # every layer at the only differing position
    one, one_states = model(original, residual=True, patch=Patch((1,), at, src_states[:, 1:2, 5:6]))
    assert torch.allclose(one_states[:, 0], orig_states[:, 0]) and torch.allclose(one[:, :5], orig_logits[:, :5])
    assert torch.allclose(one_states[:, 1, 5], src_states[:, 1, 5])
    assert not torch.allclose(one[:, 7], orig_logits[:, 7])  # later positions see the patch
    same, _ = model(original, patch=Patch((1,), at, orig_states[:, 1:2, 5:6]))
    assert torch.allclose(same, orig_logits, atol=1e-6)  # patching a run's own state in is the identity


def test_patch_positions_and_layers_outside_the_model_are_rejected():
    model = _model()
    tokens = torch.ones(2, 6, dtype=torch.long)
    vectors = torch.zeros(2, 1, 2, 32)
    with pytest.raises(ValueError, match=r"\(row, position\) \[\(1, 6\)\]"):
        model(tokens, patch=Patch((0,), torch.tensor([[0, 1], [2, 6]]), vectors))
    with pytest.raises(ValueError, match=r"\(0, -1\)"):
        model(tokens, patch=Patch((0,), torch.tensor([[-1, 1], [2, 3]]), vectors))
    with pytest.raises(ValueError, match="layers"):
        model(tokens, patch=Patch((3,), torch.tensor([[0, 1], [2, 3]]), vectors))
    with pytest.raises(ValueError, match="exceeds the model's context"):
        model(torch.ones(1, 17, dtype=torch.long))


def test_initialisation_is_the_seed_and_the_ensemble_forward_is_each_members():
    a, b, again = _model(0), _model(1), _model(0)
    assert torch.equal(a.embed.weight, again.embed.weight)
    assert not torch.equal(a.embed.weight, b.embed.weight)
    tokens = torch.randint(1, 20, (2, 3, 7), generator=torch.Generator().manual_seed(3))
    logits, states = Ensemble([a, b])(tokens, residual=True)
    for i, member in enumerate((a, b)):
        own_logits, own_states = member(tokens[i], residual=True)
        assert torch.allclose(logits[i], own_logits, atol=1e-5)
        assert torch.allclose(states[i], own_states, atol=1e-5)
    with pytest.raises(ValueError, match="heads"):
        DecoderConfig(vocab_size=5, context=4, d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="unknown model size"):
        config_for("huge", 5, 4)
