"""The compiled C++ library against cuBLAS and the Python runtime, breadth-first levels included.

For each configuration the script writes the artifact (`bilinear compile`), builds it with nvcc
(`-O3 -arch=sm_90`, linked against cuBLAS), loads it with ctypes and calls `<name>_dgemm` (or
`_sgemm`) on CuPy's cuBLAS handle and stream.  Every size checks the library's product against
cuBLAS's, then times cuBLAS, the library and the same product through the Python runtime
(`bilinear.compile`), interleaved: CUDA events after warm-up, the median of --repeat, random
normal data; ratio = cuBLAS time / ours.

`<name>_dgemm` allocates its workspace with cudaMallocAsync on every call and frees it before
returning; the device's default memory pool hands it back to the system at the next
synchronization unless its release threshold says otherwise.  `<name>_dgemm_with_workspace`
runs in a workspace the caller allocated once.  Both are timed ("library" and "library, given
workspace"); with --keep-pool the pool's release threshold is raised first, so the allocating
entry point reuses what the pool keeps.

    python3 benchmarks/library_breadth.py --dtype float64 --sizes 4096,8192,16384 --out DIR
"""

from __future__ import annotations

import argparse
import ctypes
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cupy

import bilinear
from bilinear.measure import error_bound, median, relative_error

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from breadth import time_interleaved  # noqa: E402 - benchmarks/breadth.py's interleaved timing
from conftest import cublas_link_flags, cublas_paths  # noqa: E402 - how the tests find and link cuBLAS

# (label, scheme, options): the library runs each as compiled; the Python runtime the same options.
CONFIGS = [
    ("rsmm L1 dfs", "rsmm", {"levels": 1}),
    ("winograd L2 bfs2", "winograd", {"levels": 2, "breadth": 2}),
    ("winograd L2 bfs2 batched", "winograd", {"levels": 2, "breadth": 2, "launch": "batched"}),
    ("winograd L3 dfs1+bfs2 batched", "winograd", {"levels": 3, "breadth": 2, "launch": "batched"}),
    # the ozaki leaf (FP64 on the int8 tensor cores): alone, and under a Winograd level.  Its workspace is
    # 24 GiB at 16384 alone, held three times over here (given, allocated per call, the runtime's): run
    # "ozaki L0" up to 12288 and by itself (--configs)
    ("ozaki L0", "winograd", {"levels": 0, "leaf": "ozaki"}),
    ("winograd L1 ozaki", "winograd", {"levels": 1, "leaf": "ozaki"}),
]
RELEASE_THRESHOLD = 4  # cudaMemPoolAttrReleaseThreshold


def _options(options: dict) -> list[str]:
    words = []
    for key, value in options.items():
        words += [f"--{key}", str(value)]
    return words


def build(label: str, scheme: str, options: dict, dtype: str, folder: Path,
          flags: tuple[str, ...] = ("-O3",)) -> tuple[ctypes.CDLL, str]:
    """The library of one configuration, compiled, built (nvcc ``flags``, -O3 unless given) and loaded;
    and its function's name."""
    out = folder / label.replace(" ", "_").replace("+", "_")
    subprocess.run([sys.executable, "-m", "bilinear.cli", "compile", str(ROOT / "algorithms" / f"{scheme}.bl"),
                    "-o", str(out), "--force", *_options(options)], check=True, capture_output=True)
    include, lib = cublas_paths()
    library = out / f"lib{scheme}.so"
    subprocess.run(["nvcc", *flags, "-std=c++17", "-arch=sm_90", "-Xcompiler", "-fPIC", "-shared", str(out / f"{scheme}.cu"),
                    "-o", str(library), f"-I{include}", *cublas_link_flags(lib)], check=True)
    loaded = ctypes.CDLL(str(library))
    function = f"{scheme}_{'d' if dtype == 'float64' else 's'}gemm"
    real = ctypes.c_double if dtype == "float64" else ctypes.c_float
    getattr(loaded, function).argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, real, ctypes.c_void_p,
                                          ctypes.c_int, ctypes.c_void_p, ctypes.c_int, real, ctypes.c_void_p, ctypes.c_int,
                                          ctypes.c_void_p]
    getattr(loaded, function).restype = ctypes.c_int
    given = getattr(loaded, f"{function}_with_workspace")
    given.argtypes = [*getattr(loaded, function).argtypes[:-1], ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    given.restype = ctypes.c_int
    getattr(loaded, f"{function}_workspace_bytes").argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
    getattr(loaded, f"{function}_workspace_bytes").restype = ctypes.c_size_t
    return loaded, function


def library_call(loaded: ctypes.CDLL, function: str, A, B, C, workspace=None):
    """Row-major C = A·B through the column-major library: C^T = B^T·A^T, so B goes first; in
    ``workspace`` (a CuPy array) through ``<function>_with_workspace`` where one is given."""
    M, K = A.shape
    N = B.shape[1]
    handle = cupy.cuda.device.get_cublas_handle()
    gemm = getattr(loaded, function if workspace is None else f"{function}_with_workspace")
    given = () if workspace is None else (workspace.data.ptr, workspace.nbytes)

    def call() -> None:
        status = gemm(handle, N, M, K, 1.0, B.data.ptr, N, A.data.ptr, K, 0.0, C.data.ptr, N, *given,
                      cupy.cuda.get_current_stream().ptr)
        if status:
            raise RuntimeError(f"{function} returned {status}")

    return call


def keep_pool() -> bool:
    """Raise the default memory pool's release threshold (the library's cudaMallocAsync memory then
    stays in the pool between calls); False where this CuPy cannot."""
    try:
        pool = cupy.cuda.runtime.deviceGetDefaultMemPool(cupy.cuda.Device().id)
        cupy.cuda.runtime.memPoolSetAttribute(pool, RELEASE_THRESHOLD, 2**63 - 1)
    except AttributeError:
        return False
    return True


def share_workspace(products: dict, configs: list) -> None:
    """Python products that differ only in their launch mode hold one breadth-first workspace (as
    benchmarks/breadth.py's do): two copies of 18 GiB and the library's own do not fit at 16384."""
    first: dict[tuple, object] = {}
    for label, scheme, options in configs:
        runner = products[label].executor.breadth
        if runner is not None:
            key = (scheme, options["levels"], options.get("breadth", 0))
            runner.workspace = first.setdefault(key, runner).workspace


KINDS = ("library", "library, given workspace", "python")


def one_size(n: int, dtype: str, libraries: dict, products: dict, repeat: int, kept: bool) -> dict:
    rng = cupy.random.default_rng(n)
    A, B = rng.standard_normal((n, n), dtype=dtype), rng.standard_normal((n, n), dtype=dtype)
    reference = cupy.matmul(A, B)
    out = cupy.empty((n, n), dtype=dtype)
    calls = {"cuBLAS": lambda: cupy.matmul(A, B, out=reference)}
    row = {"n": n, "dtype": dtype, "pool_kept": kept, "configs": {}}
    # one workspace, the largest any library needs, for every `_with_workspace` call
    size = max(getattr(loaded, f"{function}_workspace_bytes")(n, n, n) for loaded, function in libraries.values())
    workspace = cupy.empty(max(size, 1), dtype=cupy.uint8)
    for label, (loaded, function) in libraries.items():
        row["configs"][label] = {"workspace_bytes": getattr(loaded, f"{function}_workspace_bytes")(n, n, n)}
        for kind, given in (("library", None), ("library, given workspace", workspace)):
            out.fill(cupy.nan)  # beta = 0: nothing of C may be read
            library = library_call(loaded, function, A, B, out, given)
            library()
            error = relative_error(out, reference.astype(cupy.float64), A, B)
            bound = error_bound(dtype, n, 2.3, products[label].lowered.options.levels)
            row["configs"][label][kind] = {"error": error, "bound": bound, "correct": bool(error <= bound)}
            calls[f"{label} {kind}"] = library
        calls[f"{label} python"] = (lambda p: lambda: p(A, B, out=out))(products[label])
        row["configs"][label]["python"] = {}
    times = time_interleaved(calls, repeat)
    row["cublas_ms"] = cublas = median(times["cuBLAS"])
    for label in libraries:
        for kind in KINDS:
            ms = median(times[f"{label} {kind}"])
            row["configs"][label][kind].update({"ms": ms, "ratio": cublas / ms})
    return row


def print_row(row: dict) -> None:
    print(f"n={row['n']} {row['dtype']} pool {'kept' if row['pool_kept'] else 'as CUDA leaves it'}: "
          f"cuBLAS {row['cublas_ms']:.2f} ms", flush=True)
    for label, c in row["configs"].items():
        cells = [f"{kind} {c[kind]['ms']:8.2f} ms ratio {c[kind]['ratio']:.3f}" for kind in KINDS]
        checks = [f"err {c[kind]['error']:.1e}{'' if c[kind]['correct'] else ' WRONG'}" for kind in KINDS[:2]]
        print(f"  {label:<30} " + " | ".join(cells) + f" | {', '.join(checks)} | ws {c['workspace_bytes'] / 2**30:.2f} GiB",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    parser.add_argument("--sizes", default="4096,8192,16384", help="a comma list")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--configs", nargs="*", default=None, help="labels to run (default all)")
    parser.add_argument("--keep-pool", action="store_true", help="raise the default memory pool's release threshold first")
    parser.add_argument("--out", type=Path, required=True, help="folder for the builds and library_<dtype>.json")
    args = parser.parse_args()
    configs = [c for c in CONFIGS if args.configs is None or c[0] in args.configs]
    if not configs:
        parser.error(f"--configs names none of: {', '.join(label for label, _, _ in CONFIGS)}")
    with ThreadPoolExecutor() as pool:  # nvcc builds one library per process: run them side by side
        built = pool.map(lambda c: build(*c, args.dtype, args.out / "build"), configs)
        libraries = {label: library for (label, _, _), library in zip(configs, built)}
    products = {label: bilinear.compile(ROOT / "algorithms" / f"{scheme}.bl", dtype=args.dtype, **options)
                for label, scheme, options in configs}
    share_workspace(products, configs)
    kept = args.keep_pool and keep_pool()
    if args.keep_pool and not kept:
        print("this CuPy cannot set the memory pool's release threshold: it stays as CUDA leaves it")
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        rows.append(one_size(n, args.dtype, libraries, products, args.repeat, kept))
        print_row(rows[-1])
        for product in products.values():
            product.release_workspace()
        cupy.get_default_memory_pool().free_all_blocks()
    result = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(), "repeat": args.repeat, "rows": rows}
    (args.out / f"library_{args.dtype}{'_kept' if kept else ''}.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
