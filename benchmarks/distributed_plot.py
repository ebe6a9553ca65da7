"""The strong-scaling table and plot of the distributed product, from `bilinear bench --gpus P --json` files.

    python benchmarks/distributed_plot.py benchmarks/results/distributed/bench_*gpu_winograd-msmes-L1.json \
        [--cublasmp benchmarks/results/distributed/cublasmp_*gpu.json] --plot benchmarks/distributed_scaling.png

Prints one row per (n, GPUs): our time, one GPU's DGEMM time measured in the same run, the speed-up and
the parallel efficiency (speed-up over GPUs), and where benchmarks/cublasmp_baseline.py measured that n on
those GPUs, cuBLASMp's time and ours against it; plots the speed-ups over one GPU's DGEMM against GPUs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def rows(paths: list[Path]) -> list[dict]:
    found = [r for path in paths for r in json.loads(path.read_text())]
    return sorted(found, key=lambda r: (r["dims"][0], r["ranks"]))


def baselines(paths: list[Path]) -> dict[tuple[int, int], dict]:
    """cuBLASMp's timed runs by (n, GPUs); its check run (kind "check") times nothing."""
    found = [r for path in paths for r in json.loads(path.read_text())]
    return {(r["n"], r["ranks"]): r for r in found if r["kind"] == "bench"}


def table(results: list[dict], cublasmp: dict[tuple[int, int], dict] | None = None) -> str:
    lines = ["| n | GPUs | ours (ms) | one GPU's DGEMM (ms) | speed-up | efficiency | memory per GPU (GiB) | "
             "cuBLASMp (ms) | ours vs cuBLASMp |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        theirs = (cublasmp or {}).get((r["dims"][0], r["ranks"]))
        against = "| |" if theirs is None else f"| {theirs['cublasmp_ms']:.1f} | {theirs['cublasmp_ms'] / (r['seconds'] * 1e3):.2f} |"
        lines.append(f"| {r['dims'][0]} | {r['ranks']} | {r['seconds'] * 1e3:.1f} | {r['one_gpu_seconds'] * 1e3:.1f} | "
                     f"{r['speedup']:.2f} | {r['speedup'] / r['ranks']:.0%} | {r['memory_bytes'] / 2**30:.1f} {against}")
    return "\n".join(lines)


def plot(results: list[dict], path: Path, cublasmp: dict[tuple[int, int], dict] | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    for n in sorted({r["dims"][0] for r in results}):
        mine = [r for r in results if r["dims"][0] == n]
        axes.plot([r["ranks"] for r in mine], [r["speedup"] for r in mine], marker="o", label=f"n = {n}")
    for n in sorted({n for n, _ in cublasmp or {}}):
        theirs = sorted((ranks, r["speedup"]) for (size, ranks), r in cublasmp.items() if size == n)
        axes.plot(*zip(*theirs), marker="x", linestyle="--", label=f"cuBLASMp, n = {n}")
    gpus = sorted({r["ranks"] for r in results})
    axes.plot(gpus, gpus, color="grey", linestyle=":", label="linear (classical, perfect)")
    axes.set_xlabel("GPUs (H200)")
    axes.set_ylabel("speed-up over one GPU's cuBLAS DGEMM")
    axes.set_xticks(gpus)
    axes.set_title("FP64: Strassen-Winograd over the GPUs, MSMES on each")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--cublasmp", nargs="*", type=Path, default=[], help="benchmarks/cublasmp_baseline.py's --json files")
    parser.add_argument("--plot", type=Path, default=None)
    args = parser.parse_args()
    results, cublasmp = rows(args.files), baselines(args.cublasmp)
    print(table(results, cublasmp))
    if args.plot:
        plot(results, args.plot, cublasmp)


if __name__ == "__main__":
    main()
