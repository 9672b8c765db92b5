#!/usr/bin/env python3
"""Deterministic OpenAI-compatible embeddings endpoint for tests (stdlib only).

Serves, on loopback:
  POST /v1/embeddings   {"input": str | [str, ...], "model": ..., "encoding_format"?: "float"|"base64",
                         "dimensions"?: int}
  GET  /v1/models
  GET  /health

Embedding = hashed bag of words: each lower-cased word token ([a-z0-9]+, unicode letters
included) is hashed (blake2b) to one coordinate and a sign; counts are dampened
(1 + log(tf)) and the vector is L2-normalised. Texts sharing words therefore have a
positive cosine similarity, texts without common words are ~orthogonal. An empty text
maps to a fixed unit vector (never a zero vector, which would make cosine distance NaN).

The official ``openai`` Python client asks for ``encoding_format=base64`` by default
(little-endian float32, base64-encoded): both formats are supported.

Usage: fake_embeddings_server.py [--host 127.0.0.1] [--port 18889] [--dim 384]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import re
import struct
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_DIM = 384
MODEL_NAME = "hh-fake-embed"
_TOKEN_RE = re.compile(r"[^\W_]+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    return _TOKEN_RE.findall(text.lower())


def embed(text: str, dim: int) -> list[float]:
    counts: dict[str, int] = {}
    for tok in tokenize(text):
        counts[tok] = counts.get(tok, 0) + 1
    if not counts:
        counts = {"\x00empty": 1}
    vec = [0.0] * dim
    for tok, tf in counts.items():
        h = hashlib.blake2b(tok.encode("utf-8"), digest_size=8).digest()
        n = int.from_bytes(h, "little")
        idx = n % dim
        sign = 1.0 if (n >> 63) & 1 == 0 else -1.0
        vec[idx] += sign * (1.0 + math.log(tf))
    norm = math.sqrt(sum(x * x for x in vec))
    if norm == 0.0:  # every token cancelled out on one coordinate: fall back to a fixed vector
        vec = [0.0] * dim
        vec[0] = 1.0
        return vec
    return [x / norm for x in vec]


def _b64(vec: list[float]) -> str:
    return base64.b64encode(struct.pack("<%df" % len(vec), *vec)).decode("ascii")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "hh-fake-embeddings/1"
    dim = DEFAULT_DIM

    def log_message(self, fmt: str, *args) -> None:  # quiet: the API calls us a lot
        if getattr(self.server, "verbose", False):
            sys.stderr.write("%s - %s\n" % (self.address_string(), fmt % args))

    def _send(self, code: int, obj: object) -> None:
        body = json.dumps(obj).encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, code: int, msg: str) -> None:
        self._send(code, {"error": {"message": msg, "type": "invalid_request_error", "code": None}})

    def do_GET(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in ("/health", ""):
            self._send(200, {"status": "ok", "dim": self.dim})
        elif path in ("/v1/models", "/models"):
            self._send(200, {"object": "list", "data": [
                {"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "hindsight-hooks-test"}]})
        else:
            self._error(404, "not found: %s" % path)

    def do_POST(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0].rstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if path not in ("/v1/embeddings", "/embeddings"):
            self._error(404, "not found: %s" % path)
            return
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            self._error(400, "invalid JSON body")
            return
        if not isinstance(req, dict):
            self._error(400, "body must be a JSON object")
            return
        inp = req.get("input")
        if isinstance(inp, str):
            texts = [inp]
        elif isinstance(inp, list) and all(isinstance(t, str) for t in inp):
            texts = inp
        else:
            self._error(400, "'input' must be a string or a list of strings")
            return
        dim = req.get("dimensions") or self.dim
        if not isinstance(dim, int) or dim < 1 or dim > 8192:
            self._error(400, "'dimensions' must be an integer in 1..8192")
            return
        as_b64 = req.get("encoding_format") == "base64"
        data = []
        ntok = 0
        for i, t in enumerate(texts):
            ntok += len(tokenize(t))
            v = embed(t, dim)
            data.append({"object": "embedding", "index": i, "embedding": _b64(v) if as_b64 else v})
        self._send(200, {
            "object": "list",
            "data": data,
            "model": req.get("model") or MODEL_NAME,
            "usage": {"prompt_tokens": ntok, "total_tokens": ntok},
        })


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=18889)
    ap.add_argument("--dim", type=int, default=DEFAULT_DIM)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    Handler.dim = args.dim
    ThreadingHTTPServer.request_queue_size = 128
    srv = ThreadingHTTPServer((args.host, args.port), Handler)
    srv.daemon_threads = True
    srv.verbose = args.verbose  # type: ignore[attr-defined]
    print("fake embeddings server on http://%s:%d/v1 (dim %d)" % (args.host, args.port, args.dim), flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
