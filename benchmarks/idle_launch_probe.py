"""Where the first graph launch after an idle GPU spends its host time (issue 13's one unmet row:
the first replay after a synchronize costs 5-90 µs of host time where later ones cost 3-6 µs).

One tiny graph (one small kernel) is launched bare (``cudaGraphLaunch``), and Winograd L2's graph at
n = 8192 replayed (through the product's call, and as a bare launch), after each of these waits: the host µs of that first call and of the four after it,
the median over ``--repeat`` rounds:

- ``sync``: a 150 ms GPU product, then ``cudaDeviceSynchronize`` (the crossover table's reading);
- ``poll``: the same product, then a Python loop on ``cudaStreamQuery`` until it is done (the host
  thread never sleeps);
- ``sleep``: the GPU already idle, then ``time.sleep`` for as long (the CPU sleeps, the GPU does not
  work);
- ``spin``: the GPU already idle, then a Python busy loop for as long (neither sleeps nor works);
- ``query``: ``sync``, then one ``cudaStreamQuery`` before the timed launch.

Each context scheduling flag runs in a process of its own, set on the primary context before CuPy
creates it (``--flag auto|spin|yield|blocking``; ``--all`` runs the four in turn).

    python3 benchmarks/idle_launch_probe.py --all
"""
import argparse
import ctypes
import subprocess
import sys
import time
from statistics import median

FLAGS = {"auto": 0, "spin": 1, "yield": 2, "blocking": 4}  # CU_CTX_SCHED_*


def set_schedule(flag: str) -> None:
    driver = ctypes.CDLL("libcuda.so.1")
    assert driver.cuInit(0) == 0
    assert driver.cuDevicePrimaryCtxSetFlags(0, FLAGS[flag]) == 0


def probe(flag: str, repeat: int, wait_s: float, product: bool) -> None:
    set_schedule(flag)
    import cupy

    n = 16384 if wait_s >= 0.1 else 8192
    rng = cupy.random.default_rng(0)
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    stream = cupy.cuda.Stream(non_blocking=True)
    small = cupy.ones(1024)
    with stream:
        stream.begin_capture()
        small *= 1.0
        graph = stream.end_capture()

    def work() -> None:
        with stream:
            cupy.matmul(A, B)

    def sync() -> None:
        work()
        cupy.cuda.Device().synchronize()

    def poll() -> None:
        work()
        while not stream.done:
            pass

    def sleep() -> None:
        cupy.cuda.Device().synchronize()
        time.sleep(wait_s)

    def spin() -> None:
        cupy.cuda.Device().synchronize()
        end = time.perf_counter() + wait_s
        while time.perf_counter() < end:
            pass

    def query() -> None:
        sync()
        stream.done  # noqa: B018 (one driver call before the timed launch)

    waits = {"sync": sync, "poll": poll, "sleep": sleep, "spin": spin, "query": query}
    calls = {"bare launch": lambda: graph.launch(stream)}
    if product:
        captured = captured_winograd(cupy, 8192)
        calls["winograd L2 graph"] = captured
        calls["its bare launch"] = lambda: captured.graph.launch(cupy.cuda.get_current_stream())
    for _ in range(3):
        sync()
    for label, call in calls.items():
        samples: dict[str, list[list[float]]] = {name: [] for name in waits}
        for _ in range(repeat):
            for name, wait in waits.items():
                wait()
                stamps = [time.perf_counter()]
                for _ in range(5):
                    call()
                    stamps.append(time.perf_counter())
                samples[name].append([1e6 * (b - a) for a, b in zip(stamps, stamps[1:])])
        cupy.cuda.Device().synchronize()
        for name, rounds in samples.items():
            firsts = [r[0] for r in rounds]
            later = median(x for r in rounds for x in r[1:])
            print(f"flag {flag:8s} wait {1e3 * wait_s:3.0f} ms {name:6s} {label}: first {median(firsts):6.1f} us "
                  f"(min {min(firsts):5.1f}, max {max(firsts):6.1f}); later {later:5.1f} us", flush=True)


def captured_winograd(cupy, n: int):
    """Winograd L2's graph with batched leaves on streams, as the crossover table replays it."""
    import bilinear

    product = bilinear.compile("winograd", dtype="float64", levels=2, breadth=2, launch="streams", backend="cupy")
    rng = cupy.random.default_rng(n)
    return product.capture(rng.standard_normal((n, n)), rng.standard_normal((n, n)), cupy.zeros((n, n)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flag", choices=FLAGS, default="auto")
    parser.add_argument("--all", action="store_true", help="each flag in a process of its own, and auto again with 20 ms waits")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--wait", type=float, default=0.15, help="seconds of each wait")
    parser.add_argument("--no-product", action="store_true", help="the bare launch only, not Winograd L2's graph")
    args = parser.parse_args()
    if not args.all:
        probe(args.flag, args.repeat, args.wait, not args.no_product)
        return
    for flag, wait in [(flag, args.wait) for flag in FLAGS] + [("auto", 0.02)]:
        subprocess.run([sys.executable, __file__, "--flag", flag, "--repeat", str(args.repeat),
                        "--wait", str(wait)] + ["--no-product"] * args.no_product, check=False)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
