"""The base_model reference: CoVal's texts read (comparisons.jsonl, the schema neurips26.posttrain_voting.coval
assumes), the base model's log-probabilities of each response (neurips26.posttrain_voting.base_model) computed by a
plain function of a logits callable, checked against a direct computation on tiny torch stand-ins (transformers is
not installed here: a tiny random Llama runs only where it is), the references built from the scores with zeros and
non-finite scores refused, and the axioms job's base_model path."""

from __future__ import annotations

import json
import sys

import numpy as np
import pandas as pd
import pytest
import torch

from fake_gpu import fake_gpu
from neurips26.posttrain_voting import experiment
from neurips26.posttrain_voting.base_model import (
    encode_pair,
    load_base_model,
    place,
    render_conversation,
    response_logprobs,
    score_responses,
)
from neurips26.posttrain_voting.coval import LETTERS, read_texts
from neurips26.posttrain_voting.references import base_model_references, reference_from_scores
from neurips26.posttrain_voting.rehearsal import comparisons_lines

VOCAB = 32


class CausalStandIn(torch.nn.Module):
    """A tiny causal LM: the logits at position t depend on the running mean of the embeddings of tokens 0..t, so
    right padding must not change a real position's logits, and an off-by-one in the scored positions shows."""

    def __init__(self, vocab: int = VOCAB, width: int = 8):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.head = torch.nn.Linear(width, vocab)

    def forward(self, ids, mask=None):
        x = self.embed(ids)
        steps = torch.arange(1, ids.shape[1] + 1, device=ids.device, dtype=x.dtype)[None, :, None]
        return self.head(x.cumsum(1) / steps)


def direct(model, sequence, start):
    """log p(tokens from start on) by one unpadded forward pass and a full log-softmax."""
    ids = torch.tensor([sequence])
    with torch.no_grad():
        logp = torch.log_softmax(model(ids)[0].double(), -1)
    return sum(float(logp[t - 1, sequence[t]]) for t in range(start, len(sequence)))


def char_tokenize(text):
    return [1 + ord(c) % (VOCAB - 1) for c in text]


def test_response_logprobs_equal_a_direct_computation_in_any_batching():
    torch.manual_seed(0)
    model = CausalStandIn().eval()
    rng = np.random.default_rng(1)
    sequences = [list(rng.integers(1, VOCAB, n)) for n in (5, 12, 3, 9, 12, 2)]
    starts = [2, 7, 1, 8, 1, 1]
    expected = [direct(model, s, k) for s, k in zip(sequences, starts)]
    for batch_tokens in (1, 24, 10_000):  # one sequence a pass, some, all
        total, counts = response_logprobs(lambda ids, mask: model(ids, mask), sequences, starts, "cpu", batch_tokens)
        assert np.allclose(total, expected, atol=1e-5) and (total < 0).all()
        assert counts.tolist() == [len(s) - k for s, k in zip(sequences, starts)]


def test_response_logprobs_refuse_a_first_token_without_predecessor():
    with pytest.raises(ValueError, match="predecessor"):
        response_logprobs(lambda ids, mask: torch.zeros(*ids.shape, VOCAB), [[1, 2, 3]], [0])
    with pytest.raises(ValueError, match="predecessor"):
        response_logprobs(lambda ids, mask: torch.zeros(*ids.shape, VOCAB), [[1, 2, 3]], [3])


def test_pairs_are_rendered_for_a_base_model_and_truncated_oldest_context_first():
    text = render_conversation([["system", "Be brief."], ["user", "Why?"]])
    assert text == "System: Be brief.\n\nUser: Why?\n\nAssistant:"
    ids, start, truncated = encode_pair(char_tokenize, "abcdef", "xyz", max_tokens=100)
    assert ids == char_tokenize("abcdef") + char_tokenize(" xyz") and start == 6 and not truncated
    ids, start, truncated = encode_pair(char_tokenize, "abcdef", "xyz", max_tokens=6)
    assert ids == char_tokenize("ef xyz") and start == 2 and truncated  # the conversation's oldest tokens go first
    ids, start, truncated = encode_pair(char_tokenize, "abcdef", "xyz", max_tokens=3)
    assert ids == char_tokenize("f x") and start == 1 and truncated  # then the response's last tokens


def test_comparisons_are_read_as_four_texts_per_prompt_in_the_profiles_order(tmp_path):
    path = tmp_path / "comparisons.jsonl"
    path.write_text("\n".join(comparisons_lines(5)) + "\n")
    texts = read_texts(path)
    assert len(texts) == 20 and texts["candidate"].tolist() == [0, 1, 2, 3] * 5
    record = json.loads(comparisons_lines(5)[0])
    by_letter = {r["response_index"]: r["messages"][0]["content"] for r in record["responses"]}
    first = texts[texts["prompt_id"] == "p0000"]
    assert first["response"].tolist() == [by_letter[c] for c in LETTERS]  # listed shuffled, read A-D
    roles = [role for role, _ in json.loads(first["conversation"].iloc[0])]
    assert roles == ["system", "user"]  # role or author.role; content as a string or as parts
    record["responses"] = record["responses"][:3]
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(ValueError, match=r":1: prompt p0000 has no response text for \['[A-D]'\]"):
        read_texts(path)
    path.write_text(json.dumps({"prompt_id": "p", "responses": []}) + "\n")
    with pytest.raises(ValueError, match=r":1: missing fields \['prompt'\]"):
        read_texts(path)


def test_the_scores_table_has_every_response_with_its_tokens(tmp_path):
    path = tmp_path / "comparisons.jsonl"
    path.write_text("\n".join(comparisons_lines(3)) + "\n")
    texts = read_texts(path)
    torch.manual_seed(0)
    model = CausalStandIn().eval()
    scores = score_responses(texts, lambda ids, mask: model(ids, mask), char_tokenize, max_tokens=2000)
    assert len(scores) == 12 and (scores["logprob"] < 0).all() and not scores["truncated"].any()
    assert scores["tokens"].tolist() == [len(" " + r) for r in texts["response"]]
    row = 5
    ids, start, _ = encode_pair(char_tokenize, render_conversation(json.loads(texts["conversation"][row])),
                                texts["response"][row], 2000)  # fmt: skip
    assert scores["logprob"][row] == pytest.approx(direct(model, ids, start), abs=1e-4)
    refs = base_model_references(scores, ["p0002", "p0000"])
    assert len(refs) == 2 and all(r.shape == (4,) and (r > 0).all() and np.isclose(r.sum(), 1) for r in refs)


def test_a_reference_is_the_softmax_of_mean_token_log_probabilities():
    ref = reference_from_scores([-10.0, -40.0, -3.0, -20.0], [10, 20, 3, 10])
    assert np.allclose(ref, np.exp([-1, -2, -1, -2]) / np.exp([-1, -2, -1, -2]).sum())
    summed = reference_from_scores([-10.0, -12.0, -11.0, -10.0], [1, 1, 1, 1], length_normalised=False)
    assert np.allclose(summed, np.exp([0, -2, -1, 0]) / np.exp([0, -2, -1, 0]).sum())


@pytest.mark.parametrize(
    ("logprob", "tokens", "options", "match"),
    [
        ([-1.0, np.nan, -2.0, -3.0], [1, 1, 1, 1], {}, "finite"),
        ([-1.0, -np.inf, -2.0, -3.0], [1, 1, 1, 1], {}, "finite"),
        ([-1.0, -2.0, -2.0, -3.0], [1, 0, 1, 1], {}, "at least one scored token"),
        ([-5.0, -900.0, -8.0, -6.0], [50, 300, 60, 40], {"length_normalised": False}, "zeros where the rules need"),
    ],
)
def test_references_with_non_finite_scores_or_zeros_are_refused(logprob, tokens, options, match):
    with pytest.raises(ValueError, match=match):
        reference_from_scores(logprob, tokens, who="base_model prompt p7", **options)


def test_a_profile_whose_prompt_has_no_scores_is_refused():
    scores = pd.DataFrame({"prompt_id": ["a"] * 4, "candidate": [0, 1, 2, 3], "tokens": [1] * 4,
                           "logprob": [-1.0, -2.0, -3.0, -4.0]})  # fmt: skip
    with pytest.raises(ValueError, match="prompt b has a profile but no scores"):
        base_model_references(scores, ["a", "b"])
    with pytest.raises(ValueError, match=r"candidates \[0, 1, 2\]"):
        base_model_references(scores.head(3), ["a"])


def test_the_axioms_job_checks_every_rule_against_the_base_models_reference():
    cfg = experiment_cfg()
    profiles = experiment.synthetic_profiles(cfg["synthetic"], 0)[:2]
    refs = [np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])]
    table = experiment.axiom_table(cfg, "world", 0, profiles, refs)
    assert set(table["reference"]) == {"uniform", "base_model", "none"}  # none: proportional Borda's rows
    assert (table["reference"] == "base_model").sum() == (table["reference"] == "uniform").sum() > 0
    plain = experiment.axiom_table(cfg | {"references": {"kinds": ["uniform"], "alpha": 1.0}}, "world", 0, profiles)
    assert plain.equals(table[table["reference"] != "base_model"].reset_index(drop=True))
    with pytest.raises(ValueError, match="needs the base model's scores"):
        experiment.axiom_table(cfg, "world", 0, profiles)
    with pytest.raises(ValueError, match="1 references for 2 profiles"):
        experiment.axiom_table(cfg, "world", 0, profiles, refs[:1])


def test_the_config_refuses_a_base_model_reference_for_synthetic_profiles():
    cfg = experiment_cfg()
    experiment.check_config(cfg | {"sources": ["world"]})
    with pytest.raises(ValueError, match="synthetic profiles have none"):
        experiment.check_config(cfg | {"sources": ["synthetic", "world"]})


def experiment_cfg() -> dict:
    from conftest import ROOT
    from neurips26.common.config import load_yaml

    smoke = load_yaml(ROOT / "config/posttrain_voting.yaml")["smoke"]
    return smoke | {
        "sources": ["world"],
        "rules": ["dpo", "proportional_borda"],
        "axioms": ["monotonicity"],
        "betas": [1.0],
        "references": {"kinds": ["uniform", "base_model"], "alpha": 1.0},
    }


def test_loading_the_base_model_names_the_missing_package(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "transformers", None)  # absent, whether or not it is installed
    with pytest.raises(ModuleNotFoundError, match=r"'transformers'.*envs/llm.yaml"):
        load_base_model(tmp_path)


def test_a_tiny_random_llama_scores_like_its_own_forward_pass(tmp_path):
    """Where transformers is installed (envs/llm.yaml): a 2-layer random Llama with a byte-level BPE, saved and loaded
    through load_base_model; batched, right-padded scores equal one unpadded forward pass per pair."""
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer, bpe.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<s>", "</s>", "<unk>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())  # fmt: skip
    bpe.train_from_iterator(comparisons_lines(4), trainer)
    transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<s>", eos_token="</s>").save_pretrained(
        tmp_path
    )
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2, max_position_embeddings=4096, bos_token_id=0, eos_token_id=1,
    )  # fmt: skip
    transformers.LlamaForCausalLM(config).save_pretrained(tmp_path)
    logits_fn, tokenize, device = load_base_model(tmp_path, "cpu")
    path = tmp_path / "comparisons.jsonl"
    path.write_text("\n".join(comparisons_lines(2)) + "\n")
    texts = read_texts(path)
    scores = score_responses(texts, logits_fn, tokenize, device)
    lm = transformers.AutoModelForCausalLM.from_pretrained(tmp_path).eval()
    for row in range(len(texts)):
        ids, start, _ = encode_pair(tokenize, render_conversation(json.loads(texts["conversation"][row])),
                                    texts["response"][row])  # fmt: skip
        expected = direct(lambda x: lm(input_ids=x).logits, ids, start)
        assert scores["logprob"][row] == pytest.approx(expected, abs=1e-3)


@pytest.mark.gpu_rule("posttrain_voting_base_model")
def test_the_scoring_places_its_model_and_inputs_on_the_jobs_device():
    """place (the job's device unless one is given) and response_logprobs on the job's (fake) device: a model left on
    the CPU, or token ids not moved to the model's device, fail here."""
    with fake_gpu() as device:
        model = place(CausalStandIn())
        assert next(model.parameters()).device == device and not model.training
        total, counts = response_logprobs(lambda ids, mask: model(ids, mask), [[1, 2, 3], [4, 5]], [1, 1], device)
        assert total.shape == (2,) and counts.tolist() == [2, 1]
    assert next(place(CausalStandIn(), "cpu").parameters()).device == torch.device("cpu")
