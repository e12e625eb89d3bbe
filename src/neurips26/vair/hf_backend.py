"""A backend that runs an open-weight chat model in-process with Hugging Face transformers: the model's chat template
applied to the prompts of neurips26.vair.prompt, greedy decoding, the new tokens decoded and parsed.

transformers (pinned in envs/llm.yaml) is imported inside `make_hf_backend`, so this module imports without it and a
missing install is reported by name. The model is loaded from a local folder or a hub name; on a machine without
network, point `model` at a downloaded snapshot.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from neurips26.common.llm_imports import import_transformers
from neurips26.vair.backends import Reply, TextBackend, register_backend
from neurips26.vair.prompt import Message, PromptSpec, build_grading_prompt, build_solving_prompt, load_prompt_spec
from neurips26.vair.verdicts import parse_answer, parse_grade

log = logging.getLogger(__name__)


@dataclass
class HFBackend(TextBackend):
    """Greedy generation with a loaded causal LM `lm` and its `tokenizer` (left padding, a pad token set)."""

    lm: object = field(repr=False)
    tokenizer: object = field(repr=False)
    prompts: PromptSpec = field(repr=False)
    max_new_tokens: int = 2048
    batch_size: int = 4
    name: str = "hf"

    def __post_init__(self):
        if self.batch_size < 1 or self.max_new_tokens < 1:
            raise ValueError(
                f"the hf backend needs batch_size >= 1 and max_new_tokens >= 1, got {self.batch_size}, "
                f"{self.max_new_tokens}"
            )

    def generate(self, conversations: Sequence[list[Message]]) -> list[str]:
        """The model's greedy continuation of each conversation (its new tokens only, special tokens dropped)."""
        import torch

        texts: list[str] = []
        for start in range(0, len(conversations), self.batch_size):
            batch = list(conversations[start : start + self.batch_size])
            encoded = self.tokenizer.apply_chat_template(
                batch, add_generation_prompt=True, tokenize=True, padding=True, return_tensors="pt", return_dict=True
            )
            encoded = {key: value.to(self.lm.device) for key, value in encoded.items()}
            with torch.inference_mode():
                output = self.lm.generate(
                    **encoded,
                    max_new_tokens=self.max_new_tokens,
                    do_sample=False,
                    pad_token_id=self.tokenizer.pad_token_id,
                )
            texts += self.tokenizer.batch_decode(output[:, encoded["input_ids"].shape[1] :], skip_special_tokens=True)
            log.info("%s: %d/%d generated", self.name, len(texts), len(conversations))
        return texts

    def _ask(self, conversations: list[list[Message]], parse: Callable) -> list[Reply]:
        return [Reply(text, parse(text)) for text in self.generate(conversations)]

    def solve_texts(self, problems: list[str]) -> list[Reply]:
        return self._ask([build_solving_prompt(self.prompts, problem) for problem in problems], parse_answer)

    def grade_texts(self, problems: list[str], solutions: list[str]) -> list[Reply]:
        if len(problems) != len(solutions):
            raise ValueError(f"grade_texts needs one solution per problem, got {len(problems)} and {len(solutions)}")
        conversations = [build_grading_prompt(self.prompts, p, s) for p, s in zip(problems, solutions)]
        return self._ask(conversations, parse_grade)


def make_hf_backend(
    model: str | Path,
    prompts: str | Path | PromptSpec,
    device: str | None = None,
    dtype: str = "auto",
    revision: str | None = None,
    **options,
) -> HFBackend:
    """An HFBackend with the causal LM `model` (a local folder or hub name, at `revision`) on `device` (default: the
    job's device, :func:`neurips26.common.loop.job_device`: the GPU a cluster job was given), with the
    prompts of the YAML file `prompts` (or a PromptSpec); `options` are HFBackend's max_new_tokens, batch_size and
    name. ModuleNotFoundError naming transformers when it is not installed."""
    transformers = import_transformers("the 'hf' backend")
    spec = prompts if isinstance(prompts, PromptSpec) else load_prompt_spec(prompts)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(model), revision=revision, padding_side="left")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    lm = transformers.AutoModelForCausalLM.from_pretrained(str(model), revision=revision, dtype=dtype)
    return HFBackend(lm=place(lm, device), tokenizer=tokenizer, prompts=spec, **options)


def place(lm, device: str | None = None):
    """The causal LM `lm` in evaluation mode on `device`, by default the job's device (loop.job_device())."""
    from neurips26.common.loop import job_device

    return lm.to(device if device is not None else job_device()).eval()


register_backend("hf", make_hf_backend)
