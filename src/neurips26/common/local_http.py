"""An HTTP server on 127.0.0.1 (a free port) in a background thread, for the rehearsal's stand-ins of remote services
and for tests: ``with LocalServer(Handler) as server: ... server.url ...``; stopped and joined when the block ends."""

from __future__ import annotations

import http.server
import threading

__all__ = ["LocalServer"]


class LocalServer:
    """Serve requests with `handler` (a ``http.server.BaseHTTPRequestHandler`` subclass) on 127.0.0.1."""

    def __init__(self, handler: type[http.server.BaseHTTPRequestHandler]):
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def __enter__(self) -> LocalServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
