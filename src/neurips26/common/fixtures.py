"""Fixture files served on 127.0.0.1 as the mirrors of the registry's sources (config/sources.yaml), for the
rehearsal (tools/rehearse.py) and tests: the download rule then fetches them exactly as it fetches the real files.

- `fixture_registry` rewrites a registry so that every pinned file with a fixture is pinned to the fixture's sha256
  (an unpinned file with a fixture too); files locked on first fetch stay so and are locked by their first fetch in
  the lock file of the copy that uses the registry, never the project's.
- `FixtureServer` serves plain files at `<url>/<folder>/<name>` and Hugging Face folders through a minimal hub at
  `<url>/hub/` (`api/<type>s/<repo>/revision/<rev>` with the repository's file list and LFS sha256, and
  `<type path><repo>/resolve/<rev>/<file>`), and gives the `mirrors:` entries that point the registry at it.
"""

from __future__ import annotations

import copy
import hashlib
import http.server
import json
import re
from urllib.parse import unquote, urlparse

from neurips26.common.local_http import LocalServer

__all__ = ["FAKE_COMMIT", "FixtureServer", "fixture_registry", "sha256"]

FAKE_COMMIT = "0" * 39 + "f"  # the commit every fake hub revision resolves to


def sha256(payload: bytes) -> str:
    return hashlib.sha256(payload).hexdigest()


def fixture_registry(registry: dict, payloads: dict[str, bytes]) -> dict:
    """A copy of `registry` in which every file that has a payload and a pinned hash (or none, with `unpinned`) is
    pinned to the payload's sha256. Patterned Hugging Face folders (files named by a regular expression) and files
    locked on first fetch are left as they are."""
    out = copy.deepcopy(registry)
    for folder, entry in out.items():
        for name, spec in entry.get("files", {}).items():
            payload = payloads.get(f"{folder}/{name}")
            if payload is None:
                continue
            if "hash" in spec or "unpinned" in spec or ("unpinned" in entry and not entry.get("lock")):
                spec.pop("unpinned", None)
                spec["hash"] = f"sha256:{sha256(payload)}"
                spec["size"] = len(payload)
        if "unpinned" in entry and all("hash" in spec for spec in entry.get("files", {}).values()):
            entry.pop("unpinned")
    return out


class FixtureServer:
    """Serve `payloads` (registry path -> bytes) as the mirrors of `registry`'s folders on 127.0.0.1."""

    def __init__(self, payloads: dict[str, bytes], registry: dict):
        self.payloads = dict(payloads)
        self.registry = registry
        self.hubs: dict[str, dict[str, bytes]] = {}  # "<type>/<repo>" -> remote file name -> bytes
        self.plain: dict[str, bytes] = {}  # "<folder>/<name>" -> bytes
        for path, payload in self.payloads.items():
            folder, _, name = path.rpartition("/")
            entry = registry.get(folder)
            if entry is None:
                raise KeyError(f"fixture {path}: no folder {folder!r} in the registry")
            hub = entry.get("huggingface")
            if hub is None:
                self.plain[path] = payload
                continue
            remote = entry.get("files", {}).get(name, {}).get("remote", name)
            self.hubs.setdefault(f"{hub.get('type', 'dataset')}/{hub['repo']}", {})[remote] = payload
        self._server = None

    @property
    def url(self) -> str:
        return f"{self._server.url}/"

    def mirrors(self) -> dict[str, str]:
        """`mirrors:` for config/config.yaml: every registry folder with a fixture, pointed at this server."""
        out = {}
        for path in self.payloads:
            folder = path.rpartition("/")[0]
            hub = self.registry[folder].get("huggingface")
            out[folder] = self.url + ("hub/" if hub is not None else f"{folder}/")
        return out

    def _answer(self, path: str) -> tuple[int, bytes, str]:
        path = unquote(urlparse(path).path).lstrip("/")
        if path in self.plain:
            return 200, self.plain[path], "application/octet-stream"
        api = re.fullmatch(r"hub/api/(dataset|model|space)s/(.+)/revision/([^/]+)", path)
        if api:
            files = self.hubs.get(f"{api.group(1)}/{api.group(2)}")
            if files is None:
                return 404, b"no such repository", "text/plain"
            siblings = [
                {"rfilename": name, "size": len(data), "lfs": {"sha256": sha256(data), "size": len(data)}}
                for name, data in sorted(files.items())
            ]
            return 200, json.dumps({"sha": FAKE_COMMIT, "siblings": siblings}).encode(), "application/json"
        resolve = re.fullmatch(r"hub/(datasets/|spaces/|)(.+?)/resolve/([^/]+)/(.+)", path)
        if resolve:
            kind = {"datasets/": "dataset", "spaces/": "space", "": "model"}[resolve.group(1)]
            data = self.hubs.get(f"{kind}/{resolve.group(2)}", {}).get(resolve.group(4))
            if data is not None:
                return 200, data, "application/octet-stream"
        return 404, b"not found", "text/plain"

    def __enter__(self) -> FixtureServer:
        answer = self._answer

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                status, body, kind = answer(self.path)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self._server = LocalServer(Handler).__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._server.__exit__(*exc)
