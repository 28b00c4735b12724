#!/usr/bin/env python3
"""Drives docdex's OpenAI-compatible API with the official `openai` Python client.

Usage: openai_client.py BASE_URL REPO [--dead BASE_URL_OF_A_DOCDEX_WITHOUT_LLM]
Exits non-zero (with the failed assertion) when docdex's answers do not hold.
"""
import argparse
import os
import sys
import tempfile

import openai


def check(cond, what):
    if not cond:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)
    print(f"ok: {what}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base_url")
    ap.add_argument("repo")
    ap.add_argument("--dead")
    ap.add_argument("--token", default="unused", help="the daemon's bearer token (sent as the API key)")
    ap.add_argument("--dead-token", default="unused")
    args = ap.parse_args()
    # OpenAI clients send the API key as `Authorization: Bearer <key>`: docdex's token.
    client = openai.OpenAI(base_url=f"{args.base_url}/v1", api_key=args.token, max_retries=0, timeout=120)

    models = client.models.list()
    ids = [m.id for m in models.data]
    check(len(ids) >= 1 and all(isinstance(i, str) and i for i in ids), f"/v1/models parses: {ids}")

    question = [{"role": "user", "content": "How does WorkerPool run a job without stalling the caller?"}]
    ext = {"docdex": {"repo_path": args.repo, "debug": True}}
    resp = client.chat.completions.create(model="docdex", messages=question, max_tokens=24, extra_body=ext)
    answer = resp.choices[0].message.content
    check(isinstance(answer, str) and answer.strip(), f"non-streaming answer: {answer[:60]!r}")
    check(resp.choices[0].finish_reason in ("stop", "length"), f"finish_reason {resp.choices[0].finish_reason}")
    check(resp.usage.completion_tokens > 0 and resp.usage.prompt_tokens > 0, f"usage {resp.usage}")
    dx = resp.model_extra["docdex"]
    labels = [s["label"] for s in dx["sources"]]
    check(any(s.get("path") == "src/pool.rs" for s in dx["sources"]), f"sources name the repo file: {labels}")
    check(any(s["kind"] == "memory" for s in dx["sources"]), "sources include the memory note")
    system = dx["prompt"][0]["content"]
    check("run_detached" in system, "the prompt holds the repo snippet")
    check("never block the async runtime" in system, "the prompt holds the memory note")
    check(system.index("never block") < system.index("run_detached"), "memory comes before repo code in the prompt")
    check(dx["session_id"] and resp.id.endswith(dx["session_id"]), f"session id {dx['session_id']}")

    stream = client.chat.completions.create(
        model="docdex",
        messages=question,
        max_tokens=24,
        stream=True,
        stream_options={"include_usage": True},
        extra_body={"docdex": {"repo_path": args.repo}},
    )
    pieces, finish, usage, ext_seen = [], None, None, None
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            if choice.delta.content:
                pieces.append(choice.delta.content)
            if choice.finish_reason:
                finish = choice.finish_reason
                ext_seen = (chunk.model_extra or {}).get("docdex")
    check(len(pieces) >= 2, f"streamed {len(pieces)} pieces: {''.join(pieces)[:60]!r}")
    check(finish in ("stop", "length"), f"stream finish_reason {finish}")
    check(usage is not None and usage.completion_tokens > 0, f"stream usage {usage}")
    check(ext_seen and ext_seen["sources"], "the final chunk carries the sources")

    try:
        client.chat.completions.create(model="docdex", messages=[], extra_body=ext)
        check(False, "empty messages are refused")
    except openai.BadRequestError as err:
        check(err.status_code == 400 and "messages" in str(err), f"empty messages: {err}")
    try:
        client.chat.completions.create(
            model="docdex", messages=question, extra_body={"docdex": {"repo_path": os.path.join(tempfile.gettempdir(), "docdex-no-such-repo")}}
        )
        check(False, "an unknown repo is refused")
    except openai.NotFoundError as err:
        body = err.body if isinstance(err.body, dict) else {}
        check(body.get("error", body).get("code") == "repo_not_found", f"unknown repo: {err}")

    if args.dead:
        dead = openai.OpenAI(base_url=f"{args.dead}/v1", api_key=args.dead_token, max_retries=0, timeout=60)
        try:
            dead.chat.completions.create(model="docdex", messages=question, extra_body=ext)
            check(False, "an unreachable LLM is an error")
        except openai.APIStatusError as err:
            body = err.body if isinstance(err.body, dict) else {}
            body = body.get("error", body)
            check(err.status_code == 503, f"unreachable LLM: status {err.status_code}")
            check(body.get("code") == "llm_unavailable" and "cannot reach" in body.get("message", ""), f"unreachable LLM: {body}")
        try:
            dead.models.list()
            check(False, "models of an unreachable LLM is an error")
        except openai.APIStatusError as err:
            check(err.status_code == 503, "models with the LLM down: 503")


if __name__ == "__main__":
    main()
