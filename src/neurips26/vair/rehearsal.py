"""Paper 08's rehearsal: what it cuts from the paper block, fixture files in the formats of its two sources, and a
stub chat-completions server that stands in for the external model behind the HTTP backend.

Cuts: 200 synthetic problems, 2 training steps of micro-batch 4 (and 8 for the memory extrapolation) at the paper's
model size, the largest seed (its five members), and of the external backends the HTTP one, pointed at
:data:`STUB_URL`: the grading job then starts :class:`StubChatServer` on 127.0.0.1 and sends every request of the
real backend over HTTP to it (:func:`chat_server`). The stub replies in the chat-completions format like a
reasoning model (a ``<think>`` block, then ``GRADE: n`` or ``ANSWER: n``), every 25th reply without a verdict, so that
the unparseable count runs too.

Not rehearsed: the hf backend (``vair_grade_hf``), which needs transformers and a model's weights, neither of which
the rehearsal's environment has (tests/test_vair_backends.py runs it on a tiny random Llama where transformers is
installed).

Fixtures (`fixtures`), each read by the paper's own readers (tests/test_vair_rehearsal.py):
- ``vair/gsm8k/test.jsonl``: GSM8K's format, one JSON record per line with `question` and `answer` (steps with
  calculator annotations ``<<a+b=c>>c``, a last line ``#### n``), written from generated problems, and one record a
  step of which is not an integer (skipped by the reader, as some of GSM8K's are);
- ``vair/math500/test.jsonl``: MATH-500's format, records with problem, solution (ending in ``\\boxed{...}``),
  answer, subject, level and unique_id, one of them with a fraction for its answer.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import threading
import zlib
from collections.abc import Iterator

from neurips26.common.local_http import LocalServer
from neurips26.common.rehearsal import Plan, largest

__all__ = [
    "DATA_GROWTH",
    "GSM8K_RECORDS",
    "MATH_RECORDS",
    "PLAN",
    "STUB_URL",
    "StubChatServer",
    "chat_server",
    "fixtures",
    "gsm8k_lines",
    "math500_lines",
    "stub_reply",
]

STUB_URL = "http://stub-chat-completions.invalid/v1"  # the rehearsal's base_url (.invalid never resolves)
GSM8K_RECORDS = 24  # GSM8K records at items=1 (one of them skipped by the reader)
MATH_RECORDS = 12  # MATH-500 records at items=1
UNPARSEABLE_EVERY = 25  # one stub reply in this many carries no verdict
_HTTP_ONLY = "the rehearsal rehearses the http backend against its stub server; the hf backend is not rehearsed"


def _members(cfg: dict) -> int:
    return len(cfg["seeds"]) * sum(1 if regime == "outcome" else 4 for regime in cfg["regimes"])


PLAN = Plan(
    budgets={
        "problems.n": 200,
        "train.steps": 2,
        "train.warmup": 1,
        "train.batch_size": 4,
    },
    sweeps={
        "seeds": largest,
        "external": lambda entries: {k: v for k, v in entries.items() if v["kind"] == "http"} or entries,
    },
    micro_batch=("train.batch_size",),
    fixture_paths={"external.http.base_url": STUB_URL},
    work={
        # sequences through the ensemble: steps x batch x members
        "vair_train": lambda cfg, wc: cfg["train"]["steps"] * cfg["train"]["batch_size"] * _members(cfg),
        "vair_synthetic": lambda cfg, wc: cfg["problems"]["n"],
        # eval items x members, twice (solving and grading; probes and patching per member: one job)
        "vair_evaluate_small": lambda cfg, wc: 2 * cfg["problems"]["n"] * _members(cfg),
        "vair_grade_reference": lambda cfg, wc: cfg["problems"]["n"] if wc.get("dataset") == "synthetic" else 1,
    },
    not_rehearsed={"vair_grade_hf": f"{_HTTP_ONLY}: it needs transformers and a model's weights (module docstring)"},
    note=(
        "200 synthetic problems, 2 training steps of micro-batch 4 (and 8) at the paper's model size, the largest "
        "seed; the http backend against a stub chat-completions server on 127.0.0.1; fixture GSM8K and MATH-500 files"
    ),
)
# GSM8K's and MATH-500's jobs read every record once: linear in the fixtures' records
DATA_GROWTH = {
    "vair_problems_gsm8k": (GSM8K_RECORDS, 1319),
    "vair_math500": (MATH_RECORDS, 500),
    "vair_items:dataset=gsm8k": (GSM8K_RECORDS, 1319),
    "vair_grade_reference:dataset=gsm8k": (GSM8K_RECORDS, 1319),
    "vair_grade_http:dataset=gsm8k": (GSM8K_RECORDS, 1319),
    "vair_grade_http:dataset=math": (MATH_RECORDS, 500),
}

_STEP = re.compile(r"(\d+ [-+*/] \d+) = (\d+)")


def _annotated(match: re.Match) -> str:
    """``a + b = c`` written as GSM8K writes a calculator step: ``a + b = <<a+b=c>>c``."""
    return f"{match[1]} = <<{match[1].replace(' ', '')}={match[2]}>>{match[2]}"


def gsm8k_lines(records: int) -> list[str]:
    """`records` JSON lines in GSM8K's format (module docstring): generated problems, the last one with a step whose
    result is not an integer."""
    from neurips26.vair.problems import generate_problems

    lines = []
    for solved in generate_problems(records - 1, seed=8):
        steps = [
            _STEP.sub(lambda m: f"{m[1]} = <<{m[1].replace(' ', '')}={m[2]}>>{m[2]}", s.text) for s in solved.steps
        ]
        question = " ".join([*solved.problem.sentences, solved.problem.question])
        lines.append(json.dumps({"question": question, "answer": "\n".join([*steps, f"#### {solved.problem.answer}"])}))
    broken = {
        "question": "Ann has 7 cakes. She cuts each in 2 halves. How many halves are there?",
        "answer": "Each cake weighs 7/2=<<7/2=3.5>>3.5.\nThere are 7*2=<<7*2=14>>14 halves.\n#### 14",
    }
    return [*lines, json.dumps(broken)]


def math500_lines(records: int) -> list[str]:
    """`records` JSON lines in MATH-500's format (module docstring), the last with a fraction for its answer."""
    lines = []
    for k in range(records - 1):
        a, b = 3 + k, 11 + 2 * k
        solution = f"Adding the two numbers, $ {a} + {b} = {a + b} $. So the answer is $\\boxed{{{a + b}}}$."
        record = {"problem": f"What is ${a} + {b}$?", "solution": solution, "answer": str(a + b)}
        lines.append(json.dumps({**record, "subject": "Prealgebra", "level": 1 + k % 5, "unique_id": f"test/{k}.json"}))
    fraction = {
        "problem": "What is $\\frac{1}{4} + \\frac{1}{4}$?",
        "solution": "Two quarters make a half: $\\boxed{\\frac{1}{2}}$.",
        "answer": "\\frac12",
        "subject": "Prealgebra",
        "level": 2,
        "unique_id": f"test/{records - 1}.json",
    }
    return [*lines, json.dumps(fraction)]


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes of the paper's two sources at `items` times their base size."""
    return {
        "vair/gsm8k/test.jsonl": ("\n".join(gsm8k_lines(GSM8K_RECORDS * items)) + "\n").encode(),
        "vair/math500/test.jsonl": ("\n".join(math500_lines(MATH_RECORDS * items)) + "\n").encode(),
    }


def stub_reply(payload: dict, n: int) -> str:
    """The stub's reply content to the `n`-th chat-completions request (from 0): a thought, then a grade 0-3 (a
    grading request: its system message asks for ``GRADE:``; the grade a function of the request) or an answer (the
    first number of the problem); no verdict in every :data:`UNPARSEABLE_EVERY`-th reply."""
    messages = payload.get("messages") or [{"content": ""}]
    last = str(messages[-1].get("content", ""))
    if n % UNPARSEABLE_EVERY == UNPARSEABLE_EVERY - 1:
        return "<think>The steps look familiar.</think>\nI am not sure what to make of this solution."
    if "GRADE" in str(messages[0].get("content", "")):
        grade = zlib.crc32(last.encode()) % 4
        return f"<think>Checking each step against the problem.</think>\nThe reasoning was read.\nGRADE: {grade}"
    number = re.search(r"\d+", last)
    return f"<think>Working it out.</think>\nANSWER: {number.group() if number else 0}"


class StubChatServer(LocalServer):
    """An OpenAI-compatible chat-completions endpoint on 127.0.0.1 (``<url>/v1/chat/completions``) answering with
    :func:`stub_reply` (requests counted in arrival order); other paths get 404."""

    def __init__(self):
        self.requests = 0
        lock = threading.Lock()
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                payload = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    status, body = 404, {"error": "not found"}
                else:
                    with lock:
                        n, stub.requests = stub.requests, stub.requests + 1
                    message = {"role": "assistant", "content": stub_reply(payload, n)}
                    choice = {"index": 0, "message": message, "finish_reason": "stop"}
                    body = {"object": "chat.completion", "model": payload.get("model"), "choices": [choice]}
                    status = 200
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        super().__init__(Handler)


@contextlib.contextmanager
def chat_server(base_url: str | None) -> Iterator[str | None]:
    """The base URL a grading job sends its requests to: a running :class:`StubChatServer`'s for the rehearsal's
    :data:`STUB_URL` (stopped when the block ends), else `base_url` itself."""
    if base_url != STUB_URL:
        yield base_url
        return
    with StubChatServer() as server:
        yield f"{server.url}/v1"
