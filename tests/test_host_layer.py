"""The standalone artifact: `bilinear compile` writes <name>.h and a <name>.cu whose host layer
runs the recursion, so `nvcc -shared` builds a library a C/C++ program links against.

CPU: the header and host code say what they should.  Slow (nvcc and cuBLAS headers, from the
``nvidia-cublas`` wheel of the test extra): the library builds and a C++ driver links against
it.  GPU: the driver matches cuBLAS at odd sizes, levels 1-3.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import bilinear
from bilinear.cli import main
from bilinear.lower.host import writes_inputs
from bilinear.verify.stability import stability

from conftest import ROOT, cublas_link_flags, cublas_paths
from helpers.emulated import run_driver

NVCC = shutil.which("nvcc")
DRIVER = ROOT / "tests" / "host_driver" / "driver.cpp"
CUBLAS = cublas_paths()
needs_toolchain = pytest.mark.skipif(
    NVCC is None or CUBLAS is None, reason="needs nvcc and cuBLAS headers (pip install -e '.[test]' brings them)"
)


def _compile(tmp_path: Path, path: str, *options: str) -> Path:
    out = tmp_path / "-".join([Path(path).stem, *[o.strip("-") for o in options]])
    assert main(["compile", path, "-o", str(out), *options]) == 0
    return out


def test_header_declares_both_functions_and_is_honest_about_const(tmp_path):
    msmes = _compile(tmp_path, "algorithms/msmes.bl", "--leaf", "fused")
    header = (msmes / "msmes.h").read_text()
    assert "int msmes_dgemm(cublasHandle_t handle, int m, int n, int k, double alpha, double* A, int lda," in header
    assert "int msmes_sgemm(cublasHandle_t handle, int m, int n, int k, float alpha, float* A, int lda," in header
    assert "NOT const" in header  # msmes overwrites A and B and restores them
    strassen = _compile(tmp_path, "algorithms/strassen.bl")
    assert "double alpha, const double* A, int lda," in (strassen / "strassen.h").read_text()
    manifest = json.loads((msmes / "manifest.json").read_text())
    assert manifest["host"]["functions"] == {"float64": "msmes_dgemm", "float32": "msmes_sgemm"}
    assert manifest["host"]["inputs_const"] is False and manifest["host"]["inputs_restored"] is True
    assert manifest["host"]["shape_conditions"] == []
    source = (msmes / "msmes.cu").read_text()
    # Both element types' kernels are in the library; the host layer launches the fused ones.
    for kernel in manifest["host"]["other_kernels"]["float32"]:
        assert kernel in source
    for product in manifest["product_kernels"]:
        assert f"launch_{product['kernel']}(x," in source


def test_const_inputs_follow_the_schedules():
    for name, writes in [("msmes", True), ("strassen", False), ("rsmm", False), ("winograd", False)]:
        lowered = bilinear.api.lower_program(f"algorithms/{name}.bl", levels=2)
        assert writes_inputs(lowered) == writes, name


def _build(out: Path) -> tuple[Path, str]:
    """nvcc -shared on the artifact, warning as a project built with -Wall -Wextra would; returns the
    library and the build's error or warning output (unused parameters had warned in every file)."""
    include, lib = CUBLAS
    name = out.name.split("-")[0]
    library = out / f"lib{name}.so"
    command = [NVCC, "-std=c++17", "-arch=sm_90", "-Xcompiler", "-fPIC,-Wall,-Wextra", "-shared", str(out / f"{name}.cu"),
               "-o", str(library), f"-I{include}", *cublas_link_flags(lib)]
    result = subprocess.run(command, capture_output=True, text=True)
    said = result.stderr if result.returncode or "warning" in result.stderr else ""
    return library, (f"{out.name}: {said[-3000:]}" if said else "")


def _link_driver(out: Path) -> Path:
    include, lib = CUBLAS
    name = out.name.split("-")[0]
    driver = out / "driver"
    command = [NVCC, "-std=c++17", "-O2", str(DRIVER), "-o", str(driver), f"-DNAME={name}",
               "-include", str(out / f"{name}.h"), f"-I{out}", f"-I{include}", f"-L{out}", f"-l{name}",
               "-Xlinker", f"-rpath={out}", *cublas_link_flags(lib)]
    subprocess.run(command, check=True, capture_output=True, text=True)
    return driver


# Library leaves with temporaries and an overwriting schedule (rsmm), and fused leaves with an
# in-place schedule (msmes): between them every kind of host code (element-wise launches, GEMM
# leaves, fused launches, peeling, workspace, an overwriting top level), and breadth-first levels
# under a depth-first one with batched leaf GEMMs and a workspace limit's fallback plan (winograd), and
# ozaki leaves (strassen; with a limit, the plan that runs them in tiles of C).
BUILDS = [("algorithms/rsmm.bl", "--levels", "2"), ("algorithms/msmes.bl", "--leaf", "fused"),
          ("algorithms/winograd.bl", "--levels", "2", "--breadth", "1", "--launch", "batched", "--workspace-limit", "1G"),
          ("algorithms/strassen.bl", "--leaf", "ozaki", "--levels", "1", "--scaling", "norm", "--workspace-limit", "1G")]


@pytest.mark.slow
@needs_toolchain
def test_the_library_builds_and_a_cpp_driver_links_against_it(tmp_path):
    outs = [_compile(tmp_path, *build) for build in BUILDS]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(_build, outs))
    errors = [error for _, error in results if error]
    assert not errors, "\n".join(errors)
    for out in outs:
        assert _link_driver(out).exists()


@needs_toolchain
def test_fused_fp64_leaves_built_for_an_older_gpu_say_so_once(tmp_path):
    """nvcc -arch=sm_80 printed 385 lines of ptxas errors, one per Hopper-only mma.sync."""
    out = _compile(tmp_path, "algorithms/msmes.bl", "--leaf", "fused")
    command = [NVCC, "-std=c++17", "-arch=sm_80", "-c", str(out / "msmes.cu"), "-o", os.devnull, f"-I{CUBLAS[0]}"]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode != 0 and "ptxas" not in result.stderr
    assert result.stderr.count(": error: #error") == 1, result.stderr[-2000:]
    assert ("bilinear: the fused FP64 product kernels use Hopper's mma.sync .f64 shapes (m16n8k8, m16n8k16): build "
            "this file for sm_90 or newer (-arch=sm_90), or compile the scheme with --leaf cublas") in result.stderr


def _scheme_with_unsafe_comments(tmp_path: Path) -> Path:
    """strassen.bl as a file whose header comment ends in a backslash and whose name holds a newline:
    both went into the .h and .cu as they were, the backslash continuing the `//` line over the include
    guard (nvcc: #endif without #if) and the newline starting a line of code (`int oops;`).  A comment
    ending in the trigraph ??/ did the same to a C99 or C++14 caller (gcc -std=c99: #endif without #if)."""
    body = (ROOT / "algorithms" / "strassen.bl").read_text().split("\n", 2)[2]
    path = tmp_path / "x\nint oops;.bl"
    path.write_text("# data in C:\\schemes\\\n# what next??/\n# \x1b[31mred\n\n" + body, encoding="utf-8")
    return path


def test_the_sources_comments_stay_comments_in_the_library(tmp_path):
    out = tmp_path / "strassen-comments"
    assert main(["compile", str(_scheme_with_unsafe_comments(tmp_path)), "-o", str(out)]) == 0
    kept = "// from x\\nint oops;.bl\n// data in C:\\schemes\\ (end of line)\n// what next??/ (end of line)\n// \\x1b[31mred\n"
    assert f"\n{kept}#ifndef BILINEAR_strassen_H\n" in (out / "strassen.h").read_text()
    assert f"\n{kept}" in (out / "strassen.cu").read_text()


@pytest.mark.slow
@needs_toolchain
def test_a_library_from_sources_with_unsafe_comments_builds(tmp_path):
    out = tmp_path / "strassen-comments"
    assert main(["compile", str(_scheme_with_unsafe_comments(tmp_path)), "-o", str(out)]) == 0
    library, error = _build(out)
    assert not error and library.exists()


SIZES = ["1,1,1", "37,50,21", "129,65,97", "200,151,99", "513,257,1025"]  # m,n,k (column-major)


def _emulated(scheme: str, options: tuple[str, ...], levels: int, sizes: list[str], slow: bool = False):
    marks = (pytest.mark.slow,) if slow else ()
    return pytest.param(scheme, options, levels, sizes, marks=marks, id="-".join((scheme, *options)).replace("--", ""))


# Library leaves: in-place with restore at three levels, temporaries with an overwriting top level,
# named sums, a rectangular shape, and no recursion.  Fused leaves (the generated FP64 mma.sync and
# FP32 FFMA product kernels run too): in place at one level, flattened pure products at two.
EMULATED = [
    _emulated("msmes", ("--levels", "3"), 3, SIZES[:4]),
    _emulated("rsmm", ("--levels", "2"), 2, SIZES[:4]),
    _emulated("winograd", ("--levels", "2"), 2, SIZES[:4]),
    _emulated("grey234", ("--levels", "2"), 2, SIZES[:4]),
    _emulated("strassen", ("--levels", "0"), 0, SIZES[:4]),
    _emulated("msmes", ("--leaf", "fused", "--levels", "1"), 1, SIZES[:3], slow=True),
    _emulated("strassen", ("--leaf", "fused", "--levels", "2"), 2, SIZES[:3], slow=True),
    # Breadth-first levels: under a depth-first one, serial; every level, one batched GEMM; a rectangular grid.
    _emulated("strassen", ("--levels", "2", "--breadth", "1"), 2, SIZES[:4]),
    _emulated("winograd", ("--levels", "2", "--breadth", "2", "--launch", "batched"), 2, SIZES[:4]),
    _emulated("grey234", ("--levels", "1", "--breadth", "1", "--launch", "batched"), 1, SIZES[:4]),
    # ozaki leaves (the passes run on the emulator, the int8 GEMMs exactly)
    _emulated("winograd", ("--leaf", "ozaki", "--levels", "1"), 1, SIZES[:4]),
]


def _driver_arguments(scheme: str, levels: int) -> list[str]:
    """levels, the growth ratio ρ of the error bound, and the βs: 0 where the top schedule overwrites C,
    else 0 (C = A·B, the from-zero plan) and 0.5.  With β = 0 the driver fills C with NaN."""
    lowered = bilinear.api.lower_program(f"algorithms/{scheme}.bl", levels=max(levels, 1))
    algorithm = lowered.levels[0].algorithm
    growth = stability(algorithm).growth_factor / (algorithm.shape.m * algorithm.shape.k * algorithm.shape.n)  # as `bilinear run`
    overwrites = levels > 0 and lowered.levels[0].schedule.overwrites_c
    return [str(levels), repr(growth), "0" if overwrites else "0,0.5"]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("scheme, options, levels, sizes", EMULATED)
def test_the_host_layer_runs_on_the_cpu_emulator(tmp_path, scheme, options, levels, sizes):
    """The generated host layer and kernels (element-wise, and the fused product kernels where the
    leaves are fused), built with g++ against CPU stand-ins for the CUDA runtime and cuBLAS
    (tests/host_emulator), run the driver's checks at odd sizes with padded leading dimensions:
    the recursion, peeling, views, workspace, kernel arguments and the kernels themselves."""
    out = _compile(tmp_path, f"algorithms/{scheme}.bl", *options)
    arguments = _driver_arguments(scheme, levels)
    run = run_driver(out, scheme, [*arguments, *sizes, "33,17,70"])
    assert run.returncode == 0, run.stdout + run.stderr
    betas = arguments[2].split(",")
    assert run.stdout.count(" ok") == 2 * len(betas) * (len(sizes) + 1) and "0 failure(s)" in run.stdout


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("scheme, options, levels", [("strassen", ("--levels", "2", "--breadth", "1"), 2),
                                                     ("msmes", ("--levels", "2"), 2)], ids=["breadth-first", "in-place"])
def test_the_host_layer_stays_inside_its_buffers_under_a_sanitizer(tmp_path, scheme, options, levels):
    """The emulator allocates exactly what is asked (256-byte aligned), so AddressSanitizer sees a read
    or write past the workspace, A, B or C; a workspace counted 128 bytes short had passed the driver."""
    out = _compile(tmp_path, f"algorithms/{scheme}.bl", *options)
    run = run_driver(out, scheme, [*_driver_arguments(scheme, levels), *SIZES[:3], "33,17,70"],
                     flags=("-fsanitize=address,undefined", "-fno-sanitize-recover=all"))
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    assert "0 failure(s)" in run.stdout and "ERROR: AddressSanitizer" not in run.stderr


# (scheme, options, levels): each configuration is built once and run at odd sizes.  Fused leaves with an
# in-place schedule at levels 1 and 2, library leaves in place at 3, flattened pure-product levels (strassen
# fused), temporaries with an overwriting top level (rsmm), named sums (winograd).
GPU_CASES = [
    ("msmes", ("--leaf", "fused"), 1), ("msmes", ("--leaf", "fused", "--levels", "2"), 2),
    ("msmes", ("--levels", "3"), 3), ("strassen", ("--leaf", "fused", "--levels", "2"), 2),
    ("rsmm", ("--levels", "2"), 2), ("winograd", ("--levels", "1"), 1),
    ("strassen", ("--levels", "2", "--breadth", "1"), 2), ("winograd", ("--levels", "2", "--breadth", "2", "--launch", "batched"), 2),
    # 5 MB: the driver's sizes up to 200x151x99 run both breadth-first levels, 513x257x1025 one
    ("winograd", ("--levels", "2", "--breadth", "2", "--launch", "batched", "--workspace-limit", "5000000"), 2),
    # ozaki leaves: the call is one leaf, and leaves under a breadth-first level with norm scaling
    ("winograd", ("--leaf", "ozaki", "--levels", "0"), 0),
    ("strassen", ("--leaf", "ozaki", "--levels", "2", "--breadth", "1", "--scaling", "norm"), 2),
]


@pytest.mark.gpu
@needs_toolchain
@pytest.mark.parametrize("scheme, options, levels", GPU_CASES, ids=[f"{s}-{'-'.join(o)}" for s, o, _ in GPU_CASES])
def test_the_library_matches_cublas_at_odd_sizes(tmp_path, scheme, options, levels):
    out = _compile(tmp_path, f"algorithms/{scheme}.bl", *options)
    _, error = _build(out)
    assert not error, error
    driver = _link_driver(out)
    run = subprocess.run([str(driver), *_driver_arguments(scheme, levels), *SIZES], capture_output=True, text=True)
    print(run.stdout, run.stderr)
    assert run.returncode == 0, run.stdout + run.stderr



@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_the_library_refuses_beta_at_every_size_for_an_overwriting_schedule_and_reads_nothing_at_alpha_zero(tmp_path):
    """rsmm's library returned -10 for beta != 0 only where the size ran a level (as Python did).
    With alpha = 0 it ran the whole schedule; now C = beta*C and A, B are not read (NaN stays out)."""
    from helpers.emulated import statuses

    out = _compile(tmp_path, "algorithms/rsmm.bl", "--levels", "2")
    assert "beta must be 0 at every size (-10 otherwise)" in (out / "rsmm.h").read_text()
    calls = ["rsmm_dgemm(handle, 1, 1, 1, 1.0, A, 64, B, 64, 1.0, C, 64, nullptr)",
             "rsmm_dgemm(handle, 64, 64, 64, 1.0, A, 64, B, 64, 0.5, C, 64, nullptr)",
             "rsmm_dgemm(handle, 64, 64, 64, 1.0, A, 64, B, 64, 0.0, C, 64, nullptr)",
             # alpha = 0 and beta = 0 with a NaN in A: C becomes exactly 0 (the emulator's device memory is host memory)
             "(A[0] = NAN, C[0] = 2.0, C[5] = 1.0, "
             "rsmm_dgemm(handle, 64, 64, 64, 0.0, A, 64, B, 64, 0.0, C, 64, nullptr) * 10 + (C[5] == 0.0 && C[0] == 0.0))"]
    assert statuses(out, "rsmm", calls) == [-10, -10, 0, 1]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_a_failed_workspace_allocation_leaves_c_as_it_was(tmp_path):
    """C had been scaled by beta before the workspace was allocated: a caller falling back to
    cublasDgemm after the error (1002) got beta²·C."""
    from helpers.emulated import statuses

    out = _compile(tmp_path, "algorithms/strassen.bl", "--levels", "1")
    calls = ["(C[0] = 3.0, emulator_allocation_limit = 1000, "
             "strassen_dgemm(handle, 64, 64, 64, 1.0, A, 64, B, 64, 0.5, C, 64, nullptr))",
             "C[0] == 3.0"]
    assert statuses(out, "strassen", calls) == [1002, 1]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_with_beta_zero_an_accumulating_schedule_zeroes_no_c(tmp_path):
    """msmes's library zeroed C (cudaMemset2DAsync) before running msmes with beta = 0; its
    from-zero plan sets C instead.  Its fused-leaf library has no such plan and still zeroes."""
    from helpers.emulated import statuses

    calls = ["(std::fill(A, A + 4096, 0.5), std::fill(B, B + 4096, 2.0), std::fill(C, C + 4096, NAN), emulator_memsets = 0, "
             "msmes_dgemm(handle, 64, 64, 64, 1.0, A, 64, B, 64, 0.0, C, 64, "
             "nullptr) * 100 + emulator_memsets * 10 + (C[0] == 64.0 && C[4095] == 64.0))"]
    cublas = _compile(tmp_path, "algorithms/msmes.bl", "--levels", "2")
    assert "With beta = 0, C is not read before it is written" in (cublas / "msmes.h").read_text()
    assert statuses(cublas, "msmes", calls) == [1]
    fused = _compile(tmp_path, "algorithms/msmes.bl", "--leaf", "fused")
    assert statuses(fused, "msmes", calls) == [11]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("scheme, levels", [("rsmm", "1"), ("rsmm", "2"), ("grey333", "2"), ("rsmm", "2 --breadth 1"),
                                            ("grey333", "2 --breadth 2"), ("winograd", "2 --breadth 2 --workspace-limit 60000000")])
def test_the_manifest_states_the_workspace_the_library_allocates(tmp_path, scheme, levels):
    """rsmm's library allocated its first level's accumulating temporaries too, which never run
    beside the overwriting ones (8 MiB against the manifest's 4 at n = 1024, L1), and the manifest
    did not count the library's rounding of each temporary (grey333: 1,860,496 against 1,860,608).
    With breadth-first levels it counts their three buffers too."""
    from helpers.emulated import statuses

    out = _compile(tmp_path, f"algorithms/{scheme}.bl", "--levels", *levels.split())
    stated = json.loads((out / "manifest.json").read_text())["workspace_bytes"]
    sizes = [1024, 2048, 4096]
    allocated = statuses(out, scheme, [f"int({scheme}_dgemm_workspace_bytes({n}, {n}, {n}) / 8)" for n in sizes])
    assert [stated[str(n)] // 8 for n in sizes] == allocated


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("options, gemms, batched", [
    (("--levels", "2", "--breadth", "1"), 49, 0),  # each of the 7 leaves of 32³ splits into 7 products
    (("--levels", "2", "--breadth", "1", "--launch", "batched"), 49, 7),
    (("--levels", "2", "--breadth", "2", "--launch", "batched"), 49, 1),
    (("--levels", "2", "--breadth", "1", "--cutoff", "17"), 7, 0),  # leaves of 32³ would split into 16³: below it
])
def test_the_library_runs_breadth_first_levels_itself(tmp_path, options, gemms, batched):
    """The library ran the depth-first levels only, with one cuBLAS GEMM where breadth-first levels
    start (7 GEMMs for strassen at two levels, one of them breadth-first)."""
    from helpers.emulated import statuses

    out = _compile(tmp_path, "algorithms/strassen.bl", *options)
    calls = ["(std::fill(A, A + 4096, 0.5), std::fill(B, B + 4096, 2.0), "
             "strassen_dgemm(handle, 64, 64, 64, 1.0, A, 64, B, 64, 0.0, C, 64, nullptr) * 10 + (C[0] == 64.0 && C[4095] == 64.0))",
             "emulator_gemms", "emulator_batched_calls"]
    assert statuses(out, "strassen", calls) == [1, gemms, batched]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("scheme, options", [("strassen", ("--levels", "2", "--breadth", "1")), ("rsmm", ("--levels", "2")),
                                             ("msmes", ("--levels", "2"))])
def test_the_library_runs_in_a_workspace_the_caller_holds(tmp_path, scheme, options):
    """Each call allocated its workspace (cudaMallocAsync) and freed it: 18 GiB per call for winograd's two
    breadth-first levels at n = 16384, which the default memory pool hands back at every synchronization
    (4096: 3.95 ms against 3.18 with the pool kept, on the H100).  `_with_workspace` takes the caller's."""
    from helpers.emulated import statuses

    out = _compile(tmp_path, f"algorithms/{scheme}.bl", *options)
    f = f"{scheme}_dgemm"
    call = f"{f}_with_workspace(handle, 64, 64, 64, 1.0, A, 64, B, 64, {{beta}}, C, 64, {{w}}, {{bytes}}, nullptr)"
    fill = "std::fill(A, A + 4096, 0.5), std::fill(B, B + 4096, 2.0), std::fill(C, C + 4096, 1.0)"
    calls = [
        f"{f}_workspace_bytes(64, 64, 64) > 0",
        # no allocation may happen: every cudaMallocAsync fails
        f"(emulator_allocation_limit = 0, {fill}, {call.format(beta='0.0', w='W', bytes=f'{f}_workspace_bytes(64, 64, 64)')} "
        "* 10 + (C[0] == 64.0 && C[4095] == 64.0))",
        f"(C[0] = 7.0, {call.format(beta='0.0', w='W', bytes=f'{f}_workspace_bytes(64, 64, 64) - 1')})",
        f"{call.format(beta='0.0', w='nullptr', bytes=f'{f}_workspace_bytes(64, 64, 64)')}",
        f"{call.format(beta='0.0', w='(char*)W + 8', bytes=f'{f}_workspace_bytes(64, 64, 64)')}",
        "C[0] == 7.0",  # the refused calls changed nothing (msmes needs no workspace: they ran)
    ]
    if scheme != "rsmm":  # accumulating schedules: beta = 0.5 needs no more workspace than beta = 0
        calls.append(f"({fill}, {call.format(beta='0.5', w='W', bytes=f'{f}_workspace_bytes(64, 64, 64)')} * 10 "
                     "+ (C[0] == 64.5))")
    workspace = f"[] {{ void* w; cudaMalloc(&w, {f}_workspace_bytes(64, 64, 64) + 8); return w; }}()"
    got = statuses(out, scheme, calls, prelude=f"  void* W = {workspace};\n")
    nonzero = scheme != "msmes"  # in place: no workspace, and NULL is fine
    expected = [int(nonzero), 1, -14 if nonzero else 0, -13 if nonzero else 0, -13 if nonzero else 0, int(nonzero)]
    assert got == expected + ([1] if scheme != "rsmm" else [])


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("first, second, names", [
    (("msmes", "--leaf", "fused"), ("strassen", "--leaf", "fused", "--levels", "2"), ["msmes", "strassen"]),
    (("rsmm", "--levels", "2"), ("winograd", "--levels", "2"), ["rsmm", "winograd"]),
    (("strassen",), ("strassen", "--name", "strassen_cublas"), ["strassen", "strassen_cublas"]),
], ids=["fused", "element-wise", "named"])
def test_two_libraries_holding_the_same_kernel_link_into_one_program(tmp_path, first, second, names):
    """Fused kernels are named after their structure, and msmes's and strassen's libraries hold some
    of the same; rsmm's library runs winograd's schedule, and named its element-wise kernels after it.
    Both libraries exported those names (extern "C"), so one program linking both failed with
    "multiple definition of fused_float64_..." (of winograd_cublas_float64_s0).  Every kernel's name
    begins with its library's now (found by an audit and a review).  strassen's default build names
    its kernels after its schedule, strassen_cublas_*, which a build named strassen_cublas had kept
    as they were (an audit): a name given with --name begins every kernel's."""
    outs = [_compile(tmp_path, f"algorithms/{name}.bl", *options) for name, *options in (first, second)]
    kernels = [{line.split("(")[0].split()[-1] for line in (out / f"{name}.cu").read_text().splitlines() if "__global__ void" in line}
               for out, name in zip(outs, names)]
    unprefixed = [{kernel.removeprefix(f"{name}_") for kernel in named} for named, name in zip(kernels, names)]
    assert (kernels[0] | unprefixed[0]) & (kernels[1] | unprefixed[1])  # some kernel is in both, but for the library's name
    assert _linked_and_run(tmp_path, outs, names) == ["1", "1"]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("options", [(), ("--levels", "2", "--breadth", "1")], ids=["depth-first", "breadth-first"])
def test_two_default_named_libraries_whose_names_meet_link_into_one_program(tmp_path, options):
    """strassen's library kept its schedule's kernel names (strassen_cublas_float64_s0, beginning with
    its own name), and so did the library of a schedule a user named strassen_cublas: both exported
    the same 14 kernels, with other bodies (a hunt).  No rule of names keeps such names apart (a name
    may hold any _): a library's element-wise and breadth-first kernels are its own (static), launched
    by its host layer alone."""
    schedule = tmp_path / "strassen_cublas.bl"
    schedule.write_text((ROOT / "algorithms" / "msmes.bl").read_text().replace("schedule msmes", "schedule strassen_cublas")
                        .replace('use "strassen.bl"', f'use "{ROOT / "algorithms" / "strassen.bl"}"'))
    outs = [_compile(tmp_path, "algorithms/strassen.bl", *options), _compile(tmp_path, str(schedule), *options)]
    sources = [(out / f"{name}.cu").read_text() for out, name in zip(outs, ["strassen", "strassen_cublas"])]
    assert all("static __global__ void strassen_cublas_float64_s0(" in source for source in sources)
    assert _linked_and_run(tmp_path, outs, ["strassen", "strassen_cublas"]) == ["1", "1"]


def _linked_and_run(tmp_path: Path, outs: list[Path], names: list[str]) -> list[str]:
    """What a program linking the libraries in ``outs`` (on the emulator) prints: per library, 1 where its
    64³ product of 0.5s and 2s is right."""
    from helpers.emulated import EMULATOR

    calls = ", ".join(f"{name}_dgemm(h, 64, 64, 64, 1.0, A, 64, B, 64, 0.0, C, 64, nullptr) * 10 + (C[9] == 64.0)"
                      for name in names)
    main = tmp_path / "both.cpp"
    main.write_text(
        "".join(f'#include "{name}.h"\n' for name in names) + "#include <cstdio>\nint main() {\n  cublasHandle_t h;\n"
        "  cublasCreate(&h);\n  double *A, *B, *C;\n  cudaMalloc(&A, 4096 * 8), cudaMalloc(&B, 4096 * 8), cudaMalloc(&C, 4096 * 8);\n"
        f'  for (int i = 0; i < 4096; ++i) A[i] = 0.5, B[i] = 2.0;\n  std::printf("%d %d\\n", {calls});\n}}\n')
    objects = []
    for out, name in zip(outs, names):
        objects.append(tmp_path / f"{name}.o")
        build = subprocess.run(["g++", "-std=c++20", "-O0", "-pthread", "-w", f"-I{EMULATOR}", f"-I{out}", "-x", "c++", "-c",
                                str(out / f"{name}.cu"), "-include", str(out / f"{name}.h"), "-o", str(objects[-1])],
                               capture_output=True, text=True)
        assert build.returncode == 0, build.stderr[-3000:]
    binary = tmp_path / "both"
    link = subprocess.run(["g++", "-std=c++20", "-pthread", "-w", f"-I{EMULATOR}", *(f"-I{out}" for out in outs), str(main),
                           *map(str, objects), "-o", str(binary)], capture_output=True, text=True)
    assert link.returncode == 0, link.stderr[-3000:]
    return subprocess.run([str(binary)], capture_output=True, text=True, timeout=120).stdout.split()


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_the_entry_checks_follow_blas_and_refuse_inputs_an_in_place_schedule_cannot_share(tmp_path):
    """msmes with B == A (C = A·A) returned 0 with a wrong C and A left changed; alpha = 0 with
    A = NULL returned -6 (BLAS reads neither); rsmm with m = 0 and beta = 0.5 returned -10 where
    cublasDgemm returns 0; a refused workspace left the handle on the call's stream (found by an audit)."""
    from helpers.emulated import statuses

    fill = "std::fill(A, A + 4096, 0.5), std::fill(B, B + 4096, 2.0), std::fill(C, C + 4096, 3.0)"
    msmes = _compile(tmp_path, "algorithms/msmes.bl", "--levels", "2")
    calls = [f"({fill}, msmes_dgemm(handle, 64, 64, 64, 1.0, A, 64, A, 64, 0.0, C, 64, nullptr) * 10 "
             "+ (C[0] == 3.0 && A[0] == 0.5))",  # refused, nothing changed
             "msmes_dgemm(handle, 64, 64, 64, 1.0, W, 64, W + 4095, 64, 0.0, C, 64, nullptr)",  # one element shared
             "msmes_dgemm(handle, 64, 64, 64, 1.0, W, 64, W + 4096, 64, 0.0, C, 64, nullptr)",  # B just past A
             "msmes_dgemm(handle, 64, 64, 64, 0.0, A, 64, A, 64, 0.5, C, 64, nullptr)"]  # alpha = 0 reads neither
    prelude = "  double* W;\n  cudaMalloc(&W, 2 * 4096 * sizeof(double));\n  std::fill(W, W + 2 * 4096, 1.0);\n"
    assert statuses(msmes, "msmes", calls, prelude) == [-79, -8, 0, 0]
    strassen = _compile(tmp_path, "algorithms/strassen.bl", "--levels", "2", "--breadth", "1")
    calls = [f"({fill}, strassen_dgemm(handle, 64, 64, 64, 1.0, A, 64, A, 64, 0.0, C, 64, nullptr) * 10 + (C[0] == 16.0))",
             f"({fill}, strassen_dgemm(handle, 64, 64, 64, 0.0, nullptr, 64, nullptr, 64, 0.5, C, 64, nullptr) * 10 "
             "+ (C[0] == 1.5))",
             "(cublasSetStream(handle, (cudaStream_t)0x10), strassen_dgemm_with_workspace(handle, 64, 64, 64, 1.0, A, 64, B, "
             "64, 0.0, C, 64, C, 8, (cudaStream_t)0x20))",
             "[&] { cudaStream_t s; cublasGetStream(handle, &s); return s == (cudaStream_t)0x10; }()"]
    assert statuses(strassen, "strassen", calls) == [1, 1, -14, 1]
    rsmm = _compile(tmp_path, "algorithms/rsmm.bl")
    assert statuses(rsmm, "rsmm", ["rsmm_dgemm(handle, 0, 64, 64, 1.0, A, 64, B, 64, 0.5, C, 64, nullptr)",
                                   "rsmm_dgemm(handle, 64, 64, 64, 1.0, A, 64, B, 64, 0.5, C, 64, nullptr)"]) == [0, -10]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("scheme, options, gemms", [("winograd", ("--levels", "2", "--breadth", "2"), 49),
                                                    ("strassen", ("--levels", "0"), 1)], ids=["breadth-first", "no-level"])
def test_with_no_depth_first_level_the_leaf_takes_beta(tmp_path, scheme, options, gemms):
    """With every level breadth-first the library zeroed C (beta = 0) or scaled it (cublasDgeam), and
    the merge then added into it: C moved three times where the merge reads it once, as the Python
    runtime's leaf takes beta (found by the review)."""
    from helpers.emulated import statuses

    out = _compile(tmp_path, f"algorithms/{scheme}.bl", *options)
    fill = "std::fill(A, A + 4096, 0.5), std::fill(B, B + 4096, 2.0)"
    counts = "emulator_memsets * 1000 + emulator_geams * 100 + emulator_gemms"
    calls = [f"({fill}, std::fill(C, C + 4096, NAN), {scheme}_dgemm(handle, 64, 64, 64, 1.0, A, 64, B, 64, 0.0, C, 64, nullptr) "
             "* 10 + (C[0] == 64.0 && C[4095] == 64.0))", counts,
             f"(emulator_gemms = 0, std::fill(C, C + 4096, 2.0), {scheme}_dgemm(handle, 64, 64, 64, 1.0, A, 64, B, 64, 0.5, C, 64, "
             "nullptr) * 10 + (C[0] == 65.0 && C[4095] == 65.0))", counts,
             # k = 0: C = beta*C, by the scaling pass (the leaf multiplies nothing)
             f"(std::fill(C, C + 4096, 2.0), {scheme}_dgemm(handle, 64, 64, 0, 1.0, A, 64, B, 64, 0.5, C, 64, nullptr) * 10 "
             "+ (C[0] == 1.0))", "emulator_geams"]
    assert statuses(out, scheme, calls) == [1, gemms, 1, gemms, 1, 1]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_the_handles_stream_is_set_only_where_the_call_names_another(tmp_path):
    """cublasSetStream resets a workspace set with cublasSetWorkspace: the library set the call's stream
    (and then the handle's back) on every call (found by an audit)."""
    from helpers.emulated import statuses

    out = _compile(tmp_path, "algorithms/strassen.bl")
    call = "strassen_dgemm(handle, 64, 64, 64, 1.0, A, 64, B, 64, 0.0, C, 64, (cudaStream_t){stream})"
    calls = ["(cublasSetStream(handle, (cudaStream_t)0x10), emulator_set_streams = 0, " + call.format(stream="0x10") + ")",
             "emulator_set_streams", call.format(stream="0x20"), "emulator_set_streams",
             "[&] { cudaStream_t s; cublasGetStream(handle, &s); return s == (cudaStream_t)0x10; }()"]
    assert statuses(out, "strassen", calls) == [0, 0, 0, 2, 1]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("limit, batched, workspace", [("400000", 1, 301_056), ("100000", 7, 59_392), ("30000", 0, 20_480),
                                                       ("10000", None, 20_480)])
def test_the_library_runs_the_plan_a_workspace_limit_leaves(tmp_path, limit, batched, workspace):
    """--workspace-limit applied to the Python runtime only: the library ran every breadth-first level at
    every size.  It now runs the plan with the most breadth-first levels whose workspace fits (winograd
    at 64³: 301,056 bytes with two, 59,392 with one, 20,480 depth-first), and returns 4000 where none
    fits, having changed nothing."""
    from helpers.emulated import statuses

    out = _compile(tmp_path, "algorithms/winograd.bl", "--levels", "2", "--breadth", "2", "--launch", "batched",
                   "--workspace-limit", limit)
    calls = ["winograd_dgemm_workspace_bytes(64, 64, 64)",
             "(std::fill(A, A + 4096, 0.5), std::fill(B, B + 4096, 2.0), std::fill(C, C + 4096, 3.0), "
             "winograd_dgemm(handle, 64, 64, 64, 1.0, A, 64, B, 64, 0.0, C, 64, nullptr) * 10 + (C[0] == 64.0) + 2 * (C[0] == 3.0))",
             "emulator_batched_calls"]  # one for two breadth-first levels, one per depth-first leaf for one
    refused = [40002, 0]  # 4000, and C as it was
    assert statuses(out, "winograd", calls) == [workspace, *([1, batched] if batched is not None else refused)]
    manifest = json.loads((out / "manifest.json").read_text())
    assert [plan["breadth_first_levels"] for plan in manifest["host"]["workspace_limit"]["plans"]] == [2, 1, 0]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_a_limited_library_is_right_at_odd_sizes_whichever_plan_runs(tmp_path):
    """Under a limit between the plans' needs, odd sizes run different plans (the driver's checks):
    37x50x21 two breadth-first levels (83,712 bytes), 129x65x97 one (130,048), 200x151x99 none (85,760)."""
    from helpers.emulated import statuses

    out = _compile(tmp_path, "algorithms/winograd.bl", "--levels", "2", "--breadth", "2", "--workspace-limit", "200000")
    sizes = ["37, 50, 21", "129, 65, 97", "200, 151, 99"]
    assert statuses(out, "winograd", [f"winograd_dgemm_workspace_bytes({s})" for s in sizes]) == [83_712, 130_048, 85_760]
    run = run_driver(out, "winograd", [*_driver_arguments("winograd", 2), *SIZES[:4], "33,17,70"])
    assert run.returncode == 0 and "0 failure(s)" in run.stdout, run.stdout + run.stderr


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_a_limited_library_says_and_checks_what_its_fallback_plans_do(tmp_path):
    """msmes with every level breadth-first under a limit: its header took const A and B ("only read")
    and 37³ with B == A returned 0, though the in-place fallbacks write them; rsmm's header said nothing
    of beta, though its fallbacks refuse it; with no plan fitting, a NULL handle returned 4000, not -1
    (found by a review)."""
    from helpers.emulated import statuses

    msmes = _compile(tmp_path, "algorithms/msmes.bl", "--levels", "2", "--breadth", "2", "--workspace-limit", "100000")
    header = (msmes / "msmes.h").read_text()
    assert "const double* A" not in header and "A and B are NOT const" in header
    assert json.loads((msmes / "manifest.json").read_text())["host"]["inputs_const"] is False
    assert statuses(msmes, "msmes", ["msmes_dgemm(handle, 37, 37, 37, 1.0, A, 64, A, 64, 0.0, C, 64, nullptr)"]) == [-8]
    rsmm = _compile(tmp_path, "algorithms/rsmm.bl", "--levels", "2", "--breadth", "2", "--workspace-limit", "200000")
    assert "plan with fewer breadth-first levels, its first level computes\n * C = A*B over C: beta must then be 0" in \
        (rsmm / "rsmm.h").read_text()
    winograd = _compile(tmp_path, "algorithms/winograd.bl", "--levels", "2", "--breadth", "2", "--workspace-limit", "10000")
    call = "winograd_dgemm({handle}, 64, 64, 64, 1.0, A, {lda}, B, 64, 0.0, C, 64, nullptr)"  # no plan fits at 64³
    assert statuses(winograd, "winograd", [call.format(handle="nullptr", lda=64), call.format(handle="handle", lda=8),
                                           call.format(handle="handle", lda=64)]) == [-1, -7, 4000]


def test_two_names_differing_in_case_have_their_own_include_guards():
    """Both headers of Strassen and strassen were guarded by BILINEAR_STRASSEN_H: the second one
    included declared nothing."""
    from bilinear.lower.host import render_header

    first, second = render_header("Strassen", []), render_header("strassen", [])
    assert "#ifndef BILINEAR_Strassen_H" in first and "#ifndef BILINEAR_strassen_H" in second


def test_the_documented_link_line_lets_the_program_find_the_library():
    """The program the manifest's g++ line linked stopped at start: "cannot open shared object file"."""
    from bilinear.lower.artifact import build_commands

    link = build_commands("msmes")[1]
    assert "-L. -lmsmes -Wl,-rpath,$PWD" in link
    example = "../../examples/c_api/main.cpp"  # the README's build folder is build/msmes_fused
    assert link.replace("your_program.cpp", example).replace("-o your_program", "-o main") in (ROOT / "README.md").read_text()


def test_the_manifest_describes_every_plan_a_workspace_limit_falls_back_to(tmp_path):
    """Under --workspace-limit with --breadth, `levels` had been the first plan's alone ([] where its levels
    are all breadth-first) and no entry described the fallbacks' launch plans or breadth-first kernels, though
    `kernels` listed them (msmes --levels 2 --breadth 2: the depth-first msmes level ran undescribed; a hunt)."""
    out = _compile(tmp_path, "algorithms/msmes.bl", "--levels", "2", "--breadth", "2", "--workspace-limit", "64M")
    manifest = json.loads((out / "manifest.json").read_text())
    plans = manifest["host"]["workspace_limit"]["plans"]
    assert [plan["breadth_first_levels"] for plan in plans] == [2, 1, 0]
    assert [[level["schedule"] for level in plan["levels"]] for plan in plans] == [[], ["msmes"], ["msmes", "msmes"]]
    assert [plan.get("breadth_first", {}).get("kernels") for plan in plans] == [
        ["msmes_float64_bf2_split_a", "msmes_float64_bf2_split_b", "msmes_float64_bf2_merge"],
        ["msmes_float64_bf1_split_a", "msmes_float64_bf1_split_b", "msmes_float64_bf1_merge"], None]
    described = {step["kernel"] for plan in plans for level in plan["levels"] for step in _launches(level)
                 if step["kind"] == "elementwise"}
    described |= {kernel for plan in plans for kernel in plan.get("breadth_first", {}).get("kernels", ())}
    assert described == set(manifest["kernels"])


def _launches(level: dict) -> list[dict]:
    """A level's launches, with those of its from-zero and accumulating plans."""
    return [*level["launches"], *(step for key in ("from_zero", "accumulate_fallback") if key in level
                                  for step in _launches(level[key]))]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("name", ["strassen", "rsmm"])
def test_every_library_refuses_an_alpha_or_beta_that_is_not_finite_as_python_does(tmp_path, name):
    """A library whose coefficients scale alpha returned -5 for alpha = NaN or inf (its range check), and
    strassen's returned 0 with NaN in C: the same call, two answers (a hunt).  Both refuse, as the Python
    runtime does: -5 (alpha, argument 5) and -10 (beta, argument 10), and nothing runs."""
    from helpers.emulated import statuses

    out = _compile(tmp_path, f"algorithms/{name}.bl")
    call = f"{name}_dgemm(handle, 64, 64, 64, {{}}, A, 64, B, 64, {{}}, C, 64, nullptr)"
    calls = [call.format(alpha, beta) for alpha, beta in (("NAN", "0.0"), ("INFINITY", "0.0"), ("-INFINITY", "0.0"),
                                                           ("1.0", "NAN"), ("1.0", "INFINITY"), ("1.0", "0.0"))]
    assert statuses(out, name, calls) == [-5, -5, -5, -10, -10, 0]
    header = (out / f"{name}.h").read_text()
    assert " * alpha and beta must be finite (-5 and -10 otherwise, nothing run).\n" in header


def test_an_overwriting_librarys_header_keeps_beta_zero_with_alpha_zero(tmp_path):
    """rsmm's header said both "beta must be 0 at every size" and "With alpha = 0, C = beta*C" (a hunt)."""
    header = (_compile(tmp_path, "algorithms/rsmm.bl") / "rsmm.h").read_text()
    assert " * With alpha = 0, C = 0 (beta must still be 0) and, as in BLAS, A and B are not read.\n" in header
    assert "C = beta*C" not in header
    assert " * With alpha = 0, C = beta*C and (as in BLAS) A and B are not read.\n" in (
        _compile(tmp_path, "algorithms/strassen.bl") / "strassen.h").read_text()


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("leaf", ["cublas", "fused"])
def test_the_library_refuses_an_alpha_its_leaves_would_scale_past_the_range_as_python_does(tmp_path, leaf):
    """C11 = 3·M1 − 2·M2: the leaves run with 3·alpha, inf in float32 for alpha = 1.5e38.  The Python
    runtime refused the call; the library returned 0 with NaN in C (a hunt).  It now returns -5 (alpha,
    argument 5, invalid) before anything runs, and takes an alpha that fits."""
    from helpers.emulated import statuses

    path = tmp_path / "weighed.bl"
    path.write_text("algorithm weighed <1,1,1;2>:\n  M1 = A11 * B11\n  M2 = A11 * B11\n  C11 = 3*M1 - 2*M2\n")
    out = _compile(tmp_path, str(path), "--leaf", leaf)
    prelude = ("  float *a, *b, *c;\n  cudaMalloc(&a, 64 * 64 * sizeof(float)), cudaMalloc(&b, 64 * 64 * sizeof(float)), "
               "cudaMalloc(&c, 64 * 64 * sizeof(float));\n  std::fill(a, a + 4096, 1e-3f), std::fill(b, b + 4096, 1e-3f);\n")
    calls = ["(std::fill(c, c + 4096, 7.0f), weighed_sgemm(handle, 64, 64, 64, 1.5e38f, a, 64, b, 64, 1.0f, c, 64, nullptr) "
             "* 10 + (c[0] == 7.0f && c[4095] == 7.0f))",  # refused, C as it was
             "weighed_sgemm(handle, 64, 64, 64, 1e37f, a, 64, b, 64, 0.0f, c, 64, nullptr) * 10 + std::isfinite(c[0])",
             "weighed_dgemm(handle, 64, 64, 64, 1.5e38, A, 64, B, 64, 0.0, C, 64, nullptr)",  # in float64's range
             "weighed_dgemm(handle, 64, 64, 64, 1e308, A, 64, B, 64, 0.0, C, 64, nullptr)",
             "weighed_sgemm(handle, 64, 64, 64, NAN, a, 64, b, 64, 0.0f, c, 64, nullptr)"]
    assert statuses(out, "weighed", calls, prelude) == [-49, 1, 0, -5, -5]
    product = bilinear.compile(path, backend="numpy", dtype="float32", leaf=leaf)
    with pytest.raises(ValueError, match="alpha = 1.5e\\+38 times 3"):
        product(np.full((4, 4), 1e-3, dtype=np.float32), np.full((4, 4), 1e-3, dtype=np.float32), alpha=1.5e38)
