"""Generated CUDA: golden files, nvcc compiles it for every shipped scheme, the manifest, the wheel.

Regenerate the golden files after an intended change with
``BILINEAR_UPDATE_GOLDEN=1 python -m pytest tests/test_codegen.py``.
"""

from __future__ import annotations

import json
import re
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import bilinear
from bilinear.cli import main

from conftest import ALGORITHMS, ROOT, check_golden, cublas_paths

NVCC = shutil.which("nvcc")
CUBLAS = cublas_paths()


@pytest.mark.parametrize(
    "path, options",
    [
        ("algorithms/msmes.bl", {"levels": 2}),
        ("algorithms/rsmm.bl", {"levels": 1, "dtype": "float32"}),
        ("algorithms/winograd.bl", {"levels": 1, "fuse": False}),
    ],
    ids=["msmes", "rsmm-float32", "winograd-unfused"],
)
def test_generated_source_matches_golden(path, options):
    source = bilinear.api.lower_program(ROOT / path, **options).cuda_source()
    check_golden(f"{Path(path).stem}-{options.get('dtype', 'float64')}-{'fused' if options.get('fuse', True) else 'unfused'}.cu", source)


def _nvcc_all(sources: list[Path], objects: Path, include: Path) -> list[str]:
    """Compile every source with nvcc, a few at a time; the error output of each failure."""
    from concurrent.futures import ThreadPoolExecutor

    def one(source: Path) -> str:
        # ptxas at -O0: it still assembles every kernel for sm_90 (and so checks the inline PTX), in 2/3 of the time.
        command = [NVCC, "-arch=sm_90", "-std=c++17", "-Xptxas", "-O0", "-c", str(source),
                   "-o", str(objects / f"{source.parent.name}.o"), f"-I{include}"]
        result = subprocess.run(command, capture_output=True, text=True)
        return "" if result.returncode == 0 else f"{source.name}: {result.stderr}"

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return [error for error in pool.map(one, sources) if error]


@pytest.mark.slow
@pytest.mark.skipif(NVCC is None or CUBLAS is None, reason="needs nvcc and cuBLAS headers (the test extra brings them)")
def test_nvcc_compiles_the_generated_source_of_every_shipped_scheme(tmp_path):
    """`bilinear compile` for each shipped file at two levels (each .cu holds the kernels of both
    element types and the host layer), winograd with breadth-first levels and a schedule `bilinear inplace`
    derives, then nvcc -arch=sm_90 -c
    on every .cu file it wrote.
    (Fused product kernels in an artifact: tests/test_host_layer.py builds msmes with them.)"""
    for path in ALGORITHMS:
        assert main(["compile", str(path), "-o", str(tmp_path / path.stem), "--levels", "2"]) == 0
    # breadth-first kernels of both element types in one file: they had one extern "C" name each
    assert main(["compile", "winograd", "-o", str(tmp_path / "winograd-breadth"), "--levels", "2", "--breadth", "2"]) == 0
    # a derived in-place schedule: statements of four terms with coefficients (`bilinear inplace`)
    assert main(["inplace", "grey234", "--tries", "2", "--steps", "2", "-o", str(tmp_path / "grey234_inplace.bl")]) == 0
    assert main(["compile", str(tmp_path / "grey234_inplace.bl"), "-o", str(tmp_path / "grey234-inplace"), "--levels", "2"]) == 0
    objects = tmp_path / "objects"
    objects.mkdir()
    errors = _nvcc_all(sorted(tmp_path.glob("*/*.cu")), objects, CUBLAS[0])
    assert not errors, "\n".join(errors)


@pytest.mark.skipif(NVCC is None or CUBLAS is None, reason="needs nvcc and cuBLAS headers (the test extra brings them)")
@pytest.mark.parametrize("leaf", ["cublas", "fused"])
def test_nvcc_compiles_a_scheme_with_blocks_past_the_ninth(tmp_path, leaf):
    """Blocks past the ninth are named A[1,10]: the host layer declared `const View A[1,10]_0`, and
    no library of a scheme with a dimension of 10 or more built (AlphaTensor's ⟨11,11,11;896⟩)."""
    from bilinear.ir import block_name

    products = [f"  M{l} = {block_name('A', 1, l)} * {block_name('B', l, 1)}" for l in range(1, 11)]
    scheme = tmp_path / "inner10.bl"
    scheme.write_text("algorithm inner10 <1,10,1;10>:\n" + "\n".join(products) + "\n  C11 = "
                      + " + ".join(f"M{l}" for l in range(1, 11)) + "\n")
    assert main(["compile", str(scheme), "-o", str(tmp_path / "out"), "--leaf", leaf]) == 0
    objects = tmp_path / "objects"
    objects.mkdir()
    errors = _nvcc_all([tmp_path / "out" / "inner10.cu"], objects, CUBLAS[0])
    assert not errors, "\n".join(errors)[:3000]


def test_compile_with_fused_leaves_writes_the_product_kernels(tmp_path):
    """The fused product kernels are lowered at compile time: the .cu defines every one the
    manifest lists, each in its own namespace, and the manifest says at which depth it runs."""
    assert main(["compile", "algorithms/msmes.bl", "-o", str(tmp_path), "--leaf", "fused", "--levels", "2"]) == 0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    source = (tmp_path / "msmes.cu").read_text()
    assert manifest["schema_version"] == 6  # 6: source is a list of files
    products = manifest["product_kernels"]
    assert products and {p["depth"] for p in products} == {0, 1, 2}
    for kernel in manifest["kernels"]:
        assert re.search(rf"__global__ void (__launch_bounds__\([^)]*\) )?{kernel}\(", source), kernel
    for product in products:
        assert f"namespace {product['kernel']} {{" in source
        assert product["kernel"] in manifest["kernels"]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["schema_version"] == 1


def test_library_leaves_have_no_product_kernels(tmp_path):
    assert main(["compile", "algorithms/msmes.bl", "-o", str(tmp_path)]) == 0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["product_kernels"] == [] and "_fused_float" not in (tmp_path / "msmes.cu").read_text()


def test_manifest_describes_levels_and_workspace(tmp_path):
    assert main(["compile", "algorithms/rsmm.bl", "-o", str(tmp_path), "--levels", "2"]) == 0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert [level["schedule"] for level in manifest["levels"]] == ["rsmm", "rsmm"]
    assert manifest["levels"][0]["computes"] == "C = A*B"
    assert manifest["levels"][1]["accumulate_fallback"]["schedule"] == "winograd_cublas"
    # level 1: X and Y of n/2; level 2: X and Y of n/4, which rsmm and its fallback share (they run in turn)
    assert manifest["workspace_bytes"]["4096"] == (2 * 2048**2 + 2 * 1024**2) * 8
    assert {launch["kind"] for launch in manifest["levels"][0]["launches"]} == {"elementwise", "products"}


def test_msmes_manifest_reports_zero_workspace(tmp_path):
    assert main(["compile", "algorithms/msmes.bl", "-o", str(tmp_path), "--levels", "3"]) == 0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert set(manifest["workspace_bytes"].values()) == {0}


@pytest.mark.slow
def test_templates_and_algorithms_ship_in_the_wheel(tmp_path):
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
    )
    if build.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {build.stderr.strip()[-300:]}")
    (wheel,) = tmp_path.glob("bilinear-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "bilinear/templates/elementwise.cu.j2" in names
    assert "bilinear/algorithms/msmes.bl" in names
    assert "bilinear/frontend/grammar.lark" in names
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    script = (
        "import bilinear, bilinear.paths as p;"
        "assert str(p.templates_dir()).startswith(%r);" % str(site)
        + "print(bilinear.api.lower_program(p.algorithms_dir() / 'msmes.bl').cuda_source()[:40])"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(site)})
    assert run.returncode == 0, run.stderr
    assert "Generated by bilinear" in run.stdout


ZEROING = """use "naive2x2.bl"
schedule zeroing for naive2x2: overwrite
  stage z: C11 = C11 - C11; C12 = 0*C12; C21 = C21 - C21; C22 = C22 - C22
  stage p1: A11 * B11 -> +C11;  A11 * B12 -> +C12; A21 * B11 -> +C21; A21 * B12 -> +C22
  stage p2: A12 * B21 -> +C11;  A12 * B22 -> +C12; A22 * B21 -> +C21; A22 * B22 -> +C22
"""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_statement_whose_sum_cancels_writes_zero(tmp_path, dtype):
    """C11 = C11 - C11 verified and ran on NumPy, but rendered as `w0.x =;`: the .cu did not build."""
    (tmp_path / "naive2x2.bl").write_text((ROOT / "algorithms" / "naive2x2.bl").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "zeroing.bl").write_text(ZEROING, encoding="utf-8")
    source = bilinear.api.lower_program(tmp_path / "zeroing.bl", dtype=dtype).cuda_source()
    zero = "0.0" if dtype == "float64" else "0.0f"
    assert "=;" not in source and f"= {zero};" in source
    if NVCC is not None and CUBLAS is not None:
        (tmp_path / "k").mkdir()
        (tmp_path / "k" / "zeroing.cu").write_text(source, encoding="utf-8")
        assert not _nvcc_all([tmp_path / "k" / "zeroing.cu"], tmp_path, CUBLAS[0])


@pytest.mark.parametrize("leaf", ["cublas", "ozaki"])
def test_host_layer_and_ozaki_passes_match_golden(leaf):
    """The library's host layer (host.cu.j2, with host_ozaki.cu.j2 for ozaki leaves) and the ozaki passes:
    their 64-bit index expressions (a view's row·ld, a residue plane's rows_pad·kp) had no golden, and
    int ones passed every test on the CPU (a hunt)."""
    from bilinear.lower.host import host_dtype, render_host

    host = host_dtype(bilinear.api.lower_program(ROOT / "algorithms/strassen.bl", levels=1, leaf=leaf), "strassen")
    check_golden(f"host-strassen-float64-{leaf}.cu", render_host("strassen", [host]))
    if leaf == "ozaki":
        check_golden("ozaki-passes-float64.cu", host.ozaki.sources()[0])


def test_graph_fill_kernel_matches_golden():
    from bilinear.lower.render import render
    from bilinear.runtime.graph_memsets import _FILL

    check_golden("graph-fill.cu", render("fill.cu.j2", name=_FILL))
