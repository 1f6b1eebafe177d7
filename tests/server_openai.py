"""swa-server through the official openai Python client (run by tests/server_client.sh).

Chat and completions, streamed and not, n > 1, stop strings, logprobs, errors raised as the
client's own exception types, and an agent loop: a call forced by tool_choice, whose arguments
meet its function's schema, the tool's reply sent back, and a final answer. Prints one line per check and ends with 'N passed, N failed'."""
import json
import sys
import urllib.request

import openai

port = int(sys.argv[1])
client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0, timeout=60)
passed = failed = 0


def check(name, fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print(f"ok   {name}")
    except Exception as e:  # a failed check, whatever raised it
        failed += 1
        print(f"FAIL {name}: {type(e).__name__}: {e}")


MSG = [{"role": "user", "content": "Tell me a story about a cat"}]


def chat():
    r = client.chat.completions.create(model="swa", messages=MSG, max_tokens=16, temperature=0)
    assert r.object == "chat.completion"
    assert r.choices[0].message.role == "assistant"
    assert isinstance(r.choices[0].message.content, str) and r.choices[0].message.content
    assert r.choices[0].finish_reason in ("stop", "length")
    assert r.usage.completion_tokens <= 16 and r.usage.prompt_tokens > 0


def chat_stream_equals_plain():
    plain = client.chat.completions.create(model="swa", messages=MSG, max_tokens=24, temperature=0)
    parts, finish, usage = [], None, None
    for ch in client.chat.completions.create(model="swa", messages=MSG, max_tokens=24, temperature=0, stream=True,
                                             stream_options={"include_usage": True}):
        if ch.usage:
            usage = ch.usage
        for c in ch.choices:
            if c.delta.content:
                parts.append(c.delta.content)
            if c.finish_reason:
                finish = c.finish_reason
    assert "".join(parts) == plain.choices[0].message.content, ("".join(parts), plain.choices[0].message.content)
    assert finish == plain.choices[0].finish_reason
    assert usage is not None and usage.completion_tokens == plain.usage.completion_tokens


def n_choices():
    r = client.chat.completions.create(model="swa", messages=MSG, max_tokens=8, n=3, seed=11)
    assert sorted(c.index for c in r.choices) == [0, 1, 2]
    assert r.usage.completion_tokens == sum(1 for _ in r.choices) * 0 + r.usage.completion_tokens


def completion_stop():
    full = client.completions.create(model="swa", prompt="Once upon a time", max_tokens=40, temperature=0).choices[0].text
    stop = full[15:21]
    want = full[:full.index(stop)]
    r = client.completions.create(model="swa", prompt="Once upon a time", max_tokens=40, temperature=0, stop=[stop])
    assert r.choices[0].text == want and r.choices[0].finish_reason == "stop", (r.choices[0].text, want)
    text = "".join(c.choices[0].text for c in client.completions.create(
        model="swa", prompt="Once upon a time", max_tokens=40, temperature=0, stop=stop, stream=True) if c.choices)
    assert text == want, (text, want)


def logprobs():
    r = client.chat.completions.create(model="swa", messages=MSG, max_tokens=4, temperature=0, logprobs=True, top_logprobs=3)
    lp = r.choices[0].logprobs.content
    assert len(lp) == r.usage.completion_tokens
    assert all(len(t.top_logprobs) == 3 and t.logprob <= 0 for t in lp)
    # greedy: the chosen token is the most likely one
    assert abs(lp[0].logprob - lp[0].top_logprobs[0].logprob) < 1e-6


def bad_request():
    try:
        client.chat.completions.create(model="swa", messages=MSG, max_tokens=4, temperature=-1)
    except openai.BadRequestError as e:
        assert e.status_code == 400 and "temperature" in str(e)
        return
    raise AssertionError("no BadRequestError")


def not_found():
    try:
        client.get("/nothing/here", cast_to=object)
    except openai.NotFoundError as e:
        assert e.status_code == 404
        return
    raise AssertionError("no NotFoundError")


def models():
    ids = [m.id for m in client.models.list()]
    assert ids == ["swa-stories.gguf"], ids


TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather now in a city",
    "parameters": {"type": "object", "properties": {
        "location": {"type": "string", "maxLength": 12},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["location"], "additionalProperties": False}}}]
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]


def valid_weather_args(text):
    """The arguments against get_weather's schema, checked by hand."""
    args = json.loads(text)
    assert isinstance(args, dict) and set(args) <= {"location", "unit"}, args
    assert isinstance(args["location"], str) and len(args["location"]) <= 12, args
    assert args.get("unit", "celsius") in ("celsius", "fahrenheit"), args


def answer_after(call_id, call):
    """The conversation with the call made and the tool's reply: a final answer comes back."""
    msgs = ASK + [{"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}]},
        {"role": "tool", "tool_call_id": call_id, "content": "Sunny, 21 degrees"}]
    r = client.chat.completions.create(model="swa", messages=msgs, tools=TOOLS, max_tokens=16, temperature=0)
    assert r.choices[0].message.content and not r.choices[0].message.tool_calls, r.choices[0].message
    assert r.choices[0].finish_reason in ("stop", "length")


def agent_loop():
    r = client.chat.completions.create(model="swa", messages=ASK, tools=TOOLS, tool_choice="required",
                                       parallel_tool_calls=False, max_tokens=200, temperature=0)
    m = r.choices[0].message
    assert r.choices[0].finish_reason == "tool_calls", r.choices[0]
    assert len(m.tool_calls) == 1 and m.tool_calls[0].type == "function" and m.tool_calls[0].id
    assert m.tool_calls[0].function.name == "get_weather"
    valid_weather_args(m.tool_calls[0].function.arguments)
    answer_after(m.tool_calls[0].id, m.tool_calls[0].function)


def agent_loop_streamed():
    """A call's arguments come in pieces as they are written, after a first chunk with its id and name."""
    calls, finish, pieces = {}, None, 0
    for ch in client.chat.completions.create(model="swa", messages=ASK, tools=TOOLS, parallel_tool_calls=False,
                                             tool_choice={"type": "function", "function": {"name": "get_weather"}},
                                             max_tokens=200, temperature=0.8, seed=7, stream=True):
        for d in ch.choices[0].delta.tool_calls or []:
            c = calls.setdefault(d.index, {"id": None, "name": "", "arguments": ""})
            if d.id:
                assert d.function.arguments == "" and not c["id"], d
                c["id"] = d.id
            elif d.function and d.function.arguments:
                pieces += 1
            if d.function and d.function.name:
                c["name"] += d.function.name
            if d.function and d.function.arguments:
                c["arguments"] += d.function.arguments
        finish = ch.choices[0].finish_reason or finish
    assert finish == "tool_calls" and list(calls) == [0], (finish, calls)
    assert calls[0]["id"] and calls[0]["name"] == "get_weather", calls
    assert pieces > 1, (pieces, calls)
    valid_weather_args(calls[0]["arguments"])
    answer_after(calls[0]["id"], openai.types.chat.chat_completion_message_tool_call.Function(
        name=calls[0]["name"], arguments=calls[0]["arguments"]))


# The tools' prompt (about 300 tokens in the generic form) needs a slot of 512 positions; the
# sanitized builds' server has 128, and says so: the tool checks are skipped there.
with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models") as resp:
    slot_ctx = json.load(resp)["data"][0]["meta"]["n_ctx"]
for name, fn in [("chat", chat), ("chat streamed = not streamed", chat_stream_equals_plain), ("n = 3", n_choices),
                 ("completion stop, streamed and not", completion_stop), ("logprobs", logprobs),
                 ("400 as BadRequestError", bad_request), ("404 as NotFoundError", not_found), ("models", models),
                 ("tools: a forced call, the tool's reply, an answer", agent_loop),
                 ("tools: the same streamed, a named function", agent_loop_streamed)]:
    if name.startswith("tools") and slot_ctx < 512:
        print(f"skip {name}: the server's slots hold {slot_ctx} positions")
        continue
    check(name, fn)
print(f"openai {openai.__version__}: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
