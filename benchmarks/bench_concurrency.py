"""``vericite generate --concurrency N`` against an OpenAI-compatible server that takes 1 s per request.

The server (in this script, on loopback) sleeps ``--sleep`` seconds and then answers every chat request with a
fixed cited sentence; it serves any number of requests at once, as vLLM does. ``generate`` answers ``--questions``
KaLMA questions with ``openai:bench`` and the call cache off, at concurrency 1 (the plain run loop), 4 and 16
(runs/distributed.py's thread workers). Throughput is questions per second of the whole ``generate`` (method
built, run folder written); each figure is the median of ``--runs`` runs, and the ratio is against concurrency 1 in
the same invocation. Every run's samples.jsonl is checked to hold the questions in order.

    python benchmarks/bench_concurrency.py                  # 32 questions, 1 s a request, 5 runs
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def serve(sleep: float) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def _send(self, data):
            blob = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(blob)))
            self.end_headers()
            self.wfile.write(blob)

        def do_GET(self):
            self._send({"object": "list", "data": [{"id": "bench", "object": "model"}]})

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            time.sleep(sleep)
            text = "Ann was a painter [Q1, occupation: painter]."
            self._send({"model": "bench", "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 9}})

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def run(concurrency: int, questions: Path, base_url: str, out: Path) -> float:
    from vericite.runs.config import GenerateConfig
    from vericite.runs.distributed import generate_pooled
    from vericite.runs.loop import generate_run

    cfg = GenerateConfig(dataset=str(questions), model="openai:bench", base_url=base_url, cache=False)
    t0 = time.perf_counter()
    if concurrency == 1:
        generate_run(cfg, out, progress=False)
    else:
        generate_pooled(cfg, out, ray=None, workers=concurrency, progress=False, batch_size=1)
    seconds = time.perf_counter() - t0
    ids = [json.loads(line)["id"] for line in (out / "samples.jsonl").read_text().splitlines()]
    assert ids == [f"q{i:03d}" for i in range(len(ids))], "answers out of order"
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=32)
    ap.add_argument("--sleep", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--levels", default="1,4,16")
    args = ap.parse_args()
    httpd = serve(args.sleep)
    base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start; "
          f"{args.questions} questions, server sleeps {args.sleep:g} s per request, median of {args.runs} runs")
    with tempfile.TemporaryDirectory() as tmp:
        q = Path(tmp) / "q.jsonl"
        q.write_text("".join(json.dumps({"id": f"q{i:03d}", "question": f"What did Ann do ({i})?",
                                         "knowledge": [{"subject": "Q1", "subject_label": "Ann", "property": "occupation", "value": "painter"}]}) + "\n"
                             for i in range(args.questions)))
        base = None
        for level in (int(x) for x in args.levels.split(",")):
            times = [run(level, q, base_url, Path(tmp) / f"c{level}-{r}") for r in range(args.runs)]
            med = statistics.median(times)
            rate = args.questions / med
            base = base or rate
            print(f"concurrency {level:>2}: {med:6.2f} s, {rate:5.2f} questions/s, {rate / base:5.1f}x concurrency 1"
                  f"  (runs {' '.join(f'{t:.2f}' for t in times)})")
    httpd.shutdown()
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
