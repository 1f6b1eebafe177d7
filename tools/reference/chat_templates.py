#!/usr/bin/env python3
"""Reference renderings of real chat templates, made with Hugging Face transformers.

For every template in tests/data/jinja/templates/ and every conversation in
tests/data/jinja/conversations/, render as transformers' apply_chat_template(...,
tokenize=False) does (the same normalisation of the messages, the same Jinja environment),
with and without the generation prompt, and write the text to
tests/data/jinja/expected/TEMPLATE.CONVERSATION.gen (or .nogen); where transformers raises,
write the exception's message to the same name with .err appended. The same for the real
templates of tests/data/chat_templates.txt (those of llama.cpp's tests) and five of the
conversations, with <s> and </s>, into tests/data/jinja/chat_templates_txt.json. Also writes the engine's
unit cases (tests/data/jinja/cases.json): small templates, their variables and jinja2's output
or error. tests/test_jinja.c checks swa.h against these files.

    pip install transformers jinja2
    python3 tools/reference/chat_templates.py

Where the templates' text comes from: llama.cpp's models/templates/ (most), the models'
tokenizer_config.json or chat_template.jinja as public code quotes them (Gemma 3, Phi-4-mini,
OLMo 2, Olmo 3.1, EXAONE 4), transformers' own processing_llama4.py (Llama 4).
"""
import datetime
import json
import os
import sys

import jinja2
import transformers.utils.chat_template_utils as ctu
from transformers.utils.chat_template_utils import _compile_jinja_template, _normalize_chat_messages, render_jinja_template

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data", "jinja")

WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather in a city.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "The city's name"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}

CONVERSATIONS = {
    "plain": {"messages": [{"role": "user", "content": "Hello!"}]},
    "system": {"messages": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What is 2+2?"},
        {"role": "assistant", "content": "4"},
        {"role": "user", "content": "And 3+3?"}]},
    "multiturn": {"messages": [
        {"role": "user", "content": "Hi there"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "  Tell me a joke.  "},
        {"role": "assistant", "content": "Why did the chicken cross the road?"},
        {"role": "user", "content": "Why?"}]},
    "tools": {"tools": [WEATHER_TOOL], "messages": [
        {"role": "system", "content": "You can call tools."},
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "{\"temperature\": 21}"},
        {"role": "assistant", "content": "It is 21 degrees in Paris."},
        {"role": "user", "content": "Thanks!"}]},
    "reasoning": {"kwargs": {"enable_thinking": True}, "messages": [
        {"role": "user", "content": "What is 6*7?"},
        {"role": "assistant", "reasoning_content": "6 times 7 is 42.", "content": "42"},
        {"role": "user", "content": "And 6*8?"}]},
    "unicode": {"messages": [
        {"role": "user", "content": "H\u00e9llo \U0001F44B \u2014 \u65e5\u672c\u8a9e?"},
        {"role": "assistant", "content": "Bonjour ! \U0001F1EB\U0001F1F7 \u00ab caf\u00e9 \u00bb"},
        {"role": "user", "content": "Merci \u2713"}]},
    "parts": {"messages": [
        {"role": "user", "content": [{"type": "text", "text": "Part one."}, {"type": "text", "text": " Part two."}]}]},
    "nullcontent": {"tools": [WEATHER_TOOL], "messages": [
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_2", "type": "function", "function": {
            "name": "get_weather", "arguments": {"city": "Oslo"}}}]},
        {"role": "tool", "tool_call_id": "call_2", "name": "get_weather", "content": "cold"}]},
}
NOGEN = ("plain", "system")   # the conversations also rendered without the generation prompt
KWARGS = {"date_string": "26 Jul 2024"}   # every template that prints a date gets this one
CLOCK = 1721995200   # and strftime_now says 2024-07-26 12:00 UTC (the test fixes swa.h's clock to it)


class FixedClock(datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        return datetime.datetime.fromtimestamp(CLOCK, tz)


ctu.datetime = FixedClock   # what transformers' strftime_now reads

# The tokens each template's tokenizer has; others get <s> and </s>.
TOKENS = [("Llama-3", "<|begin_of_text|>", "<|eot_id|>"), ("Hermes", "<|begin_of_text|>", "<|im_end|>"),
          ("firefunction", "<|begin_of_text|>", "<|eot_id|>"), ("functionary", "<|begin_of_text|>", "<|eot_id|>"),
          ("Qwen", None, "<|im_end|>"), ("gemma", "<bos>", "<eos>"), ("Phi-3", "<s>", "<|endoftext|>"),
          ("deepseek", "<\uff5cbegin\u2581of\u2581sentence\uff5c>", "<\uff5cend\u2581of\u2581sentence\uff5c>"),
          ("DeepSeek", "<\uff5cbegin\u2581of\u2581sentence\uff5c>", "<\uff5cend\u2581of\u2581sentence\uff5c>"),
          ("command-r", "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"), ("gpt-oss", "<|startoftext|>", "<|return|>"),
          ("granite", "<|end_of_text|>", "<|end_of_text|>"), ("Kimi", "[BOS]", "[EOS]"),
          ("Phi-4", "<|endoftext|>", "<|endoftext|>"), ("OLMo-2", "<|endoftext|>", "<|endoftext|>"),
          ("Olmo-3", "<|endoftext|>", "<|endoftext|>"), ("Llama-4", "<|begin_of_text|>", "<|eot|>"),
          ("EXAONE", "[BOS]", "[|endofturn|]")]


def tokens_for(name):
    for key, bos, eos in TOKENS:
        if key in name:
            return bos, eos
    return "<s>", "</s>"


def render(template, conv, bos, eos, gen):
    """apply_chat_template(conversation, tools=..., add_generation_prompt=gen, tokenize=False, **kwargs)"""
    special = {k: v for k, v in (("bos_token", bos), ("eos_token", eos)) if v is not None}
    kwargs = {**special, **KWARGS, **conv.get("kwargs", {})}
    messages = _normalize_chat_messages(conv["messages"])
    rendered, _ = render_jinja_template(conversations=[messages], tools=conv.get("tools"), chat_template=template,
                                        add_generation_prompt=gen, **kwargs)
    return rendered[0]


def cases():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from jinja_cases import CASES
    out = []
    for template, variables in CASES:
        try:
            out.append({"template": template, "vars": json.dumps(variables), "output": _compile_jinja_template(template).render(**variables)})
        except jinja2.TemplateSyntaxError as e:   # the engine must refuse it (in its own words)
            out.append({"template": template, "vars": json.dumps(variables), "syntax_error": str(e)})
        except Exception as e:  # the engine must fail with this message
            out.append({"template": template, "vars": json.dumps(variables), "error": str(e)})
    return out


def chat_templates_txt():
    """The entries of tests/data/chat_templates.txt that are real templates, rendered"""
    import re
    with open(os.path.join(ROOT, "..", "chat_templates.txt"), encoding="utf-8", newline="") as f:
        text = f.read()
    out = []
    for index, entry in enumerate(re.split(r"^#### ", text, flags=re.M)[1:]):
        head, _, body = entry.partition("\n")
        if "markers of" in head:
            continue
        body = body[:-1] if body.endswith("\n") else body
        for cname in ("plain", "system", "multiturn", "tools", "unicode"):
            try:
                out.append({"entry": head, "index": index, "conversation": cname,
                            "output": render(body, CONVERSATIONS[cname], "<s>", "</s>", True)})
            except Exception as e:
                out.append({"entry": head, "index": index, "conversation": cname, "error": str(e)})
    return out


def main():
    os.makedirs(os.path.join(ROOT, "conversations"), exist_ok=True)
    os.makedirs(os.path.join(ROOT, "expected"), exist_ok=True)
    for name, conv in CONVERSATIONS.items():   # NAME.messages.json, NAME.kwargs.json and NAME.tools.json when it has tools
        parts = {"messages": conv["messages"], "kwargs": {**KWARGS, **conv.get("kwargs", {})}, "tools": conv.get("tools")}
        for part, value in parts.items():
            if value is not None:
                with open(os.path.join(ROOT, "conversations", f"{name}.{part}.json"), "w") as f:
                    json.dump(value, f, ensure_ascii=False, indent=1)
    tokens = {}
    for tname in sorted(os.listdir(os.path.join(ROOT, "templates"))):
        with open(os.path.join(ROOT, "templates", tname), newline="") as f:
            template = f.read()
        stem = tname[:-len(".jinja")]
        bos, eos = tokens_for(stem)
        tokens[stem] = {"bos_token": bos, "eos_token": eos}
        for cname, conv in CONVERSATIONS.items():
            for gen in (True, False) if cname in NOGEN else (True,):
                path = os.path.join(ROOT, "expected", f"{stem}.{cname}.{'gen' if gen else 'nogen'}")
                try:
                    text, suffix = render(template, conv, bos, eos, gen), ""
                except Exception as e:
                    text, suffix = str(e), ".err"
                with open(path + suffix, "w", newline="") as f:
                    f.write(text)
    with open(os.path.join(ROOT, "tokens.json"), "w") as f:
        json.dump(tokens, f, ensure_ascii=False, indent=1)
    with open(os.path.join(ROOT, "expected", "INDEX"), "w") as f:   # what the test reads
        f.write("".join(name + "\n" for name in sorted(os.listdir(os.path.join(ROOT, "expected"))) if name != "INDEX"))
    with open(os.path.join(ROOT, "chat_templates_txt.json"), "w") as f:
        json.dump(chat_templates_txt(), f, ensure_ascii=False, indent=0)
    with open(os.path.join(ROOT, "cases.json"), "w") as f:
        json.dump(cases(), f, ensure_ascii=False, indent=0)


if __name__ == "__main__":
    main()
