"""API throughput: requests/s and latency of the draft endpoint against ``/healthz``.

Fills a store (by default 150,000 changes and 5,000 releases over 30 projects and 5 years,
generated as bench/draft_latency.py does), starts the service's app under uvicorn in a
child process on 127.0.0.1, and drives it from this process with a bounded load loop
(threads, one httpx client each, for a fixed time): first ``/healthz``, then
``/v1/digests/draft`` over 20 random 7-day windows of the store, once each beforehand so
that the load meets the draft cache as editors do (the first request of each window is
timed apart, sequentially). Prints requests/s, p50 and p99 of both and their ratio.

Run from the repository root: ``python -m bench.api_throughput [--database both]``.
"""

from __future__ import annotations

import argparse
import random
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlencode

import httpx
from sqlalchemy import Engine

from bench.draft_latency import Shape, generate, random_weeks, window_params
from bench.stores import add_database_option, percentile, selected, server_version, store


def serve(database_url: str, port: int) -> None:
    """Child process: the app on 127.0.0.1:port (no poller, no delivery worker)."""
    import uvicorn

    from service.app import create_app
    from service.config import Settings
    from service.database import make_engine, make_session_factory

    settings = Settings(database_url=database_url, _env_file=None)  # type: ignore[call-arg]
    app = create_app(make_session_factory(make_engine(database_url)), settings=settings)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_up(base: str, child: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if child.poll() is not None:
            raise SystemExit("the server process exited")
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit("the server did not come up")


@dataclass
class Load:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    seconds: float = 0.0

    def summary(self) -> tuple[float, float, float]:
        rate = len(self.latencies) / self.seconds if self.seconds else 0.0
        return rate, percentile(self.latencies, 0.5), percentile(self.latencies, 0.99)


def drive(base: str, paths: list[str], threads: int, seconds: float, max_requests: int) -> Load:
    """``threads`` clients loop over ``paths`` for ``seconds`` (or ``max_requests`` in all)."""
    load = Load()
    lock = threading.Lock()
    deadline = time.monotonic() + seconds
    budget = [max_requests]

    def client_loop(seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(base_url=base, timeout=60) as client:
            while time.monotonic() < deadline:
                with lock:
                    if budget[0] <= 0:
                        return
                    budget[0] -= 1
                started = time.perf_counter()
                try:
                    ok = client.get(rng.choice(paths)).status_code == 200
                except httpx.HTTPError:
                    ok = False
                elapsed = (time.perf_counter() - started) * 1000
                with lock:
                    if ok:
                        load.latencies.append(elapsed)
                    else:
                        load.errors += 1

    started = time.monotonic()
    workers = [threading.Thread(target=client_loop, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    load.seconds = time.monotonic() - started
    return load


def run(kind: str, engine: Engine, shape: Shape, args: argparse.Namespace) -> None:
    print(f"\n=== {kind}: {server_version(engine)} ===")
    generated = generate(engine, shape)
    print(
        f"store: {generated.changes:,} changes, {generated.releases:,} releases over "
        f"{shape.projects} projects and {shape.years} years "
        f"(generated in {generated.seconds:.0f} s)"
    )
    weeks = random_weeks(engine, 20, random.Random(11))
    drafts = [f"/v1/digests/draft?{urlencode(window_params(w))}" for w in weeks]
    port = free_port()
    url = engine.url.render_as_string(hide_password=False)
    child = subprocess.Popen(
        [sys.executable, "-m", "bench.api_throughput", "--serve", url, "--port", str(port)]
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(base, child)
        first = Load()
        with httpx.Client(base_url=base, timeout=60) as client:
            started = time.monotonic()
            for path in drafts:  # fills the draft cache, one window after the other
                begun = time.perf_counter()
                client.get(path).raise_for_status()
                first.latencies.append((time.perf_counter() - begun) * 1000)
            first.seconds = time.monotonic() - started
        health = drive(base, ["/healthz"], args.threads, args.seconds, args.max_requests)
        draft = drive(base, drafts, args.threads, args.seconds, args.max_requests)
        items = httpx.get(f"{base}{drafts[0]}", timeout=60).json()["counts"]
    finally:
        child.terminate()
        child.wait(timeout=30)
    h_rate, h_p50, h_p99 = health.summary()
    d_rate, d_p50, d_p99 = draft.summary()
    f_rate, f_p50, f_p99 = first.summary()
    print(
        f"{args.threads} client threads, {args.seconds:g} s per endpoint, one uvicorn worker; "
        f"a draft holds ~{items['changes'] + items['noise_hidden']} changes"
    )
    print(
        f"  first request of each window (sequential, nothing cached): {f_rate:6.1f} req/s  "
        f"p50 {f_p50:8.1f} ms  p99 {f_p99:8.1f} ms"
    )
    print(
        f"  /healthz          {h_rate:8.1f} req/s  p50 {h_p50:8.1f} ms  p99 {h_p99:8.1f} ms"
        f"  errors {health.errors}"
    )
    print(
        f"  draft (cached)    {d_rate:8.1f} req/s  p50 {d_p50:8.1f} ms  p99 {d_p99:8.1f} ms"
        f"  errors {draft.errors}"
    )
    print(
        f"  ratio draft / healthz: throughput {d_rate / max(h_rate, 1e-9):.4f}, "
        f"p99 {d_p99 / max(h_p99, 1e-9):.1f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_database_option(parser)
    parser.add_argument("--changes", type=int, default=150_000)
    parser.add_argument("--releases", type=int, default=5_000)
    parser.add_argument("--projects", type=int, default=30)
    parser.add_argument("--years", type=int, default=5)
    parser.add_argument("--threads", type=int, default=8, help="concurrent client threads")
    parser.add_argument("--seconds", type=float, default=15.0, help="load time per endpoint")
    parser.add_argument("--max-requests", type=int, default=100_000, help="cap per endpoint")
    parser.add_argument("--serve", metavar="DATABASE_URL", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port)
        return
    shape = Shape(args.projects, args.changes, args.releases, args.years, seed=5)
    for kind in selected(args.database):
        with store(kind) as engine:
            run(kind, engine, shape, args)


if __name__ == "__main__":
    main()
