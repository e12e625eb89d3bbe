"""The small decoder (neurips26.vair.model): residual stream per layer, causality, activation patching and its
checks, seeded initialisation, and the ensemble's batched forward equal to each member's own."""

from __future__ import annotations

import pytest
import torch

from neurips26.common.ensemble import Ensemble
from neurips26.vair.decoding import grade, greedy_decode, read_answers
from neurips26.vair.model import Decoder, DecoderConfig, Patch, config_for, ensemble_logits
from neurips26.vair.sequences import encode_grade, solve_prompts
from neurips26.vair.vocabulary import NOT_AN_INTEGER, Vocabulary


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
    assert torch.allclose(model(tokens, fused=True)[0], logits, atol=1e-5)
    at = torch.tensor([[8, 0], [3, 3], [5, 1]])
    assert torch.allclose(model(tokens, at=at)[0], logits.gather(1, at[..., None].expand(-1, -1, 20)), atol=1e-6)


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


def test_the_hand_batched_forward_equals_vmap_of_the_decoder_with_its_gradients():
    """The training step's forward (members batched by hand, fused attention) is a refactor of ``vmap`` over
    :class:`Decoder`: the same logits at the read positions and the same gradients, to float rounding."""
    config = DecoderConfig(vocab_size=20, context=16, d_model=16, n_layers=2, n_heads=2, d_ff=24, init_std=0.3)
    ens = Ensemble([Decoder(DecoderConfig(**{**config.__dict__, "seed": s})) for s in (0, 1, 2)])
    g = torch.Generator().manual_seed(5)
    tokens, at = torch.randint(0, 20, (3, 4, 11), generator=g), torch.randint(0, 11, (3, 4, 5), generator=g)
    reference, _ = ens(tokens, False, None, at, in_dims=(0, None, None, 0))
    fast = ensemble_logits(ens.params, config, tokens, at)
    assert torch.allclose(fast, reference, atol=1e-5)
    weights = torch.randn(reference.shape, generator=g)
    grads = [torch.autograd.grad((out * weights).sum(), list(ens.params.values())) for out in (reference, fast)]
    for name, a, b in zip(ens.params, *grads):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4), name
    with pytest.raises(ValueError, match="context"):
        ensemble_logits(ens.params, config, torch.zeros(3, 1, 17, dtype=torch.long), at[:, :1])


# ---- decoding (neurips26.vair.decoding) ----------------------------------------------------------------------------

TEXTS = [
    "ava has 3 pens . how many ? SOLUTION 3 + 4 = 7 ANSWER 7",
    "ben has 12 pens . ben buys 2 more pens . how many pens ? SOLUTION 12 + 2 = 14 14 * 2 = 28 ANSWER 28",
]


def _naive_greedy(model, prompt: list[int], steps: int) -> list[int]:
    tokens = list(prompt)
    for _ in range(steps):
        logits, _ = model(torch.tensor([tokens]))
        tokens.append(int(logits[0, -1].argmax()))
    return tokens[len(prompt) :]


def test_cached_greedy_decoding_equals_recomputing_every_prefix():
    vocab = Vocabulary.from_texts(TEXTS)
    model = Decoder(config_for("tiny", len(vocab), context=40, seed=4)).eval()
    prompts, lengths = solve_prompts(vocab, TEXTS)
    eos = vocab.id("<eos>")
    out = greedy_decode(model, prompts, lengths, max_new=6, stop=eos)
    for row in range(2):
        expected = _naive_greedy(model, prompts[row, : lengths[row]].tolist(), 6)
        stop_at = expected.index(eos) + 1 if eos in expected else 6
        assert out[row, :stop_at].tolist() == expected[:stop_at]
        assert (out[row, stop_at:] == eos).all()


def test_answers_are_read_after_the_first_answer_word():
    vocab = Vocabulary.from_texts(TEXTS)
    words = [["3", "+", "4", "=", "7", "ANSWER", "7"], ["ANSWER", "ava", "<eos>", "<eos>"], ["7", "<eos>"], ["ANSWER"]]
    rows = [torch.tensor([vocab.id(w) for w in ws]) for ws in words]
    answers = [int(read_answers(vocab, r[None])[0]) for r in rows]
    assert answers == [7, NOT_AN_INTEGER, NOT_AN_INTEGER, NOT_AN_INTEGER]


def test_grading_reads_the_verdict_logits_and_the_last_solution_state_of_every_member():
    vocab = Vocabulary.from_texts(TEXTS)
    models = [Decoder(config_for("tiny", len(vocab), context=40, seed=s)) for s in (0, 1)]
    for model in models:  # a head bias (zero for member 0) that makes member 1 write <G2> everywhere
        model.lm_head.bias = torch.nn.Parameter(torch.zeros(len(vocab)))
    with torch.no_grad():
        models[1].lm_head.bias[vocab.id("<G2>")] = 1e3
    ens = Ensemble(models)
    out = grade(ens, vocab, TEXTS, hidden=True, chunk=1)
    seq = encode_grade(vocab, TEXTS, [0, 0])
    for i, model in enumerate(models):
        logits, states = model(seq.tokens, residual=True)
        at = logits[torch.arange(2), seq.verdict]
        assert out.grades[i].tolist() == at[:, vocab.verdict_ids].argmax(-1).tolist()
        assert out.invalid[i].tolist() == [not bool(torch.isin(a.argmax(), vocab.verdict_ids)) for a in at]
        assert torch.allclose(out.hidden[i], states.transpose(1, 2)[torch.arange(2), seq.last_solution], atol=1e-5)
    assert out.grades[1].tolist() == [2, 2] and not out.invalid[1].any() and out.invalid[0].all()
    assert out.hidden.shape == (2, 2, 3, 32) and torch.allclose(out.verdict_probs.sum(-1), torch.ones(2, 2))


# ---- the local backend (neurips26.vair.local_backend) --------------------------------------------------------------


def test_local_backend_replies_are_the_decoders_answers_and_grades():
    from neurips26.vair.backends import BACKENDS, GradeTask, SolveTask
    from neurips26.vair.decoding import greedy_answers
    from neurips26.vair.items import Item, Step, render, render_natural
    from neurips26.vair.local_backend import invalid_verdict, make_local_backend

    def item(category, flaw, a, b, r, first_invalid):
        step = Step(f"{a} + {b}", r, f"{a} + {b} = {r}")
        return Item(
            f"{category}-{a}",
            f"p{a}",
            category,
            flaw,
            (f"Ava has {a} pens.", f"Ava buys {b} more."),
            "How many?",
            (step,),
            r,
            a + b,
            r == a + b,
            first_invalid == -1,
            first_invalid,
            "eval",
        )

    items = [item("VAVR", "none", a, 3, a + 3, -1) for a in (4, 5)] + [item("IAIR", "arithmetic_slip", 6, 3, 10, 0)]
    texts = [render(item) for item in items]
    vocab = Vocabulary.from_texts(texts, successors=True)
    models = [Decoder(config_for("tiny", len(vocab), context=64, seed=s)) for s in (0, 1)]
    ens = Ensemble(models)
    backend = make_local_backend(ens, vocab, member=1, name="local_1")
    assert BACKENDS["local"] is make_local_backend and backend.name == "local_1" and not backend.external
    grades = backend.grade([GradeTask(it.item_id, "", render_natural(it), it) for it in items])
    expected = grade(ens, vocab, texts)
    assert [r.value for r in grades] == expected.grades[1].tolist()
    assert [invalid_verdict(r) for r in grades] == expected.invalid[1].tolist()
    solves = backend.solve([SolveTask(it.problem_id, "", it) for it in items[::2]])
    answers = greedy_answers(ens, vocab, texts[::2])[1].tolist()
    assert [r.value if r.value is not None else NOT_AN_INTEGER for r in solves] == answers
