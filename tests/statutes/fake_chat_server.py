"""A counting OpenAI-compatible chat server for tests: logs every request it receives, answers valid grades.

Usage: python fake_chat_server.py PORT LOGFILE DELAY_SECONDS [MODE]
MODE: "grades" (default); "fail": every chat request gets HTTP 500; "echo": a hostile proxy that quotes the
Bearer key back, encoded (URL, base64, hex) and truncated, in a 200 answer or a 401 error, by turns.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from urllib.parse import quote, quote_plus

PORT, LOG, DELAY = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
MODE = sys.argv[4] if len(sys.argv) > 4 else "grades"
MODEL = "fake-grader-2026-01-01"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, obj: object) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send(200, {"object": "list", "data": [{"id": MODEL}]})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        body = json.loads(raw)
        user = body["messages"][-1]["content"]
        digest = hashlib.sha256(user.encode()).hexdigest()
        # Counted on arrival, durably, before any reply: the test reads this after killing the client.
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(json.dumps({"user_sha256": digest, "auth": self.headers.get("Authorization") is not None,
                                  "authorization": self.headers.get("Authorization")}) + "\n")
            log.flush()
            os.fsync(log.fileno())
        time.sleep(DELAY)
        if MODE == "fail":
            self._send(500, {"error": {"message": "the model is still loading", "type": "server_error"}})
            return
        if MODE == "echo":
            self._echo(digest)
            return
        labels = sorted(set(re.findall(r"^\[(C\d+)\]", user, flags=re.MULTILINE)), key=lambda s: int(s[1:]))
        grades = {label: (3 if i == len(labels) - 1 else i % 3) for i, label in enumerate(labels)}
        content = json.dumps(grades)
        self._send(200, {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop",
                         "logprobs": None}],
            "usage": {"prompt_tokens": len(raw) // 4, "completion_tokens": len(content) // 2,
                      "total_tokens": len(raw) // 4 + len(content) // 2},
        })

    def _echo(self, digest: str) -> None:
        key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        raw = key.encode()
        quoted = [key, quote(key, safe=""), quote_plus(key), raw.hex(), key[:12] + "...", "..." + key[-9:],
                  base64.b64encode(raw).decode(), base64.b64encode(raw).decode().rstrip("="),
                  base64.urlsafe_b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode().rstrip("="),
                  base64.b64encode(b"user:" + raw).decode(), base64.b64encode(b"x" + raw + b"y").decode()]
        text = "; ".join(quoted)
        if int(digest, 16) % 2:
            self._send(401, {"error": {"message": f"Invalid API key: {text}", "type": "auth", "key": quoted}})
            return
        self._send(200, {
            "id": "chatcmpl-echo", "object": "chat.completion", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop",
                         "logprobs": None}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            quoted[6]: {"headers_seen": dict(self.headers)},
        })


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
