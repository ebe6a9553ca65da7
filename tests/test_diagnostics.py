"""Malformed input gives one clear, located message: exact texts, line:col, caret.

Each bad input of issue 2 is a small file in fixtures/bad/ (or, for binary and
non-UTF-8 bytes, written to tmp_path).  The expected message and position
are spelled out, so a change in wording is a deliberate one.
"""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
from conftest import FIXTURES, ROOT
from helpers.schemes import STRASSEN_UVW

import bilinear
from bilinear.verify.expand import bilinear as bilinear_of
from bilinear.cli import main
from bilinear.diagnostics import BilinearError, counted, render
from bilinear.frontend.loader import program_from_text
from bilinear.verify import verify_program

BAD = FIXTURES / "bad"


def _errors(path) -> list[tuple[int, int, str]]:
    """(line, column, message) of every diagnostic loading ``path`` raises."""
    with pytest.raises(BilinearError) as caught:
        bilinear.load(path)
    return [(d.span.line, d.span.column, d.message) for d in caught.value.diagnostics]


def _only_error(path):
    (error,) = pytest.raises(BilinearError, bilinear.load, path).value.diagnostics
    return error


CASES = {
    "unclosed_paren.bl": (2, 32, "unexpected end of line; expected ')', '*', '+', '-' or '/'"),
    "missing_shape.bl": (1, 18, "unexpected ':'; expected '<'"),
    "double_star.bl": (2, 13, "unexpected '*'; expected '(', '+', '-', a name or a number"),
    "block_outside_shape.bl": (
        3, 8, "A31 is not a block of A: algorithm wide ⟨2,2,2⟩ splits A into 2x2 blocks (A11..A22)",
    ),
    "one_index_block.bl": (2, 8, "A1 is not a block name: blocks take a row and a column, e.g. A12 or A[1,2]"),
    "undefined_name.bl": (4, 14, "M3 is not defined"),
    "duplicate_product.bl": (3, 3, "M1 is defined twice"),
    "duplicate_output.bl": (4, 3, "C11 is defined twice"),
    "duplicate_definition.bl": (5, 1, "x is defined twice"),
    "one_factor.bl": (3, 9, "C11 uses M1, a sum of A blocks, not a product"),
    "division_by_zero.bl": (2, 8, "division by zero in a coefficient"),
    "reversed_product.bl": (2, 3, "M1 is written (B side) * (A side); products are (A side) * (B side): swap the factors"),
    "missing_output.bl": (1, 1, "algorithm x has no equation for C12"),
    "product_in_output.bl": (2, 3, "C11 is a product; name it (M = ... * ...) and write C11 as a sum of products"),
    "unknown_property.bl": (3, 35, "unknown schedule property 'fast'"),
    "missing_use.bl": (1, 1, "cannot find 'no_such_file.bl': looked in {folder} and in the shipped algorithms"),
    "empty.bl": (1, 1, "the file defines no algorithm, table or schedule"),
    # an empty stage was a syntax error at the next stage's name ("unexpected 'b'; expected '*', ...")
    "empty_stage.bl": (4, 3, "stage a has no statements"),
    "empty_last_stage.bl": (5, 3, "stage b has no statements"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_malformed_file_gives_one_located_message(name):
    path = BAD / name
    line, column, message = CASES[name]
    error = _only_error(path)
    assert (error.span.path, error.span.line, error.span.column) == (str(path), line, column)
    assert error.message == message.format(folder=path.parent)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_rendered_message_quotes_the_line_with_a_caret(name):
    error = _only_error(BAD / name)
    lines = render(error).splitlines()
    assert lines[0] == f"{error.span}: error: {error.message}"
    source = (BAD / name).read_text(encoding="utf-8").split("\n")
    assert lines[1] == f"{error.span.line:>5} | {source[error.span.line - 1]}"
    caret = lines[2]
    assert caret.startswith("      | ") and caret[8:].lstrip(" ").startswith("^")
    assert len(caret[8:]) - len(caret[8:].lstrip(" ")) == error.span.column - 1


def test_notes_point_at_the_first_definition():
    error = _only_error(BAD / "duplicate_product.bl")
    assert error.notes == (f"first defined at {BAD / 'duplicate_product.bl'}:2:3",)


def test_a_product_with_one_factor_points_at_its_definition():
    error = _only_error(BAD / "one_factor.bl")
    assert error.notes == (
        f"M1 is defined at {BAD / 'one_factor.bl'}:2:3 with one factor; a product needs two: M1 = (A side) * (B side)",
    )


def test_a_use_cycle_names_the_chain_at_the_use_that_closes_it():
    first, second = BAD / "cycle_first.bl", BAD / "cycle_second.bl"
    error = _only_error(first)
    assert error.message == "use cycle: cycle_first.bl -> cycle_second.bl -> cycle_first.bl"
    assert (error.span.path, error.span.line, error.span.column) == (str(second), 1, 1)
    assert _only_error(second).message == "use cycle: cycle_second.bl -> cycle_first.bl -> cycle_second.bl"


def test_a_file_that_uses_itself_is_a_cycle(tmp_path):
    path = tmp_path / "self.bl"
    path.write_text('use "self.bl"\n')
    assert _errors(path) == [(1, 1, "use cycle: self.bl -> self.bl")]


def test_a_use_chain_a_thousand_files_deep_is_refused_without_a_traceback(tmp_path):
    """Each level recursed in the loader and in lark: a RecursionError near 950 files."""
    (tmp_path / "f0.bl").write_text((ROOT / "algorithms" / "strassen.bl").read_text())
    for level in range(1, 1001):
        (tmp_path / f"f{level}.bl").write_text(f'use "f{level - 1}.bl"\n')
    top = tmp_path / "top.bl"
    top.write_text('use "f1000.bl"\n')
    (error,) = pytest.raises(BilinearError, bilinear.load, top).value.diagnostics
    assert error.message == "`use` nests more than 200 files deep, from top.bl"
    (tmp_path / "shallow.bl").write_text('use "f150.bl"\nalgorithm one <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n')
    assert bilinear.load(tmp_path / "shallow.bl").algorithm("strassen")


def test_a_binary_file_is_refused_at_its_first_nul_byte(tmp_path):
    path = tmp_path / "binary.bl"
    path.write_bytes(b"algorithm x <1,1,1>:\n  M1 = A11\x00\x01 * B11\n")
    assert _errors(path) == [(2, 11, f"{path} is a binary file, not .bl text")]


def test_a_non_utf8_file_is_refused_at_the_bad_byte_and_quoted(tmp_path):
    path = tmp_path / "latin1.bl"
    path.write_bytes("algorithm x <1,1,1>:  # café\n".encode("latin-1"))
    error = _only_error(path)
    assert (error.span.line, error.span.column, error.message) == (1, 28, f"{path} is not UTF-8 text (byte 0xe9)")
    assert render(error).splitlines()[1:] == ["    1 | algorithm x <1,1,1>:  # caf\ufffd", "      | " + " " * 27 + "^"]


def test_use_of_an_empty_path_says_it_names_no_file(tmp_path):
    """`use ""` said "<the including file's folder> is a directory, not a .bl file" (a CLI hunt)."""
    path = tmp_path / "uses_nothing.bl"
    path.write_text('use ""\n')
    assert _errors(path) == [(1, 1, "`use` names no file: give it a .bl file's name, as in use \"strassen.bl\"")]


def test_use_looks_in_the_shipped_folder_only_for_what_lies_inside_it(tmp_path):
    """`use "../tests/golden/strassen-inplace.bl"` climbed out of the shipped algorithms/ and read a
    repository test file (a hunt); a path that leaves the folder is looked for beside the file only."""
    (ROOT / "tests" / "golden" / "strassen-inplace.bl").stat()  # the file the climb had found
    path = tmp_path / "climbs.bl"
    path.write_text('use "../tests/golden/strassen-inplace.bl"\n')
    assert _errors(path) == [(1, 1, f"cannot find '../tests/golden/strassen-inplace.bl': looked in {tmp_path}")]
    path.write_text('use "strassen.bl"\nalgorithm one <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n')  # a plain name is
    assert bilinear.load(path).definition("strassen") is not None  # still found among the shipped ones


def test_use_of_an_absolute_path_says_where_it_looked(tmp_path):
    """It said "looked in <the file's folder> and in the shipped algorithms" where it looked only there."""
    path = tmp_path / "absolute.bl"
    path.write_text(f'use "{tmp_path}/none.bl"\n')
    assert _errors(path) == [(1, 1, f"cannot find '{tmp_path}/none.bl'")]


# --- fast-matmul coefficient files -------------------------------------------------------



@pytest.mark.parametrize(
    "old, new, args, where, message",
    [
        ("0 1 0 0 0 1 0\n", "0 1 0 0 0 1 0\n0 1 0 0 0 1 0\n", ["--shape", "2,2,2"], (1, 1),
         "U has 5 rows; ⟨2,2,2⟩ needs 4, one per A block (A11..A22, row-major)"),
        ("1 0 -1 0 1 0 1", "1 0 -1 0 1.5.2 0 1", [], (9, 10), "'1.5.2' is not a rational coefficient"),
        ("0 0 1 0 0 1 0", "0 0 1 0 0 1/0 0", [], (7, 11), "'1/0' is not a rational coefficient"),
        ("#\n1 0 0 1 -1 0 1", "1 0 0 1 -1 0 1", [], (1, 1), "expected U, V and W blocks separated by '#' lines; found 2"),
    ],
    ids=["row-count", "bad-number", "zero-denominator", "two-blocks"],
)
def test_malformed_fast_matmul_files_exit_1_with_a_located_message(tmp_path, capsys, old, new, args, where, message):
    path = tmp_path / "strassen-edited"
    path.write_text(STRASSEN_UVW.replace(old, new, 1))
    assert main(["verify", str(path), "--from", "fast-matmul", *args]) == 1
    first = capsys.readouterr().err.splitlines()[0]
    assert first == f"{path}:{where[0]}:{where[1]}: error: {message}"


@pytest.mark.parametrize("separator", ["\f", "\v", "\u2028", "\x85", "\x1c"], ids=["ff", "vt", "u2028", "nel", "fs"])
@pytest.mark.parametrize("name, text, old, new, where, message", [
    ("strassen-edited", "# Strassen\n" + STRASSEN_UVW, "1 0 -1 0 1 0 1", "1 0 -1 0 Q 0 1", (10, 10), "'Q' is not a coefficient"),
    ("k-222-7.exp", "# Strassen\n(a11+a22)*(b11+b22)*(c11+c22)\n(a21+a22)*(b11)*(c21-c22)\n(a11)*(b12-b22)*(c12+c22)\n"
     "(a22)*(b21-b11)*(c11+c21)\n(a11+a12)*(b22)*(-c11+c12)\n(-a11+a21)*(b11+b12)*(c22)\n(a12-a22)*(b21+b22)*(c11)\n",
     "(a22)*(b21-b11)", "(q22)*(b21-b11)", (5, 2), "expected an entry a11..a99, found 'q22'"),
])
def test_a_line_separator_other_than_a_newline_does_not_move_an_error(tmp_path, capsys, separator, name, text, old, new,
                                                                      where, message):
    """A form feed (or \\v, U+2028, \\x85, \\x1c) in a header comment moved every later error a line down, under
    the wrong line's text, and turned the rest of the comment into a data row: the catalogue readers split
    lines as str.splitlines does, the quoted lines at LFs only (a catalogue hunt)."""
    path = tmp_path / name
    path.write_text(text.replace("# Strassen", f"# Strassen{separator} world", 1).replace(old, new, 1), encoding="utf-8")
    assert main(["verify", str(path), *(["--from", "fast-matmul"] if "." not in name else [])]) == 1
    first, quoted = capsys.readouterr().err.split("\n")[:2]
    assert (first, quoted.split("|")[1].strip()) == (f"{path}:{where[0]}:{where[1]}: error: {message}",
                                                    text.splitlines()[where[0] - 1].replace(old, new))


# --- hardening: inputs that once crashed or misreported (each fixed with this test first) ---


def test_a_long_sum_parses_without_recursion_error():
    terms = " + ".join(["M1"] * 2000)
    program = program_from_text(f"algorithm x <1,1,1>:\n  M1 = A11 * B11\n  C11 = {terms}\n", "long.bl")
    assert program.algorithm("x").outputs[0].form.coefficient("M1") == 2000


def test_a_named_sum_that_is_zero_is_refused_at_the_sum():
    text = "algorithm x <1,1,1>:\n  S1 = A11 - A11\n  M1 = S1 * B11\n  M2 = A11 * B11\n  C11 = M2 + M1\n"
    (error,) = pytest.raises(BilinearError, program_from_text, text, "zero.bl").value.diagnostics
    assert (error.span.line, error.message) == (2, "S1 is zero as written")


def test_a_product_scaled_by_zero_is_a_zero_sum_not_a_silent_zero():
    text = "algorithm x <1,1,1>:\n  M1 = (0) * (B11)\n  M2 = A11 * B11\n  C11 = M2 + M1\n"
    (error,) = pytest.raises(BilinearError, program_from_text, text, "zero.bl").value.diagnostics
    assert (error.span.line, error.message) == (2, "M1 is zero as written")


def test_a_factor_that_is_zero_through_named_sums_is_refused():
    text = (
        "algorithm x <1,2,1>:\n  S1 = A11 + A12\n  S2 = A12 + A11\n  M1 = (S1 - S2) * B11\n"
        "  M2 = A11 * B11\n  M3 = A12 * B21\n  C11 = M2 + M3 + M1\n"
    )
    (error,) = pytest.raises(BilinearError, program_from_text, text, "zero.bl").value.diagnostics
    assert (error.span.line, error.message) == (4, "the left factor of M1 is zero: S1 - S2 = 0")


def test_a_schedule_for_an_algorithm_with_a_zero_factor_does_not_crash():
    text = (
        "algorithm x <1,1,1>:\n  S1 = A11 - A11\n  M1 = S1 * B11\n  M2 = A11 * B11\n  C11 = M2 + M1\n"
        "schedule s for x\n  stage p: A11 * B11 -> +C11\n"
    )
    with pytest.raises(BilinearError, match="S1 is zero as written"):
        program_from_text(text, "zero_schedule.bl")


@pytest.mark.parametrize("separator", ["\f", "\u2028", "\x0b", "\x1c"])
def test_the_quoted_line_is_the_reported_line_even_after_unusual_line_breaks(tmp_path, separator):
    path = tmp_path / "breaks.bl"
    path.write_text(f"# a comment with{separator}a break\nalgorithm x <1,1,1>:\n  M1 = A11 * B11\n  C11 = M2\n")
    (error,) = pytest.raises(BilinearError, bilinear.load, path).value.diagnostics
    assert (error.span.line, error.message) == (4, "M2 is not defined")
    assert render(error).splitlines()[1] == "    4 |   C11 = M2"


@pytest.mark.parametrize("blank", ["\f", "  \f  ", "\f\t"])
def test_a_blank_line_holding_a_form_feed_is_a_blank_line(blank):
    """A form feed is blank space within a line, but a line holding only one (and spaces) was
    "unexpected end of line": a newline took the spaces and tabs after it, not the form feed."""
    text = f"# a\n{blank}\n# b\nalgorithm x <1,1,1;1>:\n  M1 = A11 * B11\n{blank}\n  C11 = M1\n{blank}\n"
    assert bilinear.verify(program_from_text(text, "formfeed.bl")).ok
    (error,) = pytest.raises(BilinearError, program_from_text, text.replace("C11 = M1", "C11 = M2"), "formfeed.bl").value.diagnostics
    assert (error.span.line, error.span.column, error.message) == (7, 9, "M2 is not defined")


@pytest.mark.parametrize(("lines", "where", "name"), [
    (["M1 = (A11 + X9 - X9) * B11", "C11 = M1"], (2, 15), "X9"),
    (["M1 = A11 * B11", "C11 = M1 + Q - Q"], (3, 14), "Q"),
    (["S1 = A11 + Y - Y", "M1 = S1 * B11", "C11 = M1"], (2, 14), "Y"),
    (["M1 = A11 * B11", "C11 = M1 + Q + Q"], (3, 14), "Q"),  # where it is first written (it had been the last)
])
def test_an_undefined_name_is_refused_even_where_its_terms_cancel(lines, where, name):
    """`M1 = (A11 + X9 - X9) * B11` verified: the sum dropped X9 before names were resolved (found by
    an audit)."""
    text = "algorithm s <1,1,1;1>:\n" + "".join(f"  {line}\n" for line in lines)
    (error,) = pytest.raises(BilinearError, program_from_text, text, "cancel.bl").value.diagnostics
    assert ((error.span.line, error.span.column), error.message) == (where, f"{name} is not defined")


def test_a_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.bl"
    path.write_bytes("\ufeffalgorithm x <1,1,1>:\n  M1 = A11 * B11\n  C11 = M1\n".encode("utf-8"))
    assert bilinear.verify(path).ok


def test_a_file_with_classic_mac_line_endings_is_read_by_its_lines(tmp_path):
    """Lines ended by CR alone were one line, refused at its first CR ("unexpected character U+000D")."""
    path = tmp_path / "mac.bl"
    path.write_bytes(b"algorithm x <1,1,1>:\r  M1 = A11 * B11\r  C11 = M1\r")
    assert bilinear.verify(path).ok
    path.write_bytes(b"algorithm x <1,1,1>:\r  M1 = A11 * B11\r  C11 = M2\r")
    (error,) = pytest.raises(BilinearError, bilinear.load, path).value.diagnostics
    assert (error.span.line, error.message) == (3, "M2 is not defined")
    assert "    3 |   C11 = M2\n" in render(error)


@pytest.mark.parametrize("ends", [(b"\r", b"\r", b"\r\n"), (b"\r\n", b"\r", b"\n"), (b"\r", b"\n", b""), (b"\n", b"\r", b"\n")],
                         ids=["CR lines, a CRLF at the end", "CRLF, CR and LF", "CR and LF", "a lone CR in an LF file"])
def test_a_file_mixing_line_endings_is_read_by_its_lines(tmp_path, ends):
    """Lone CRs ended lines only in a file without any LF: CR lines and one final CRLF were one line,
    refused at its first CR ("unexpected character U+000D").  Every CR ends a line now, as
    Python's universal newlines (and editors) read it."""
    path = tmp_path / "mixed.bl"
    path.write_bytes(b"algorithm x <1,1,1>:%b  M1 = A11 * B11%b  C11 = M1%b" % ends)
    assert bilinear.verify(path).ok
    path.write_bytes(b"algorithm x <1,1,1>:%b  M1 = A11 * B11%b  C11 = M2%b" % ends)
    (error,) = pytest.raises(BilinearError, bilinear.load, path).value.diagnostics
    assert (error.span.line, error.span.column, error.message) == (3, 9, "M2 is not defined")
    assert render(error).splitlines()[1] == "    3 |   C11 = M2"
    text = (b"algorithm x <1,1,1>:%b  M1 = A11 * B11%b  C11 = M2%b" % ends).decode()
    (error,) = pytest.raises(BilinearError, program_from_text, text, "mixed_text.bl").value.diagnostics
    assert (error.span.line, error.span.column, error.message) == (3, 9, "M2 is not defined")


def test_a_byte_that_is_not_utf8_is_located_on_its_line_after_lone_crs(tmp_path):
    """Its line was counted by LF alone: line 1, column 50 of a file of CR lines."""
    path = tmp_path / "latin1.bl"
    path.write_bytes(b"algorithm x <1,1,1>:\r  M1 = A11 * B11\r  C11 = M\xff1\r")
    (error,) = pytest.raises(BilinearError, bilinear.load, path).value.diagnostics
    assert (error.span.line, error.span.column) == (3, 10)
    assert render(error).splitlines()[1] == "    3 |   C11 = M\ufffd1"


@pytest.mark.parametrize("character", ["\u202e", "\u2066", "\u200f", "\u061c", "\u2028", "\u2029"])
def test_a_quoted_line_shows_bidi_controls_and_line_separators_as_replacement_characters(character):
    """U+202E in a quoted line reversed it in a bidi-aware terminal, and U+2028 split it in two, so the caret
    pointed elsewhere (a hunt); both are named in the message and shown as U+FFFD, as C0 and C1 controls are."""
    text = f"algorithm s <1,1,1;1>:\n  M1 = A11 * B11 {character})\n  C11 = M1\n"
    (error,) = pytest.raises(BilinearError, program_from_text, text, "b.bl").value.diagnostics
    assert f"U+{ord(character):04X}" in error.message
    assert render(error).splitlines()[1:] == ["    2 |   M1 = A11 * B11 \ufffd)", "      |                  ^"]


@pytest.mark.parametrize(
    "character, shown",
    [("\u200e", "character U+200E (LEFT-TO-RIGHT MARK)"), ("\u00a0", "character U+00A0 (NO-BREAK SPACE)"), ("\u200b", "character U+200B (ZERO WIDTH SPACE)")],
)
def test_an_invisible_unexpected_character_is_named(character, shown):
    with pytest.raises(BilinearError) as caught:
        program_from_text(f"algorithm x <1,1,1>:\n  M1 = A11{character}* B11\n  C11 = M1\n", "invisible.bl")
    (error,) = caught.value.diagnostics
    assert (error.span.line, error.span.column) == (2, 11)
    assert error.message.startswith(f"unexpected {shown};")


@pytest.mark.parametrize("character, shown", [
    ("\u2212", "'\u2212' U+2212 (MINUS SIGN)"), ("\u0391", "'\u0391' U+0391 (GREEK CAPITAL LETTER ALPHA)"),
])
def test_a_character_that_looks_like_an_ascii_one_is_named(character, shown):
    """'−' was quoted bare beside "expected ... '-'", which looks the same on screen."""
    error = pytest.raises(BilinearError, program_from_text, f"algorithm x <1,1,1>:\n  M1 = (A11 {character} A11) * B11\n"
                          "  C11 = M1\n", "lookalike.bl").value.diagnostics[0]
    assert error.message.startswith(f"unexpected {shown};")


def test_a_decimal_takes_ascii_digits_only():
    """1.5 written in Arabic-Indic digits was read as 3/2, where whole numbers take ASCII digits only
    (found by an audit)."""
    error = pytest.raises(BilinearError, program_from_text, "algorithm x <1,1,1>:\n  M1 = (\u0661.\u0665*A11) * B11\n"
                          "  C11 = 2/3*M1\n", "digits.bl").value.diagnostics[0]
    assert (error.span.line, error.span.column) == (2, 9)
    assert error.message.startswith("unexpected '\u0661' U+0661 (ARABIC-INDIC DIGIT ONE);")


ONE_PRODUCT = "algorithm x <1,1,1>:\n  M1 = A11 * B11\n  C11 = M1\n"


@pytest.mark.parametrize("text, line, column, message", [
    # the lexer's list held what only a schedule takes after a name ('=', '+=', '-=', '->') and ')' with none open
    ("algorithm x <1,1,1>:\n  M1 = A11 $ B11\n  C11 = M1\n",
     2, 12, "unexpected '$'; expected '*', '+', '-', '/', ';', '[' or the end of the line"),
    ("algorithm x <1,1,1>:\n  M1 = (A11 @) * B11\n  C11 = M1\n",
     2, 13, "unexpected '@'; expected ')', '*', '+', '-', '/' or '['"),
    # a stage statement cannot end at a bare sum, nor close a parenthesis it never opened
    (ONE_PRODUCT + "schedule s for x:\n  stage p: A11 $ B11 -> +C11\n",
     5, 16, "unexpected '$'; expected '*', '+', '+=', '-', '-=', '->', '/', '=' or '['"),
    # after a header the next definition may follow on its line: as for `5` there
    ("algorithm x <1,1,1>: @\n",
     1, 22, "unexpected '@'; expected 'algorithm', 'schedule', 'table', 'use', a name, the end of the file or the end of the line"),
])
def test_an_unexpected_character_lists_only_what_the_parser_takes_there(text, line, column, message):
    """The list was the lexer's, which in an equation offered `=`, `->` and `)` that no equation takes."""
    (error,) = pytest.raises(BilinearError, program_from_text, text, "typo.bl").value.diagnostics
    assert (error.span.line, error.span.column, error.message) == (line, column, message)


@pytest.mark.parametrize("text, line, column, message", [
    ("algorithm x <1,1,1>:\n  M1 = A11 * B11 5\n  C11 = M1\n",
     2, 18, "unexpected '5'; expected '*', '+', '-', '/', ';', '[' or the end of the line"),
    ("algorithm x <1,1,1>:\n  M1 = A11 * B11\n  C11 = M1 M1\n",
     3, 12, "unexpected 'M1'; expected '*', '+', '-', '/', ';', '[' or the end of the line"),
    # after an index, or a parenthesis, no `[` may follow
    ("algorithm x <1,1,1>:\n  M1 = A11 * B[1,1] 5\n  C11 = M1\n",
     2, 21, "unexpected '5'; expected '*', '+', '-', '/', ';' or the end of the line"),
    ("algorithm x <1,1,1>:\n  M1 = A11 * (B11) 5\n  C11 = M1\n",
     2, 20, "unexpected '5'; expected '*', '+', '-', '/', ';' or the end of the line"),
    # a line that ends inside parentheses: lark had reduced the factor to a sum, and `*` and `/` were missing
    ("algorithm x <1,1,1>:\n  M1 = (A11 * B11\n  C11 = M1\n",
     2, 18, "unexpected end of line; expected ')', '*', '+', '-', '/' or '['"),
    ("algorithm x <1,1,1>:\n  M1 = (A11 * 2\n  C11 = M1\n",
     2, 16, "unexpected end of line; expected ')', '*', '+', '-' or '/'"),
])
def test_an_unexpected_token_after_a_name_lists_its_index(text, line, column, message):
    """lark reduces on the token before it raises, so what the state before it took (the name's `[`,
    a product's `*` and `/`) was missing from the list: the text is parsed again up to the token."""
    (error,) = pytest.raises(BilinearError, program_from_text, text, "typo.bl").value.diagnostics
    assert (error.span.line, error.span.column, error.message) == (line, column, message)


def _located(text: str) -> list[tuple[int, int, str]]:
    errors = pytest.raises(BilinearError, program_from_text, text, "lines.bl").value.diagnostics
    return [(e.span.line, e.span.column, e.message) for e in errors]


def test_errors_on_one_line_are_in_column_order_and_the_lines_keep_their_order():
    """The checks report phase by phase: X (column 21) came before its factor (column 3), and Q after
    A11; the missing C21, at the header, stays last."""
    text = "algorithm x <2,1,1>:\n  M1 = (A11 + B11 + X) * B11\n  C11 = M1 + Q + A11\n"
    assert _located(text) == [
        (2, 3, "the left factor of M1 must be a sum of A blocks or named sums of them; it is A11 + B11 + X"),
        (2, 21, "X is not defined"),
        (3, 14, "Q is not defined"),
        (3, 18, "C11 must be a sum of products; A11 is a block, not a product"),
        (1, 1, "algorithm x has no equation for C21"),
    ]


@pytest.mark.parametrize("rank, products", [(0, "1 product"), (1, "2 products")])
def test_a_declared_rank_that_is_not_the_count_of_products_says_how_many_agree(rank, products):
    """It said "declares rank 0 but defines 1 products"."""
    defined = "".join(f"  M{i} = A11 * B11\n" for i in range(1, rank + 2))
    text = f"algorithm x <1,1,1;{rank}>:\n{defined}  C11 = M1\n"
    assert _located(text)[-1] == (1, 1, f"algorithm x declares rank {rank} but defines {products}")


def test_errors_of_two_definitions_on_one_line_are_in_column_order():
    """Schedules are checked after algorithms, so the schedule's error at 1:1 came after the algorithm's."""
    text = "schedule s for x: stage p: A11 * B11 -> +C11; algorithm x <1,1,1>: M1 = A11 * B11; C11 = M1 + Q\n"
    assert _located(text) == [
        (1, 1, "schedule s is for x, which has errors of its own; the schedule is checked once they are fixed"),
        (1, 95, "Q is not defined")]


def test_the_errors_shown_of_a_long_line_are_its_first_columns():
    """Names are checked in sorted order: Q10..Q19 were shown and Q5..Q9 counted as not shown."""
    names = [f"Q{i}" for i in range(1, 26)]
    text = "algorithm x <1,1,1>:\n  M1 = A11 * B11\n  C11 = M1 + " + " + ".join(names) + "\n"
    located = _located(text)
    assert [message for _, _, message in located[:20]] == [f"{name} is not defined" for name in names[:20]]
    assert located[20] == (3, 125, "5 more errors like these are not shown (only the first 20 are)")


STRASSEN = (ROOT / "algorithms" / "strassen.bl").read_text()


@pytest.mark.parametrize("written, why", [
    ("c11", "block names are capitalized: C11"), ("C00", "block indices start at 1: C11 is C's first block"),
])
def test_a_misnamed_c_block_is_pointed_at(written, why):
    """`c11 = ...` was read as a named sum: the only error was "no equation for C11" at 1:1."""
    text = STRASSEN.replace("\n  C11 = ", f"\n  {written} = ")
    line = text.splitlines().index(next(x for x in text.splitlines() if x.startswith(f"  {written} = "))) + 1
    errors = pytest.raises(BilinearError, program_from_text, text, "strassen.bl").value.diagnostics
    assert [(e.span.line, e.span.column, e.message) for e in errors][-1] == (
        line, 3, f"{written} is not a C block, so it is read as a named sum; {why}")


def test_a_named_sum_like_c12_is_no_misnamed_block_when_c12_is_defined():
    """`c12 = A11 + A22` beside a defined C12 was flagged whenever any other block was missing."""
    text = STRASSEN.replace("M1 = (A11 + A22)", "c12 = A11 + A22\n  M1 = c12").replace("\n  C22 = ", "\n  X22 = ")
    errors = pytest.raises(BilinearError, program_from_text, text, "strassen.bl").value.diagnostics
    assert not [e for e in errors if "c12" in e.message], [e.message for e in errors]


def test_a_zero_based_block_says_indices_start_at_1():
    """A00 was "not defined", with "did you mean C00?" (a named sum) as the note."""
    errors = pytest.raises(BilinearError, program_from_text, "algorithm x <1,1,1>:\n  M1 = A00 * B11\n  C11 = M1\n",
                           "zero.bl").value.diagnostics
    assert [(e.message, e.notes) for e in errors] == [("A00 is not defined", ("block indices start at 1: A11 is A's first block",))]
    errors = pytest.raises(BilinearError, program_from_text, "algorithm x <1,1,1>:\n  a12 = A11\n  M1 = a21 * B11\n"
                           "  C11 = M1\n", "close.bl").value.diagnostics
    assert errors[0].notes == ("block names are capitalized: A21", "did you mean a12?")


def test_a_constant_c_block_must_be_a_sum_of_products():
    error = pytest.raises(BilinearError, program_from_text, "algorithm z <2,2,2;0>:\n  C11 = 0\n", "z.bl").value.diagnostics[0]
    assert error.message == "C11 is a constant; it must be a sum of products"


def test_an_empty_path_is_named_as_empty(capsys):
    assert pytest.raises(SystemExit, main, ["verify", ""]).value.code == 2
    assert "argument file: an empty name is no file" in capsys.readouterr().err
    with pytest.raises(ValueError, match="expected a path to a .bl or catalogue file, not ''$"):
        bilinear.load("")


@pytest.mark.parametrize("path", [".", "./", "..", "../"])
def test_every_spelling_of_a_directory_is_one_error(path):
    """"." and "./" raised ValueError (not a path), ".." and "/tmp/" BilinearError (a directory): one
    mistake, two exception types (a hunt)."""
    with pytest.raises(BilinearError) as caught:
        bilinear.load(path)
    assert " is a directory, not one scheme file" in caught.value.diagnostics[0].message


@pytest.mark.parametrize("call", [bilinear.load, bilinear.verify, bilinear.compile])
def test_a_path_with_a_nul_character_is_named(call):
    """pathlib's stat had raised a bare ValueError('embedded null byte') from deep in the loader (a hunt)."""
    with pytest.raises(ValueError, match=r"expected a path to a \.bl or catalogue file, not 'strassen\\x00\.bl': "
                                         r"a file name holds no NUL character$"):
        call("strassen\x00.bl")


def test_a_file_that_ends_too_early_is_pointed_at_its_last_statement():
    """The caret stood on the last (blank) line, four lines after the row-less `W:`."""
    text = "table z <1,1,1;1>:\n  U: 1\n  V: 1\n  W:   # no row\n\n\n# end\n\n"
    error = pytest.raises(BilinearError, program_from_text, text, "short.bl").value.diagnostics[0]
    assert (error.span.line, error.span.column, error.message) == (4, 5, "unexpected end of file; expected '+', '-' or a whole number")


def test_an_empty_file_still_shows_a_caret(tmp_path):
    path = tmp_path / "empty.bl"
    path.write_text("")
    (error,) = pytest.raises(BilinearError, bilinear.load, path).value.diagnostics
    assert render(error).splitlines()[1:] == ["    1 | ", "      | ^"]


def test_the_caret_keeps_tabs_so_it_lines_up():
    error = pytest.raises(BilinearError, program_from_text, "algorithm x <1,1,1>:\n\tM1 = A11 * B11\n\tC11 =\tM2\n", "tabs.bl")
    (diagnostic,) = error.value.diagnostics
    assert render(diagnostic).splitlines()[1:] == ["    3 | \tC11 =\tM2", "      | \t     \t^~"]


def test_a_schedule_without_properties_may_end_its_header_with_a_colon():
    text = "algorithm x <1,1,1>:\n  M1 = A11 * B11\n  C11 = M1\nschedule s for x:\n  stage p: A11 * B11 -> +C11\n"
    assert verify_program(program_from_text(text, "plain.bl")).ok


def test_every_syntax_error_message_reads_as_a_sentence():
    for text in ("algorithm x <1,1,1>:\n  M1 = (A11\n", "algorithm x <1,1", "algorithm"):
        (error,) = pytest.raises(BilinearError, program_from_text, text, "cut.bl").value.diagnostics
        assert not re.search(r"unexpected the ", error.message), error.message


def test_a_product_with_a_zero_factor_is_located_at_its_own_line():
    with pytest.raises(BilinearError) as caught:
        program_from_text("algorithm x <1,1,1>:\n  M1 = (A11 - A11) * B11\n  C11 = M1\n", "zero.bl")
    (error,) = caught.value.diagnostics
    assert (error.span.line, error.span.column, error.message) == (2, 3, "product M1 has a zero factor")


@pytest.mark.parametrize("order", ["forward", "backward"])
def test_a_chain_of_thousands_of_named_sums_verifies(order):
    """A chain of 1000 was refused ("nests its named sums too deeply to check"): the kinds and the
    zero-factor test recursed once per sum.  Straight-line programs are that deep."""
    depth = 3000
    chain = [f"  S{i} = S{i - 1} + A11 - A11\n" for i in range(2, depth + 1)]
    chain = "".join(chain if order == "forward" else chain[::-1])
    text = f"algorithm x <1,1,1>:\n  S1 = A11\n{chain}  M1 = S{depth} * B11\n  C11 = M1\n"
    assert bilinear.verify(program_from_text(text, "deep.bl")).ok


@pytest.mark.parametrize("after", ["  M1 = S1 * B11\n", "  D = S2 + A11\n  M1 = D * B11\n"], ids=["cycle", "a sum of it"])
def test_a_cycle_of_named_sums_is_reported_at_its_first_member(after):
    """The dependency order had reported it at its last (S2), also through a sum that reads the cycle."""
    text = f"algorithm x <1,1,1>:\n  S1 = S2 + A11\n  S2 = S1 + A11\n{after}  C11 = M1\n"
    errors = pytest.raises(BilinearError, program_from_text, text, "cycle.bl").value.diagnostics
    assert (errors[0].span.line, errors[0].message) == (2, "S1 is defined in terms of itself: S1 -> S2 -> S1")


def test_a_cycle_of_thousands_of_named_sums_is_an_error_not_a_crash():
    depth = 3000
    cycle = "".join(f"  S{i} = S{i % depth + 1} + A11\n" for i in range(1, depth + 1))
    text = f"algorithm x <1,1,1>:\n{cycle}  M1 = S1 * B11\n  C11 = M1\n"
    errors = pytest.raises(BilinearError, program_from_text, text, "deep.bl").value.diagnostics
    assert [(e.span.line, e.message) for e in errors] == [
        (2, "S1 is defined in terms of itself: S1 -> S2 -> S3 -> S4 -> S5 -> S6 -> S7 -> ... -> S3000 -> S1 (3000 sums)")]


@pytest.mark.parametrize("depth", [300, 500])
def test_a_long_cycle_of_named_sums_is_reported_at_its_first_member_as_a_short_one_is(depth):
    """Sums on a cycle were walked by recursion, one level per sum: 500 of them were refused as
    "nested too deeply to check" (at the algorithm's header) where 300 named the cycle."""
    cycle = "".join(f"  S{i} = S{i % depth + 1}\n" for i in range(1, depth + 1))
    text = f"algorithm cyc <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n{cycle}"
    errors = pytest.raises(BilinearError, program_from_text, text, "cyc.bl").value.diagnostics
    assert [render(e).splitlines()[0] for e in errors] == [
        f"cyc.bl:4:3: error: S1 is defined in terms of itself: S1 -> S2 -> S3 -> S4 -> S5 -> S6 -> S7 -> ... -> S{depth} -> S1 "
        f"({depth} sums)"]


STRASSEN_TABLE = """\
table strassen_t <2,2,2;7>:
  U:  1 0 1 0 1 -1 0       # A11
      0 0 0 0 1 0 1        # A12
      0 1 0 0 0 1 0        # A21
      1 1 0 1 0 0 -1       # A22
  V:  1 1 0 -1 0 1 0       # B11
      0 0 1 0 0 1 0        # B12
      0 0 0 1 0 0 1        # B21
      1 0 -1 0 1 0 1       # B22
  W:  1 0 0 1 -1 0 1       # C11
      0 0 1 0 1 0 0        # C12
      0 1 0 1 0 0 0        # C21
      1 -1 1 0 0 1 0       # C22
"""


def test_a_wrong_table_entry_is_suggested_at_its_own_row():
    assert verify_program(program_from_text(STRASSEN_TABLE, "table.bl")).ok
    wrong = STRASSEN_TABLE.replace("0 1 0 0 0 1 0        # A21", "0 1 0 0 0 -1 0       # A21")
    report = verify_program(program_from_text(wrong, "table.bl"))
    notes = [note for entry in report.entries for error in entry.errors for note in error.notes]
    assert "changing the coefficient of A21 in the left factor of M6 from -1 to 1 (line 4) would make every equation hold" in notes


def test_the_fix_search_forms_only_the_factor_changes_that_can_match(monkeypatch):
    """A product's factor change can zero the residual only where the residual is its outer product: the
    changed factor's blocks times the other factor's.  Every candidate's had been formed (A × v, then C × A × v),
    so a dense ⟨8,8,8;343⟩ with one wrong entry took 338 s to be told its fix, against 8 s to verify it
    correct (a hunt); here one product of one candidate is formed, where eight were."""
    from bilinear.verify import algorithm as search

    formed = []
    monkeypatch.setattr(search, "bilinear", lambda left, right: formed.append((left, right)) or bilinear_of(left, right))
    wrong = STRASSEN_TABLE.replace("0 1 0 0 0 1 0        # A21", "0 1 0 0 0 -1 0       # A21")
    notes = [note for entry in verify_program(program_from_text(wrong, "table.bl")).entries
             for error in entry.errors for note in error.notes]
    assert "changing the coefficient of A21 in the left factor of M6 from -1 to 1 (line 4) would make every equation hold" in notes
    assert [(str(left), str(right)) for left, right in formed] == [("A21", "B11 + B12")]


@pytest.mark.parametrize("line, row, entry", [(4, "0 1 0 0 0 -1 0", "A21 in the left factor of M6"),
                                             (9, "0 0 0 -1 0 0 1", "B21 in the right factor of M4")])
def test_a_wrong_fast_matmul_entry_is_suggested_at_its_own_line(tmp_path, line, row, entry):
    """U and V entries were all placed on the table's first line (line 2)."""
    from bilinear.frontend.writers import to_fast_matmul

    lines = to_fast_matmul(bilinear.load(ROOT / "algorithms" / "strassen.bl").main, ("Strassen",)).splitlines()
    lines[line - 1] = row
    path = tmp_path / "wrong.fm"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = bilinear.verify(path)
    notes = [note for item in report.entries for error in item.errors for note in error.notes]
    assert f"changing the coefficient of {entry} from -1 to 1 (line {line}) would make every equation hold" in notes


def _notes(path) -> list[str]:
    return [note for item in bilinear.verify(path).entries for error in item.errors for note in error.notes]


def test_a_wrong_output_coefficient_of_an_exp_file_is_suggested_at_its_own_line(tmp_path):
    """An .exp file writes C's coefficients on each product's line; the note named the line where
    the block first appears (line 3 for a sign flipped on line 8)."""
    from conftest import scheme_file

    lines = scheme_file("flips/223-11-mod0.exp").read_text(encoding="utf-8").splitlines()
    assert lines[7] == "(a12-a22)*(b12+b22)*(c12-c22+c32)"
    lines[7] = "(a12-a22)*(b12+b22)*(c12+c22+c32)"
    path = tmp_path / "wrong.exp"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert "changing the coefficient of M8 in C22 from 1 to -1 (line 8) would make every equation hold" in _notes(path)


@pytest.mark.parametrize("edited, line, entry", [("P", 5, "M4 in C11 from 1 to -1"),
                                                 ("R", 5, "B21 in the right factor of M2 from 2 to 1")])
def test_a_fix_in_another_file_of_a_plinopt_scheme_names_that_file(tmp_path, edited, line, entry):
    """PLinOpt's three .sms files: the note said "(line 5)" under an error located in _P.sms."""
    from conftest import scheme_file

    for part in "LPR":
        text = scheme_file(f"plinopt/2x2x2_7_Strassen_{part}.sms").read_text(encoding="utf-8")
        if part == edited:
            rows = text.splitlines()
            rows[4] = {"P": "1 4 1", "R": "2 3 2"}[part]
            text = "\n".join(rows) + "\n"
        (tmp_path / f"2x2x2_7_Strassen_{part}.sms").write_text(text, encoding="utf-8")
    where = f"line {line}" if edited == "P" else f"line {line} of 2x2x2_7_Strassen_R.sms"
    assert f"changing the coefficient of {entry} ({where}) would make every equation hold" in _notes(
        tmp_path / "2x2x2_7_Strassen_L.sms")


def test_a_long_line_is_quoted_around_the_error_with_the_caret_under_it():
    """A 200,000-character line was quoted whole, and its caret line as long."""
    text = (ROOT / "algorithms" / "strassen.bl").read_text(encoding="utf-8").replace(
        "C11 = M1 + M4 - M5 + M7", "C11 = M1 + M4 - M5 + M7" + " + 0*M1" * 30000 + " + Q9")
    with pytest.raises(BilinearError) as raised:
        program_from_text(text, "long.bl")
    rendered = render(raised.value.diagnostics[0]).splitlines()
    assert rendered[0] == "long.bl:13:210029: error: Q9 is not defined"
    assert all(len(line) <= 200 for line in rendered)
    quoted, caret = rendered[1], rendered[2]
    assert quoted.startswith("   13 | …") and quoted[caret.index("^"):].startswith("Q9")


def test_a_number_too_long_to_read_is_one_message():
    """Python's own message (naming sys.set_int_max_str_digits) was shown."""
    text = (ROOT / "algorithms" / "strassen.bl").read_text(encoding="utf-8").replace(
        "C11 = M1 + M4", "C11 = " + "9" * 5000 + "*M1 + M4")
    with pytest.raises(BilinearError) as raised:
        program_from_text(text, "big.bl")
    assert raised.value.diagnostics[0].message == "a number of more than 4300 digits cannot be read"


def test_the_caret_counts_wide_characters_as_two_columns(tmp_path):
    """`use "中文中文.bl" junk`: the location 1:15 was right, the caret four columns short of `junk`."""
    path = tmp_path / "wide.bl"
    path.write_text('use "中文中文.bl" junk\n', encoding="utf-8")
    with pytest.raises(BilinearError) as caught:
        bilinear.load(path)
    text = render(caught.value.diagnostics[0])
    quoted, caret = text.splitlines()[1:3]
    column = lambda line, at: sum(2 if "\u4e00" <= c <= "\u9fff" else 1 for c in line[:at])  # noqa: E731
    assert column(caret, caret.index("^")) == column(quoted, quoted.index("junk")), text


def test_a_schedule_for_itself_is_not_told_to_write_what_it_wrote(tmp_path):
    path = tmp_path / "self_schedule.bl"
    path.write_text('use "strassen.bl"\nschedule s for s:\n  stage p: A11 * B11 -> +C11\n')
    (error,) = pytest.raises(BilinearError, bilinear.load, path).value.diagnostics
    assert error.message == "schedule s is for itself; a schedule is for an algorithm: name the one it orders"


def test_use_of_a_looping_link_says_it_cannot_be_read(tmp_path):
    (tmp_path / "loop1.bl").symlink_to(tmp_path / "loop1.bl")
    looping = tmp_path / "looping_use.bl"
    looping.write_text('use "loop1.bl"\n')
    (error,) = pytest.raises(BilinearError, bilinear.load, looping).value.diagnostics
    assert error.message.startswith(f"cannot read {tmp_path / 'loop1.bl'}")  # it said "cannot find 'loop1.bl'"


ONE_BY_ONE = "algorithm s <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n"


@pytest.mark.parametrize("schedule, message, notes", [
    # the note named only the algorithm's way (M1 = ... * ...)
    ("schedule x for s:\n  stage p: C11 = C11 + A11 * B11\n", "a product cannot be added to other terms here",
     ("in an algorithm, name each product on its own line (M1 = ... * ...) and add the names; in a schedule, "
      "accumulate it (C11 += A11 * B11, or A11 * B11 -> +C11)",)),
    # X holds a product, so it is shaped like C, not A
    ("schedule x for s:\n  stage p: A11 * B11 -> +X\n", "X is neither a block nor a declared temporary",
     ("declare it: temp X: C",)),
    ("schedule x for s:\n  stage p: X * B11 -> +C11\n", "X is neither a block nor a declared temporary",
     ("declare it: temp X: A",)),
    ("schedule x for s:\n  stage p: A11 * X -> +C11\n", "X is neither a block nor a declared temporary",
     ("declare it: temp X: B",)),
    ("schedule x for s: Inplace\n  stage p: A11 * B11 -> +C11\n", "unknown schedule property 'Inplace'",
     ("did you mean inplace?", "known properties: ")),
    # names whose terms cancel had verified (a review): every written name is checked
    ("schedule x for s: inplace\n  stage q: A11 += A11 + T9 - T9\n  stage r: A11 -= A11\n"
     "  stage p: A11 * B11 -> +C11\n", "T9 is neither a block nor a declared temporary", ("declare it: temp T9: A",)),
    ("schedule x for s:\n  stage p: (A11 + Z1 - Z1) * B11 -> +C11\n", "Z1 is neither a block nor a declared temporary",
     ("declare it: temp Z1: A",)),
])
def test_schedule_hints_name_the_schedule_fix(schedule, message, notes):
    (error,) = pytest.raises(BilinearError, program_from_text, ONE_BY_ONE + schedule, "hint.bl").value.diagnostics
    assert error.message == message
    assert len(error.notes) == len(notes) and all(note.startswith(want) for note, want in zip(error.notes, notes))


MSMES_BODY = (ROOT / "algorithms/msmes.bl").read_text().split("schedule msmes for strassen:", 1)[1].split("\n", 1)[1]


def _schedule(tmp_path, properties: str):
    path = tmp_path / "s.bl"
    path.write_text(f'use "strassen.bl"\nschedule s for strassen: {properties}\n{MSMES_BODY}', encoding="utf-8")
    return path


def test_a_misspelt_property_is_one_error_and_the_rest_is_checked_as_its_suggestion(tmp_path):
    """`inplac, restore` gave the unknown property and then 16 "not declared inplace" errors."""
    (error,) = pytest.raises(BilinearError, bilinear.load, _schedule(tmp_path, "inplac, restore")).value.diagnostics
    assert error.message == "unknown schedule property 'inplac'"
    assert "did you mean inplace? (the rest of s is checked as if it said inplace)" in error.notes


def test_a_schedule_that_overwrites_inputs_without_inplace_is_told_once(tmp_path):
    (error,) = pytest.raises(BilinearError, bilinear.load, _schedule(tmp_path, "restore")).value.diagnostics
    assert error.message.startswith("the statement overwrites input block ") and error.message.endswith(
        ", but schedule s is not declared inplace")
    assert error.notes[0] == "add `inplace` (and `restore`, if the inputs must come back) to the schedule's properties"
    assert re.fullmatch(r"\d+ more statements of s overwrite A or B blocks", error.notes[1]), error.notes


@pytest.mark.parametrize("update", ["A12 = A11 + A12", "A12 += A11", "A12 = -A12"])
def test_an_input_overwritten_without_inplace_is_marked_at_the_statement_that_writes_it(update):
    """With `=` the caret was under the A12 the statement reads (column 24), not at what it writes."""
    text = ("algorithm t2 <1,2,1;2>:\n  M1 = A11 * B11\n  M2 = A12 * B21\n  C11 = M1 + M2\n"
            f"schedule t for t2:\n  stage s: {update}\n  stage p: A11 * B11 -> +C11;  A12 * B21 -> +C11\n")
    (error,) = pytest.raises(BilinearError, program_from_text, text, "t.bl").value.diagnostics
    assert error.message == "the statement overwrites input block A12, but schedule t is not declared inplace"
    assert render(error).splitlines()[1:3] == [f"    6 |   stage s: {update}", "      |            ^" + "~" * (len(update) - 1)]


def test_a_close_name_is_suggested_once():
    """A sum whose kind was known already stood twice among the names searched: "did you mean S1 or S1?"."""
    text = "algorithm x <1,2,1;1>:\n  S1 = A11 + A12\n  S2 = S11 + A12\n  M1 = S2 * B11\n  C11 = M1\n"
    (error,) = pytest.raises(BilinearError, program_from_text, text, "twice.bl").value.diagnostics
    assert (error.message, error.notes) == ("S11 is not defined", ("did you mean S1?",))


def test_a_misnamed_block_is_said_once(tmp_path):
    """`C222 = M7 + M8` said "C222 is not a block name" twice."""
    path = tmp_path / "n.bl"
    path.write_text((ROOT / "algorithms/naive2x2.bl").read_text().replace("C22 =", "C222 ="), encoding="utf-8")
    messages = [message for _, _, message in _errors(path)]
    assert messages.count("C222 is not a block name: blocks take a row and a column, e.g. C12 or C[1,2]") == 1, messages


def _naive_schedule(tmp_path, properties: str, first_stage: str):
    """A schedule s for naive2x2 whose stage p is ``first_stage`` and whose stage q adds the second products."""
    (tmp_path / "naive2x2.bl").write_text((ROOT / "algorithms/naive2x2.bl").read_text(), encoding="utf-8")
    path = tmp_path / "s.bl"
    path.write_text(f'use "naive2x2.bl"\nschedule s for naive2x2{properties}\n  stage p: {first_stage}\n'
                    "  stage q: C11 += A12 * B21;  C12 += A12 * B22;  C21 += A22 * B21;  C22 += A22 * B22\n", encoding="utf-8")
    return path


def test_an_overwrite_schedule_that_reads_c_first_is_told_once_not_again_at_each_later_read_and_the_end(tmp_path):
    """Dropped from the simulation, the refused statement left C11 holding C11⁰: the next read of it
    and C11's final value were reported too, though lines 3 and 4 add both products."""
    path = _naive_schedule(tmp_path, ": overwrite", "C11 += A11 * B11;  C12 = A11 * B12;  C21 = A21 * B11;  C22 = A21 * B12")
    (entry,) = [e for e in bilinear.verify(path).entries if not e.ok]
    assert [(e.span.line, e.message.split(";")[0]) for e in entry.errors] == [
        (3, "`A11 * B11 -> +C11` reads C11, which holds C's original content (C11⁰)")]


RSMM = (ROOT / "algorithms" / "rsmm.bl").read_text()


@pytest.mark.parametrize(("old", "new", "errors"), [
    ("stage p1:  C22 = X * Y", "stage p1:  C22 += X * Y", [(12, "`X * Y -> +C22` reads C22, which holds C's original "
                                                              "content (C22⁰)")]),
    ("stage s1:  X = A21 + A22;  ", "stage s1:  ", [(12, "X is read before anything is written to it")]),
])
def test_one_mistake_in_a_schedule_is_told_once_not_again_where_what_it_skipped_is_read(tmp_path, old, new, errors):
    """A statement refused is not simulated, and what it would have written had kept its old value:
    `C12 = C21 + C22` after a refused write of C22 was skipped, and line 17's `+C12` was then said to
    read C12⁰; a missing `X = ...` gave 11 errors, "never computes P3" of three products computed,
    and a note to add a product into C12 that would have broken the schedule (a hunt)."""
    path = tmp_path / "rsmm.bl"
    path.write_text(RSMM.replace(old, new), encoding="utf-8")
    (tmp_path / "winograd.bl").write_text((ROOT / "algorithms" / "winograd.bl").read_text(), encoding="utf-8")
    (entry,) = [e for e in bilinear.verify(path).entries if not e.ok]
    assert [(e.span.line, e.message.split(";")[0]) for e in entry.errors] == errors


def test_a_product_missing_besides_a_refused_one_is_still_said(tmp_path):
    """Past one refused product statement (factors swapped), "never computes" had been dropped for every
    product, so msmes without M6 as well said nothing of it; those the refused statements cannot account
    for are counted (a review)."""
    msmes = (ROOT / "algorithms" / "msmes.bl").read_text()
    (tmp_path / "strassen.bl").write_text((ROOT / "algorithms" / "strassen.bl").read_text(), encoding="utf-8")
    swapped = msmes.replace("A21 * B11 -> +C21 -C22", "B11 * A21 -> +C21 -C22")
    path = tmp_path / "m.bl"
    for text, said in [(swapped, []), (swapped.replace("                    A21 * B12 -> +C22 ", "                    "),
                                       ["schedule msmes never computes 1 more of M2, M6: the 1 product statement refused "
                                        "above computes at most 1 of them"])]:
        path.write_text(text, encoding="utf-8")
        (entry,) = [e for e in bilinear.verify(path).entries if not e.ok]
        assert [e.message for e in entry.errors][1:] == said
        assert entry.errors[0].message.startswith("the left factor of `B11 * A21 -> +C21 -C22` holds B11")


def test_a_keyword_used_as_a_name_is_told_so(tmp_path):
    """`algorithm = ...` said only "unexpected '='; expected a name"; `temp stage: A` was taken, and
    failed where it was used."""
    product = tmp_path / "k.bl"
    product.write_text((ROOT / "algorithms/strassen.bl").read_text().replace("M1", "algorithm"), encoding="utf-8")
    (error,) = pytest.raises(BilinearError, bilinear.load, product).value.diagnostics
    assert error.message == "unexpected '='; expected a name"
    assert error.notes == ("algorithm is a keyword of the language; a name must be another word",)
    (tmp_path / "naive2x2.bl").write_text((ROOT / "algorithms/naive2x2.bl").read_text(), encoding="utf-8")
    temp = tmp_path / "t.bl"
    temp.write_text('use "naive2x2.bl"\nschedule s for naive2x2: overwrite\n  temp stage: A\n'
                    "  stage p: C11 = A11 * B11;  C12 = A11 * B12;  C21 = A21 * B11;  C22 = A21 * B12\n"
                    "  stage q: C11 += A12 * B21;  C12 += A12 * B22;  C21 += A22 * B21;  C22 += A22 * B22\n", encoding="utf-8")
    (error,) = pytest.raises(BilinearError, bilinear.load, temp).value.diagnostics
    assert (error.span.line, error.message) == (3, "stage is a keyword of the language; choose another name for the temporary")


GLUED = "algorithm x <1,1,1;1>:\n  M1 = A11*B11\n  C11 = M1\nschedule s for x: overwrite\n"


@pytest.mark.parametrize(("text", "where", "message", "notes"), [
    (GLUED + "  stagefirst: C11 = A11*B11\n", (5, 3), "unexpected 'stagefirst'; expected 'algorithm', 'schedule', "
     "'stage', 'table', 'temp', 'use' or the end of the file", ("did you mean stage first?",)),
    (GLUED + "  temporary: C\n  stage p: C11 = A11*B11\n", (5, 3), "unexpected 'temporary'; expected 'algorithm', "
     "'schedule', 'stage', 'table', 'temp', 'use' or the end of the file", ()),
    ("algorithmstrassen <1,1,1;1>:\n  M1 = A11*B11\n  C11 = M1\n", (1, 1), "unexpected 'algorithmstrassen'; expected "
     "'algorithm', 'schedule', 'table', 'use', the end of the file or the end of the line", ("did you mean algorithm strassen?",)),
    (GLUED.replace("s for x", "s format") + "  stage p: C11 = A11*B11\n", (4, 12), "unexpected 'format'; expected 'for'", ()),
    # after a statement the parser took the glued word for a name and stopped at its colon (a hunt)
    (GLUED + "  stage first: C11 = A11*B11\n  stagesecond: C11 += A11*B11\n", (6, 3), "unexpected 'stagesecond'; "
     "expected 'stage'", ("did you mean stage second?",)),
    # in an algorithm, where no stage goes, the parser's own words (a review)
    ("algorithm s <1,1,1;1>:\n  M1 = A11 * B11\n  stagex: C11 = M1\n", (3, 9), "unexpected ':'; expected '=' or '['", ()),
])
def test_a_keyword_glued_to_the_next_word_is_a_syntax_error(tmp_path, text, where, message, notes):
    """Where the parser took no name, a keyword was matched at the start of a longer word: `stagefirst:`
    was stage first, `temporary: C` a temporary `orary` (exit 0), `algorithmstrassen` an algorithm (a hunt)."""
    path = tmp_path / "g.bl"
    path.write_text(text, encoding="utf-8")
    error = _only_error(path)
    assert ((error.span.line, error.span.column), error.message, error.notes) == (where, message, notes)


@pytest.mark.parametrize("line, keyword", [("Algorithm t <1,1,1;1>:", "algorithm"), ("Schedule q for s: overwrite", "schedule"),
                                           ("ALGORITM t <1,1,1;1>:", "algorithm"), ('Use "s.bl"', "use")])
def test_a_definition_keyword_in_capitals_after_a_definition_is_pointed_at(tmp_path, line, keyword):
    """After a definition the parser took `Algorithm` for a name and stopped at the next word, "unexpected 't'; expected
    '=' or '['", with no note; `algoritm` there had the note (a hunt)."""
    path = tmp_path / "k.bl"
    path.write_text(f"algorithm s <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n{line}\n  M1 = A11 * B11\n  C11 = M1\n")
    error = _only_error(path)
    word = line.split()[0]
    assert ((error.span.line, error.span.column, error.span.end_column), error.message, error.notes) == (
        (4, 1, 1 + len(word)), f"unexpected '{word}'; expected 'algorithm', 'schedule', 'table' or 'use'",
        (f"did you mean {keyword}?",))


def test_a_used_file_of_prose_that_begins_with_a_capital_keyword_is_not_read_as_bl(tmp_path):
    """With capitals taken for a misspelt keyword everywhere, `use "notes.bl"` of prose beginning "Algorithm notes for
    review:" quoted the other file's lines (a review): only a .bl file's own syntax error takes capitals."""
    (tmp_path / "notes.bl").write_text("Algorithm notes for review:\nprivate text\n")
    main = tmp_path / "main.bl"
    main.write_text('use "notes.bl"\nalgorithm s <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n')
    error = _only_error(main)
    assert error.span.path == str(main) and error.message == (f"{tmp_path / 'notes.bl'} is not .bl text (it does not "
                                                              "begin with algorithm, table, schedule or use)")


def test_names_that_begin_with_a_keyword_are_names(tmp_path):
    path = tmp_path / "k.bl"
    path.write_text("algorithm usex <1,1,1;1>:\n  stage2 = A11\n  M1 = stage2*B11\n  C11 = M1\n"
                    "schedule forward for usex: overwrite\n  temp tables, temp1: C\n  stage stage_one: tables = A11*B11\n"
                    "  stage fortwo: C11 = tables; temp1 = tables\n", encoding="utf-8")
    assert bilinear.verify(path).ok


def test_a_product_of_the_algorithm_named_in_a_schedule_is_told_what_to_write(tmp_path):
    """It was "M1 is neither a block nor a declared temporary", with the advice `temp M1: C`."""
    (tmp_path / "strassen.bl").write_text((ROOT / "algorithms/strassen.bl").read_text(), encoding="utf-8")
    body = MSMES_BODY.replace("stage mid:        A11 += A22", "stage mid:        C11 += M1;  A11 += A22", 1)
    assert body != MSMES_BODY
    path = tmp_path / "m.bl"
    path.write_text(f'use "strassen.bl"\nschedule s for strassen: inplace, restore\n{body}', encoding="utf-8")
    (error,) = pytest.raises(BilinearError, bilinear.load, path).value.diagnostics
    assert error.message == "M1 is a product of strassen, not a buffer: a schedule reads and writes blocks and temporaries"
    assert error.notes == ("compute it with a product statement of its factors: `(A11 + A22) * (B11 + B22) -> ...`",)


def test_an_accumulating_schedule_that_sets_c_is_pointed_at_the_statement_that_dropped_c(tmp_path):
    """Every block said "misses C11⁰" at its later `+=`, nothing about `=` or `overwrite`."""
    path = _naive_schedule(tmp_path, "", "C11 = A11 * B11;  C12 = A11 * B12;  C21 = A21 * B11;  C22 = A21 * B12")
    (entry,) = [e for e in bilinear.verify(path).entries if not e.ok]
    first = entry.errors[0]
    assert (first.span.line, first.span.column) == (3, 12)
    assert first.message.startswith("C11 ends holding A11*B11 + A12*B21 but must hold A11*B11 + A12*B21 + C11⁰")
    assert first.notes[0] == ("schedule s accumulates into C (C += A·B, the default), and `C11 = A11 * B11` sets C11, "
                              "dropping its original content: declare the schedule `overwrite` to compute C = A·B, or "
                              "write += there")


def test_a_target_weight_may_be_a_decimal_as_coefficients_elsewhere_are(tmp_path):
    """`-> +0.5*C11` was "unexpected '.'; expected '*' or '/'": decimals are exact rationals in
    every other place a coefficient is written."""
    (tmp_path / "naive2x2.bl").write_text((ROOT / "algorithms/naive2x2.bl").read_text(), encoding="utf-8")
    path = tmp_path / "d.bl"
    path.write_text('use "naive2x2.bl"\nschedule sc for naive2x2\n  temp X: A\n  stage s: X = 2*A11\n'
                    "  stage p1: X * B11 -> +0.5*C11;  C12 += A11 * B12;  C21 += A21 * B11;  C22 += A21 * B12\n"
                    "  stage p2: C11 += A12 * B21;  C12 += A12 * B22;  C21 += A22 * B21;  C22 += A22 * B22\n",
                    encoding="utf-8")
    assert bilinear.verify(path).ok


@pytest.mark.parametrize("zeroing", ["T1 -= T1", "T1 = T1 - T1"])
def test_a_statement_that_zeroes_its_target_is_quoted_as_a_statement_the_language_takes(zeroing):
    """`T1 -= T1` was quoted as `T1 = 0`, which the parser refuses ("cannot assign a number")."""
    text = (
        "algorithm x <1,1,1>:\n  M1 = A11 * B11\n  C11 = M1\n"
        f"schedule s for x:\n  temp T1: A\n  stage z: {zeroing};  T1 += A11\n  stage p: A11 * B11 -> +C11\n"
    )
    report = verify_program(program_from_text(text, "zeroing.bl"))
    messages = [error.message for entry in report.entries for error in entry.errors]
    assert "`T1 += A11` conflicts with `T1 -= T1` in stage z: both write T1" in messages, messages


def test_a_byte_order_mark_does_not_shift_the_column_of_a_bad_byte(tmp_path):
    """An invalid UTF-8 byte at column 12 was located at 1:13 after a BOM, which the parser skips (a
    syntax error there was at 1:12)."""
    for prefix in (b"", b"\xef\xbb\xbf"):
        path = tmp_path / "bomb.bl"
        path.write_bytes(prefix + b"algorithm n\xff <1,1,1;1>:\n")
        with pytest.raises(BilinearError) as refused:
            bilinear.load(path)
        span = refused.value.diagnostics[0].span
        assert (span.line, span.column) == (1, 12), prefix


@pytest.mark.parametrize("statement, said, note", [
    ("C22 = S1 * T1", "S1 is a named sum of winograd, not a buffer: a schedule reads and writes blocks and temporaries",
     "write the blocks it sums instead: A21 + A22"),
    ("for = A11 + A22", "for is neither a block nor a declared temporary",
     "for is a keyword of the language: a temporary needs another name"),
])
def test_a_name_no_temporary_could_take_is_not_told_to_declare_one(tmp_path, statement, said, note):
    """`temp S1: A` then read "S1 is read before anything is written to it", and `temp for: A` "for is a
    keyword of the language", where the note had said to declare them (an audit)."""
    path = tmp_path / "ns.bl"
    path.write_text(f'use "{ROOT}/algorithms/winograd.bl"\nschedule r for winograd: overwrite\n  stage p1:  {statement}\n')
    with pytest.raises(BilinearError) as refused:
        bilinear.load(path)
    found = next(d for d in refused.value.diagnostics if d.message == said)
    assert found.notes == (note,)


KEYWORD_EXPECTED = "expected 'algorithm', 'schedule', 'table' or 'use'"


@pytest.mark.parametrize("text, line, word, keyword", [
    ("algoritm x <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n", 1, "algoritm", "algorithm"),
    (ONE_PRODUCT + "\nalgoritm y <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n", 5, "algoritm", "algorithm"),
    (ONE_PRODUCT + "schedule s for x:\n  stage p: A11 * B11 -> +C11\nshedule t for x:\n  stage p: A11 * B11 -> +C11\n",
     6, "shedule", "schedule"),
    (ONE_PRODUCT + 'uses "other.bl"\n', 4, "uses", "use"),
    ("table t <1,1,1;1>:\n  U:\n  1\n  V:\n  1\n  W:\n  1\ntabel u <1,1,1;1>:\n  U:\n  1\n  V:\n  1\n  W:\n  1\n",
     8, "tabel", "table"),
], ids=["first-definition", "algorithm-after-algorithm", "schedule-after-schedule", "use-after-algorithm",
        "table-after-table"])
def test_a_misspelt_keyword_is_pointed_at_after_a_definition_as_before_the_first(text, line, word, keyword):
    """After a definition the misspelt word was read as a name beginning an equation or a statement, and
    the error stood at the next word (`algoritm second <1,1,1;1>:` at 5:10, "unexpected 'second';
    expected '=' or '['")."""
    (error,) = pytest.raises(BilinearError, program_from_text, text, "typo.bl").value.diagnostics
    assert (error.span.line, error.span.column, error.span.end_column) == (line, 1, 1 + len(word))
    assert error.message == f"unexpected '{word}'; {KEYWORD_EXPECTED}"
    assert error.notes == (f"did you mean {keyword}?",)


@pytest.mark.parametrize("word", ["uze", "us", "uss", "ues", "usse"])
@pytest.mark.parametrize("before", ["", ONE_PRODUCT, 'use "one.bl"\n'], ids=["first", "after-algorithm", "after-use"])
def test_a_use_one_letter_off_is_pointed_at_as_a_misspelt_keyword(word, before):
    """`uze "one.bl"` got "unexpected 'uze'; expected 'algorithm', ..., the end of the file or the end of
    the line" and no note where `usse` was told "did you mean use?": one letter in three is too much for
    difflib's 0.75 against `use`, and a two-letter word was not taken for a keyword at all."""
    text = before + f'{word} "other.bl"\n'
    (error,) = pytest.raises(BilinearError, program_from_text, text, "typo.bl").value.diagnostics
    line = before.count("\n") + 1
    assert (error.span.line, error.span.column, error.span.end_column) == (line, 1, 1 + len(word))
    assert error.message == f"unexpected '{word}'; {KEYWORD_EXPECTED}"
    assert error.notes == ("did you mean use?",)


def test_a_long_wrong_block_is_said_in_a_few_terms_and_too_few_products_are_named():
    """A Kauers file cut to its first five products printed 52 KB: each C block's whole expansion, twice,
    in lines of up to 5,542 characters, and nothing said that five products cannot be a ⟨6,6,6⟩ scheme
    (a CLI hunt)."""
    program = program_from_text(
        "algorithm dot <1,9,1;1>:\n"
        "  M1 = (A11 + A12 + A13 + A14 + A15 + A16 + A17 + A18 + A19) * (B11 + B21 + B31 + B41 + B51 + B61 + B71 + B81 + B91)\n"
        "  C11 = M1\n", "dot.bl")
    (error,) = verify_program(program).entries[0].errors
    computed = " + ".join(f"A1{l}*B{r}1" for l in range(1, 10) for r in range(1, 10))
    extra = ", ".join(f"+A1{l}*B{r}1" for l in range(1, 10) for r in range(1, 10) if l != r)
    assert error.message == (
        f"C11 is wrong: it computes {computed[:computed.index(' + A12*B41')]} … (81 terms) but must be "
        f"{' + '.join(f'A1{l}*B{l}1' for l in range(1, 10))}; has {extra[:extra.index(', +A12*B61')]} and 60 more "
        "that should not be there")
    assert error.notes == ("no ⟨1,9,1⟩ scheme has fewer than 9 products (A, B and C have 9, 9 and 1 blocks); this one "
                           "has 1: is it complete?",)



@pytest.mark.parametrize("typed, said", [
    ("strasen", "no file strasen here, and no shipped scheme of that name: did you mean strassen? (`bilinear list` shows "
                "the shipped ones)"),
    ("nothing_like_it", "no file nothing_like_it here, and no shipped scheme of that name (`bilinear list` shows the "
                        "shipped ones)"),
    # in capitals it had been offered nothing (the shipped names are lower-case)
    ("STRASSEN", "no file STRASSEN here, and no shipped scheme of that name: did you mean strassen? (`bilinear list` "
                 "shows the shipped ones)"),
    ("Winogard", "no file Winogard here, and no shipped scheme of that name: did you mean winograd? (`bilinear list` "
                 "shows the shipped ones)"),
    ("-", "- is no file: a scheme is read from a file, not from standard input"),
])
def test_a_name_that_is_no_file_and_no_shipped_scheme_says_what_was_looked_for(capsys, typed, said):
    """A misspelled shipped name got only "cannot read strasen: No such file or directory" (a CLI hunt)."""
    assert main(["verify", typed]) == 1
    assert capsys.readouterr().err == f"error: cannot read {typed}: No such file or directory\n  note: {said}\n"


def test_a_shipped_scheme_s_path_from_another_folder_is_told_its_name(capsys, monkeypatch, tmp_path):
    """README's `bilinear.compile("algorithms/strassen.bl")`, run outside the repository, said only "No such file
    or directory", where the name strassen works from any folder (a hunt)."""
    monkeypatch.chdir(tmp_path)
    assert main(["verify", "algorithms/strassen.bl"]) == 1
    assert capsys.readouterr().err == (
        "error: cannot read algorithms/strassen.bl: No such file or directory\n  note: no file algorithms/strassen.bl "
        "here; the shipped strassen is read by its name alone, from any folder: strassen\n")
    assert main(["verify", "elsewhere/strassen.bl"]) == 1  # another folder's file of that name: nothing said
    assert "note" not in capsys.readouterr().err


def test_errors_come_back_from_a_pickle_as_they_went():
    """A job's BilinearError, sent back from a worker process, was rebuilt from its message alone and
    raised AttributeError there (a review)."""
    import pickle

    from bilinear.diagnostics import Diagnostic
    from bilinear.lower.levels import CoefficientOutOfRange

    plain = pickle.loads(pickle.dumps(BilinearError(Diagnostic("boom"), Diagnostic("and this", notes=("why",)))))
    assert (type(plain), plain.diagnostics) == (BilinearError, (Diagnostic("boom"), Diagnostic("and this", notes=("why",))))
    ranged = pickle.loads(pickle.dumps(CoefficientOutOfRange("float32", Diagnostic("too large"))))
    assert (type(ranged), ranged.dtype, ranged.diagnostics) == (CoefficientOutOfRange, "float32", (Diagnostic("too large"),))


STRASSEN_TEXT = (ROOT / "algorithms" / "strassen.bl").read_text(encoding="utf-8")


def test_a_duplicated_product_is_not_also_counted_against_the_rank():
    """Strassen with M7 written twice had a second error: "declares rank 7 but defines 8 products"."""
    line = "  M7 = (A12 - A22) * (B21 + B22)\n"
    errors = pytest.raises(BilinearError, program_from_text, STRASSEN_TEXT.replace(line, line * 2), "dup.bl").value.diagnostics
    assert [e.message for e in errors] == ["M7 is defined twice"]


def test_a_rank_that_disagrees_with_the_distinct_products_is_still_an_error_beside_a_duplicate():
    line = "  M7 = (A12 - A22) * (B21 + B22)\n"
    text = STRASSEN_TEXT.replace(line, line * 2).replace("<2,2,2;7>", "<2,2,2;8>")
    errors = pytest.raises(BilinearError, program_from_text, text, "dup.bl").value.diagnostics
    assert [e.message for e in errors] == ["M7 is defined twice", "algorithm strassen declares rank 8 but defines 7 products"]


@pytest.mark.parametrize(("sums", "message"), [
    ("  S1 = S2 + A11\n  S2 = S1 + A11\n", "S1 is defined in terms of itself: S1 -> S2 -> S1"),
    ("  S1 = S2 + A11\n  S2 = S3 - A11\n  S3 = 2*S1\n", "S1 is defined in terms of itself: S1 -> S2 -> S3 -> S1"),
    ("  S1 = S1 + A11\n", "S1 is defined in terms of itself"),
])
def test_a_cycle_of_named_sums_names_its_path(sums, message):
    text = f"algorithm x <1,1,1>:\n{sums}  M1 = S1 * B11\n  C11 = M1\n"
    errors = pytest.raises(BilinearError, program_from_text, text, "cycle.bl").value.diagnostics
    assert [(e.span.line, e.message) for e in errors] == [(2, message)]


@pytest.mark.parametrize(("line", "message"), [
    ("  S = A11 + B12 - B12\n  M1 = S * B11\n",
     "S writes B12 (B side) among A side terms: its terms cancel, but a sum's terms are all of one kind"),
    ("  M1 = (A11 + B11 - B11) * B11\n",
     "the left factor of M1 writes B11 (B side) among A side terms: its terms cancel, but a sum's terms are all of one kind"),
    ("  M1 = A11 * (B11 + A11 - A11)\n",
     "the right factor of M1 writes A11 (A side) among B side terms: its terms cancel, but a sum's terms are all of one kind"),
])
def test_a_term_of_another_kind_is_refused_even_where_it_cancels(line, message):
    """`S = A11 + B12 - B12` was accepted: the sum dropped B12 before its kind was checked."""
    text = f"algorithm x <2,2,2>:\n{line}" + "".join(f"  C{i}{j} = M1\n" for i in (1, 2) for j in (1, 2))
    errors = pytest.raises(BilinearError, program_from_text, text, "mix.bl").value.diagnostics
    assert [(e.span.line, e.message) for e in errors] == [(2, message)]


def test_an_output_that_writes_a_block_that_cancels_is_refused():
    text = "algorithm x <1,1,1>:\n  M1 = A11 * B11\n  C11 = M1 + A11 - A11\n"
    errors = pytest.raises(BilinearError, program_from_text, text, "mix.bl").value.diagnostics
    assert [(e.span.line, e.message) for e in errors] == [
        (3, "C11 writes A11 (A side) among products: its terms cancel, but a sum's terms are all of one kind")]


@pytest.mark.parametrize("statement", ["A22 += A22 - A22", "A22 = A22", "A22 -= A11 - A11"])
def test_a_schedule_statement_that_changes_nothing_is_refused(statement):
    """`A22 += A22 - A22` had been read as a write of A22 (and reported as `A22 = A22` conflicting with
    another statement of its stage)."""
    msmes = (ROOT / "algorithms" / "msmes.bl").read_text(encoding="utf-8")
    text = msmes.replace('use "strassen.bl"', STRASSEN_TEXT).replace(
        "stage restore1:   A11 -= A22;  B11 -= B22", f"stage restore1:   A11 -= A22;  B11 -= B22;  {statement}")
    errors = pytest.raises(BilinearError, program_from_text, text, "noop.bl").value.diagnostics
    assert [e.message for e in errors] == ["the statement changes nothing: it sets A22 to its own value"]


@pytest.mark.parametrize("name, text", [
    ("wrong_m2.txt", "1 1 2 2\n1 1\n1 0 0 1\n1 0 0 2\n"),
    ("wrong_m2.json", '{\n  "n": [1, 1, 2],\n  "m": 2,\n  "z2": false,\n  "u": [[1], [1]],\n  "v": [[1, 0], [0, 1]],\n'
                      '  "w": [[1, 0], [0, 2]]\n}\n'),
])
def test_a_fix_in_a_file_whose_reader_knows_no_lines_names_none(tmp_path, name, text):
    """Perminov's .txt and .json readers place every product and block at the file's start: the note
    said "(line 1)", the header, for a coefficient on line 4 (or 7) (a hunt)."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    fixes = [note for note in _notes(path) if note.startswith("changing")]
    assert "changing the coefficient of M2 in C12 from 2 to 1 would make every equation hold" in fixes
    assert not [fix for fix in fixes if "(line" in fix]


SCHEDULED = ("algorithm x <1,1,1;1>:\n  M1 = A11*B11\n  C11 = M1\nschedule s for x: overwrite\n  temp Y: C\n"
             "  stage p: Y = A11*B11\n  stage q: C11 = Y\n")


@pytest.mark.parametrize(("old", "new", "line"), [
    ("stage q:", "stagee q:", 7), ("stage q:", "stge q:", 7), ("stage p:", "Stage p:", 6), ("temp Y:", "tmp Y:", 5),
    ("temp Y:", "Temp Y:", 5),
])
def test_a_misspelt_stage_or_temp_is_pointed_at_with_the_keyword(old, new, line):
    """`stagee q: ...` was reported at q ("unexpected 'q'; expected '*', '+', ..."), read as a statement
    beginning with the name stagee; `tmp Y: B` was reported at tmp, with no word of temp (a hunt)."""
    word, keyword = new.split()[0], old.split()[0]
    (error,) = pytest.raises(BilinearError, program_from_text, SCHEDULED.replace(old, new), "typo.bl").value.diagnostics
    assert (error.span.line, error.span.column, error.span.end_column) == (line, 3, 3 + len(word))
    assert (error.message, error.notes) == (f"unexpected '{word}'; expected '{keyword}'", (f"did you mean {keyword}?",))


@pytest.mark.parametrize("written", ["B[2,1]", "B[ 2 , 1 ]", "B [2,1]", "B[\t2,1]"])
def test_an_indexed_block_reads_with_blanks_inside_or_before_its_brackets(written):
    """`B[2,1]` is lexed as one token; blanks the language ignores elsewhere are still ignored in it."""
    program = program_from_text(f"algorithm x <1,2,1>:\n  M1 = A11 * {written}\n  M2 = A12 * B11\n  C11 = M1 + M2\n",
                                "indexed.bl")
    assert dict(program.main.products[0].right.terms) == {"B21": 1}


@pytest.mark.parametrize("written, message, columns", [
    ("D[1,2]", "only blocks of A, B and C take [row,col] indices, not D", (14, 20)),
    ("D [1, 2]", "only blocks of A, B and C take [row,col] indices, not D", (14, 22)),
    ("B[0,1]", "block indices start at 1: B[0,1]", (14, 20)),
    ("B[ 1 , 0 ]", "block indices start at 1: B[1,0]", (14, 24)),
])
def test_a_wrong_indexed_block_is_refused_at_the_whole_reference(written, message, columns):
    errors = pytest.raises(BilinearError, program_from_text, f"algorithm x <1,1,1>:\n  M1 = A11 * {written}\n"
                           "  C11 = M1\n", "indexed.bl").value.diagnostics
    assert [(e.message, e.span.line, e.span.column, e.span.end_column) for e in errors] == [(message, 2, *columns)]


def test_a_long_name_with_indices_is_refused_by_its_length():
    """The name's own length is counted, not its indices' characters."""
    name = "x" * 300
    errors = pytest.raises(BilinearError, program_from_text, f"algorithm x <1,1,1>:\n  M1 = A11 * {name}[1,1]\n"
                           "  C11 = M1\n", "long.bl").value.diagnostics
    assert [e.message for e in errors] == [f"a name of 300 characters, where a name has at most 255: '{'x' * 40}…'"]


def test_an_indexed_block_is_one_token():
    """Six tokens per `B[10,3]` made up two thirds of a large equation-style file's tokens: lark's
    per-token cost was most of its read (<27,27,27;12167>, 3.8 MB: parse 40 s, now 29 s)."""
    from bilinear.frontend.grammar import LARK

    assert [token.type for token in LARK.lex("B[10,3] + A11\n")] == ["BLOCK", "PLUS", "NAME", "_NL"]


# A source-mutation audit of frontend/check.py (session 78): each test below fails under a change the suite had
# let through.

def _errors_in(text):
    errors = pytest.raises(BilinearError, program_from_text, text, "t.bl").value.diagnostics
    return [(e.span.line, e.message) for e in errors]


def test_a_product_named_like_a_b_block_is_refused_at_its_name():
    text = "algorithm x <1,1,1>:\n  B11 = A11 * B11\n  C11 = B11\n"
    assert (2, "B11 is an input block; an algorithm defines products, named sums and C blocks") in _errors_in(text)


def test_a_named_sum_of_a_and_b_blocks_is_refused():
    text = "algorithm x <1,1,1>:\n  S = A11 + B11\n  M1 = S * B11\n  C11 = M1\n"
    assert _errors_in(text) == [(2, "S mixes terms of different kinds: A11 (A side), B11 (B side)")]


def test_a_named_sum_of_an_output_block_is_refused():
    text = "algorithm x <1,1,1>:\n  M1 = A11 * B11\n  S = C11\n  C11 = M1\n"
    assert _errors_in(text) == [(3, "S reads C11, an output block; sums combine A blocks, B blocks or products")]


def test_an_output_that_uses_a_sum_of_b_blocks_is_refused():
    text = "algorithm x <1,1,1>:\n  M1 = A11 * B11\n  S = B11 + B11\n  C11 = M1 + S\n"
    assert _errors_in(text) == [(4, "C11 uses S, a sum of B blocks, not a product")]


def test_a_cycle_of_exactly_eight_sums_is_shown_in_full():
    sums = "".join(f"  S{i} = S{i % 8 + 1} + A11\n" for i in range(1, 9))
    text = f"algorithm x <1,1,1>:\n{sums}  M1 = S1 * B11\n  C11 = M1\n"
    path = " -> ".join(f"S{i}" for i in range(1, 9))
    assert _errors_in(text) == [(2, f"S1 is defined in terms of itself: {path} -> S1")]


def test_two_self_cycles_are_reported_in_line_order():
    text = "algorithm x <1,1,1>:\n  S1 = S1 + S2 + A11\n  S2 = S2 + A11\n  M1 = S1 * B11\n  C11 = M1\n"
    assert _errors_in(text) == [(2, "S1 is defined in terms of itself"), (3, "S2 is defined in terms of itself")]


def test_outputs_are_kept_in_block_order_whatever_order_the_file_writes_them():
    text = "algorithm x <1,1,2>:\n  M1 = A11 * B12\n  M2 = A11 * B11\n  C12 = M1\n  C11 = M2\n"
    (algorithm,) = program_from_text(text, "t.bl").algorithms
    assert [o.block for o in algorithm.outputs] == ["C11", "C12"]


def test_signs_and_parentheses_nest_in_any_order_in_an_operand():
    """An operand's rules were flattened (session 80: atom folded into factor, a tenth of a large file's parse);
    nested signs, parentheses, scalings and divisions still mean what they say, and the product's span ends at its
    last parenthesis."""
    text = "algorithm x <1,2,1>:\n  M1 = -(A11 - -A12*2) * +(+B11 - (B21)/4)\n  C11 = -M1\n"
    (product,) = program_from_text(text, "signs.bl").algorithm("x").products
    assert dict(product.left.terms) == {"A11": -1, "A12": -2}
    assert dict(product.right.terms) == {"B11": 1, "B21": Fraction(-1, 4)}
    assert (product.span.line, product.span.column, product.span.end_column) == (2, 3, 43)


@pytest.mark.parametrize(("count", "noun", "said"), [
    (1, "row", "1 row"), (0, "row", "0 rows"), (2, "row", "2 rows"), (3, "A block", "3 A blocks"),
    (1, "product statement", "1 product statement"),
])
def test_a_count_reads_singular_only_at_one(count, noun, said):
    """The one helper every message counts with: plural at zero and above one."""
    assert counted(count, noun) == said
