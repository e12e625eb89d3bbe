"""A backend that asks any OpenAI-compatible chat-completions server (vLLM, llama.cpp's server, SGLang, TGI, a
hosted API): ``POST {base_url}/v1/chat/completions`` with ``model``, ``messages``, ``temperature`` and
``max_tokens``, one request per task, the prompts of neurips26.vair.prompt.

- The API key is read from the environment variable named by `api_key_env` (none for a local server without
  authentication); it is sent as a bearer token and never logged or shown in the backend's repr.
- Each request has a timeout; connection errors, timeouts, 429 and 5xx answers are retried `retries` times with
  exponential backoff. Other HTTP errors are not retried.
- A malformed response (not JSON, no ``choices``, empty content) or a request that failed for good becomes a reply
  with no value and a short `error`; the errors are counted (`HttpBackend.errors`) and the harness counts such
  replies as unparseable verdicts, never dropping them.
- Tasks run sequentially, or on a small thread pool (`workers`), with progress logged every `log_every` replies.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import requests

from neurips26.vair.backends import Reply, TextBackend, register_backend
from neurips26.vair.prompt import Message, PromptSpec, build_grading_prompt, build_solving_prompt, load_prompt_spec
from neurips26.vair.verdicts import parse_answer, parse_grade

log = logging.getLogger(__name__)

RAW_LIMIT = 4000  # characters of a malformed body kept as the reply's raw text


def completions_url(base_url: str) -> str:
    """The chat-completions endpoint of a server: ``{base_url}/v1/chat/completions``; a `base_url` that already
    ends in ``/v1`` (the OpenAI clients' convention) is not given a second one."""
    base = base_url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
    return f"{base}/chat/completions" if base.endswith("/v1") else f"{base}/v1/chat/completions"


def read_content(body: str) -> tuple[str, str]:
    """(the first choice's message content, error) of a chat-completions response body; error is "" when the body
    is well formed, else one of "invalid json", "no choices", "empty content"."""
    try:
        data = json.loads(body)
    except ValueError:
        return body[:RAW_LIMIT], "invalid json"
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return body[:RAW_LIMIT], "no choices"
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str) or not content.strip():
        return body[:RAW_LIMIT], "empty content"
    return content, ""


@dataclass
class HttpBackend(TextBackend):
    """Solve and grade through a chat-completions server; see the module docstring."""

    base_url: str
    model: str
    prompts: PromptSpec = field(repr=False)
    api_key_env: str | None = None
    temperature: float = 0.0
    max_tokens: int = 2048
    timeout_s: float = 120.0
    retries: int = 3
    backoff_s: float = 2.0
    workers: int = 1
    log_every: int = 50
    name: str = "http"
    errors: collections.Counter = field(default_factory=collections.Counter, repr=False)
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def __post_init__(self):
        self.url = completions_url(self.base_url)
        if not self.model:
            raise ValueError("the http backend needs a model name")
        if self.retries < 0 or self.workers < 1 or self.timeout_s <= 0:
            raise ValueError(
                f"the http backend needs retries >= 0, workers >= 1 and timeout_s > 0, got retries={self.retries}, "
                f"workers={self.workers}, timeout_s={self.timeout_s}"
            )
        if self.api_key_env and not os.environ.get(self.api_key_env):
            raise ValueError(f"the http backend's API key variable {self.api_key_env} is not set")
        self._local = threading.local()
        self._lock = threading.Lock()

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.api_key_env:
            headers["Authorization"] = f"Bearer {os.environ[self.api_key_env]}"
        return headers

    def _session(self) -> requests.Session:
        if not hasattr(self._local, "session"):
            self._local.session = requests.Session()
        return self._local.session

    def _post(self, messages: list[Message]) -> tuple[str, str]:
        """(content or raw body, error) of one request, retried on connection errors, timeouts, 429 and 5xx."""
        payload = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        failure = ""
        for attempt in range(self.retries + 1):
            if attempt:
                self.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                response = self._session().post(self.url, json=payload, headers=self._headers(), timeout=self.timeout_s)
            except (requests.ConnectionError, requests.Timeout) as error:
                failure = f"{type(error).__name__}"
                continue
            if response.status_code == 429 or response.status_code >= 500:
                failure = f"http {response.status_code}"
                continue
            if response.status_code != 200:
                return response.text[:RAW_LIMIT], f"http {response.status_code}"
            return read_content(response.text)
        return "", f"{failure} after {self.retries + 1} tries"

    def _ask(self, conversations: Sequence[list[Message]], parse: Callable, task: str) -> list[Reply]:
        done, start = 0, time.perf_counter()

        def one(messages: list[Message]) -> Reply:
            nonlocal done
            raw, error = self._post(messages)
            reply = Reply(raw, None if error else parse(raw), error)
            with self._lock:
                done += 1
                if error:
                    self.errors[error.split(" after ")[0]] += 1
                if done % self.log_every == 0 or done == len(conversations):
                    rate = done / max(time.perf_counter() - start, 1e-9)
                    log.info(
                        "%s %s: %d/%d replies, %d malformed or failed, %.2f/s, ETA %.0f s",
                        self.name,
                        task,
                        done,
                        len(conversations),
                        sum(self.errors.values()),
                        rate,
                        (len(conversations) - done) / rate,
                    )
            return reply

        if self.workers == 1:
            return [one(messages) for messages in conversations]
        with ThreadPoolExecutor(self.workers) as pool:
            return list(pool.map(one, conversations))

    def solve_texts(self, problems: list[str]) -> list[Reply]:
        conversations = [build_solving_prompt(self.prompts, problem) for problem in problems]
        return self._ask(conversations, parse_answer, "solve")

    def grade_texts(self, problems: list[str], solutions: list[str]) -> list[Reply]:
        if len(problems) != len(solutions):
            raise ValueError(f"grade_texts needs one solution per problem, got {len(problems)} and {len(solutions)}")
        conversations = [build_grading_prompt(self.prompts, p, s) for p, s in zip(problems, solutions)]
        return self._ask(conversations, parse_grade, "grade")


def make_http_backend(base_url: str, model: str, prompts: str | Path | PromptSpec, **options) -> HttpBackend:
    """An HttpBackend for `model` served at `base_url`, with the prompts of the YAML file `prompts` (or a PromptSpec);
    `options` are HttpBackend's other fields (api_key_env, temperature, max_tokens, timeout_s, retries, backoff_s,
    workers, log_every, name)."""
    spec = prompts if isinstance(prompts, PromptSpec) else load_prompt_spec(prompts)
    return HttpBackend(base_url=base_url, model=model, prompts=spec, **options)


register_backend("http", make_http_backend)
