"""swa-server through the official ollama Python client (run by tests/server_client.sh).

Chat and generate, streamed and not, options, embeddings, the model list, show and ps, errors
raised as the client's ResponseError, and a tool call (the stories model has no Jinja template:
its calls are the generic JSON form, which a format schema makes it write). Prints one line per check and ends with
'N passed, N failed'."""
import json
import math
import sys
import urllib.request

import ollama
from server_check import check, finish

port = int(sys.argv[1])
client = ollama.Client(host=f"http://127.0.0.1:{port}", timeout=60)
MSG = [{"role": "user", "content": "Tell me a story about a cat"}]
GREEDY = {"num_predict": 16, "temperature": 0}


def chat():
    r = client.chat(model="swa", messages=MSG, options=GREEDY)
    assert r.message.role == "assistant" and r.message.content, r
    assert r.done and r.done_reason in ("stop", "length"), r
    assert 0 < r.eval_count <= 16 and r.prompt_eval_count > 0, r


def chat_stream_equals_plain():
    plain = client.chat(model="swa", messages=MSG, options=GREEDY)
    parts, last = [], None
    for part in client.chat(model="swa", messages=MSG, options=GREEDY, stream=True):
        parts.append(part.message.content)
        last = part
    assert "".join(parts) == plain.message.content, ("".join(parts), plain.message.content)
    assert last.done and last.done_reason == plain.done_reason and last.eval_count == plain.eval_count


def generate_options():
    a = client.generate(model="swa", prompt="Once upon a time", options={"num_predict": 8, "temperature": 0})
    b = client.generate(model="swa", prompt="Once upon a time", options={"num_predict": 4, "temperature": 0})
    assert a.done and a.response and a.eval_count == 8, a
    assert b.eval_count == 4 and a.response.startswith(b.response), (a.response, b.response)
    s1 = client.generate(model="swa", prompt="Once", options={"num_predict": 12, "temperature": 1, "seed": 7})
    s2 = client.generate(model="swa", prompt="Once", options={"num_predict": 12, "temperature": 1, "seed": 7})
    assert s1.response == s2.response, (s1.response, s2.response)


def embed():
    r = client.embed(model="swa", input=["a cat", "a dog"])
    assert len(r.embeddings) == 2 and len(r.embeddings[0]) > 0
    for v in r.embeddings:
        assert abs(math.sqrt(sum(x * x for x in v)) - 1) < 1e-4
    assert r.embeddings[0] != r.embeddings[1]


def listing():
    tags = client.list()
    assert [m.model for m in tags.models] == ["swa-stories.gguf"], tags
    d = tags.models[0].details
    assert d.format == "gguf" and d.family == "llama" and d.quantization_level, d
    assert tags.models[0].size > 0
    show = client.show("swa")
    assert show.modelinfo["general.context_length"] > 0, show
    assert [m.model for m in client.ps().models] == ["swa-stories.gguf"]


def errors():
    try:
        client.chat(model="swa", messages=MSG, options={"num_ctx": 10 ** 7})
    except ollama.ResponseError as e:
        assert e.status_code == 400 and "num_ctx" in e.error, e
    else:
        raise AssertionError("no ResponseError for num_ctx")
    try:
        client.chat(model="swa", messages=MSG, options={"no_such_option": 1})
    except ollama.ResponseError as e:
        assert e.status_code == 400 and "no_such_option" in e.error, e
    else:
        raise AssertionError("no ResponseError for an unknown option")


PING = {"type": "function", "function": {"name": "ping", "description": "Ping a host.",
        "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}}
CALL = {"type": "object", "required": ["tool_call"], "additionalProperties": False, "properties": {"tool_call": {
    "type": "object", "required": ["name", "arguments"], "additionalProperties": False, "properties": {
        "name": {"const": "ping"},
        "arguments": {"type": "object", "properties": {"x": {"const": 1}}, "required": ["x"], "additionalProperties": False}}}}}
CALL_OPTIONS = {"temperature": 0, "num_predict": 200}


def ping(x: int) -> str:
    """Ping a host.

    Args:
      x: how many times
    """
    return "pong"


def tool_call():
    r = client.chat(model="swa", messages=[{"role": "user", "content": "ping"}], tools=[PING], format=CALL,
                    options=CALL_OPTIONS)
    calls = r.message.tool_calls
    assert calls and len(calls) == 1 and calls[0].function.name == "ping", r
    assert calls[0].function.arguments == {"x": 1} and r.message.content == "" and r.done_reason == "stop", r
    # the call goes back in the conversation with the tool's answer
    msgs = [{"role": "user", "content": "ping"}, r.message, {"role": "tool", "content": "pong", "tool_name": "ping"}]
    r2 = client.chat(model="swa", messages=msgs, tools=[PING], options={"num_predict": 2})
    assert r2.done and r2.prompt_eval_count > r.prompt_eval_count, r2
    # a Python function as the tool, streamed: the call comes whole in one chunk, then the end
    parts = list(client.chat(model="swa", messages=[{"role": "user", "content": "ping"}], tools=[ping], format=CALL,
                             options=CALL_OPTIONS, stream=True))
    with_calls = [p for p in parts if p.message.tool_calls]
    assert len(with_calls) == 1 and with_calls[0].message.tool_calls[0].function.arguments == {"x": 1}, parts
    assert parts[-1].done and not parts[-1].message.tool_calls, parts[-1]


checks = [("chat", chat), ("chat streamed = not streamed", chat_stream_equals_plain),
          ("generate with options", generate_options), ("embed", embed), ("list, show, ps", listing),
          ("400 as ResponseError", errors)]
# the generic tool text and the call take about 300 positions: the quick builds' slots hold 128
with urllib.request.urlopen(f"http://127.0.0.1:{port}/slots", timeout=60) as resp:
    n_ctx = json.load(resp)[0]["n_ctx"]
if n_ctx >= 384:
    checks.append(("a tool call, and its answer", tool_call))
else:
    print(f"skip a tool call, and its answer: the server's slots hold {n_ctx} positions, the check needs 384")
for name, fn in checks:
    check(name, fn)
finish(f"ollama {getattr(ollama, '__version__', '?')}")
