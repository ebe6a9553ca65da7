"""Issue 13's crossover table: depth-first, breadth-first and graph-replayed products against cuBLAS.

For every size (2048–16384 in steps of 1024 by default) and configuration the
script checks the product against cuBLAS's, then times it: CUDA events after
warm-up, the median of --repeat runs, random normal data, cuBLAS measured in
the same process and interleaved with every configuration; ratio = cuBLAS time
/ ours.  The model's prediction (bilinear.model.predict, with ceilings measured
on this GPU) is printed beside each measurement, and for the graph column the
host time per call with and without the graph: the mean of five calls after
the GPU went idle, and apart, the first of them and each later one.

    python3 benchmarks/breadth.py --dtype float64 --out results/
    python3 benchmarks/breadth.py --dtype float32 --sizes 8192,16384 --out results/
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import cupy

import bilinear
from bilinear.measure import error_bound, median, relative_error
from bilinear.model import predict
from bilinear.output import write_atomic
from bilinear.runtime.ceilings import measure_ceilings

ROOT = Path(__file__).resolve().parent.parent
# (label, scheme, levels, breadth, launch): depth-first configurations as shipped, then breadth-first ones,
# each launch mode of the leaves (serial, concurrent streams, one batched GEMM).
CONFIGS = [
    ("rsmm L1 dfs", "rsmm", 1, 0, "serial"),
    ("msmes L1 dfs (0 B)", "msmes", 1, 0, "serial"),
    ("msmes L1 dfs streams (0 B)", "msmes", 1, 0, "streams"),
    ("winograd L1 bfs1", "winograd", 1, 1, "serial"),
    ("winograd L1 bfs1 streams", "winograd", 1, 1, "streams"),
    ("winograd L2 bfs2", "winograd", 2, 2, "serial"),
    ("winograd L2 bfs2 streams", "winograd", 2, 2, "streams"),
    ("winograd L2 bfs2 batched", "winograd", 2, 2, "batched"),
    ("msmes L3 dfs1+bfs2 streams", "msmes", 3, 2, "streams"),
    # run by label (--configs): more in-place levels, and deeper hybrids
    ("msmes L2 dfs streams (0 B)", "msmes", 2, 0, "streams"),
    ("msmes L2 dfs (0 B)", "msmes", 2, 0, "serial"),
    ("msmes2 L1 dfs (0 B)", "msmes2", 1, 0, "serial"),  # msmes at two levels written as one schedule
    ("msmes2 L1 dfs streams (0 B)", "msmes2", 1, 0, "streams"),
    ("rsmm L3 dfs1+bfs2 streams", "rsmm", 3, 2, "streams"),
    ("winograd L3 dfs1+bfs2 batched", "winograd", 3, 2, "batched"),
]
DEFAULT = 9  # the first nine run unless --configs names others
HOST_TIMED = "winograd L2 bfs2"  # host time per call, with and without its graph


def _sizes(text: str) -> list[int]:
    if ":" in text:
        start, stop, step = (int(x) for x in text.split(":"))
        return list(range(start, stop + 1, step))
    return [int(x) for x in text.split(",")]


def _event_ms(call) -> float:
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    call()
    stop.record()
    stop.synchronize()
    return cupy.cuda.get_elapsed_time(start, stop)


def time_interleaved(calls: dict, repeat: int) -> dict[str, list[float]]:
    """Milliseconds of each call, ``repeat`` rounds that run every call once in turn (cuBLAS among
    them), after two warm-up calls each: clocks settle, kernels compile, workspace is sized."""
    for call in calls.values():
        for _ in range(2):
            call()
    times: dict[str, list[float]] = {label: [] for label in calls}
    for _ in range(repeat):
        for label, call in calls.items():
            times[label].append(_event_ms(call))
    return times


def time_rotated(calls: dict, repeat: int, before=lambda: None, warm_s: float = 2.0) -> dict[str, list[float]]:
    """Milliseconds of each call after a sustained warm-up (FP64 GEMMs reach the power cap's clocks
    within 0.5 s), ``repeat`` rounds that run every call once, each round starting one later in the
    list (each call first in turn); ``before`` runs ahead of every call, untimed."""
    end = time.perf_counter() + warm_s
    while time.perf_counter() < end:
        for call in calls.values():
            before()
            call()
    times: dict[str, list[float]] = {label: [] for label in calls}
    labels = list(calls)
    for round_ in range(repeat):
        shift = round_ % len(labels)
        for label in labels[shift:] + labels[:shift]:
            before()
            times[label].append(_event_ms(calls[label]))
    return times


def _host_us(call, count: int = 5, repeat: int = 7) -> float:
    """Host microseconds per call issued back to back: ``count`` calls after the GPU went idle,
    few enough that the launch queue never fills (a full queue makes the host wait for the GPU
    and measures the GPU instead); the median of ``repeat`` such timings."""
    samples = []
    for _ in range(repeat):
        cupy.cuda.Device().synchronize()
        begin = time.perf_counter()
        for _ in range(count):
            call()
        samples.append((time.perf_counter() - begin) / count)
    cupy.cuda.Device().synchronize()
    return median(samples) * 1e6


def _each_us(call, count: int = 5, repeat: int = 15) -> list[float]:
    """Host µs of each of ``count`` back-to-back calls after the GPU went idle, the median over ``repeat``."""
    samples = []
    for _ in range(repeat):
        cupy.cuda.Device().synchronize()
        stamps = [time.perf_counter()]
        for _ in range(count):
            call()
            stamps.append(time.perf_counter())
        samples.append([1e6 * (b - a) for a, b in zip(stamps, stamps[1:])])
    cupy.cuda.Device().synchronize()
    return [median(column) for column in zip(*samples)]


def _host_split_us(call) -> dict:
    """The host time of a call as two readings: ``first``, the call issued right after the GPU
    went idle (it pays the host thread's wake-up from the wait: 50-90 µs for a bare
    ``cudaGraphLaunch`` after the 150 ms of an n = 16384 product, in sessions 59 and 61), and
    ``loop``, each later call of a loop, issued while the GPU runs the first (what a caller's loop
    of calls pays per call); ``five``, the mean of the five calls' medians, the tables' column up
    to session 62 (which :func:`_host_us` read as the median of each round's mean, near it)."""
    each = _each_us(call, repeat=7)
    return {"first": each[0], "loop": sum(each[1:]) / len(each[1:]), "five": sum(each) / len(each)}


def _free(products) -> None:
    for product in products.values():
        product.release_workspace()
    cupy.get_default_memory_pool().free_all_blocks()


def _share_workspace(products: dict, configs: list) -> None:
    """Configurations that differ only in their launch mode hold one breadth-first workspace: they
    never run at once, and three copies of 18 GiB do not fit beside the inputs at n = 16384."""
    first: dict[tuple, object] = {}
    for label, scheme, levels, breadth, _ in configs:
        runner = products[label].executor.breadth
        if runner is not None:
            runner.workspace = first.setdefault((scheme, levels, breadth), runner).workspace


def run(args, save=lambda result: None) -> dict:
    """Every size in turn; ``save`` gets the result after each (a run cut short keeps its rows)."""
    dtype = args.dtype
    ceilings = measure_ceilings(cupy, dtype)
    configs = [c for c in CONFIGS if c[0] in args.configs] if args.configs else CONFIGS[:DEFAULT]
    products = {
        label: bilinear.compile(ROOT / "algorithms" / f"{scheme}.bl", levels=levels, breadth=breadth, dtype=dtype,
                                launch=launch)
        for label, scheme, levels, breadth, launch in configs
    }
    _share_workspace(products, configs)
    result = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(), "dtype": dtype,
              "repeat": args.repeat, "ceilings": {"bandwidth": ceilings.bandwidth, "gemm_rate": ceilings.gemm_rate},
              "rows": []}
    for n in _sizes(args.sizes):
        row = _one_size(n, dtype, products, ceilings, args.repeat)
        result["rows"].append(row)
        _print_row(row)
        save(result)
        _free(products)
    return result


def _one_size(n: int, dtype: str, products: dict, ceilings, repeat: int) -> dict:
    rng = cupy.random.default_rng(n)
    A, B = rng.standard_normal((n, n), dtype=dtype), rng.standard_normal((n, n), dtype=dtype)
    reference = cupy.matmul(A, B)
    calls = {"cuBLAS": lambda: cupy.matmul(A, B, out=reference)}
    outs, errors, bounds, model, graph_model = {}, {}, {}, {}, {}
    out = cupy.zeros((n, n), dtype=dtype)  # every configuration overwrites it (beta = 0): one for all
    for label, product in products.items():
        out.fill(0)
        product(A, B, out=out)
        errors[label] = relative_error(out, reference.astype(cupy.float64), A, B)
        levels = product.lowered.options.levels
        bounds[label] = error_bound(dtype, n, 2.3, levels)
        lowered = product.executor_for(n, n, n).lowered
        model[label] = predict(lowered, ceilings, n, n, n) * 1e3
        graph_model[f"{label} graph"] = predict(lowered, ceilings, n, n, n, graph=True) * 1e3  # no host launches
        outs[label] = out
        calls[label] = (lambda p, o: lambda: p(A, B, out=o))(product, out)
    for label, product in products.items():
        calls[f"{label} graph"] = product.capture(A, B, outs[label])
    times = time_interleaved(calls, repeat)
    cublas_ms = median(times["cuBLAS"])
    row = {"n": n, "dtype": dtype, "cublas_ms": cublas_ms, "configs": {}}
    for label in calls:
        if label == "cuBLAS":
            continue
        ms = median(times[label])
        base = label.removesuffix(" graph")
        row["configs"][label] = {
            "ms": ms, "ratio": cublas_ms / ms, "model_ms": graph_model.get(label, model[base]), "error": errors[base],
            "bound": bounds[base], "correct": bool(errors[base] <= bounds[base]),
            "workspace_bytes": products[base].workspace_bytes(n, n, n),
        }
    if HOST_TIMED in products:
        timed = {"graph": calls[f"{HOST_TIMED} graph"], "direct": calls[HOST_TIMED], "cuBLAS": calls["cuBLAS"]}
        row["host_split_us"] = {name: _host_split_us(call) for name, call in timed.items()}
        row["host_us"] = {name: us["five"] for name, us in row["host_split_us"].items()}
    return row


def _print_row(row: dict) -> None:
    cells = [f"n={row['n']:>5} cuBLAS {row['cublas_ms']:8.2f} ms"]
    for label, c in row["configs"].items():
        flag = "" if c["correct"] else " WRONG"
        cells.append(f"  {label:<24} {c['ms']:8.2f} ms ratio {c['ratio']:.3f} (model {c['model_ms']:7.2f} ms, "
                     f"err {c['error']:.1e}, ws {c['workspace_bytes'] / 2**30:.2f} GiB){flag}")
    if "host_us" in row:
        h = row["host_us"]
        cells.append(f"  host time per call: graph {h['graph']:.1f} us, direct {h['direct']:.1f} us, cuBLAS {h['cuBLAS']:.1f} us")
    if "host_split_us" in row:
        cells.append("  host time in a loop (first after idle): " + ", ".join(
            f"{name} {us['loop']:.1f} us ({us['first']:.1f} us)" for name, us in row["host_split_us"].items()))
    print("\n".join(cells), flush=True)


def summary(result: dict) -> str:
    """The README's table: per size, the best ratio over every configuration and over those called
    directly (no graph), each with its configuration, and the configuration the model predicts fastest."""
    lines = ["n | best | configuration | model's best | without graphs | configuration"]
    for row in result["rows"]:
        configs = row["configs"]
        best = max(configs, key=lambda label: configs[label]["ratio"])
        direct = max((label for label in configs if not label.endswith(" graph")), key=lambda label: configs[label]["ratio"])
        modelled = min(configs, key=lambda label: configs[label]["model_ms"])
        lines.append(f"{row['n']} | {configs[best]['ratio']:.3f} | {best} | {modelled} | "
                     f"{configs[direct]['ratio']:.3f} | {direct}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    parser.add_argument("--sizes", default="2048:16384:1024", help="start:stop:step or a comma list")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--configs", nargs="*", default=None, help="labels to run (default all)")
    parser.add_argument("--out", type=Path, default=None, help="folder for breadth_<dtype>.json")
    args = parser.parse_args()
    if not args.out:
        print(summary(run(args)))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"breadth_{args.dtype}.json"
    print(summary(run(args, lambda result: write_atomic(path, json.dumps(result, indent=1)))))  # a kill mid-write keeps the last


if __name__ == "__main__":
    main()
