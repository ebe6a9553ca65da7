"""The workspace figures of the JSON manifest (bilinear/lower/manifest.py): what one plan's call
allocates, which plan a workspace limit leaves, and from which n calls are refused.

Every expected figure is derived by hand in a comment: the C++ host layer rounds each temporary and
breadth-first buffer up to 32 elements (TEMP_ALIGN) and starts the ozaki leaf's workspace on the next
256-byte boundary (templates/host.cu.j2, ``oz_offset``).
"""

from __future__ import annotations

import json

import bilinear
from bilinear.lower.manifest import library_call_bytes, library_plan, library_workspace_bytes, manifest, refused_from
from bilinear.lower.options import Options
from bilinear.lower.plan import lower


def _lowered(scheme: str, **options):
    return lower(bilinear.api.load(scheme), Options(**options))


def test_a_float32_ozaki_leaf_workspace_starts_at_the_next_256_byte_boundary():
    """Strassen, one breadth-first level, float32, at 2x2x2: three buffers of 7 products of 1x1 blocks, each
    rounded up to 32 floats, hold 3 * 32 * 4 = 384 bytes; the ozaki leaf's workspace starts at 512, the next
    256-byte boundary, as the C++ ``oz_offset`` has it.  Its one 1x1x1 GEMM with 7 moduli (m and n padded to 4,
    k to 128; each part rounded up to 256 bytes): 256 (row maxima of A) + 256 (column maxima of B)
    + 7 * 4 * 128 (A's residues) + 7 * 4 * 128 (B's) + 512 (4 * 7 * 4 * 4 = 448 bytes of int32 products)
    = 8192.  The whole: 512 + 8192 = 8704.  Counted from 384 (no rounding), 8576: a caller that gave the
    _with_workspace entry point the manifest's figure would have been 128 bytes short.  (float64 buffers are
    256-byte multiples already: only float32 can tell.)"""
    lowered = _lowered("strassen", leaf="ozaki", levels=1, breadth=1, dtype="float32")
    assert library_call_bytes(lowered, 2, 2, 2) == 8704
    assert library_workspace_bytes(lowered, 2) == 8704


def test_a_workspace_limit_a_plan_meets_exactly_runs_that_plan():
    """Winograd, two levels, both breadth-first, at 64x64x64: with one breadth-first level the call holds two
    temporaries of 32x32 doubles at the outer level (2 * 1024 * 8 = 16,384 bytes) and three buffers of 7
    products of 16x16 (3 * 7 * 256 * 8 = 43,008), 59,392 in all; with none, 2 * 1024 * 8 + 2 * 256 * 8 = 20,480.
    Under a limit of exactly 59,392 the one-level plan fits (the C++ dispatch takes workspace_bytes <= limit):
    the manifest had said the depth-first plan's 20,480 if a plan meeting the limit exactly were passed over."""
    lowered = _lowered("winograd", levels=2, breadth=2, workspace_limit=59_392)
    assert library_plan(lowered, 64).options.breadth == 1
    assert library_workspace_bytes(lowered, 64) == 59_392
    assert library_call_bytes(library_plan(lowered, 64), 64, 64, 64, 59_392) == 59_392
    assert library_call_bytes(library_plan(lowered, 64), 64, 64, 64, 59_391) is None


def test_a_call_no_breadth_first_plan_fits_is_refused_only_where_the_depth_first_one_does_not_fit_either():
    """Winograd, two levels, both breadth-first, under 30,000 bytes: the depth-first plan the limit falls
    back to holds 2 * ceil32((n//2)^2) * 8 + 2 * ceil32((n//4)^2) * 8 bytes.  At n = 76 and 77: blocks of 38 and
    19, 2 * 1472 * 8 + 2 * 384 * 8 = 29,696, which fits; at 78: blocks of 39 and 19, 2 * 1536 * 8 + 6,144
    = 30,720, which does not (nor do the plans with breadth-first levels, which hold more).  Calls are refused
    from n = 78; counting the first plan alone, as if there were no fallbacks, says from n = 24."""
    assert refused_from(_lowered("winograd", levels=2, breadth=2, workspace_limit=30_000)) == 78


def test_a_zero_workspace_limit_is_refused_from_the_first_size_that_splits():
    """Strassen, one level, under --workspace-limit 0: a 1x1x1 call does not split (blocks of 0 < cutoff 1) and
    needs nothing; 2x2x2 splits into 1x1 blocks with two temporaries, each rounded up to 32 doubles, 512 bytes.
    Calls are refused from n = 2; a limit of 0 read as no limit said nothing of it."""
    assert refused_from(_lowered("strassen", levels=1, workspace_limit=0)) == 2


def test_the_manifest_describes_a_level_of_a_scheme_that_is_not_square():
    """grey234 is a <2,3,4> scheme: A in 2x3 = 6 blocks, B in 3x4 = 12, C in 2x4 = 8.  Its level's shape is
    [m, k, n] = [2, 3, 4], and the fused kernel of its 16 products with one term of B each reads views of all
    6 blocks of A, 12 of B and 8 of C (a shape given as [2, 4, 3], or views with A's and B's counts crossed,
    would have passed every square scheme)."""
    data = manifest(_lowered("grey234", leaf="fused", levels=1), ["grey234.bl"])
    assert data["levels"][0]["shape"] == [2, 3, 4]
    views = [kernel["views"] for kernel in data["product_kernels"] if len(kernel["products"]) == 16]
    assert views == [{"A": 6, "B": 12, "C": 8}]


def test_the_manifest_lists_a_levels_launches_stages_and_temporaries_as_the_schedule_writes_them():
    """rsmm (algorithms/rsmm.bl) holds temporaries X (like A) and Y (like B); its first stage s1 is
    "X = A21 + A22; Y = B12 - B11", one element-wise kernel that reads A21 and A22 into X and B11 and B12 into
    Y, then p1 "C22 = X * Y".  Stages s3 and s4 fuse into one, whose statements run in order (s4 reads the
    C21 s3 writes); the others do not.  Reads and writes crossed, buffers or temporaries left out, a stage
    said unordered, or launches cut short would each have passed."""
    level = manifest(_lowered("rsmm", levels=1), ["rsmm.bl"])["levels"][0]
    assert level["temporaries"] == [{"name": "X", "like": "A"}, {"name": "Y", "like": "B"}]
    first, second = level["launches"][:2]
    assert first["kind"] == "elementwise" and first["buffers"] == ["A21", "A22", "B11", "B12", "X", "Y"]
    assert first["groups"] == [{"like": "A", "reads": ["A21", "A22"], "writes": ["X"]},
                               {"like": "B", "reads": ["B11", "B12"], "writes": ["Y"]}]
    assert second == {"kind": "products", "stage": "p1", "statements": ["C22 = X * Y"]}
    # s1, p1, s2, p2, s3+s4, p3, s5, p4, s6, p5: element-wise and product launches alternate
    assert [launch["kind"] for launch in level["launches"]] == ["elementwise", "products"] * 5
    assert [launch["stage"] for launch in level["launches"] if launch["kind"] == "products"] == ["p1", "p2", "p3", "p4", "p5"]
    assert {stage["name"]: stage["ordered"] for stage in level["stages"] if stage["ordered"]} == {"s3+s4": True}
    assert len(level["stages"]) == 10


def test_the_manifests_workspace_figures_are_in_the_element_type_it_names():
    """Strassen, one level, float32, at n = 1024: two temporaries of 512x512 floats, 2 * 262,144 * 4
    = 2,097,152 bytes, what the library's _sgemm_workspace_bytes returns; the manifest names float32 beside it
    (it had said float64 of float32 figures if it named a fixed type)."""
    data = manifest(_lowered("strassen", levels=1, dtype="float32"), ["strassen.bl"])
    assert data["workspace_bytes_dtype"] == "float32" and data["workspace_bytes"]["1024"] == 2_097_152


def test_each_plan_a_workspace_limit_falls_back_to_says_its_breadth_first_levels_and_namespace(tmp_path):
    """compile winograd --levels 2 --breadth 2 --workspace-limit: three plans, two breadth-first levels, one,
    none; each entry's breadth_first.levels is its own count (not the first plan's, nor 0), and its namespace
    is one the .cu defines, each plan its own."""
    from bilinear.cli import main

    assert main(["compile", "winograd", "--levels", "2", "--breadth", "2", "--workspace-limit", "100000",
                 "-o", str(tmp_path / "lib")]) == 0
    data = json.loads((tmp_path / "lib" / "manifest.json").read_text())
    plans = data["host"]["workspace_limit"]["plans"]
    assert [plan.get("breadth_first", {}).get("levels") for plan in plans] == [2, 1, None]
    namespaces = [plan["namespace"] for plan in plans]
    source = (tmp_path / "lib" / "winograd.cu").read_text()
    assert len(set(namespaces)) == 3 and all(f"namespace {name} {{" in source for name in namespaces), namespaces


def test_the_manifest_counts_ozaki_leaves_in_the_tiles_of_c_a_limit_leaves():
    """Winograd at --levels 0 (one ozaki GEMM, no temporaries) at 64x64x64, float64: k = 64 takes 15 moduli,
    m and n padded to 4 and k to 128.  All of C at once: 512 + 512 (row and column maxima) + 2 * 15 * 64 * 128
    (residues) + 4 * 15 * 64 * 64 (products) = 492,544 bytes, past a limit of 300,000.  In bands of rows with
    B's residues whole, 28 rows would fit (256 + 512 + 15 * 28 * 128 + 122,880 + 4 * 15 * 28 * 64 = 284,928;
    32, 307,968, would not): the fewest bands, three, of 22 rows (r padded to 24): 256 + 512 + 46,080
    + 122,880 + 92,160 = 261,888, what the library's workspace function returns.  The manifest had said the
    492,544 a call never allocates."""
    lowered = _lowered("winograd", leaf="ozaki", levels=0, workspace_limit=300_000)
    assert library_call_bytes(lowered, 64, 64, 64) == 492_544
    assert library_workspace_bytes(lowered, 64) == 261_888


def test_where_no_plan_fits_the_manifest_counts_the_last_plans_workspace():
    """Winograd, two levels, both breadth-first, under 10,000 bytes: at n = 1024 no plan fits, and the library
    runs (and its workspace function counts) the last, depth-first one: two temporaries of 512x512 doubles and
    two of 256x256, 2 * 262,144 * 8 + 2 * 65,536 * 8 = 5,242,880 bytes.  The first plan's figure, or the
    call's without the limit's fallbacks, is another plan's, which no call allocates."""
    lowered = _lowered("winograd", levels=2, breadth=2, workspace_limit=10_000)
    assert library_plan(lowered, 1024).options.breadth == 0
    assert manifest(lowered, ["winograd.bl"])["workspace_bytes"]["1024"] == 5_242_880


def test_where_no_plan_fits_the_last_plans_ozaki_leaves_run_in_tiles():
    """Winograd, one level, breadth-first, ozaki leaves, under 200,000 bytes at 64x64x64 (float64): the
    breadth-first plan needs 356,864 bytes with C at once, the depth-first one 201,216: two temporaries of
    32x32 doubles (16,384) then its 32x32x32 GEMMs with 15 moduli, 256 + 256 + 15 * 32 * 128 * 2 + 4 * 15 * 32 * 32
    = 184,832.  Neither fits; the last runs its leaves in bands of rows in the 183,616 bytes left: 28 rows would
    fit (169,472), so two bands of 16: 256 + 256 + 30,720 + 61,440 + 30,720 = 123,392, and 16,384 + 123,392
    = 139,776 in all.  The first plan's tiles (188,928) are not what the library runs."""
    lowered = _lowered("winograd", leaf="ozaki", levels=1, breadth=1, workspace_limit=200_000)
    assert library_call_bytes(lowered.with_fallbacks()[-1], 64, 64, 64) == 201_216
    assert library_plan(lowered, 64).options.breadth == 0
    assert library_workspace_bytes(lowered, 64) == 139_776
