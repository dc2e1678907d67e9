#!/usr/bin/env python3
"""A stock OpenAI client library against `inferscope-cli serve` (docs/SERVER.md, by hand: the
openai package is not in Debian, so this is not in the default suite).

    inferscope-cli serve --model stories260K.gguf --port 8080 --api-key secret --semantic-cache &
    PYTHONPATH=<openai-python>/src python3 tests/manual/openai_client_check.py http://127.0.0.1:8080/v1 secret

Chats whole and streamed, completes text, embeds, lists the model, and checks that a wrong key
and an unknown model raise the client's own exception types. Exits non-zero on any failure.
"""
import sys

import openai


def main(base_url: str, key: str) -> int:
    client = openai.OpenAI(base_url=base_url, api_key=key)
    model = client.models.list().data[0].id
    print("model:", model)

    chat = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Tell me a story about a cat."}],
        max_tokens=24, temperature=0)
    whole = chat.choices[0].message.content
    print("chat:", repr(whole), chat.choices[0].finish_reason, chat.usage)
    assert whole and chat.usage.completion_tokens > 0

    stream = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Tell me a story about a dog."}],
        max_tokens=24, temperature=0, stream=True)
    pieces = [c.choices[0].delta.content or "" for c in stream if c.choices]
    print("chat streamed:", len(pieces), "chunks:", repr("".join(pieces)))
    assert "".join(pieces)

    text = client.completions.create(model=model, prompt="Once upon a time", max_tokens=16, temperature=0,
                                     logprobs=2)
    print("completion:", repr(text.choices[0].text), "logprobs:", text.choices[0].logprobs.top_logprobs[0])
    assert text.choices[0].text

    emb = client.embeddings.create(model=model, input=["a cat", "a dog"])
    print("embeddings:", len(emb.data), "x", len(emb.data[0].embedding))
    assert len(emb.data) == 2 and len(emb.data[0].embedding) > 0

    again = client.chat.completions.with_raw_response.create(
        model=model, messages=[{"role": "user", "content": "Tell me a story about a cat."}],
        max_tokens=24, temperature=0)
    print("asked again: X-Inferscope-Cache:", again.headers.get("x-inferscope-cache"))
    assert again.parse().choices[0].message.content == whole

    try:
        openai.OpenAI(base_url=base_url, api_key="wrong").models.list()
        raise AssertionError("a wrong key was accepted")
    except openai.AuthenticationError as e:
        print("wrong key:", e.status_code, e.body)
    try:
        client.chat.completions.create(model="gpt-4", messages=[{"role": "user", "content": "hi"}])
        raise AssertionError("an unknown model was accepted")
    except openai.NotFoundError as e:
        print("unknown model:", e.status_code, e.body)
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
