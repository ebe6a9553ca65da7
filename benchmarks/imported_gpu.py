"""Imported catalogue schemes on the GPU: verified, compiled with cuBLAS and fused leaves, run
at odd sizes against cupy.matmul, and the fused build time of a 73-product scheme from a cold
kernel cache (issue 10's GPU acceptance).

    bash benchmarks/stage_imported.sh                 # copies the schemes into gpu_schemes/
    python3 benchmarks/imported_gpu.py --out DIR      # on the GPU (CuPy)
    python3 benchmarks/imported_gpu.py --backend numpy --out DIR   # a dry run on the CPU, small sizes

Every scheme of :data:`SCHEMES` is read from ``gpu_schemes/`` (none is shipped in algorithms/),
verified exactly, then for each configuration (cuBLAS leaves at 1 and 2 levels, fused leaves at
1 and 2 levels) lowered through the Python API (``bilinear.api.lower_program``, what
``bilinear.compile`` does) with every kernel built ahead (``runtime.prepare.compile_ahead``, in
parallel), loaded as ``bilinear.compile`` loads it, and run by ``runtime.run.run_once``: random
normal inputs, the relative error ‖C−C_ref‖/(‖A‖‖B‖) against a float64 product beside
cupy.matmul's own, the bound 8·u·√K·ρ^L, and the median time beside cupy.matmul's.

The cold build runs first, in a child process whose ``BILINEAR_CACHE`` and ``CUPY_CACHE_DIR``
are fresh empty folders: lowering, then compiling every kernel a product of the given size
launches, then one checked run.  Target: under 30 s.

Results go to ``--out`` (default ``$OUT``, else ``imported_gpu_out``): ``imported_gpu.txt``
(what is printed) and ``imported_gpu.json``.  The exit status is 1 when any scheme fails to
load or verify, any case raises or exceeds its bound, or the cold build fails; 2 when a
required package is missing.  Nothing fails silently: every traceback is printed and kept.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEME_DIR = ROOT / "gpu_schemes"


@dataclass(frozen=True)
class Scheme:
    catalogue: str
    file: str
    key: str | None = None
    fused_levels: tuple[int, ...] = (1, 2)
    note: str = ""


#: What benchmarks/stage_imported.sh copies; none is shipped in algorithms/.
SCHEMES = (
    Scheme("Kauers", "446-k0a44a47e90f9bce.exp", note="<4,4,6;73>: rectangular, 73 products"),
    Scheme("flips", "223-11-mod0.exp", note="<2,2,3;11>"),
    Scheme("flips", "445-62-mod0.m", note="<4,4,5;62>: rectangular, 62 products"),
    Scheme("fast-matmul", "smirnov336-40-960", note="<3,3,6;40>: rectangular"),
    Scheme("PLinOpt", "4x4x4_48_rational_L.sms", note="<4,4,4;48> rational (with _R and _P)"),
    Scheme("PLinOpt", "4x4x4_48_rational_L.slp", note="<4,4,4;48> rational, PLinOpt's programs as named sums"),
    Scheme("AlphaTensor", "factorizations_r.npz", key="4,4,4", note="<4,4,4;49>"),
    Scheme("Perminov", "2x4x5_m33_ZT.json", note="<2,4,5;33>"),
)
COLD_SCHEME = SCHEMES[0]  # the 73-product Kauers scheme

GPU_SIZES = ((1001, 999, 1003), (2049, 1537, 3001))
CPU_SIZES = ((61, 59, 67),)


def check_packages(backend: str) -> None:
    """Every package the run needs, imported now: a missing one stops it at once (exit 2)."""
    needed = ["numpy", "jinja2", "lark", "flint", "platformdirs", "sympy"]
    if backend == "cupy":
        needed.append("cupy")
    missing = []
    for name in needed:
        try:
            importlib.import_module(name)
        except Exception as error:  # noqa: BLE001 - any import failure is fatal and reported
            missing.append(f"{name} ({type(error).__name__}: {error})")
    if missing:
        print("imported_gpu.py: cannot run, missing: " + "; ".join(missing), file=sys.stderr)
        print("  (on the device: pip install --no-index --no-deps --target /tmp/site .whl/*.whl; "
              "PYTHONPATH=/tmp/site:$PWD)", file=sys.stderr)
        sys.exit(2)
    if backend == "cupy":
        import cupy

        count = cupy.cuda.runtime.getDeviceCount()
        if count < 1:
            print("imported_gpu.py: CuPy sees no GPU", file=sys.stderr)
            sys.exit(2)


def scheme_path(scheme: Scheme, folder: Path) -> Path:
    path = folder / scheme.file
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `bash benchmarks/stage_imported.sh` first")
    return path


class Log:
    """Prints and keeps every line (written to imported_gpu.txt at the end)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, text: str = "") -> None:
        print(text, flush=True)
        self.lines.append(text)


def cold_build(scheme: Scheme, folder: Path, backend: str, dims: tuple[int, int, int], dtype: str) -> dict:
    """The fused-leaf build of ``scheme`` in a child process with empty kernel caches."""
    with tempfile.TemporaryDirectory(prefix="bilinear-cold-") as cache, tempfile.TemporaryDirectory(prefix="cupy-cold-") as cupy_cache:
        env = dict(os.environ, BILINEAR_CACHE=cache, CUPY_CACHE_DIR=cupy_cache, PYTHONUNBUFFERED="1")
        command = [sys.executable, __file__, "--cold-child", str(scheme_path(scheme, folder)), "--backend", backend,
                   "--dtype", dtype, "--child-dims", ",".join(map(str, dims))]
        if scheme.key:
            command += ["--key", scheme.key]
        started = time.perf_counter()
        child = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
        wall = time.perf_counter() - started
    if child.returncode != 0 or not child.stdout.strip():
        return {"ok": False, "error": f"child exited {child.returncode}", "stdout": child.stdout[-4000:],
                "stderr": child.stderr[-8000:], "process_seconds": wall}
    result = json.loads(child.stdout.strip().splitlines()[-1])
    result["process_seconds"] = wall
    return result


def cold_child(path: str, backend_name: str, dtype: str, dims: tuple[int, int, int], key: str | None) -> None:
    """Runs in the child: import, load, lower, compile every kernel, one checked run; prints JSON."""
    started = time.perf_counter()
    import bilinear
    from bilinear.api import load, lower_program
    from bilinear.runtime.compiled import CompiledProduct, make_backend
    from bilinear.runtime.prepare import compile_ahead
    from bilinear.runtime.run import run_once

    imported = time.perf_counter()
    program = load(path, key=key)
    lowered = lower_program(program, dtype=dtype, levels=1, leaf="fused")
    lowered_at = time.perf_counter()
    backend = make_backend(backend_name)
    kernels = len(lowered.kernels()) + len({launch.spec.name for launch in lowered.launches_for(*dims)})
    compiled = compile_ahead([(lowered, dims)], backend) if backend.name == "cupy" else 0
    compiled_at = time.perf_counter()
    product = CompiledProduct(lowered, backend)
    result = run_once(product, *dims, repeat=3)
    print(json.dumps({
        "ok": bool(result.within_bound),
        "bilinear": bilinear.__file__,
        "import_seconds": imported - started,
        "lower_seconds": lowered_at - imported,
        "compile_seconds": compiled_at - lowered_at,
        "build_seconds": compiled_at - started,
        "kernels": kernels,
        "compiled": compiled,
        "product_launch_kernels": len(lowered.product_specs()),
        "dims": dims,
        "error": result.error,
        "bound": result.bound,
        "seconds": result.seconds,
        "reference_seconds": result.reference_seconds,
    }))


def run_case(program, scheme: Scheme, leaf: str, levels: int, dtype: str, backend_name: str, dims, repeat: int) -> dict:
    from bilinear.api import lower_program
    from bilinear.runtime.compiled import CompiledProduct, make_backend
    from bilinear.runtime.prepare import compile_ahead
    from bilinear.runtime.run import run_once

    started = time.perf_counter()
    # bilinear.compile(program, dtype=, levels=, leaf=, backend=) in its steps: lower, then every
    # kernel built in parallel (the product's own first call would build them one by one), then load.
    lowered = lower_program(program, dtype=dtype, levels=levels, leaf=leaf)
    backend = make_backend(backend_name)
    built = time.perf_counter()
    if backend.name == "cupy":
        compile_ahead([(lowered, dims)], backend)
    product = CompiledProduct(lowered, backend)
    compiled = time.perf_counter()
    result = run_once(product, *dims, repeat=repeat)
    return {
        "file": scheme.file, "catalogue": scheme.catalogue, "leaf": leaf, "levels": levels, "dtype": dtype,
        "dims": list(dims), "levels_run": result.levels_run, "error": result.error,
        "reference_error": result.reference_error, "bound": result.bound, "ok": bool(result.within_bound),
        "seconds": result.seconds, "reference_seconds": result.reference_seconds,
        "ratio": result.reference_seconds / result.seconds if result.seconds else None,
        "lower_seconds": built - started, "compile_seconds": compiled - built,
        "kernels": len(product.lowered.kernels()), "product_kernels": len(product.lowered.product_specs()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("cupy", "numpy"), default="cupy")
    parser.add_argument("--schemes", type=Path, default=SCHEME_DIR, help="folder of staged schemes (default gpu_schemes/)")
    parser.add_argument("--out", type=Path, default=None, help="results folder (default $OUT, else imported_gpu_out)")
    parser.add_argument("--dtypes", default="float64", help="comma-separated: float64,float32")
    parser.add_argument("--sizes", default=None, help="M,K,N;M,K,N... (default 1001,999,1003;2049,1537,3001 on the GPU)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=None, help="only these scheme files")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold fused build")
    parser.add_argument("--cold-child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-dims", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--dtype", default="float64", help=argparse.SUPPRESS)
    parser.add_argument("--key", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.cold_child:
        cold_child(args.cold_child, args.backend, args.dtype, tuple(int(x) for x in args.child_dims.split(",")), args.key)
        return 0

    check_packages(args.backend)
    out = args.out or Path(os.environ.get("OUT") or "imported_gpu_out")
    out.mkdir(parents=True, exist_ok=True)
    sizes = (
        tuple(tuple(int(x) for x in size.split(",")) for size in args.sizes.split(";"))
        if args.sizes else (GPU_SIZES if args.backend == "cupy" else CPU_SIZES)
    )
    dtypes = args.dtypes.split(",")
    schemes = [s for s in SCHEMES if args.only is None or s.file in args.only]
    log = Log()
    ref = "cupy.matmul" if args.backend == "cupy" else "numpy.matmul"
    failures: list[str] = []
    results: dict = {"backend": args.backend, "sizes": sizes, "schemes": [], "cases": [], "cold_build": None}

    import bilinear

    log(f"bilinear from {bilinear.__file__}; backend {args.backend}; python {sys.version.split()[0]}")
    if args.backend == "cupy":
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(0)
        log(f"device {props['name'].decode()}; CuPy {cupy.__version__}; CUDA runtime {cupy.cuda.runtime.runtimeGetVersion()}")
        log(f"CPU cores for parallel kernel builds: {os.cpu_count()}")

    if not args.no_cold and (args.only is None or COLD_SCHEME.file in args.only):
        dims = sizes[0]
        log(f"\n== cold fused build: {COLD_SCHEME.file} ({COLD_SCHEME.note}), 1 level, {dtypes[0]}, {dims}, empty caches")
        try:
            cold = cold_build(COLD_SCHEME, args.schemes, args.backend, dims, dtypes[0])
        except Exception:  # noqa: BLE001 - reported and counted, never hidden
            cold = {"ok": False, "error": traceback.format_exc()}
        results["cold_build"] = cold
        if cold.get("ok"):
            log(f"  import {cold['import_seconds']:.1f} s, lowering {cold['lower_seconds']:.1f} s, compiling "
                f"{cold['compiled']} kernels {cold['compile_seconds']:.1f} s: build {cold['build_seconds']:.1f} s "
                f"(target < 30 s: {'met' if cold['build_seconds'] < 30 else 'MISSED'}); "
                f"{cold['product_launch_kernels']} fused product kernels; "
                f"run error {cold['error']:.2e} (bound {cold['bound']:.2e}), {cold['seconds'] * 1e3:.2f} ms "
                f"vs {ref} {cold['reference_seconds'] * 1e3:.2f} ms")
        else:
            failures.append("cold build")
            log(f"  FAILED: {json.dumps(cold, indent=1)}")

    from bilinear.api import load, verify

    for scheme in schemes:
        log(f"\n== {scheme.catalogue}: {scheme.file}{' [' + scheme.key + ']' if scheme.key else ''} ({scheme.note})")
        entry = {"file": scheme.file, "catalogue": scheme.catalogue, "key": scheme.key}
        try:
            path = scheme_path(scheme, args.schemes)
            started = time.perf_counter()
            report = verify(path, key=scheme.key)
            program = load(path, key=scheme.key)
            algorithm = program.main
            entry.update(ok=bool(report.ok), verify_seconds=time.perf_counter() - started,
                         shape=[algorithm.shape.m, algorithm.shape.k, algorithm.shape.n], rank=algorithm.rank)
            log(f"  verified: {report.ok} (<{algorithm.shape.m},{algorithm.shape.k},{algorithm.shape.n};{algorithm.rank}>, "
                f"{entry['verify_seconds']:.2f} s)")
            if not report.ok:
                failures.append(f"{scheme.file}: does not verify")
                results["schemes"].append(entry)
                continue
        except Exception:  # noqa: BLE001
            entry.update(ok=False, error=traceback.format_exc())
            failures.append(f"{scheme.file}: load/verify raised")
            log("  LOAD/VERIFY FAILED:\n" + entry["error"])
            results["schemes"].append(entry)
            continue
        results["schemes"].append(entry)
        configs = [("cublas", 1), ("cublas", 2)] + [("fused", levels) for levels in scheme.fused_levels]
        for dtype in dtypes:
            for leaf, levels in configs:
                for dims in sizes:
                    label = f"{leaf:6s} L{levels} {dtype} {dims[0]}x{dims[1]}x{dims[2]}"
                    try:
                        case = run_case(program, scheme, leaf, levels, dtype, args.backend, dims, args.repeat)
                    except Exception:  # noqa: BLE001
                        case = {"file": scheme.file, "leaf": leaf, "levels": levels, "dtype": dtype, "dims": list(dims),
                                "ok": False, "error_text": traceback.format_exc()}
                        failures.append(f"{scheme.file} {label}: raised")
                        log(f"  {label}: RAISED\n{case['error_text']}")
                        results["cases"].append(case)
                        continue
                    results["cases"].append(case)
                    if not case["ok"]:
                        failures.append(f"{scheme.file} {label}: error {case['error']:.2e} over bound {case['bound']:.2e}")
                    log(f"  {label}: {'pass' if case['ok'] else 'FAIL'}  error {case['error']:.2e} "
                        f"({ref} {case['reference_error']:.2e}, bound {case['bound']:.2e}, L run {case['levels_run']})  "
                        f"{case['seconds'] * 1e3:8.2f} ms vs {case['reference_seconds'] * 1e3:8.2f} ms "
                        f"(ratio {case['ratio']:.3f}); lower {case['lower_seconds']:.1f} s, kernels "
                        f"{case['compile_seconds']:.1f} s ({case['kernels']} element-wise, {case['product_kernels']} fused)")

    passed = sum(1 for c in results["cases"] if c.get("ok"))
    log(f"\n{passed} of {len(results['cases'])} cases within the bound; "
        f"{sum(1 for s in results['schemes'] if s.get('ok'))} of {len(schemes)} schemes verified")
    if failures:
        log(f"FAILURES ({len(failures)}):")
        for failure in failures:
            log(f"  - {failure}")
    results["failures"] = failures
    (out / "imported_gpu.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    (out / "imported_gpu.txt").write_text("\n".join(log.lines) + "\n")
    print(f"wrote {out / 'imported_gpu.txt'} and {out / 'imported_gpu.json'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
