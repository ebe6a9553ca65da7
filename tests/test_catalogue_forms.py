"""Every real form of the public catalogues, the rings they need, and catalogue files made to hurt.

Real files come from ../shared/schemes (skipped when absent); malformed ones
are written into ``tmp_path``.  Each test here failed on the single
``importers.py`` these readers replaced.
"""

from __future__ import annotations

import io
import warnings
import time
import zipfile
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from conftest import scheme_file

import bilinear
from bilinear.diagnostics import BilinearError
from bilinear.frontend.formats.fast_matmul import entry
from bilinear.frontend.importers import READERS, AlternativeBasis, detect_format, read_catalogue
from bilinear.ir import Algorithm, Shape, Span
from bilinear.report import report_data, to_text
from bilinear.verify import report_algorithm
from bilinear.verify.counts import count_algorithm
from bilinear.verify.rings import (
    ApproximateScheme,
    ComplexReport,
    ComplexScheme,
    ModularScheme,
    check_approximate,
    check_complex,
    check_modular,
)


def _write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def _error(path: Path, **options) -> str:
    with pytest.raises(BilinearError) as caught:
        read_catalogue(path, **options)
    (diagnostic,) = caught.value.diagnostics
    return diagnostic.message


# --- the forms that did not load ------------------------------------------------------------------


@pytest.mark.parametrize(
    "relative, shape, rank",
    [
        ("kauers/k108391c6c35ad0c4.exp", (2, 5, 7), 55),  # scaled factors (3*(9*a11 - ...)) and (...)/3
        ("flips/223-11-mod0.exp", (2, 2, 3), 11),  # unparenthesised single entries: c12, a12*b21*(c11+c12)
        ("flips/444-49-mod0.exp", (4, 4, 4), 49),
        ("flips/445-62-mod0.m", (4, 4, 5), 62),  # Mathematica lists, C transposed
        ("fast-matmul/eliminated-grey322-11-49", (3, 2, 2), 11),  # empty substitution blocks
        ("perminov/2x4x9_m58_Q.json", (2, 4, 9), 58),  # Perminov's JSON, fraction strings
        ("plinopt/3x4x7_63_rational-ALT_L.sms", (3, 4, 7), 63),  # alternative basis
    ],
)
def test_every_form_of_the_catalogues_loads_and_verifies(relative, shape, rank):
    scheme = read_catalogue(scheme_file(relative))
    algorithm = scheme.algorithm if isinstance(scheme, AlternativeBasis) else scheme
    assert isinstance(algorithm, Algorithm)
    assert (algorithm.shape, algorithm.rank) == (Shape(*shape), rank)
    report = report_algorithm(algorithm)
    assert report.ok, [d.message for d in report.errors[:3]]


def test_a_scaled_kauers_factor_keeps_its_scale():
    scheme = read_catalogue(scheme_file("kauers/k108391c6c35ad0c4.exp"))
    # Line 2: (a12 - a13 - a22 + a23)*(3*b11 + ...)*(-9*c12 + 6*c22 + ...)/3 — the /3 scales the c factor.
    outputs = {o.block: o.form for o in scheme.outputs}
    assert scheme.products[1].right.coefficient("B11") == 3
    assert outputs["C21"].coefficient("M2") == -3  # -9*c12 / 3, transposed
    assert outputs["C22"].coefficient("M2") == 2  # 6*c22 / 3


def test_a_number_next_to_one_sum_scales_that_sum(tmp_path):
    path = _write(tmp_path, "111-1.exp", "(3*(2*a11))*(b11/6)*c11\n")
    scheme = read_catalogue(path)
    assert scheme.products[0].left.coefficient("A11") == 6
    assert scheme.products[0].right.coefficient("B11") == Fraction(1, 6)
    assert report_algorithm(scheme).ok


def test_implicit_multiplication_as_flips_structured_files_write_it(tmp_path):
    path = _write(tmp_path, "122-x.exp", "(a11)*(2b11 - b12)*(c11)\n")
    scheme = read_catalogue(path)
    assert str(scheme.products[0].right) == "2*B11 - B12"


def test_factors_side_by_side_as_perminovs_copies_write_them(tmp_path):
    # Mathematica's juxtaposition: (a)(b)(c) and (a) (b) c are products.
    path = _write(tmp_path, "122-y.exp", "(a11 + a12) (b21)(c11)\n(a12)(b22) c21\na11 b12 c21\n")
    scheme = read_catalogue(path)
    assert [(str(p.left), str(p.right)) for p in scheme.products] == [("A11 + A12", "B21"), ("A12", "B22"), ("A11", "B12")]
    assert _error(_write(tmp_path, "122-z.exp", "(a11 a12)*(b11)*(c11)\n")) == (
        "expected an operator (+ - * /) between 'a11' and 'a12'"  # one letter side by side: a missing sign
    )


@pytest.mark.parametrize(
    "token, value",
    [
        ("-1/2x2", "-x**2/2"), ("2x", "2*x"), ("(x+x2)", "x**2 + x"), ("(1+-x)", "1 - x"), ("x2i", "x**(-2)"),
        ("-xi", "-1/x"), ("1/2x2i", "1/(2*x**2)"), ("x23", "x**6"),
        # gen.py tries float() first: a number in exponent notation ('e' had been a parameter, 1e5 its 5th power)
        ("1e5", "100000"), ("1e0", "1"), ("-2.5E-1", "-1/4"),
    ],
)
def test_fast_matmul_coefficients_as_gen_py_reads_them(token, value):
    assert str(entry(token, Span("f", 1, 1, 1, 2))) == value


@pytest.mark.parametrize(
    "relative, shape, rank",
    [
        ("fast-matmul/approx/schonhage333-21-117-approx", (3, 3, 3), 21),  # x2, x2i
        ("fast-matmul/approx/smirnov252-16-124-approx", (2, 5, 2), 16),  # (1+-x), (x+x2), -x2
        ("fast-matmul/approx/smirnov333-20-182-approx", (3, 3, 3), 20),
    ],
)
def test_approximate_schemes_in_every_coefficient_form_hold_in_the_limit(relative, shape, rank):
    scheme = read_catalogue(scheme_file(relative))
    assert isinstance(scheme, ApproximateScheme) and (scheme.shape, scheme.rank) == (Shape(*shape), rank)
    report = check_approximate(scheme)
    assert report.holds and not report.ok, [e.message for e in report.errors[:2]]


def test_eliminated_scheme_with_empty_blocks_keeps_its_substitutions():
    scheme = read_catalogue(scheme_file("fast-matmul/eliminated-grey322-11-49"))
    assert [s.name for s in scheme.sums] == ["B_X1"]


# --- PLinOpt: alternative bases, straight-line programs, placeholders, other products -------------------


def test_an_alternative_basis_scheme_is_reported_as_such():
    path = scheme_file("plinopt/3x4x7_63_rational-ALT_L.sms")
    scheme = read_catalogue(path)
    assert isinstance(scheme, AlternativeBasis) and scheme.inner == (62, 62, 62)
    # The basis changes are part of the scheme: A-side and B-side changes, then product-side sums.
    names = [s.name for s in scheme.algorithm.sums]
    assert names[:2] == ["A_X1", "A_X2"] and "B_X1" in names and names[-1] == "M_X62"
    cob = read_catalogue(scheme_file("plinopt/3x4x7_63_rational-CoB_P.sms"))
    assert cob == scheme
    report = bilinear.verify(path)
    assert report.ok
    (note,) = [w for w in report.entries[0].warnings if w.severity == "note"]
    assert "is an alternative-basis scheme" in note.message and "note: " in to_text(report)
    assert bilinear.load(path).algorithms[0].rank == 63


def test_an_alternative_basis_needs_its_basis_changes(tmp_path):
    for part in "LRP":
        (tmp_path / f"3x4x7_63_rational-ALT_{part}.sms").write_bytes(
            scheme_file(f"plinopt/3x4x7_63_rational-ALT_{part}.sms").read_bytes()
        )
    message = _error(tmp_path / "3x4x7_63_rational-ALT_L.sms")
    assert message.startswith("3x4x7_63_rational-ALT_L.sms is in an alternative basis, and its basis changes")


def _written(algorithm: Algorithm) -> tuple:
    """An algorithm's sums, products and outputs as text (its name and spans say where it was read)."""
    return (tuple((s.name, str(s.form)) for s in algorithm.sums),
            tuple((p.name, str(p.left), str(p.right)) for p in algorithm.products),
            tuple((o.block, str(o.form)) for o in algorithm.outputs))


@pytest.mark.parametrize("alt, cob", [("_ALT", "_CoB"), ("16ALT", "16CoB")])
def test_every_alternative_basis_name_plinopt_has_used_reads(tmp_path, alt, cob):
    """PLinOpt's data has also named the pair ``…_accurate_ALT_L.sms`` and ``…_204-16ALT_L.sms``: read as
    plain schemes, the ALT matrices failed 16 blocks, and a CoB file was said to hold 16 products, not 48."""
    for kind, renamed in (("ALT", alt), ("CoB", cob)):
        for part in "LRP":
            source = scheme_file(f"plinopt/3x4x7_63_rational-{kind}_{part}.sms")
            (tmp_path / f"3x4x7_63_rational{renamed}_{part}.sms").write_bytes(source.read_bytes())
    published = read_catalogue(scheme_file("plinopt/3x4x7_63_rational-ALT_L.sms"))
    for given in (f"{alt}_L", f"{cob}_P"):
        scheme = read_catalogue(tmp_path / f"3x4x7_63_rational{given}.sms")
        assert isinstance(scheme, AlternativeBasis) and scheme.inner == published.inner
        assert _written(scheme.algorithm) == _written(published.algorithm)
    assert bilinear.verify(tmp_path / f"3x4x7_63_rational{alt}_L.sms").ok


def test_a_name_ending_in_a_word_with_alt_in_it_is_a_plain_scheme(tmp_path):
    """Only ALT and CoB standing apart (after a separator or a digit) mark an alternative basis."""
    for part in "LRP":
        source = scheme_file(f"plinopt/2x2x2_7_Strassen_{part}.sms")
        (tmp_path / f"2x2x2_7_COBALT_{part}.sms").write_bytes(source.read_bytes())
    assert report_algorithm(read_catalogue(tmp_path / "2x2x2_7_COBALT_L.sms")).ok


def test_a_wrong_basis_change_is_caught(tmp_path):
    for kind in ("ALT", "CoB"):
        for part in "LRP":
            source = scheme_file(f"plinopt/3x4x7_63_rational-{kind}_{part}.sms")
            (tmp_path / source.name).write_bytes(source.read_bytes())
    cob = tmp_path / "3x4x7_63_rational-CoB_L.sms"
    lines = cob.read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if not line.startswith("#") and len(line.split()) == 3 and i > 1)
    i, j, value = lines[index].split()
    lines[index] = f"{i} {j} {Fraction(value) + 1}"
    cob.write_text("\n".join(lines) + "\n")
    assert not report_algorithm(read_catalogue(cob).algorithm).ok


def test_a_program_that_disagrees_with_its_matrix_is_named(tmp_path):
    for part in "LRP":
        for suffix in ("sms", "slp"):
            source = scheme_file(f"plinopt/2x2x2_7_Winograd_{part}.{suffix}")
            (tmp_path / source.name).write_bytes(source.read_bytes())
    program = tmp_path / "2x2x2_7_Winograd_L.slp"
    program.write_text(program.read_text().replace("o0:=i2-i0;", "o0:=i2+i0;"))
    assert _error(program) == "2x2x2_7_Winograd_L.slp computes 1 for entry (1,1); 2x2x2_7_Winograd_L.sms has -1"


def test_a_plinopt_program_is_read_as_written():
    """Winograd's three programs: 4 + 4 + 7 = 15 additions as published (their matrices: 24); an
    output that another assignment reads is a named sum, and the row reads it."""
    algorithm = read_catalogue(scheme_file("plinopt/2x2x2_7_Winograd_L.slp"))
    assert [(s.name, str(s.form)) for s in algorithm.sums] == [
        ("L_o0", "-A11 + A21"), ("L_o1", "A22 + L_o0"), ("R_o5", "-B11 + B12"), ("R_o1", "-B22 + R_o5"),
        ("P_t5", "-M2 + M3"), ("P_t4", "M1 + P_t5"),
    ]
    assert [(str(p.left), str(p.right)) for p in algorithm.products[:2]] == [("L_o0", "B12 - B22"), ("L_o1", "R_o1")]
    assert str(algorithm.outputs[1].form) == "-M5 + M6 + P_t5"
    counts = count_algorithm(algorithm)
    assert (counts.additions_by_side, counts.additions_unshared) == ((4, 4, 7), 24)
    assert report_algorithm(algorithm).ok


def test_a_reassigned_variable_is_a_new_sum_and_what_no_output_needs_is_left_out(tmp_path):
    """PLinOpt's ALT programs assign a variable twice (``o54:=i54;`` then ``o54:=o0-o22;``)."""
    programs = {
        "L": "t:=i0*2;\nt:=t/2-i0/4;\nunused:=i0+t;\no0:=t;\no1:=i0;\n",
        "R": "o0:=i0;\no1:=i1;\n",
        "P": "o0:=i0*4/3;\no1:=i1;\n",
    }
    for part, text in programs.items():
        _write(tmp_path, f"1x1x2_2_twice_{part}.slp", text)
    algorithm = read_catalogue(tmp_path / "1x1x2_2_twice_L.slp")
    assert [(s.name, str(s.form)) for s in algorithm.sums] == [("L_t", "2*A11"), ("L2_t", "-1/4*A11 + 1/2*L_t")]
    assert [str(p.left) for p in algorithm.products] == ["L2_t", "A11"]
    assert report_algorithm(algorithm).ok


def test_a_straight_line_program_with_a_zero_factor_is_refused(tmp_path):
    """A product whose program row computes zero: refused as a .sms row is (the programs' scheme is
    built without the matrices' products since session 28; the check stays)."""
    programs = {"L": "t:=i0-i0;\no0:=i0;\no1:=t;\n", "R": "o0:=i0;\no1:=i1;\n", "P": "o0:=i0;\no1:=i1;\n"}
    for part, text in programs.items():
        _write(tmp_path, f"1x1x2_2_zero_{part}.slp", text)
    assert _error(tmp_path / "1x1x2_2_zero_L.slp") == "product 2 has a zero factor: row 2 of 1x1x2_2_zero_L.slp is empty"


@pytest.mark.parametrize(
    "text, message",
    [
        ("o0:=i0*i1;\n", "a linear program multiplies variables only by numbers"),
        ("o0:=t1+i0;\n", "t1 is used before it is assigned"),
        ("o0:=i0+1;\n", "a straight-line program for a linear map adds no constants"),
        ("o0:=(i0;\n", "this is not a linear expression ('(' was never closed)"),
        ("o1:=i0;\n", "x_L.slp never assigns o0, although it assigns o1"),
        # everything after the first ';' had been dropped unread, a second assignment too (a hunt)
        ("o0:=i0; o0:=i1;\n", "one statement a line: found 'o0:=i1;' after the first ';'"),
        ("o0:=i0; not parsed at all\n", "one statement a line: found 'not parsed at all' after the first ';'"),
        # Python's parser reads these as 10, 16 and 3 (a review)
        ("o0:=i0*1_0;\n", "'1_0' is not a whole number in decimal digits"),
        ("o0:=i0*0x10;\n", "'0x10' is not a whole number in decimal digits"),
        ("o0:=0b11*i0;\n", "'0b11' is not a whole number in decimal digits"),
    ],
)
def test_malformed_straight_line_programs(tmp_path, text, message):
    from bilinear.frontend.formats.sparse import read_slp

    with pytest.raises(BilinearError) as caught:
        read_slp(_write(tmp_path, "x_L.slp", text))
    assert caught.value.diagnostics[0].message == message


def test_a_comment_line_of_a_straight_line_program_is_not_read_as_code(tmp_path):
    """`# o0:=i0+i1;` was read as an assignment to `# o0` and refused (a hunt)."""
    from bilinear.frontend.formats.sparse import read_slp

    program = read_slp(_write(tmp_path, "x_L.slp", "# o0:=i0+i1; an old line\no0:=i0;  # the one\n"))
    assert (program.entries, program.comments) == ({(0, 0): 1}, ("o0:=i0+i1; an old line",))


@pytest.mark.parametrize(
    "name, text, line, message",
    [
        ("x_L.slp", "o0:=i0; # ½\no1:=i0 + éé*t5;\n", 2, "a straight-line program's names and numbers are ASCII; found 'éé'"),
    ],
)
def test_a_non_ascii_character_is_located_by_characters(tmp_path, name, text, line, message):
    """Python's parser locates by UTF-8 byte: an underline was a byte per accented letter too long.
    Names and numbers are ASCII, so the first other character is the error (a comment may hold them)."""
    from bilinear.frontend.formats.sparse import read_slp

    with pytest.raises(BilinearError) as caught:
        read_slp(_write(tmp_path, name, text))
    (diagnostic,) = caught.value.diagnostics
    found = message.rsplit("'", 2)[1]
    column = text.splitlines()[line - 1].index(found) + 1
    assert (diagnostic.message, diagnostic.span.line, diagnostic.span.column, diagnostic.span.end_column) == (
        message, line, column, column + len(found))


def test_a_placeholder_for_a_square_root_is_checked_modulo_what_it_satisfies():
    scheme = read_catalogue(scheme_file("plinopt/2x2x2_7_DPS-accurate_L.sms"))
    assert isinstance(scheme, ModularScheme) and scheme.modulus == 513083  # (1013² − 3) / 2
    assert scheme.reason == "the file writes 1013 for √3; 1013² ≡ 3 modulo 513083"
    report = check_modular(scheme)
    assert report.holds and not report.ok  # 1013 is not √3 over Q
    assert "modulus: the file writes 1013 for √3" in to_text(bilinear.verify(scheme_file("plinopt/2x2x2_7_DPS-accurate_R.sms")))


@pytest.mark.parametrize(
    "name, message",
    [
        ("2o2o4_5_Toom3_L.sms", "2o2o4_5_Toom3_L.sms is a polynomial multiplication scheme (degrees MoKoN), not a matrix product"),
        ("2x2T_3+2_AAdjoint_L.sms", "2x2T_3+2_AAdjoint_L.sms is a scheme for a product by a transpose (A·Aᵀ), not a general matrix product"),
    ],
)
def test_plinopt_files_that_are_not_matrix_products_say_so(tmp_path, name, message):
    assert _error(_write(tmp_path, name, "1 1 R\n1 1 1\n0 0 0\n")) == message


@pytest.mark.parametrize("placeholder, entry, what", [
    ("2 is a placeholder for sqrt(7)", "1", "2² − 7 = -3"),
    ("3 is a placeholder for sqrt(9)", "1/2", "3² − 9 = 0"),
    ("3 is a placeholder for sqrt(7)", "1/2", "3² − 7 = 2, and the coefficients' denominators divide it"),
])
def test_a_placeholder_that_leaves_no_modulus_says_so(tmp_path, placeholder, entry, what):
    """It was read as a modulus below 2, and the reader said only "a modulus is at least 2, not -3";
    one of 0 beside a denominator divided it out forever."""
    for part in "LRP":
        _write(tmp_path, f"1x1x1_1_root_{part}.sms", f"# {placeholder}\n1 1 R\n1 1 {entry}\n0 0 0\n")
    assert _error(tmp_path / "1x1x1_1_root_L.sms") == (
        f"the comment '{placeholder}' leaves no modulus to check the scheme in ({what})")


def test_a_symbol_standing_for_a_root_is_refused_with_the_files_words(tmp_path):
    text = "# X is a placeholder for sqrt(3)\n1 1 R\n1 1 1/2X\n0 0 0\n"
    for part in "LRP":
        _write(tmp_path, f"1x1x1_1_X_{part}.sms", text)
    assert _error(tmp_path / "1x1x1_1_X_L.sms") == "the coefficient '1/2X' holds a symbol (X is a placeholder for sqrt(3))"


# --- complex schemes (Q(i)) --------------------------------------------------------------------------


def test_alphaevolves_complex_444_holds_over_q_i_and_is_not_compiled():
    path = scheme_file("alphatensor/alphaevolve_444_complex.npz")
    scheme = read_catalogue(path)
    assert isinstance(scheme, ComplexScheme) and (scheme.shape, scheme.rank) == (Shape(4, 4, 4), 48)
    assert scheme.u[0][0] == (Fraction(1, 2), Fraction(1, 2))
    report = bilinear.verify(path)
    (entry,) = report.entries
    assert isinstance(entry, ComplexReport) and entry.holds and not report.ok
    assert "holds over Q(i) (complex rationals)" in to_text(report)
    assert report_data(report)["entries"][0]["kind"] == "complex"
    with pytest.raises(BilinearError, match="has complex coefficients .* need complex arithmetic on every block"):
        bilinear.load(path)


def _complex_archive(tmp_path: Path, u, v, w) -> Path:
    path = tmp_path / "tiny.npz"
    np.savez(path, **{"1,1,1": np.array([[[u]], [[v]], [[w]]], dtype=complex)})
    return path


def test_a_wrong_complex_scheme_names_the_block(tmp_path):
    assert check_complex(read_catalogue(_complex_archive(tmp_path, 1j, -1j, 1))).holds  # i·(−i)·1 = 1
    report = check_complex(read_catalogue(_complex_archive(tmp_path, 1j, 1j, 1)))  # i·i = −1
    assert [e.message for e in report.errors] == ["C11 is wrong over Q(i): it has -1*A11*B11 (needs 1)"]


def test_complex_entries_with_no_imaginary_part_are_an_exact_algorithm(tmp_path):
    assert isinstance(read_catalogue(_complex_archive(tmp_path, 1, 1, 1)), Algorithm)


# --- format detection never guesses --------------------------------------------------------------------


@pytest.mark.parametrize("text", ["Dear reader,\nthis is prose.\n",
                                  "this is not a scheme\nit is a note to self\n",  # lowercase: read as fast-matmul
                                  "1 2 3\nthree and four\n"])
def test_content_no_reader_recognises_asks_for_from(tmp_path, text):
    with pytest.raises(BilinearError, match=r"cannot tell which format notes is in; give it with --from \(format=\): bl, fast-matmul"):
        detect_format(_write(tmp_path, "notes", text))


def test_content_two_readers_recognise_asks_for_from(tmp_path):
    path = _write(tmp_path, "rows", "a11 b11 c11\n#\n1 0 1\n#\n1 1 0\n")
    with pytest.raises(BilinearError, match="rows could be fast-matmul or kauers; give the format with --from"):
        detect_format(path)


@pytest.mark.parametrize("suffix, format", [(".m", "mathematica"), (".json", "perminov"), (".exp", "kauers"), (".slp", "plinopt")])
def test_suffixes_pick_their_reader(tmp_path, suffix, format):
    assert detect_format(_write(tmp_path, "x" + suffix, "")) == format


def test_every_reader_is_one_table_entry():
    names = [r.name for r in READERS]
    assert names == ["fast-matmul", "plinopt", "kauers", "mathematica", "perminov", "perminov-text", "alphatensor"]


# --- malformed Mathematica and Perminov files ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text, message",
    [
        ("{{{{1}}, {{1}}, {{1}}}, {{{1}}, {{1}}}}", "expected a product {A, B, C}: three matrices"),
        ("{{{{1, 2}}, {{1}, {1}}, {{1, 1}}}}", "this product's matrices are 1x2 , 2x1 , 1x2; ⟨1,2,1⟩ needs A 1x2, B 2x1 and C 1x1 (transposed)"),
        ("{{{{x}}, {{1}}, {{1}}}}", "expected a rational number such as 3 or -2/3"),
        ("{{{{1/0}}, {{1}}, {{1}}}}", "division by zero in a coefficient"),
        ("{{{{1}}, {{1}}, {{1}}}", "this is not a Mathematica list of products ('{' was never closed)"),
        ("disp('matlab')", "expected a list of products {{A, B, C}, ...}"),
        ("{{{{1}}, {{1}}, [1]}}", "unexpected '[' or ']' in a Mathematica list"),
    ],
)
def test_malformed_mathematica_lists(tmp_path, text, message):
    assert _error(_write(tmp_path, "x.m", text)) == message


def test_malformed_perminov_files(tmp_path):
    assert _error(_write(tmp_path, "a.json", '{"n": [1, 1, 1], "m": 1, "u": [[1]], "v": [[1]], "w": [[1, 2]]}')) == (
        'a.json: row 1 of "w" needs 1 entries'
    )
    assert _error(_write(tmp_path, "b.json", '{"2x2x2-7": 1}')).startswith("b.json is not a scheme")
    assert _error(_write(tmp_path, "c.json", '{"n": [1, 1, 1], "u": [["1/0"]]')).startswith("c.json is not JSON")
    z2 = read_catalogue(_write(tmp_path, "d.json", '{"n": [1,1,1], "m": 1, "z2": true, "u": [[1]], "v": [[1]], "w": [[3]]}'))
    assert isinstance(z2, ModularScheme) and check_modular(z2).holds and not check_modular(z2).ok


def test_a_perminov_file_named_modulo_3_is_read_modulo_3(tmp_path):
    """README lists `mod2` in the name among a modular scheme's marks; Perminov's reader read "z2" alone (a hunt)."""
    scheme = read_catalogue(_write(tmp_path, "x_mod3.json", '{"n": [1,1,1], "m": 1, "u": [[1]], "v": [[1]], "w": [[4]]}'))
    assert isinstance(scheme, ModularScheme) and scheme.modulus == 3 and check_modular(scheme).holds
    text = read_catalogue(_write(tmp_path, "y_mod3.txt", "1 1 1 1\n1\n1\n4\n"))  # perminov-text's too (a review)
    assert isinstance(text, ModularScheme) and text.modulus == 3 and check_modular(text).holds


@pytest.mark.parametrize("name, text, reason", [
    ("x_mod3.json", '{"n": [1,1,1], "m": 1, "u": [[1]], "v": [[1]], "w": [[4]]}', "the name x_mod3.json says so"),
    ("z.json", '{"n": [1,1,1], "m": 1, "z2": true, "u": [[1]], "v": [[1]], "w": [[3]]}', 'the file says "z2": true'),
    ("y_mod3.txt", "1 1 1 1\n1\n1\n4\n", "the name y_mod3.txt says so"),
    ("111-1.mod2.exp", "a11*b11*c11\n", "the name 111-1.mod2.exp says so"),
    ("111-1-mod2.m", "{{{{1}}, {{1}}, {{1}}}}", "the name 111-1-mod2.m says so"),
    ("one-mod2", "# U\n1\n# V\n1\n# W\n1\n", "the name one-mod2 says so"),
])
def test_a_modulus_read_from_a_name_or_a_file_says_which(tmp_path, name, text, reason):
    """verify's modulus_reason was empty where a scheme's name or contents gave its modulus, and said only --mod's
    (and PLinOpt's) reasons (a hunt)."""
    path = _write(tmp_path, name, text)
    assert read_catalogue(path).reason == reason
    data = report_data(bilinear.verify(path))["entries"][0]
    assert data["modulus_reason"] == reason and f"  modulus: {reason}" in to_text(bilinear.verify(path))


def test_perminovs_reduced_files_become_named_sums(tmp_path):
    # A_X1 = 2·A11; M1 = (−A_X1)·B11; C11 = −M1/2 = A11·B11.
    text = (
        '{"n": [1, 1, 1], "m": 1, "z2": false, "u_fresh": [[{"index": 0, "value": 2}]], "v_fresh": [], "w_fresh": [],'
        ' "u": [[{"index": -1, "value": 1}]], "v": [[{"index": 0, "value": 1}]], "w": [[{"index": 0, "value": "-1/2"}]]}'
    )
    scheme = read_catalogue(_write(tmp_path, "1x1x1_m1_reduced.json", text))
    assert [(s.name, str(s.form)) for s in scheme.sums] == [("A_X1", "2*A11")]
    assert str(scheme.products[0].left) == "-A_X1" and report_algorithm(scheme).ok


def test_perminovs_text_files(tmp_path):
    # ⟨1,1,2;2⟩: U = (1, 1), V = (B11, B12), W over Cᵀ = (C11, C12) per product.
    scheme = read_catalogue(_write(tmp_path, "1x1x2_m2_Z.txt", "1 1 2 2\n1 1\n1 0 0 1\n1 0 0 1\n"))
    assert (scheme.shape, scheme.rank) == (Shape(1, 1, 2), 2) and report_algorithm(scheme).ok
    assert _error(_write(tmp_path, "short.txt", "1 1 2 2\n1 1\n")) == (
        "short.txt holds 2 coefficients; ⟨1,1,2⟩ with 2 products needs 10"
    )


# --- issue 12: headers that lie, archives that are not archives, files that are slow -----------------------


def test_a_zero_size_plinopt_header_is_one_clear_error(tmp_path):
    for part in "LRP":
        _write(tmp_path, f"2x2x2_7_S_{part}.sms", "0 4 R\n0 0 0\n")
    assert _error(tmp_path / "2x2x2_7_S_L.sms") == (
        "the header declares a 0x4 matrix; a scheme's matrices have at least one row and column"
    )


def test_a_huge_plinopt_header_is_refused_before_anything_is_allocated(tmp_path):
    for part in "LRP":
        _write(tmp_path, f"2x2x2_7_S_{part}.sms", "2000000000 2000000000 R\n1 1 1\n0 0 0\n")
    started = time.perf_counter()
    message = _error(tmp_path / "2x2x2_7_S_L.sms")
    assert time.perf_counter() - started < 2
    assert message.startswith("the header declares a 2000000000x2000000000 matrix, but the file holds 1 entries")


def _archive(tmp_path: Path, members: dict[str, bytes]) -> Path:
    path = tmp_path / "bad.npz"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _npy(array: np.ndarray) -> bytes:
    stream = io.BytesIO()
    np.lib.format.write_array(stream, array)
    return stream.getvalue()


def test_an_npz_member_that_is_not_npy_is_named(tmp_path):
    path = _archive(tmp_path, {"2,2,2.txt": b"1 2 3"})
    assert _error(path) == "bad.npz holds '2,2,2.txt', which is not an .npy array: this is not a NumPy .npz archive"


def test_an_npz_member_with_a_bad_header_is_named(tmp_path):
    path = _archive(tmp_path, {"2,2,2.npy": b"\x93NUMPY\x01\x00\x10\x00{'descr': nonsense}"})
    assert _error(path).startswith("scheme 2,2,2 of bad.npz: the .npy header is damaged")


@pytest.mark.parametrize("count", [84, 100_000], ids=["small member", "large member"])
def test_an_npz_member_whose_checksum_fails_is_called_damaged(tmp_path, count):
    """A CRC failure was reported as a damaged .npy header, or for a member past zipfile's first
    read as "cannot read": the archive's bytes are damaged, wherever they are."""
    path = _archive(tmp_path, {"2,2,2.npy": _npy(np.ones(count, dtype=np.int64))})
    data = bytearray(path.read_bytes())
    data[data.index(b"\x01\x00\x00\x00\x00\x00\x00\x00") + 1] ^= 0xFF  # an entry, past the header
    path.write_bytes(bytes(data))
    assert _error(path) == "scheme 2,2,2 of bad.npz: the archive is damaged (Bad CRC-32 for file '2,2,2.npy')"


def test_an_npz_header_declaring_a_huge_array_is_refused_before_reading(tmp_path):
    header = _npy(np.zeros((3, 4, 7), dtype=np.int64))
    stream = io.BytesIO()
    np.lib.format.write_array_header_1_0(stream, {"descr": "<i8", "fortran_order": False, "shape": (3, 4, 10**12)})
    path = _archive(tmp_path, {"2,2,2.npy": stream.getvalue() + header[-16:]})
    started = time.perf_counter()
    message = _error(path)
    assert time.perf_counter() - started < 2
    assert message.startswith("scheme 2,2,2 of bad.npz: the header declares an array of shape (3, 4, 1000000000000)")


def test_a_fast_matmul_file_of_a_thousand_one_entry_rows_is_quick(tmp_path):
    path = _write(tmp_path, "rows", "#\n" + "1\n" * 1000 + "#\n1\n#\n1\n")
    started = time.perf_counter()
    message = _error(path)
    assert time.perf_counter() - started < 2
    assert message == "cannot infer the shape from 1000, 1 and 1 rows; give --shape m,k,n"


# --- GF(p) where the file name does not say so -----------------------------------------------------------

FLIP_VERTEX = (  # a rank-8 ⟨2,2,2⟩ scheme valid modulo 2: the flip graph of jakobmoosbauer/flips is over GF(2)
    "(a11)*(b11)*(c11)\n(a12)*(b21)*(c11)\n(a11)*(b12)*(c21)\n(a12)*(b22)*(c21)\n"
    "(a21)*(b11)*(c12)\n(a22)*(b21)*(c12)\n(a21)*(b12)*(c22)\n(a22)*(b22)*(c22)\n"
    "(a11+a12)*(b11)*(c11)\n(a11+a12)*(b11)*(c11)\n"  # the same product twice: 2·(...) ≡ 0 modulo 2
)


def test_mod_reads_a_scheme_in_gf_p(tmp_path):
    path = _write(tmp_path, "00bc2f83230b.exp", FLIP_VERTEX)
    assert not report_algorithm(read_catalogue(path)).ok  # over Q the repeated product is counted twice
    scheme = read_catalogue(path, modulus=2)
    assert isinstance(scheme, ModularScheme) and scheme.reason == "given with --mod 2"
    assert check_modular(scheme).holds and not check_modular(scheme).ok
    report = bilinear.verify(path, modulus=2)
    assert "holds modulo 2 only" in to_text(report) and "modulus: given with --mod 2" in to_text(report)


def test_mod_is_checked(tmp_path):
    path = _write(tmp_path, "00bc2f83230b.exp", FLIP_VERTEX)
    assert _error(path, modulus=1) == "--mod (modulus=) must be a modulus of at least 2, not 1"
    mod2 = _write(tmp_path, "222-x.mod2.exp", FLIP_VERTEX)
    assert _error(mod2, modulus=3) == "222-x.mod2.exp is a scheme modulo 2, not modulo 3 as --mod says"
    with pytest.raises(BilinearError, match=r"--mod \(modulus=\) applies to catalogue schemes, not to .bl files"):
        bilinear.verify(Path(__file__).parents[1] / "algorithms" / "strassen.bl", modulus=2)


def test_the_cli_reads_gf_p_and_complex_schemes(tmp_path, capsys):
    from bilinear.cli import main

    path = _write(tmp_path, "00bc2f83230b.exp", FLIP_VERTEX)
    assert main(["verify", str(path), "--mod", "2"]) == 1  # holds modulo 2 only: never an exact algorithm
    out = capsys.readouterr().out
    assert "modular scheme kauers_00bc2f83230b <2,2,2;10>: holds modulo 2 only" in out
    # the tally had said "0 verified, 1 failed" of a scheme that holds modulo 2
    assert out.rstrip().endswith(f"{path}: 0 verified, 1 holding modulo 2 only, 0 failed")
    assert main(["verify", str(_complex_archive(tmp_path, 1j, -1j, 1))]) == 1
    out = capsys.readouterr().out
    assert "complex scheme tiny_1x1x1 <1,1,1;1>: holds over Q(i) (complex rationals)" in out
    assert out.rstrip().endswith(": 0 verified, 1 holding over Q(i) only, 0 failed")


@pytest.mark.parametrize(
    "relative, shape, rank, sums",
    [
        ("perminov/2x2x2_m7_cr15_cn24_ZT_reduced.json", (2, 2, 2), 7, True),
        ("perminov/2x5x13_m102_Z.txt", (2, 5, 13), 102, False),
    ],
)
def test_perminovs_reduced_and_text_files_from_the_catalogue(relative, shape, rank, sums):
    from bilinear.verify.algorithm import wrong_blocks

    scheme = read_catalogue(scheme_file(relative))
    assert (scheme.shape, scheme.rank, bool(scheme.sums)) == (Shape(*shape), rank, sums)
    assert wrong_blocks(scheme) == ()


def test_a_product_added_to_one_output_of_strassen_is_wrong_in_that_block_only():
    import dataclasses

    from bilinear.ir import Form
    from bilinear.verify.algorithm import wrong_blocks

    strassen = read_catalogue(scheme_file("fast-matmul/strassen"))
    assert wrong_blocks(strassen) == ()
    for index, output in enumerate(strassen.outputs):
        for product in strassen.products:
            changed = output.form + Form.of({product.name: 1})
            outputs = list(strassen.outputs)
            outputs[index] = dataclasses.replace(output, form=changed)
            mutant = dataclasses.replace(strassen, outputs=tuple(outputs))
            wrong = wrong_blocks(mutant)
            assert wrong == (output.block,) and not report_algorithm(mutant).ok


@pytest.mark.parametrize("w_term, u_term, message", [
    ('{"index": 2, "value": 1}', '{"index": 0, "value": 1}', "1x1x1_m1_reduced.json: algorithm scheme_1x1x1_m1_reduced uses M_X2, which is not defined"),
    ('{"index": 0, "value": 1}', '{"index": 3, "value": 1}', "1x1x1_m1_reduced.json: algorithm scheme_1x1x1_m1_reduced uses A_X3, which is not defined"),
    ('{"index": 0, "value": 1}', '{"index": 0, "value": 0}', "1x1x1_m1_reduced.json: product M1 has a zero factor"),
])
def test_perminovs_reduced_names_must_be_defined(tmp_path, w_term, u_term, message):
    """A fresh index past the fresh sums named an undefined sum: in w it verified (exit 0), in u a KeyError."""
    text = ('{"n": [1, 1, 1], "m": 1, "z2": false, "u_fresh": [], "v_fresh": [], "w_fresh": [],'
            f' "u": [[{u_term}]], "v": [[{{"index": 0, "value": 1}}]], "w": [[{w_term}]]}}')
    path = _write(tmp_path, "1x1x1_m1_reduced.json", text)
    assert _error(path) == message
    with pytest.raises(BilinearError):  # verify too: it verified the M_X2 case, exit 0
        bilinear.verify(str(path))


def test_perminovs_reduced_checks_its_lengths_before_building_names(tmp_path):
    """"m": 300000000 built 3·10⁸ product names before finding u had 1 entry (out of memory)."""
    text = ('{"n": [1, 1, 1], "m": 300000000, "z2": false, "u_fresh": [], "v_fresh": [], "w_fresh": [],'
            ' "u": [[{"index": 0, "value": 1}]], "v": [[{"index": 0, "value": 1}]], "w": [[{"index": 0, "value": 1}]]}')
    # (named for its "m": a name that says 1 product is refused first, as cheaply)
    assert _error(_write(tmp_path, "1x1x1_m300000000_reduced.json", text)) == (
        '1x1x1_m300000000_reduced.json: "u" needs 300000000 entries')


def test_a_cyclic_sum_in_a_catalogue_file_is_located(tmp_path):
    text = ('{"n": [1, 1, 1], "m": 1, "z2": false, "u_fresh": [[{"index": 1, "value": 1}]], "v_fresh": [], "w_fresh": [],'
            ' "u": [[{"index": 1, "value": 1}]], "v": [[{"index": 0, "value": 1}]], "w": [[{"index": 0, "value": 1}]]}')
    assert _error(_write(tmp_path, "1x1x1_m1_reduced.json", text)) == (
        "1x1x1_m1_reduced.json: algorithm scheme_1x1x1_m1_reduced has a named sum, A_X1, that depends on itself")


def _alternative_basis_copy(tmp_path, edits: dict[str, tuple[str, str]]) -> Path:
    """The six 3x4x7 alternative-basis files in tmp_path, with ``edits`` (file suffix: old line, new)."""
    for source in scheme_file("plinopt/3x4x7_63_rational-ALT_P.sms").parent.glob("3x4x7_63_rational-*.sms"):
        lines = source.read_text().splitlines()
        for suffix, (old, new) in edits.items():
            if source.name.endswith(suffix):
                lines[lines.index(old)] = new
        (tmp_path / source.name).write_text("\n".join(line for line in lines if line) + "\n")
    return tmp_path / "3x4x7_63_rational-ALT_L.sms"


def test_an_empty_row_of_an_alternative_bases_products_is_a_zero_element(tmp_path):
    """One line gone from the ALT P matrix (row 41's one entry) had left M_X41 named and undefined: a
    StopIteration traceback from the fix-note search, then "uses M_X41, which is not defined", which
    named neither file nor row (a hunt).  Row 41 is now a zero element, and verify names what it breaks."""
    wrong = bilinear.verify(_alternative_basis_copy(tmp_path, {"ALT_P.sms": ("41 42 1", "")}))
    text = to_text(wrong)
    assert not wrong.ok and "error: C11 is wrong: it computes " in text and "not defined" not in text
    assert "note: changing the coefficient of M42 in C11 from 0 to 1 (line 2) would make every equation hold" in text


def test_an_unused_empty_row_of_an_alternative_bases_products_changes_nothing(tmp_path):
    """A 63rd basis element that is zero, which C takes once: the scheme is still right (a hunt)."""
    path = _alternative_basis_copy(tmp_path, {"ALT_P.sms": ("62 63 R", "63 63 R"),
                                              "CoB_P.sms": ("21 62 R", "21 63 R\n1 63 1")})
    assert bilinear.verify(path).ok


@pytest.mark.parametrize("old, new, message", [
    ("o1:=i3+o0;", "o1:=i99999999999999999999999999+o0;",
     "2x2x2_7_Winograd_L.slp uses i99999999999999999999999999 but reads only 5 inputs in all"),
    ("o1:=i3+o0;", "o1:=i3+o0;\no99999999:=i1;", "2x2x2_7_Winograd_L.slp uses o99999999 but assigns only"),
])
def test_a_program_with_a_huge_index_is_refused_at_once(tmp_path, old, new, message):
    """A huge input index hung in infer_shape's divisor loop; a huge output index ran out of memory."""
    for part in "LRP":
        source = scheme_file(f"plinopt/2x2x2_7_Winograd_{part}.slp")
        (tmp_path / source.name).write_bytes(source.read_bytes())
    program = tmp_path / "2x2x2_7_Winograd_L.slp"
    assert old in program.read_text()
    program.write_text(program.read_text().replace(old, new))
    started = time.perf_counter()
    assert _error(program).startswith(message)
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize("value, message", [("inf", "'inf' is not a rational coefficient"), ("x3", "the coefficient 'x3' holds a symbol")])
def test_an_sms_value_spelled_as_a_float_is_not_called_a_symbol(tmp_path, value, message):
    """`1e5`, `1e400` and `inf` were all "a symbol": 1e5 is 100000, inf is no rational."""
    for part, text in (("L", f"1 1 R\n1 1 {value}\n0 0 0\n"), ("R", "1 1 R\n1 1 1\n0 0 0\n"), ("P", "1 1 R\n1 1 1\n0 0 0\n")):
        _write(tmp_path, f"1x1x1_1_t_{part}.sms", text)
    assert _error(tmp_path / "1x1x1_1_t_L.sms") == message
    _write(tmp_path, "1x1x1_1_t_L.sms", "1 1 R\n1 1 1e0\n0 0 0\n")
    assert report_algorithm(read_catalogue(tmp_path / "1x1x1_1_t_L.sms")).ok


def test_a_mathematica_file_whose_name_or_shape_disagrees_with_its_matrices_is_told_which_is_which(tmp_path):
    """The name's shape and the matrices' were swapped in the message."""
    one = "{{{{1}}, {{1}}, {{1}}}}"  # ⟨1,1,1;1⟩
    assert _error(_write(tmp_path, "112-1-mod0.m", one)) == (
        "the name '112-1-mod0.m' says ⟨1,1,2⟩, but the matrices are ⟨1,1,1⟩")
    assert _error(_write(tmp_path, "x.m", one), shape=Shape(1, 1, 2)) == "the matrices are ⟨1,1,1⟩, but the shape given is ⟨1,1,2⟩"


# --- what a catalogue name says of the shape and the product count -----------------------------------

ONE = "1\n#\n1\n#\n1\n"  # fast-matmul's ⟨1,1,1;1⟩
SMS_ONE = "1 1 R\n1 1 1\n0 0 0\n"


@pytest.mark.parametrize("name, text, options, message", [
    # a truncated file was read as another shape: "cannot infer the shape", or ⟨1,9,2;40⟩ for smirnov336
    ("one112-1-2", ONE, {}, "V has 1 row; ⟨1,1,2⟩, as the name 'one112-1-2' says, needs 2, one per B block "
                            "(B11..B12, row-major)"),
    ("one112-1-2", ONE, {"shape": Shape(1, 1, 1)}, "the name 'one112-1-2' says ⟨1,1,2⟩, but the shape given is ⟨1,1,1⟩"),
    ("eliminated-one111-2-0", ONE, {}, "the name 'eliminated-one111-2-0' says 2 products, but it holds 1"),
    ("one111-2-0-approx", ONE, {}, "the name 'one111-2-0-approx' says 2 products, but it holds 1"),
    ("111-2-mod0.exp", "(a11)*(b11)*(c11)\n", {}, "the name '111-2-mod0.exp' says 2 products, but it holds 1"),
    ("k00ab-111-2-mod0.exp", "(a11)*(b11)*(c11)\n", {}, "the name 'k00ab-111-2-mod0.exp' says 2 products, but it holds 1"),
    ("111-2-mod0.m", "{{{{1}}, {{1}}, {{1}}}}", {}, "the name '111-2-mod0.m' says 2 products, but it holds 1"),
])
def test_a_name_that_gives_the_shape_or_the_product_count_is_held_to_it(tmp_path, name, text, options, message):
    assert _error(_write(tmp_path, name, text), **options) == message


def test_a_plinopt_name_that_gives_another_product_count_is_refused(tmp_path):
    for part in "LRP":
        _write(tmp_path, f"1x1x1_2_one_{part}.sms", SMS_ONE)
    assert _error(tmp_path / "1x1x1_2_one_L.sms") == "the name '1x1x1_2_one_L.sms' says 2 products, but it holds 1"


@pytest.mark.parametrize("name, text", [("one111-1-0", ONE), ("strassen", ONE), ("111-1-mod0.exp", "(a11)*(b11)*(c11)\n"),
                                        ("111-k0a44.exp", "(a11)*(b11)*(c11)\n")])
def test_names_that_agree_or_say_nothing_read_as_before(tmp_path, name, text):
    assert read_catalogue(_write(tmp_path, name, text)).rank == 1


def test_an_eliminated_file_cut_inside_its_last_block_says_so(tmp_path):
    """It blamed an intact row of W ("28 entries; it needs 26")."""
    source = scheme_file("fast-matmul/eliminated-grey333-23-125")
    lines = source.read_text().splitlines()
    path = _write(tmp_path, "cut", "\n".join(lines[:62]) + "\n")
    message = _error(path)
    assert message == ("this row of W has 28 entries; it needs 26, one per product and one per product substitution; "
                       "every row of W has 28: 5 product substitutions, but the last block has 3 rows (is the file "
                       "cut short?)"), message


@pytest.mark.parametrize("dimensions, said", [((-1, 2, 2), "shape ⟨-1,2,2⟩ has a dimension below 1"),
                                              ((0, 2, 2), "shape ⟨0,2,2⟩ has a dimension below 1")])
def test_a_shape_with_a_dimension_below_one_says_so(dimensions, said):
    """⟨-1,2,2⟩ was said to have "a zero dimension" (a hunt)."""
    from bilinear.ir.names import Shape

    with pytest.raises(ValueError) as caught:
        Shape(*dimensions)
    assert str(caught.value) == said


# Strassen as a Mathematica list, one product {A, B, C} a line (C transposed: entry (j, i) is C_ij's)
STRASSEN_M = """{{{{1, 0}, {0, 1}}, {{1, 0}, {0, 1}}, {{1, 0}, {0, 1}}},
 {{{0, 0}, {1, 1}}, {{1, 0}, {0, 0}}, {{0, 1}, {0, -1}}},
 {{{1, 0}, {0, 0}}, {{0, 1}, {0, -1}}, {{0, 0}, {1, 1}}},
 {{{0, 0}, {0, 1}}, {{-1, 0}, {1, 0}}, {{1, 1}, {0, 0}}},
 {{{1, 1}, {0, 0}}, {{0, 0}, {0, 1}}, {{-1, 0}, {1, 0}}},
 {{{-1, 0}, {1, 0}}, {{1, 1}, {0, 0}}, {{0, 0}, {0, 1}}},
 {{{0, 1}, {0, -1}}, {{0, 0}, {1, 1}}, {{1, 0}, {0, 0}}}}
"""


@pytest.mark.parametrize("line, old, new, error, fix", [
    # M5's C matrix: C11's -1 (entry 1,1) made -2
    (5, "{{-1, 0}, {1, 0}}}", "{{-2, 0}, {1, 0}}}", (1, 41),
     "changing the coefficient of M5 in C11 from -2 to -1 (line 5) would make every equation hold"),
    # M6's C matrix: C22's 1 (entry 2,2) made 3
    (6, "{{0, 0}, {0, 1}}}", "{{0, 0}, {0, 3}}}", (1, 52),
     "changing the coefficient of M6 in C22 from 3 to 1 (line 6) would make every equation hold"),
])
def test_a_wrong_c_entry_of_a_mathematica_list_is_located_at_it(tmp_path, line, old, new, error, fix):
    """A Mathematica list's wrong C block was located at 1:1, the list's start, and its fix named no line.  A C
    block's coefficients lie in the products' C matrices: it is located at its first (M1's, as a Kauers file's
    block at its first c-entry), and the fix names the line of the entry to change."""
    lines = STRASSEN_M.split("\n")
    assert lines[line - 1].count(old) == 1
    lines[line - 1] = lines[line - 1].replace(old, new)
    algorithm = read_catalogue(_write(tmp_path, "strassen.m", "\n".join(lines)))
    first, *_ = report_algorithm(algorithm).errors
    assert (first.span.line, first.span.column) == error
    assert first.notes == (fix,)


def test_a_correct_mathematica_list_reads_with_its_entries_located(tmp_path):
    """Strassen as a Mathematica list verifies, and each factor's entry is where the file has it."""
    algorithm = read_catalogue(_write(tmp_path, "strassen.m", STRASSEN_M))
    assert not report_algorithm(algorithm).errors
    m7 = algorithm.products[6]
    assert (m7.left.span_of("A22").line, m7.left.span_of("A22").column) == (7, 16)
    assert (m7.right.span_of("B21").line, m7.right.span_of("B21").column) == (7, 32)


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("x-111-1.exp", "(a11)*(b11)*(c11+1if)\n", "expected an operator (+ - * /) between '1' and 'if'"),
        ("x.m", "{{{{1if}}, {{1}}, {{1}}}}", "this is not a Mathematica list of products (invalid syntax)"),
        ("1x1x1_1_x_L.slp", "o0:=i0-1if;\n", "this is not a linear expression (invalid syntax)"),
    ],
    ids=["kauers", "mathematica", "straight-line"],
)
def test_python_parser_warnings_do_not_reach_the_user(tmp_path, name, text, message):
    """The readers that parse with Python's parser refused `1if` in their own words, but only after Python had
    printed its own `<unknown>:1: SyntaxWarning: invalid decimal literal` (a fuzzing hunt): a line that names
    no file and speaks of Python."""
    for part in "RP" if name.endswith("_L.slp") else "":  # a program's other two maps, read after it
        _write(tmp_path, name.replace("_L.", f"_{part}."), "o0:=i0;\n")
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        assert _error(_write(tmp_path, name, text)) == message
    assert [str(warning.message) for warning in shown] == []
