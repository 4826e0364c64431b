"""An OpenAI-compatible ``/v1/completions`` server on loopback that scores prompts with
transformers, for the tests of log-likelihoods through an endpoint.

It answers as vLLM documents its completions (``vllm/entrypoints/openai``): ``prompt`` is a
text, a list of texts, a list of token ids or a list of such lists (one choice per prompt,
``index`` in order); a text is encoded with the tokenizer's special tokens (vLLM's
``add_special_tokens=True``). With ``echo`` the choice's ``logprobs`` cover the prompt's
tokens and then the generated ones (``max_tokens``, greedy): ``tokens`` (each token's text,
decoded incrementally: ``""`` for a token that ends inside a character, the character with
the token that completes it), ``token_logprobs`` (``null`` for the first token), ``top_logprobs``
(``null`` first, then the ``logprobs`` most likely tokens and the token itself) and
``text_offset`` (where each token's text starts in the echoed text). ``GET /v1/models`` lists
``model`` with ``max_model_len`` (None: without it), and a prompt that does not fit it with the
tokens asked for is refused (400) as vLLM refuses it.

``decode="alone"`` decodes each token by itself instead (a token ending inside a character
shows ``\ufffd``), as servers that detokenize token by token do.

``echo=False`` answers a request with ``echo`` 400 (a server without prompt log-probabilities);
``echo="ignored"`` answers 200 with the generated token's log-probability only, as llama.cpp's
own server does. ``calls`` keeps each completions request's body; ``faults`` is consumed one
per request (``"500"``). ``spoil = (position, value)`` makes every echoed prompt's log-probability
at that token ``value`` (NaN, infinite, positive, None), as a broken server might send it
(Python's JSON writes ``NaN`` and ``Infinity``); ``(position, value, first)``: only in the
choices from index ``first`` of a request on; None again mends it.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        owner = self.server.owner
        card = {
            "id": owner.model,
            "object": "model",
            "created": 0,
            "owned_by": "test",
            **({"max_model_len": owner.max_model_len} if owner.max_model_len else {}),
        }
        if self.path.rstrip("/") == "/v1/models":
            return self._send(200, {"object": "list", "data": [card]})
        if self.path.rstrip("/") == f"/v1/models/{owner.model}":
            return self._send(200, card)
        self._send(404, {"error": {"message": "Not Found"}})

    def do_POST(self):
        owner = self.server.owner
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        with owner.lock:
            owner.calls.append(body)
            fault = owner.faults.pop(0) if owner.faults else None
        if self.path.rstrip("/") != "/v1/completions":
            return self._send(404, {"error": {"message": "Not Found"}})
        if body.get("model") != owner.model:
            return self._send(404, {"error": {"message": f"The model `{body.get('model')}` does not exist."}})
        if fault == "500":
            return self._send(500, {"error": {"message": "internal", "type": "server_error"}})
        if body.get("echo") and owner.echo is False:
            return self._send(
                400,
                {
                    "error": {
                        "message": "echo is not supported",
                        "type": "invalid_request_error",
                        "param": "echo",
                        "code": None,
                    }
                },
            )
        prompts = body["prompt"]
        if isinstance(prompts, str) or (prompts and isinstance(prompts[0], int)):
            prompts = [prompts]
        too_long = owner.too_long(prompts, body.get("max_tokens", 16))
        if too_long:
            return self._send(400, {"error": {"message": too_long, "type": "BadRequestError", "code": 400}})
        choices = [owner.complete(p, body, i) for i, p in enumerate(prompts)]
        self._send(
            200,
            {
                "id": f"cmpl-{len(owner.calls)}",
                "object": "text_completion",
                "created": 0,
                "model": owner.model,
                "choices": choices,
                "usage": {
                    "prompt_tokens": sum(c.pop("_prompt_tokens") for c in choices),
                    "completion_tokens": len(choices) * body.get("max_tokens", 16),
                    "total_tokens": 0,
                },
            },
        )

    def _send(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class CompletionsServer:
    """A loopback server of the transformers model in ``path``, named ``model`` (see the module
    docstring); ``with CompletionsServer(path) as server: server.url``. ``handler``: the request
    handler class (a subclass of ``_Handler`` alters the answers)."""

    handler: type | None = None  # None: _Handler

    def __init__(
        self, path, model: str = "served", *, echo=True, max_model_len: int = 4096, decode: str = "incremental"
    ):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.lm = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
        self.model, self.echo, self.max_model_len, self.decode = model, echo, max_model_len, decode
        self.calls, self.faults, self.spoil = [], [], None
        self.lock = threading.Lock()

    def _texts(self, ids: list[int]) -> list[str]:
        """Each token's text, decoded incrementally as vLLM does (a token ending inside a
        character has ``""``; the token completing it carries the character)."""
        if self.decode == "alone":
            return [self.tokenizer.decode([i], clean_up_tokenization_spaces=False) for i in ids]
        out, shown = [], ""
        for i in range(len(ids)):
            text = self.tokenizer.decode(ids[: i + 1], skip_special_tokens=False, clean_up_tokenization_spaces=False)
            if text.endswith("\ufffd") or len(text) < len(shown):
                out.append("")
                continue
            out.append(text[len(shown) :])
            shown = text
        return out

    def too_long(self, prompts: list, max_tokens: int) -> str | None:
        """vLLM's refusal of a prompt that does not fit ``max_model_len`` with the tokens asked
        for (None: each fits; a server without ``max_model_len`` takes any)."""
        for prompt in prompts:
            n = len(prompt) if isinstance(prompt, list) else len(self.tokenizer(prompt)["input_ids"])
            if self.max_model_len and n + max_tokens > self.max_model_len:
                return (
                    f"This model's maximum context length is {self.max_model_len} tokens. However, you "
                    f"requested {n + max_tokens} tokens ({n} in the messages, {max_tokens} in the completion). "
                    "Please reduce the length of the messages or completion."
                )
        return None

    def complete(self, prompt, body: dict, index: int) -> dict:
        """One choice: the prompt scored (``echo``) and ``max_tokens`` greedy tokens after it."""
        torch = self.torch
        ids = list(prompt) if isinstance(prompt, list) else self.tokenizer(prompt)["input_ids"]
        n, wanted = len(ids), body.get("max_tokens", 16)
        top_n = body.get("logprobs") or 0
        for _ in range(wanted):  # greedy generation, one token at a time
            with torch.inference_mode():
                last = self.lm(torch.tensor([ids])).logits[0, -1]
            ids = ids + [int(last.argmax())]
        with torch.inference_mode():
            logp = self.lm(torch.tensor([ids])).logits[0].float().log_softmax(-1)
        texts = self._texts(ids)
        lps, tops = [None], [None]
        for i in range(1, len(ids)):
            row = logp[i - 1]
            best = row.topk(max(1, top_n))
            top = {texts[i]: float(row[ids[i]])}
            for value, token in zip(best.values.tolist(), best.indices.tolist()):
                top.setdefault(self.tokenizer.decode([token]), value)
            lps.append(float(row[ids[i]]))
            tops.append(top)
        if self.spoil is not None and self.spoil[0] < n and index >= (self.spoil[2:] or (0,))[0]:
            lps[self.spoil[0]] = self.spoil[1]
        first = 0 if body.get("echo") else n
        if body.get("echo") and self.echo == "ignored":
            first = n
        offsets, at = [], 0
        for text in texts:
            offsets.append(at)
            at += len(text)
        echoed = (
            "".join(texts[first:]) if isinstance(prompt, list) or not body.get("echo") else prompt + "".join(texts[n:])
        )
        choice = {"index": index, "text": echoed, "finish_reason": "length", "_prompt_tokens": n}
        if body.get("logprobs") is not None:
            choice["logprobs"] = {
                "tokens": texts[first:],
                "token_logprobs": lps[first:],
                "top_logprobs": tops[first:],
                "text_offset": offsets[first:],
            }
        return choice

    def __enter__(self):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler or _Handler)
        self.server.daemon_threads = True
        self.server.owner = self
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
