"""Host-side costs of a lowered program, measured without a GPU.

- ``kernels``: for each shipped scheme, levels 1-3, fused leaves, the fused product kernels
  a run over the acceptance sizes launches (as lowering lists them: ``Lowered.launches_for``),
  the most products and distinct (left terms, right terms) sum shapes in one kernel, and the
  sum shapes over all kernels: NVRTC compiles one pipeline per sum shape.
- ``nvcc``: the seconds ``nvcc -arch=sm_90 -c`` takes on the largest fused kernel of a
  configuration (what NVRTC's time grows with).
- ``issue``: host milliseconds to issue one product (every launch, nothing computed), on the
  null backend at n = 4096.

    python benchmarks/host_costs.py kernels
    python benchmarks/host_costs.py nvcc winograd 2
    python benchmarks/host_costs.py issue
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from bilinear.api import lower_program
from bilinear.lower.product import render_product_stage
from bilinear.runtime.backend import Backend
from bilinear.runtime.executor import Executor
from bilinear.runtime.prepare import product_specs_for
from bilinear.runtime.tuning import config_for


class NullBackend(Backend):
    """Issues nothing: what is left is the executor's own host time."""

    name, xp = "null", np

    def empty(self, rows, cols, dtype):
        return np.empty((rows, cols), dtype=dtype)

    def elementwise(self, kernel, views):
        pass

    def gemm(self, a, b, c, alpha, beta):
        pass

    def fused(self, launch, views, dims, alpha):
        pass

    def scale(self, c, beta):
        pass

    def split(self, plan, kernel, source, out):
        pass

    def merge(self, plan, products, target, alpha, beta):
        pass


SCHEMES = ["strassen", "winograd", "msmes", "rsmm", "grey333"]
SIZES = [(1, 1, 1), (7, 7, 7), (33, 33, 33), (1000, 1000, 1000), (1023, 517, 2049), (4097, 4097, 4097)]


def sum_shapes(spec) -> set:
    return {(len(p.left), len(p.right)) for p in spec.products}


def kernels() -> None:
    for scheme in SCHEMES:
        for levels in (1, 2, 3):
            lowered = lower_program(f"algorithms/{scheme}.bl", levels=levels, leaf="fused")
            specs = product_specs_for((lowered, size) for size in SIZES)
            print(f"{scheme:9s} L{levels}: {len(specs):4d} kernels, at most {max(len(s.products) for s in specs):3d} "
                  f"products and {max(len(sum_shapes(s)) for s in specs):2d} sum shapes in one, "
                  f"{sum(len(sum_shapes(s)) for s in specs):4d} pipelines in all", flush=True)


def nvcc(scheme: str, levels: int) -> None:
    lowered = lower_program(f"algorithms/{scheme}.bl", levels=levels, leaf="fused")
    spec = max(product_specs_for([(lowered, (1023, 517, 2049))]), key=lambda s: len(sum_shapes(s)))
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "stage.cu"
        source.write_text(render_product_stage(spec, config_for(spec)))
        start = time.perf_counter()
        subprocess.run(["nvcc", "-arch=sm_90", "-std=c++17", "-c", str(source), "-o", str(source.with_suffix(".o"))],
                       check=True)
        seconds = time.perf_counter() - start
    print(f"{scheme} L{levels}: {len(spec.products)} products, {len(sum_shapes(spec))} sum shapes: nvcc {seconds:.1f} s")


def issue() -> None:
    n = 4096
    for scheme, levels, leaf, breadth in [("msmes", 0, "fused", 0), ("msmes", 1, "fused", 0), ("msmes", 1, "cublas", 0),
                                          ("rsmm", 1, "cublas", 0), ("rsmm", 2, "cublas", 0), ("msmes", 2, "fused", 0),
                                          ("winograd", 2, "cublas", 1)]:
        lowered = lower_program(f"algorithms/{scheme}.bl", levels=levels, leaf=leaf, breadth=breadth)
        executor = Executor(lowered, NullBackend())
        A, B, C = (np.empty((n, n)) for _ in range(3))
        executor.run(A, B, C)
        start = time.perf_counter()
        for _ in range(20):
            executor.run(A, B, C)
        bfs = f" ({breadth} breadth-first)" if breadth else ""
        print(f"{scheme} L{levels}{bfs} {leaf}: {(time.perf_counter() - start) / 20 * 1e3:.3f} ms to issue one product")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["kernels", "nvcc", "issue"])
    parser.add_argument("scheme", nargs="?", default="winograd")
    parser.add_argument("levels", nargs="?", type=int, default=2)
    args = parser.parse_args()
    if args.what == "kernels":
        kernels()
    elif args.what == "nvcc":
        nvcc(args.scheme, args.levels)
    else:
        issue()


if __name__ == "__main__":
    main()
