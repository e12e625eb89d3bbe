"""The model-free backends (rule, answer_only, random), the registry, the text-backend adapter and the transformers
backend (a clear error without transformers; generation with a stand-in model and tokenizer)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from fake_gpu import fake_gpu
from neurips26.vair.backends import (
    BACKENDS,
    AnswerOnlyBackend,
    GradeTask,
    RandomBackend,
    Reply,
    RuleBackend,
    SolveTask,
    TextBackend,
    make_backend,
    register_backend,
)
from neurips26.vair.checker import verify_item
from neurips26.vair.hf_backend import HFBackend, place
from neurips26.vair.items import Item, Step
from neurips26.vair.prompt import load_prompt_spec
from neurips26.vair.verdicts import parse_grade

PROMPTS = Path(__file__).resolve().parents[1] / "config/vair/prompts.yaml"


def make_items(problem_id: str, boxes: int, per_box: int, given: int, split: str = "eval") -> dict[str, Item]:
    """A hand-made problem (boxes of pencils, some given away) with its VAVR item, two VAIR items (missing premise,
    shuffled steps) and an IAIR item (an arithmetic slip carried to the answer); labels verified by the checker."""
    sentences = (f"Tom has {boxes} boxes.", f"Each box holds {per_box} pencils.", f"He gives away {given} pencils.")
    question = "How many pencils does Tom have left?"
    total, left = boxes * per_box, boxes * per_box - given
    first = Step(f"{boxes}*{per_box}", total, f"Tom has {boxes}*{per_box} = {total} pencils.")
    second = Step(f"{total}-{given}", left, f"He has {total}-{given} = {left} pencils left.")
    slip = Step(f"{boxes}*{per_box}", total + 2, f"Tom has {boxes}*{per_box} = {total + 2} pencils.")
    slipped = Step(f"{total + 2}-{given}", left + 2, f"He has {total + 2}-{given} = {left + 2} pencils left.")

    def item(suffix, category, flaw, shown, steps, answer, first_invalid):  # Item's fields in their order
        labels = (answer == left, first_invalid == -1, first_invalid, split)
        return Item(f"{problem_id}-{suffix}", problem_id, category, flaw, shown, question, steps, answer, left, *labels)

    items = {
        "VAVR": item("vavr", "VAVR", "none", sentences, (first, second), left, -1),
        "missing_premise": item("mp", "VAIR", "missing_premise", sentences[:2], (first, second), left, 1),
        "shuffled": item("sh", "VAIR", "shuffled", sentences, (second, first), left, 0),
        "IAIR": item("ia", "IAIR", "arithmetic_slip", sentences, (slip, slipped), left + 2, 0),
    }
    for each in items.values():
        verify_item(each)  # the hand-made labels are the checker's
    return items


@pytest.fixture(scope="module")
def items():
    return make_items("p1", 3, 12, 10)


def grade_tasks_of(items) -> list[GradeTask]:
    return [GradeTask(i.item_id, " ".join(i.problem_sentences), "steps", i) for i in items.values()]


def test_rule_backend_grades_3_valid_1_right_answer_bad_steps_0_wrong_answer(items):
    replies = RuleBackend().grade(grade_tasks_of(items))
    assert [r.value for r in replies] == [3, 1, 1, 0]
    assert all(parse_grade(r.raw) == r.value for r in replies)
    assert "undefined_operand" in replies[1].raw and "use_before_definition" in replies[2].raw


def test_rule_backend_solves_by_replaying_the_gold_steps(items):
    (reply,) = RuleBackend().solve([SolveTask("p1", "text", items["VAVR"])])
    assert reply.value == 26


def test_answer_only_backend_confirms_the_answer_and_ignores_the_steps(items):
    backend = AnswerOnlyBackend()
    assert [r.value for r in backend.grade(grade_tasks_of(items))] == [3, 3, 3, 0]  # fooled by both VAIR items
    assert backend.solve([SolveTask("p1", "text", items["VAVR"])])[0].value == 26


def test_random_backend_is_seeded_per_item_and_uniform():
    many = [make_items(f"p{k}", 2 + k % 5, 11 + k % 7, 1)["VAVR"] for k in range(400)]
    tasks = [GradeTask(i.item_id, "", "", i) for i in many]
    grades = [r.value for r in RandomBackend(seed=1).grade(tasks)]
    assert [r.value for r in RandomBackend(seed=1).grade(tasks[::-1])] == grades[::-1]  # order does not matter
    assert grades != [r.value for r in RandomBackend(seed=2).grade(tasks)]
    counts = [grades.count(g) for g in range(4)]
    assert set(grades) == {0, 1, 2, 3} and min(counts) > 70  # 100 expected each


def test_random_backend_does_not_solve(items):
    backend = RandomBackend()
    assert backend.tasks == frozenset({"grade"})
    with pytest.raises(ValueError, match="does not do the task 'solve'"):
        backend.solve([SolveTask("p1", "text", items["VAVR"])])


def test_the_registry_builds_backends_by_name_and_names_the_registered_ones():
    import neurips26.vair.http_backend  # noqa: F401  (registers "http", as hf_backend, imported above, registers "hf")

    assert {"rule", "answer_only", "random", "http", "hf"} <= set(BACKENDS)
    assert make_backend("random", seed=3).seed == 3
    assert make_backend("random", name="random_b", seed=3).name == "random_b"  # a backend label called name
    assert make_backend("rule").name == "rule" and not make_backend("rule").external
    assert make_backend("http", base_url="http://127.0.0.1:9", model="m", prompts=PROMPTS).external
    with pytest.raises(ValueError, match=r"unknown backend 'gpt'; registered backends: \['answer_only'"):
        make_backend("gpt")
    with pytest.raises(ValueError, match="is taken"):
        register_backend("rule", AnswerOnlyBackend)
    register_backend("rule", RuleBackend)  # the same factory again: accepted


def test_external_backends_register_only_when_their_module_is_imported():
    import subprocess

    code = (
        "import sys; from neurips26.vair import grading; from neurips26.vair.backends import BACKENDS, make_backend\n"
        "assert 'http' not in BACKENDS and 'requests' not in sys.modules\n"
        "try: make_backend('hf')\n"
        "except ValueError as e: print(e)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "import neurips26.vair.hf_backend to register it" in out


class Echo(TextBackend):
    """A text backend that grades by the length of the solution text and records what it read."""

    name = "echo"

    def __init__(self):
        self.seen = []

    def grade_texts(self, problems, solutions):
        self.seen += list(zip(problems, solutions))
        return [Reply(s, len(s) % 4) for s in solutions]

    def solve_texts(self, problems):
        self.seen += problems
        return [Reply(p, None) for p in problems]


def test_a_text_backend_reads_only_the_texts_of_the_tasks(items):
    echo = Echo()
    replies = echo.grade([GradeTask("a", "the problem", "abcde", items["VAVR"])])
    assert echo.seen == [("the problem", "abcde")] and replies[0].value == 1
    echo.solve([SolveTask("p1", "solve me", items["VAVR"])])
    assert echo.seen[-1] == "solve me" and echo.external


def test_hf_backend_names_the_missing_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # absent, whether or not it is installed
    with pytest.raises(ModuleNotFoundError, match=r"'transformers'.*envs/llm.yaml"):
        make_backend("hf", model="some/model", prompts=PROMPTS)


class FakeTokenizer:
    """Stands in for a transformers tokenizer: one token per character, left padding with 0."""

    pad_token_id = 0

    def apply_chat_template(self, conversations, add_generation_prompt, tokenize, padding, return_tensors, return_dict):
        assert add_generation_prompt and tokenize and padding and return_dict and return_tensors == "pt"
        texts = ["|".join(m["content"] for m in conversation) for conversation in conversations]
        width = max(len(t) for t in texts)
        ids = torch.tensor([[0] * (width - len(t)) + [ord(c) for c in t] for t in texts])
        return {"input_ids": ids, "attention_mask": (ids != 0).long()}

    def batch_decode(self, sequences, skip_special_tokens):
        return ["".join(chr(int(i)) for i in row if i != 0) for row in sequences]


class FakeLM:
    """Continues every prompt with a grade that depends on its last character (deterministic, like greedy)."""

    device = torch.device("cpu")

    def generate(self, input_ids, attention_mask, max_new_tokens, do_sample, pad_token_id):
        assert not do_sample
        new = [[ord(c) for c in f"GRADE: {int(row[-1]) % 4}"] for row in input_ids]
        return torch.cat([input_ids, torch.tensor(new)], dim=1)


def test_hf_backend_decodes_only_the_new_tokens_of_each_batch():
    spec = load_prompt_spec(PROMPTS)
    backend = HFBackend(lm=FakeLM(), tokenizer=FakeTokenizer(), prompts=spec, batch_size=2)
    solutions = ["ends in a", "ends in b", "ends in c"]  # ord: 97, 98, 99 -> grades 1, 2, 3
    replies = backend.grade_texts(["p"] * 3, solutions)
    # the prompt itself holds six calibration verdicts: decoding it too would make every reply ambiguous
    assert [r.raw for r in replies] == ["GRADE: 1", "GRADE: 2", "GRADE: 3"]
    assert [r.value for r in replies] == [1, 2, 3] and backend.external


def test_hf_backend_runs_a_tiny_random_chat_model(tmp_path):
    """Where transformers is installed (envs/llm.yaml): a 2-layer random Llama with a byte-level BPE and a chat
    template, saved and loaded through make_hf_backend; batched replies equal single ones (left padding, greedy)."""
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer, bpe.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<s>", "</s>", "<unk>"], initial_alphabet=alphabet)
    bpe.train_from_iterator(["GRADE: 3 ANSWER: 12 problem solution"] * 8, trainer)
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<s>", eos_token="</s>")
    tokenizer.chat_template = (
        "{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}</s>{% endfor %}"
        "{% if add_generation_prompt %}<s>assistant: {% endif %}"
    )
    tokenizer.save_pretrained(tmp_path)
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2, max_position_embeddings=8192, bos_token_id=0, eos_token_id=1,
    )  # fmt: skip
    transformers.LlamaForCausalLM(config).save_pretrained(tmp_path)
    backend = make_backend("hf", model=tmp_path, prompts=PROMPTS, max_new_tokens=6, batch_size=2)
    problems = ["Tom has 3 boxes.", "A longer problem with many more words in it, to be padded on the left."]
    batched = backend.grade_texts(problems, ["one step", "s"])
    alone = [backend.grade_texts([p], [s])[0] for p, s in zip(problems, ["one step", "s"])]
    assert [r.raw for r in batched] == [r.raw for r in alone] and all(r.raw for r in batched)
    assert all(r.value is None or r.value in range(4) for r in batched)


class ModuleLM(torch.nn.Module):
    """FakeLM as a module with a parameter, so where it sits can be checked: its generate refuses inputs that are not
    on its own device (as a GPU model would)."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))

    @property
    def device(self):
        return self.weight.device

    def generate(self, input_ids, attention_mask, max_new_tokens, do_sample, pad_token_id):
        assert input_ids.device == self.device and attention_mask.device == self.device, "inputs left on the CPU"
        new = torch.zeros(input_ids.shape[0], 2, dtype=input_ids.dtype, device=self.device)
        return torch.cat([input_ids, new], dim=1)


@pytest.mark.gpu_rule("vair_grade_hf")
def test_the_hf_backend_places_its_model_and_inputs_on_the_jobs_device():
    """make_hf_backend's placement (place: the job's device unless a device is given) and HFBackend's generation on
    the job's (fake) device: a model left on the CPU, or prompts not moved to the model's device, fail here."""
    spec = load_prompt_spec(PROMPTS)
    with fake_gpu() as device:
        lm = place(ModuleLM())
        assert lm.device == device and not lm.training
        replies = HFBackend(lm=lm, tokenizer=FakeTokenizer(), prompts=spec, batch_size=2).grade_texts(
            ["p"] * 3, ["s"] * 3
        )
        assert len(replies) == 3
    assert place(ModuleLM(), "cpu").device == torch.device("cpu")
