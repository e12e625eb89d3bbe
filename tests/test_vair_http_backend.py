"""The OpenAI-compatible HTTP backend against a stub chat-completions server on 127.0.0.1 (started per test, port 0,
stopped after): well-formed replies, garbage, empty content, invalid JSON, missing choices, 5xx then success, a
server that always fails, a dead port, a slow server, and the API key handling."""

from __future__ import annotations

import contextlib
import http.server
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from neurips26.vair.http_backend import completions_url, make_http_backend, read_content

PROMPTS = Path(__file__).resolve().parents[1] / "config/vair/prompts.yaml"


def completion(content) -> tuple[int, str]:
    """A 200 response in the chat-completions format whose first choice says `content`."""
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    }
    return 200, json.dumps(body)


class StubServer:
    """A chat-completions server: `respond(request_json, n)` gives (status, body) for the n-th request (from 0);
    every request's JSON and headers are kept in `requests`."""

    def __init__(self, respond: Callable[[dict, int], tuple[int, str]], delay_s: float = 0.0):
        self.respond, self.delay_s = respond, delay_s
        self.requests: list[tuple[dict, dict]] = []
        self.lock = threading.Lock()
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                payload = json.loads(self.rfile.read(length))
                with stub.lock:
                    n = len(stub.requests)
                    stub.requests.append((payload, dict(self.headers)))
                status, body = (404, "not found") if self.path != "/v1/chat/completions" else stub.respond(payload, n)
                time.sleep(stub.delay_s)
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def backend(url: str, **options):
    options = {"retries": 2, "backoff_s": 0.0, "timeout_s": 5.0, **options}
    return make_http_backend(url, "stub-model", PROMPTS, **options)


def grade_from_problem(payload: dict, n: int) -> tuple[int, str]:
    """Grades by the number at the end of the problem under grading (the last user message)."""
    last = payload["messages"][-1]["content"]
    return completion(f"Looks at the steps.\nGRADE: {last.split('#')[1][0]}")


def test_grades_come_back_parsed_in_order_with_the_request_fields():
    problems = [f"Problem #{g} here." for g in (3, 0, 2, 1)]
    with StubServer(grade_from_problem) as stub:
        replies = backend(stub.url, temperature=0.0, max_tokens=64).grade_texts(problems, ["steps"] * 4)
    assert [r.value for r in replies] == [3, 0, 2, 1]
    assert all(r.error == "" and r.raw.startswith("Looks at") for r in replies)
    payload, headers = stub.requests[0]
    assert payload["model"] == "stub-model" and payload["temperature"] == 0.0 and payload["max_tokens"] == 64
    assert [m["role"] for m in payload["messages"]] == ["system"] + ["user", "assistant"] * 6 + ["user"]
    assert "Authorization" not in headers  # no key variable: no credentials sent


def test_a_thread_pool_keeps_the_order_of_the_tasks():
    problems = [f"Problem #{g % 4} number {g}." for g in range(12)]
    with StubServer(grade_from_problem, delay_s=0.01) as stub:
        replies = backend(stub.url, workers=4).grade_texts(problems, ["steps"] * 12)
    assert [r.value for r in replies] == [g % 4 for g in range(12)]


def test_solving_reads_the_final_answer():
    with StubServer(lambda p, n: completion("48 / 2 = 24\n24 + 48 = 72\nANSWER: 72")) as stub:
        replies = backend(stub.url).solve_texts(["Natalia sold clips..."])
    assert replies[0].value == 72
    assert stub.requests[0][0]["messages"][-1]["content"].endswith("Natalia sold clips...")


@pytest.mark.parametrize(
    ("response", "error", "raw_has"),
    [
        (completion("I like this solution a lot."), "", "I like"),  # read, but no verdict in it
        (completion(""), "empty content", "choices"),
        (completion(None), "empty content", "choices"),
        ((200, "<html>upstream crashed</html>"), "invalid json", "upstream crashed"),
        ((200, json.dumps({"error": {"message": "overloaded"}})), "no choices", "overloaded"),
        ((200, json.dumps({"choices": []})), "no choices", "choices"),
        ((400, json.dumps({"error": "bad request"})), "http 400", "bad request"),
    ],
)
def test_a_malformed_response_becomes_an_unparseable_reply(response, error, raw_has):
    with StubServer(lambda p, n: response) as stub:
        http = backend(stub.url)
        (reply,) = http.grade_texts(["p"], ["s"])
    assert reply.value is None and not reply.parsed_ok
    assert reply.error == error and raw_has in reply.raw
    assert len(stub.requests) == 1  # none of these is retried
    assert sum(http.errors.values()) == (1 if error else 0)


def test_a_500_then_success_is_retried_with_backoff():
    waits = []
    with StubServer(lambda p, n: (500, "oops") if n == 0 else completion("GRADE: 1")) as stub:
        (reply,) = backend(stub.url, backoff_s=0.5, sleep=waits.append).grade_texts(["p"], ["s"])
    assert reply.value == 1 and reply.error == ""
    assert len(stub.requests) == 2 and waits == [0.5]


def test_a_server_that_keeps_failing_gives_up_after_the_retries():
    waits = []
    with StubServer(lambda p, n: (503, "down")) as stub:
        http = backend(stub.url, retries=2, backoff_s=1.0, sleep=waits.append)
        replies = http.grade_texts(["p", "q"], ["s", "t"])
    assert [r.error for r in replies] == ["http 503 after 3 tries"] * 2
    assert all(r.value is None for r in replies)
    assert len(stub.requests) == 6 and waits == [1.0, 2.0] * 2  # exponential backoff
    assert http.errors == {"http 503": 2}


def test_a_dead_server_and_a_slow_one_become_failed_replies():
    with StubServer(lambda p, n: completion("GRADE: 3")) as stub:
        url = stub.url
    (reply,) = backend(url, retries=1).grade_texts(["p"], ["s"])  # the port is closed now
    assert reply.value is None and reply.error == "ConnectionError after 2 tries"
    with StubServer(lambda p, n: completion("GRADE: 3"), delay_s=0.5) as stub:
        (reply,) = backend(stub.url, retries=0, timeout_s=0.1).grade_texts(["p"], ["s"])
    assert reply.value is None and reply.error == "ReadTimeout after 1 tries"


def test_the_api_key_is_sent_but_never_logged(monkeypatch, caplog):
    monkeypatch.setenv("VAIR_TEST_KEY", "sk-secret-123")
    with StubServer(lambda p, n: completion("GRADE: 2")) as stub, caplog.at_level(logging.DEBUG):
        http = backend(stub.url, api_key_env="VAIR_TEST_KEY")
        (reply,) = http.grade_texts(["p"], ["s"])
    assert reply.value == 2
    assert stub.requests[0][1]["Authorization"] == "Bearer sk-secret-123"
    assert "sk-secret" not in caplog.text and "sk-secret" not in repr(http)
    assert "1/1 replies" in caplog.text  # progress is logged


def test_an_unset_key_variable_is_named_without_a_value(monkeypatch):
    monkeypatch.delenv("VAIR_MISSING_KEY", raising=False)
    with pytest.raises(ValueError, match="VAIR_MISSING_KEY is not set"):
        backend("http://127.0.0.1:9", api_key_env="VAIR_MISSING_KEY")


def test_completions_url_appends_the_endpoint_once():
    assert completions_url("http://host:8000") == "http://host:8000/v1/chat/completions"
    assert completions_url("http://host:8000/") == "http://host:8000/v1/chat/completions"
    assert completions_url("https://api.example/v1/") == "https://api.example/v1/chat/completions"
    with pytest.raises(ValueError, match="base_url"):
        completions_url("host:8000")


def test_read_content_takes_the_first_choice():
    assert read_content(completion("GRADE: 3")[1]) == ("GRADE: 3", "")
    assert read_content("[1, 2]")[1] == "no choices"
