"""The verification report (report.py, as text, Markdown and JSON) pinned where the rest of the suite let
a changed line pass: a source-mutation audit of report.py and report_sizes.py.

The suite reads the report mostly through substrings of strassen's and grey333's text, so much went
unseen when changed: whole numbers past 2^53 and the rounding of a fraction in JSON, the side an
addition is counted on (strassen's A and B sides are both 5), the error growth of a scheme whose e_max^3
reaches a million, a product never used, a scheme with more products than the classical one, a
schedule of one stage, a product computed times a scale, what compile moves and launches where C starts
at zero and with fused or ozaki leaves, the tally of schemes that hold only modulo p, in the limit or
over Q(i), the place and notes of a Markdown finding, and a lone surrogate in JSON.  Each test checks
exact text or values; the audit found no bug in either module.
"""

from __future__ import annotations

from fractions import Fraction

from conftest import ROOT
from helpers.schedules import STRASSEN_SUMS_STAGE

import bilinear
from bilinear.lower.levels import Options, with_compiled_counts
from bilinear.report import _plain, _tally, json_text, report_data, to_markdown, to_text

ALGORITHMS = ROOT / "algorithms"
NOTE = ("  note: restoration is exact in this proof; in floating point (a+b)-b may differ from a in the last bits, "
        "so `bilinear run` measures the restoration error instead of claiming bitwise recovery")
STRASSEN_TEXT = [
    "algorithm strassen <2,2,2;7>: verified",
    "  Brent equations: every C block equals its classical sum exactly",
    "  products: 7 (classical 8; 1.1429x fewer multiplications per level)",
    "  additions: 18 as written (A side 5, B side 5, C side 8); 18 without sharing",
    "  stability: growth factor 14.8284 per level (L levels: its L-th power); e_max 12, Q 8 (Ballard et al. 2016)",
    "  error growth after L levels (γ^L, e_max^L, L·Q): L=1: 14.8284, 12, 8; L=2: 219.882, 144, 16; "
    "L=3: 3260.51, 1728, 24",
    "  one level at n=8192: 962.1 GFLOP in products, 0.302 GFLOP in additions as written",
    "",
]
MSMES_LAUNCHES = "  kernel launches per level, compiled ({}): "  # msmes's, then what its leaves and passes give


def _lines(path, **options) -> list[str]:
    """The text report of the file ``path``, line by line."""
    return to_text(bilinear.verify(path), **options).splitlines()


def _written(folder, name: str, text: str):
    path = folder / name
    path.write_text(text)
    return path


# ---- report.py: numbers as JSON holds them ------------------------------------------------------------


def test_a_whole_number_stays_whole_up_to_2_to_the_53_and_a_fraction_keeps_four_places():
    """`<` for `<=` or 2^52 for 2^53 made 2^53 a float; rounding to 3 places made 1/3 read 0.333."""
    assert repr(_plain(Fraction(1 << 53))) == "9007199254740992"
    assert repr(_plain(Fraction((1 << 53) + 1))) == "9007199254740992.0"
    assert _plain(Fraction(1, 3)) == 0.3333 and _plain(Fraction(-7, 2)) == -3.5


def test_json_counts_each_sides_additions_on_that_side():
    """Strassen's A and B sides are both 5: swapping A and B went unseen.  grey234's are 31, 32 and 33."""
    (entry,) = report_data(bilinear.verify(ALGORITHMS / "grey234.bl"))["entries"]
    assert entry["additions_by_side"] == {"A": 31, "B": 32, "C": 33}
    assert (entry["speedup_per_level"], entry["growth_factor"]) == (1.2, 65.7461)
    assert [g["levels"] for g in entry["error_growth"]] == [1, 2, 3]
    assert entry["one_level"] == {"n": 8192, "dtype": "float64", "leaf_flops": 20 * 2 * 4096 * 2730 * 2048,
                                  "addition_flops": entry["one_level"]["addition_flops"], "part": [8192, 8190, 8192]}


def test_a_lone_surrogate_is_escaped_in_json_text():
    """A file name's byte that is not UTF-8 is a lone surrogate: the escape must cover \\udc00-\\udfff."""
    assert json_text({"file": "a\udcffb\ud800"}) == '{\n  "file": "a\\udcffb\\ud800"\n}'


# ---- report.py: the text report -----------------------------------------------------------------------


def test_strassen_and_msmes_read_line_by_line():
    """The whole of msmes.bl's text report: a scale of 1 said as none, "none" for no workspace, the bytes
    and launches compile gives for C += A·B and where C starts at zero, and the restore lines."""
    assert _lines(ALGORITHMS / "msmes.bl") == [*STRASSEN_TEXT,
        "schedule msmes for strassen [inplace, restore]: verified",
        "  computes C += A*B; 7 stages (5 element-wise, 2 with products)",
        "    products1: A21 * B11 -> +C21 -C22  = M2",
        "    products1: A11 * B12 -> +C12 +C22  = M3",
        "    products1: A22 * B21 -> +C11 +C21  = M4",
        "    products1: A12 * B22 -> -C11 +C12  = M5",
        "    products2: A11 * B11 -> +C11 +C22  = M1",
        "    products2: A21 * B12 -> +C22  = M6",
        "    products2: A12 * B21 -> +C11  = M7",
        "  workspace per level: none = 0 bytes at n=8192 float64",
        "  element-wise traffic per level at n=8192: 5.75 GiB as written; compiled (cublas leaves, fused passes): "
        "7.75 GiB for C += A·B, 6.75 GiB where C starts at zero",
        MSMES_LAUNCHES.format("cublas leaves, fused passes")
        + "12 (5 element-wise, 7 GEMMs) for C += A·B, 12 where C starts at zero",
        "  restore: every A and B block ends equal to its original",
        NOTE,
        "",
        f"{ALGORITHMS / 'msmes.bl'}: 2 verified, 0 failed"]


def test_a_schedule_that_overwrites_c_says_so_and_has_no_restore_lines():
    """rsmm computes C = A*B with one A and one B block of workspace, nothing where C starts at zero, and
    no restore lines (`or` for `and` before data["ok"] printed them)."""
    lines = _lines(ALGORITHMS / "rsmm.bl")
    assert lines[8:10] == ["schedule rsmm for winograd [overwrite]: verified",
                           "  computes C = A*B; 11 stages (6 element-wise, 5 with products)"]
    assert lines[-5:] == [
        "  workspace per level: 1 A block, 1 B block = 256.00 MiB at n=8192 float64",
        "  element-wise traffic per level at n=8192: 4.25 GiB as written; compiled (cublas leaves, fused passes): "
        "4.12 GiB for C = A·B",
        "  kernel launches per level, compiled (cublas leaves, fused passes): 12 (5 element-wise, 7 GEMMs) for C = A·B",
        "",
        f"{ALGORITHMS / 'rsmm.bl'}: 2 verified, 0 failed"]


def test_a_schedule_of_one_stage_with_a_scaled_product_that_cublas_refuses(tmp_path):
    """"1 stage" (not "1 stages"), a product computed six times over said as "M1 x 6", and the refusal."""
    (tmp_path / "strassen.bl").write_text((ALGORITHMS / "strassen.bl").read_text())
    path = _written(tmp_path, "one.bl", 'use "strassen.bl"\n\nschedule sums for strassen: accumulate\n'
                    + STRASSEN_SUMS_STAGE.replace("(A11 + A22) * (B11 + B22) -> +C11 +C22",
                                                  "(2*A11 + 2*A22) * (3*B11 + 3*B22) -> +1/6*C11 +1/6*C22"))
    assert _lines(path)[8:12] == [
        "schedule sums for strassen [accumulate]: verified",
        "  computes C += A*B; 1 stage (0 element-wise, 1 with products)",
        "    p: (2*A11 + 2*A22) * (3*B11 + 3*B22) -> +1/6*C11 +1/6*C22  = M1 x 6",
        "    p: (A21 + A22) * B11 -> +C21 -C22  = M2"]
    assert _lines(path)[17:] == [
        "  workspace per level: none = 0 bytes at n=8192 float64",
        "  element-wise traffic per level at n=8192: 0 bytes as written; compiled (cublas leaves): refused, the "
        "product (2*A11 + 2*A22) * (3*B11 + 3*B22) multiplies a sum of blocks, and cublas leaves multiply single "
        "blocks (--leaf fused runs it)",
        "",
        f"{path}: 2 verified, 0 failed"]


def test_fused_and_ozaki_leaves_count_their_launches_as_they_run():
    """Fused leaves launch a product kernel per product stage and have no plan from zero; an ozaki leaf is
    counted as one leaf per product, and from zero as the element-wise launches left."""
    report = bilinear.verify(ALGORITHMS / "msmes.bl")

    def launches(leaf: str, fuse: bool) -> str:
        return to_text(with_compiled_counts(report, Options(leaf=leaf, fuse=fuse))).splitlines()[19]

    assert launches("fused", True) == MSMES_LAUNCHES.format("fused leaves, fused passes") + (
        "5 (3 element-wise, 2 product kernels) for C += A·B")
    assert launches("ozaki", False) == MSMES_LAUNCHES.format("ozaki leaves, unfused passes") + (
        "10 element-wise and 7 ozaki leaves (each runs its own passes and an int8 GEMM per modulus and tile) "
        "for C += A·B, 9 element-wise where C starts at zero")
    assert launches("cublas", False) == MSMES_LAUNCHES.format("cublas leaves, unfused passes") + (
        "17 (10 element-wise, 7 GEMMs) for C += A·B, 16 where C starts at zero")


def test_the_error_growth_says_a_million_and_more_in_six_significant_digits():
    """msmes2's e_max^3 is 2985984: `{:g}` says 2.98598e+06 (a plain str said every digit), and γ^3 to
    six digits (`.4g` said 1.063e+07)."""
    assert _lines(ALGORITHMS / "msmes2.bl")[5] == (
        "  error growth after L levels (γ^L, e_max^L, L·Q): L=1: 219.882, 144, 24; L=2: 48348.2, 20736, 48; "
        "L=3: 1.06309e+07, 2.98598e+06, 72")


def test_grey234_says_its_sides_and_the_part_of_n_it_splits():
    """Its A and B sides differ (31, 32), and one level splits 8192×8190×8192 of n = 8192."""
    lines = _lines(ALGORITHMS / "grey234.bl")
    assert lines[2:4] == ["  products: 20 (classical 24; 1.2x fewer multiplications per level)",
                          "  additions: 96 as written (A side 31, B side 32, C side 33); 96 without sharing"]
    assert lines[6] == ("  one level at n=8192 (its 8192×8190×8192 part; the rest is peeled): 916.0 GFLOP in products, "
                        "0.802 GFLOP in additions as written")


def test_a_product_never_used_is_not_counted_against_the_classical_ones(tmp_path):
    """2 products, 1 never used, against 1 classical is "as many" (counting it said "2x more"); a scheme
    computing none gives no per-level ratio at all."""
    path = _written(tmp_path, "y.bl", "algorithm z <1,1,1;2>:\n  M1 = A11 * B11\n  M2 = A11 * B11\n  C11 = M1 + M2 - M2\n")
    assert "  products: 2, of which 1 never used (classical 1; as many multiplications per level)" in _lines(path)
    path = _written(tmp_path, "x.bl", "algorithm z <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1 - M1\n")
    assert "  products: 1, of which 1 never used (classical 1)" in _lines(path)


def test_more_products_than_the_classical_ones_are_said_as_more_to_four_places(tmp_path):
    """naive2x2 with a ninth product in use: 9/8 is "1.125x more" (rounding to 2 places said 1.12)."""
    naive = (ALGORITHMS / "naive2x2.bl").read_text().replace("<2,2,2;8>", "<2,2,2;9>").replace(
        "  M8 = A22 * B22\n", "  M8 = A22 * B22\n  M9 = A11 * B11\n").replace("C11 = M1 + M2", "C11 = 2*M1 - M9 + M2")
    path = _written(tmp_path, "more.bl", naive)
    assert _lines(path)[2] == "  products: 9 (classical 8; 1.125x more multiplications per level)"


def test_the_tally_says_what_holds_only_somewhere_and_counts_the_rest_as_failed():
    """A verified modular entry is verified, not "holding"; holds → holding; the limit only against every x."""
    entries = [
        {"kind": "algorithm", "ok": True},
        {"kind": "modular", "ok": False, "holds_modulo": True, "wrong_over_q": 1, "modulus": 2},
        {"kind": "modular", "ok": True, "holds_modulo": True, "wrong_over_q": 0, "modulus": 2},
        {"kind": "modular", "ok": False, "holds_modulo": False, "wrong_over_q": 1, "modulus": 3},
        {"kind": "approximate", "ok": False, "holds_in_the_limit": True, "error_order": 1, "parameter": "x"},
        {"kind": "approximate", "ok": False, "holds_in_the_limit": True, "error_order": None, "parameter": "t"},
        {"kind": "complex", "ok": False, "holds_over_q_i": True},
        {"kind": "modular", "ok": False, "holds_modulo": True, "wrong_over_q": 2, "modulus": 2},
        {"kind": "algorithm", "ok": False},
    ]
    assert _tally(entries) == ("2 verified, 2 holding modulo 2 only, 1 holding in the limit only, "
                               "1 holding for every t, 1 holding over Q(i) only, 2 failed")


# ---- report.py: Markdown -----------------------------------------------------------------------------


def test_the_markdown_of_rsmm_is_its_two_tables_and_nothing_more():
    """No table of inexact schemes, no blank line for shape conditions it has none of, no findings."""
    path = ALGORITHMS / "rsmm.bl"
    assert to_markdown(bilinear.verify(path)) == "\n".join([
        f"# Verification report: `{path}`",
        "",
        "| algorithm | shape | status | products | additions (shared / unshared) | growth factor | e_max | Q | "
        "GFLOP of one level at n=8192: products / additions as written |",
        "|---|---|---|---|---|---|---|---|---|",
        "| winograd | <2,2,2;7> | verified | 7 | 15 / 24 | 17.853 | 18 | 10 | 962.1 / 0.252 |",
        "",
        "| schedule | for | computes | status | stages | workspace per level at n=8192 float64 | element-wise traffic "
        "per level at n=8192 float64 | kernel launches per level |",
        "|---|---|---|---|---|---|---|---|",
        "| rsmm | winograd | `C = A*B` | verified | 11 | 256.00 MiB | 4.25 GiB as written; compiled (cublas leaves, "
        "fused passes): 4.12 GiB for C = A·B | compiled (cublas leaves, fused passes): 12 (5 element-wise, 7 GEMMs) "
        "for C = A·B |",
        "",
    ])


def test_a_markdown_finding_says_its_line_and_column_and_its_notes(tmp_path):
    """Each finding is placed file:line:column (dropping the column went unseen) and keeps its notes."""
    path = _written(tmp_path, "w.bl", "algorithm s <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1 - M1\n")
    markdown = to_markdown(bilinear.verify(path))
    assert markdown.endswith("\n".join([
        "| s | <1,1,1;1> | FAILED | 1, of which 1 never used | 0 / 0 | 0.0 | 0 | 0 | 0.0 / 0.000 |",
        "",
        "## Findings",
        "",
        f"- `{path}:3:3` error: C11 is wrong: it computes 0 but must be A11\\*B11; misses A11\\*B11",
        "  - note: changing the coefficient of M1 in C11 from 0 to 1 (line 3) would make every equation hold",
        f"- `{path}:2:3` warning: M1 is never used in an output",
        ""]))


def test_a_schedules_workspace_says_the_part_of_n_it_is_counted_at(tmp_path):
    """A grey234 schedule splits 8192×8190×8192: its workspace line said plain "n=8192" when changed."""
    from bilinear.cli import main

    assert main(["inplace", "grey234", "--tries", "2", "--steps", "0", "-o", str(tmp_path / "g.bl")]) == 0
    (workspace,) = [line for line in _lines(tmp_path / "g.bl") if line.startswith("  workspace per level: ")]
    assert workspace.endswith(" at n=8192 (its 8192×8190×8192 part; the rest is peeled) float64"), workspace
