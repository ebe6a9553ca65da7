"""Choosing and checking a catalogue reader (frontend/importers.py) and the lowering options
(lower/options.py) pinned where the tests that exercise them let a changed line pass: a source-mutation
audit of both modules.

The importer tests read whole catalogue files and the commonest refusals, so much went unseen when
changed: that a reader refuses a key itself, Mathematica's and Perminov's JSON look (for a file without
its suffix), a .bl header in a .txt after a blank line, indented or past a long comment, a .bl look in an
.npz, the 64 KiB looked at and an unreadable beginning, the PLinOpt hint for a folder holding only a _P
part or parts in small letters (and none for an unreadable folder), the span of a row unlike
fast-matmul, which format another look offers and that no text offers none, the parts scheme_files
lists, format="bl", a format given as a list or as a long string, a reader's ValueError located at the
whole file, a modular scheme's named sums, a modulus of exactly 2, an AlternativeBasis read with one and
the reason kept after the user's.  The option tests lower with valid options and check a few refusals:
the bounds themselves (32 levels, a cutoff of 2^31 - 1, 20 moduli, 2^63 - 1 bytes), NumPy integers and
bools made Python's (a one-element array not), bools refused as counts, the leaf kinds' table and the
order of the choices, each refusal's words, from_args's scaling, check_count, is_byte_count,
check_ozaki_options and plain_dtype went unseen.  Each test checks exact values or the exact message;
the audit found no bug in either module.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest
from conftest import scheme_file
from helpers.schemes import STRASSEN_UVW

from bilinear.diagnostics import BilinearError
from bilinear.frontend import importers
from bilinear.frontend.importers import FORMATS, READERS, detect_format, read_catalogue
from bilinear.ir import Algorithm
from bilinear.lower.options import (
    LAUNCHES,
    LEAF_KINDS,
    MAX_BYTES,
    MAX_CUTOFF,
    MAX_LEVELS,
    OZAKI_SCALINGS,
    OptionError,
    Options,
    check_count,
    check_ozaki_options,
    is_byte_count,
    plain_dtype,
)
from bilinear.verify.rings import ModularScheme

KNOWN = "bl, " + ", ".join(FORMATS)  # what every "give --from" refusal lists
BL = "algorithm s <1,1,1>:\n  M1 = A11 * B11\n  C11 = M1\n"  # the smallest .bl definition
PERMINOV_TEXT = "1 1 2 2\n1 1\n1 0 0 1\n1 0 0 1\n"  # reads as perminov-text and as fast-matmul
PERMINOV_JSON = '{"n": [1, 1, 2], "m": 2, "z2": false, "u": [[1], ["1/2"]], "v": [[1, 0], [0, 2]], "w": [[1, 0], [0, 1]]}'


def _file(folder: Path, name: str, data: str | bytes) -> Path:
    """``folder / name`` holding ``data`` (text as UTF-8)."""
    path = folder / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _said(call, *args, **kwargs) -> tuple[str, tuple[int, int] | None]:
    """(message, (line, column) or None) of the one diagnostic ``call`` raises."""
    (diagnostic,) = pytest.raises(BilinearError, call, *args, **kwargs).value.diagnostics
    return diagnostic.message, diagnostic.span and (diagnostic.span.line, diagnostic.span.column)


def _refused(**options) -> str:
    """The message Options(**options) is refused with."""
    return str(pytest.raises(OptionError, Options, **options).value)


def _both_or_bl(name: str) -> str:
    """The refusal of a .txt file whose text reads as .bl."""
    return (f"{name} could be bl or perminov-text (its suffix says perminov-text, its text reads as .bl); "
            f"give the format with --from (format=): {KNOWN}")


# ---- importers.py: the readers' table and choosing one ------------------------------------------------


def test_the_readers_table_names_each_formats_suffixes_and_which_have_a_look():
    """A suffix dropped (".slp", ".m", ...) or a look dropped (mathematica's, perminov's) had passed."""
    assert {reader.name: (reader.suffixes, reader.looks_like is not None) for reader in READERS} == {
        "fast-matmul": ((), True), "plinopt": ((".sms", ".slp"), False), "kauers": ((".exp",), True),
        "mathematica": ((".m",), True), "perminov": ((".json",), True), "perminov-text": ((".txt",), True),
        "alphatensor": ((".npz",), False)}


@pytest.mark.parametrize(("name", "format"), [
    ("x.sms", "plinopt"), ("x.slp", "plinopt"), ("x.exp", "kauers"), ("x.m", "mathematica"), ("x.json", "perminov"),
    ("x.txt", "perminov-text"), ("x.npz", "alphatensor"), ("x.EXP", "kauers"), ("x.Json", "perminov")])
def test_a_suffix_decides_the_format_whatever_the_text_and_in_any_case(tmp_path, name, format):
    """Text that looks like no format: the suffix alone (read in small letters) names the reader."""
    assert detect_format(_file(tmp_path, name, "junk\n")) == format


def test_one_byte_order_mark_is_read_past_and_a_second_one_is_text_no_format_reads_as_bl(tmp_path):
    """The loader takes one mark off and says "unexpected character U+FEFF" at 1:1 of a second; detection
    took every mark off, offered bl for such a .txt file, and the loader then refused it."""
    one = "\ufeffalgorithm one <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n"
    assert _said(detect_format, _file(tmp_path, "one.txt", one)) == (_both_or_bl("one.txt"), None)
    two = _file(tmp_path, "two.txt", "\ufeff" + one)
    assert (detect_format(two), importers.reads_as(two)) == ("perminov-text", [])


def test_a_reader_refuses_a_key_itself():
    """read_catalogue refuses a key first; a reader called from READERS says so in its own words."""
    path = scheme_file("kauers/000437bd5a-224-14-mod0.exp")
    (kauers,) = (reader for reader in READERS if reader.name == "kauers")
    assert _said(kauers.read, path, None, "2,2,4", False) == (
        "--key (key=) picks a scheme inside an AlphaTensor .npz archive; 000437bd5a-224-14-mod0.exp holds one scheme",
        None)


def test_mathematica_and_perminov_json_are_told_by_their_look_without_a_suffix(tmp_path):
    """Without their looks in READERS such files were "cannot tell which format"."""
    mathematica = scheme_file("flips/445-62-mod0.m").read_text()
    assert detect_format(_file(tmp_path, "flips445", mathematica)) == "mathematica"
    assert detect_format(_file(tmp_path, "perminov112", PERMINOV_JSON)) == "perminov"


@pytest.mark.parametrize("text", ["\n# a comment\n" + BL, "  " + BL, "#" + "x" * 30 + "\n" + BL],
                         ids=["after a blank line", "indented", "after a comment of 31 bytes"])
def test_a_bl_definition_in_a_txt_file_is_told_to_be_either(tmp_path, text):
    """A blank first line had ended the look (``or not``); an indented header had not matched
    (the line unstripped); 16 bytes looked at had seen the comment alone."""
    assert _said(detect_format, _file(tmp_path, "s.txt", text)) == (_both_or_bl("s.txt"), None)


def test_only_the_first_64_kib_are_looked_at_and_a_file_of_comments_is_no_bl(tmp_path):
    """A header past the first 64 KiB is not seen (the reader's suffix stands); comments alone are no .bl."""
    assert detect_format(_file(tmp_path, "far.txt", "#" + "x" * (1 << 16) + "\n" + BL)) == "perminov-text"
    assert detect_format(_file(tmp_path, "notes.txt", "# only a comment\n\n")) == "perminov-text"
    assert detect_format(_file(tmp_path, "s.npz", BL)) == "alphatensor"  # an archive's bytes are never .bl


def test_a_txt_file_that_cannot_be_opened_is_left_to_its_reader_to_say_why(tmp_path, monkeypatch):
    """An unreadable beginning is no .bl look (it had been taken for one): the suffix names the reader,
    whose refusal says why."""
    path = _file(tmp_path, "s.txt", BL)

    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(type(path), "open", refuse)
    assert detect_format(path) == "perminov-text"
    assert _said(read_catalogue, path) == (f"cannot read {path}: Permission denied", None)


@pytest.mark.parametrize("part", ["2x2x2_7_S_P.sms", "2x2x2_7_s_l.SMS"])
def test_a_folder_with_any_plinopt_part_in_it_is_hinted_at(tmp_path, part):
    """One _P part is enough (``[LR]`` had missed it), in small letters too (IGNORECASE), beside other files
    (``all`` had missed it)."""
    _file(tmp_path, part, "")
    _file(tmp_path, "README.md", "")
    assert _said(detect_format, tmp_path) == (
        f"{tmp_path} is a directory, not one scheme file (of PLinOpt's, one of NAME_L, NAME_R and NAME_P)", None)


def test_an_unreadable_folder_gets_no_plinopt_hint(tmp_path, monkeypatch):
    """Listing the folder failing is no hint (it had been taken for one)."""
    def refuse(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(type(tmp_path), "iterdir", refuse)
    assert _said(detect_format, tmp_path) == (f"{tmp_path} is a directory, not one scheme file", None)


def test_a_suffix_less_binary_file_is_said_to_be_no_scheme_in_any_format(tmp_path):
    """The list of formats and "a zip archive for alphatensor" are the refusal's own words."""
    path = _file(tmp_path, "blob", b"\x00\x01binary")
    assert _said(read_catalogue, path) == (
        f"{path} is a binary file, not a scheme in a format bilinear reads ({KNOWN}: text, or a zip archive for "
        "alphatensor)", (1, 1))


def test_a_row_unlike_fast_matmul_is_marked_to_the_end_of_that_row(tmp_path):
    """The span ends past the row's own last character (the next row's length had been used)."""
    text = ("# Strassen\n" + STRASSEN_UVW).replace("1 0 1 0 1 -1 0\n", "1 0 1_0 0 1 -1 0\n", 1)
    (diagnostic,) = pytest.raises(BilinearError, detect_format, _file(tmp_path, "scheme", text)).value.diagnostics
    span = diagnostic.span
    assert (span.line, span.column, span.end_line, span.end_column) == (2, 1, 2, len("1 0 1_0 0 1 -1 0") + 1)


def test_a_file_that_looks_like_nothing_is_told_to_give_its_format(tmp_path):
    assert _said(read_catalogue, _file(tmp_path, "note", "hello world\n")) == (
        f"cannot tell which format note is in; give it with --from (format=): {KNOWN}", None)


# ---- importers.py: what else a file's text reads as ----------------------------------------------------


def test_another_look_is_the_first_of_the_formats_the_text_reads_as(tmp_path):
    """Perminov text saved as .exp reads as fast-matmul and perminov-text: the first is offered."""
    path = _file(tmp_path, "x.exp", PERMINOV_TEXT)
    assert importers.reads_as(path) == ["fast-matmul", "perminov-text"]
    assert importers.other_look(path, "kauers") == "fast-matmul"
    assert importers.other_look(path, "perminov-text") is None  # the suffix's own look among them


def test_a_file_that_reads_as_nothing_has_no_other_look(tmp_path):
    """No look, or no text at all, is no note (``format in looks`` alone had raised IndexError; the
    binary file had read as bl)."""
    text = _file(tmp_path, "x.exp", "hello\n")
    binary = _file(tmp_path, "y.exp", b"\x00\x01\x02")
    assert (importers.reads_as(text), importers.other_look(text, "kauers")) == ([], None)
    assert (importers.reads_as(binary), importers.other_look(binary, "kauers")) == ([], None)


def test_scheme_files_lists_plinopts_parts_when_detected_and_one_file_otherwise():
    """The format detected when not given (``format`` alone had listed the _R file only)."""
    right = scheme_file("plinopt/2x2x2_7_Strassen_R.sms")
    parts = (right, right.with_name("2x2x2_7_Strassen_L.sms"), right.with_name("2x2x2_7_Strassen_P.sms"))
    assert importers.scheme_files(right) == parts
    assert importers.scheme_files(right, "plinopt") == parts
    strassen = scheme_file("fast-matmul/strassen")
    assert importers.scheme_files(strassen) == importers.scheme_files(strassen, "fast-matmul") == (strassen,)


# ---- importers.py: read_catalogue's options ---------------------------------------------------------


def test_a_format_that_is_no_string_or_too_long_is_quoted_short():
    """A list had raised TypeError (unhashable); a long name is cut as reprlib cuts it."""
    path = scheme_file("fast-matmul/strassen")
    assert _said(read_catalogue, path, format=["kauers"]) == (
        f"unknown input format ['kauers']; known: {KNOWN}", None)
    assert _said(read_catalogue, path, format="x" * 60) == (
        f"unknown input format 'xxxxxxxxxxxx...xxxxxxxxxxxxx'; known: {KNOWN}", None)


def test_bl_given_as_the_format_is_sent_to_load():
    assert _said(read_catalogue, scheme_file("fast-matmul/strassen"), format="bl") == (
        "strassen is a .bl file; load it with bilinear.load, not as a catalogue scheme", None)


def test_a_readers_value_error_is_refused_at_the_whole_file(tmp_path, monkeypatch):
    """The IR's own checks raise ValueError on what a reader built: said with the file's name, at its 1:1."""
    path = _file(tmp_path, "x.exp", "")

    def read(path, shape, key, allow_pickle):
        raise ValueError("product 1 has a zero factor")

    monkeypatch.setitem(importers._BY_NAME, "kauers", importers.Reader("kauers", (".exp",), None, read, "test"))
    assert _said(read_catalogue, path) == ("x.exp: product 1 has a zero factor", (1, 1))


def test_a_modular_schemes_named_sums_are_checked_too(tmp_path):
    """A scheme claimed mod 2 (z2) is checked through its algorithm: a sum that uses itself had passed."""
    path = _file(tmp_path, "1x1x1_m1_Z2_reduced.json", (
        '{"n": [1, 1, 1], "m": 1, "z2": true, "u_fresh": [[{"index": 2, "value": 1}], [{"index": 1, "value": 1}]], '
        '"v_fresh": [], "w_fresh": [], "u": [[{"index": 1, "value": 1}]], "v": [[{"index": 0, "value": 1}]], '
        '"w": [[{"index": 0, "value": 1}]]}'))
    assert _said(read_catalogue, path) == (
        "1x1x1_m1_Z2_reduced.json: algorithm scheme_1x1x1_m1_Z2_reduced has a named sum, A_X1, that depends on itself",
        (1, 1))


def test_a_modulus_of_2_is_the_least_taken():
    """``< 2`` for ``<= 2`` had refused GF(2); 1 is refused in these words."""
    strassen = scheme_file("fast-matmul/strassen")
    scheme = read_catalogue(strassen, modulus=2)
    assert (type(scheme), type(scheme.algorithm), scheme.modulus, scheme.reason) == (
        ModularScheme, Algorithm, 2, "given with --mod 2")
    assert _said(read_catalogue, strassen, modulus=1) == ("--mod (modulus=) must be a modulus of at least 2, not 1", None)


def test_a_modular_file_read_with_its_modulus_keeps_its_own_reason_after_the_users():
    path = scheme_file("kauers/378-ffdb2d875f.mod2.exp")
    scheme = read_catalogue(path, modulus=2)
    assert (scheme.modulus, scheme.reason) == (2, "given with --mod 2; the name 378-ffdb2d875f.mod2.exp says so")
    assert _said(read_catalogue, path, modulus=3) == (
        "378-ffdb2d875f.mod2.exp is a scheme modulo 2, not modulo 3 as --mod says", None)


def test_an_alternative_basis_read_with_a_modulus_is_its_algorithm_modulo_p():
    """Without unwrapping it, the AlternativeBasis was refused as not rational (or failed)."""
    scheme = read_catalogue(scheme_file("plinopt/3x4x7_63_rational-ALT_L.sms"), modulus=7)
    assert (type(scheme), type(scheme.algorithm), scheme.modulus, scheme.reason) == (
        ModularScheme, Algorithm, 7, "given with --mod 7")


def test_an_approximate_scheme_read_with_a_modulus_says_why_not():
    assert _said(read_catalogue, scheme_file("fast-matmul/bini322-10-52-approx"), modulus=2) == (
        "--mod 2 (modulus=2) applies to schemes with rational coefficients; bini322_10_52_approx is an approximate "
        "(border-rank) scheme: its coefficients depend on x (one that holds for every x is exact once a value is "
        "substituted; else only in the limit x → 0)", None)


# ---- options.py: the tables and the bounds -----------------------------------------------------------


def test_the_leaf_kinds_and_the_choices_in_order():
    """``bilinear --help`` lists these, and a refusal lists them in this order."""
    assert {name: (kind.sums, kind.gemm) for name, kind in LEAF_KINDS.items()} == {
        "cublas": (False, None), "fused": (True, None), "ozaki": (False, "bilinear.runtime.ozaki_cuda:leaf_gemm")}
    assert (OZAKI_SCALINGS, LAUNCHES) == (("max", "norm"), ("serial", "streams", "batched"))
    assert (MAX_LEVELS, MAX_CUTOFF, MAX_BYTES) == (32, 2**31 - 1, 2**63 - 1)


def test_each_bound_is_taken_and_one_past_it_refused():
    """32 levels, a cutoff of 2^31 - 1 and 20 moduli are taken; 0 levels and a cutoff and moduli of 1 too."""
    assert Options(levels=32, cutoff=MAX_CUTOFF).levels == 32
    assert Options(levels=0, cutoff=1, leaf="ozaki", moduli=1).moduli == 1
    assert Options(leaf="ozaki", moduli=20).moduli == 20
    levels = ("levels must be between 0 and 32, not {}: each level of a scheme of more than one block at least "
              "halves a dimension, so 32 levels already need matrices of 2^32 rows or columns")
    assert _refused(levels=33) == levels.format(33)
    assert _refused(levels=-1) == levels.format(-1)
    assert _refused(cutoff=0) == "cutoff must be between 1 and 2147483647 (2^31 - 1), not 0"
    assert _refused(cutoff=MAX_CUTOFF + 1) == "cutoff must be between 1 and 2147483647 (2^31 - 1), not 2147483648"
    assert _refused(leaf="ozaki", moduli=21) == "moduli must be a whole number from 1 to 20, not 21"
    assert _refused(leaf="ozaki", moduli=0) == "moduli must be a whole number from 1 to 20, not 0"


def test_numpy_integers_and_bools_become_pythons():
    """Every integer field is converted (moduli and workspace_limit too), fuse made a bool."""
    options = Options(levels=np.int64(2), moduli=np.int32(3), leaf="ozaki", workspace_limit=np.uint8(7),
                      breadth=np.int8(1), cutoff=np.int16(4), fuse=np.bool_(False))
    values = [getattr(options, name) for name in ("levels", "moduli", "workspace_limit", "breadth", "cutoff", "fuse")]
    assert values == [2, 3, 7, 1, 4, False]
    assert [type(value) for value in values] == [int, int, int, int, int, bool]


@pytest.mark.parametrize(("options", "message"), [
    ({"levels": np.array([1, 2])}, "levels must be a whole number, not array([1, 2])"),
    ({"levels": np.array(2.5)}, "levels must be a whole number, not array(2.5)"),  # int() had made it 2
    ({"levels": True}, "levels must be a whole number, not True"),
    ({"cutoff": 1.0}, "cutoff must be a whole number, not 1.0"),
    ({"cutoff": True}, "cutoff must be a whole number, not True"),
    ({"breadth": True}, "breadth must be a whole number, not True"),
    ({"leaf": "ozaki", "moduli": True}, "moduli must be a whole number from 1 to 20, not True"),
    ({"fuse": "no"}, "fuse must be True or False, not 'no'"),
    ({"fuse": np.int64(1)}, "fuse must be True or False, not np.int64(1)"),
    ({"dtype": "float16"}, "dtype must be float32 or float64, not 'float16'"),
    ({"leaf": "gemm"}, "leaf must be one of cublas, fused, ozaki, not 'gemm'"),
    ({"leaf": "auto"}, "leaf must be one of cublas, fused, ozaki, not 'auto'; leaf='auto' chooses with levels='auto'"),
    ({"scaling": "min"}, "scaling must be one of max, norm, not 'min'"),
    ({"launch": "x"}, "launch must be one of serial, streams, batched, not 'x'"),
    ({"breadth": 2}, "breadth must be between 0 and the 1 level(s) asked for, not 2: it counts the innermost levels "
                     "that run breadth-first"),
    ({"workspace_limit": -1}, "workspace_limit must be a number of bytes from 0 to 2^63 - 1, not -1"),
    ({"workspace_limit": 2**63}, "workspace_limit must be a number of bytes from 0 to 2^63 - 1, not 9223372036854775808"),
])
def test_each_option_is_refused_in_its_own_words(options, message):
    assert _refused(**options) == message


def test_a_breadth_of_all_levels_is_taken_and_a_workspace_limit_of_0_or_2_63_minus_1():
    assert Options(levels=2, breadth=2).breadth == 2
    assert Options(levels=1, breadth=1, workspace_limit=0).workspace_limit == 0
    assert Options(workspace_limit=MAX_BYTES).workspace_limit == MAX_BYTES


def test_launches_are_refused_where_the_leaf_has_no_use_for_them():
    """Batched launches need breadth-first levels; fused and ozaki leaves take only serial ones, each said why."""
    assert _refused(launch="batched") == (
        "batched launches (--launch batched, launch='batched') make breadth-first leaves one batched GEMM, and there "
        "are no breadth-first levels: ask for some (--breadth, breadth=), or streams (--launch streams) for a stage's "
        "GEMMs")
    assert _refused(launch="streams", leaf="fused") == (
        "--launch streams (launch='streams') issues cuBLAS leaves on concurrent streams; the fused leaf runs each "
        "stage's products as one kernel: leave --launch out, or use cublas leaves")
    assert _refused(launch="batched", leaf="ozaki", breadth=1) == (
        "--launch batched (launch='batched') issues cuBLAS leaves as one strided-batched GEMM; the ozaki leaf runs "
        "its leaves one after another (they share one workspace): leave --launch out, or use cublas leaves")
    assert _refused(breadth=1, leaf="fused") == (
        "breadth-first levels multiply single operands at their leaves, which the fused leaf does not; use cublas "
        "leaves (--leaf cublas, leaf='cublas'; or another single-view leaf such as ozaki) with breadth-first levels")
    assert Options(launch="streams").launch == "streams"
    assert Options(launch="batched", breadth=1).launch == "batched"
    assert Options(leaf="ozaki", breadth=1).breadth == 1


# ---- options.py: from_args and the helpers ----------------------------------------------------------


def test_from_args_takes_the_command_lines_scaling_and_refuses_it_said_for_another_leaf():
    """None is the command line's default: max; ``--scaling max`` with cublas leaves counts as asked."""
    assert Options.from_args(argparse.Namespace(leaf="ozaki", scaling=None)) == Options(leaf="ozaki")
    assert Options.from_args(argparse.Namespace(leaf="ozaki", scaling="norm")).scaling == "norm"
    assert Options.from_args(argparse.Namespace(leaf="cublas", scaling=None, levels=3)) == Options(levels=3)
    with pytest.raises(OptionError) as refused:
        Options.from_args(argparse.Namespace(leaf="cublas", scaling="max"))
    assert str(refused.value) == (
        "scaling set the ozaki leaf's emulation, and the cublas leaf has none: ask for the ozaki leaf (--leaf ozaki, "
        "leaf='ozaki') or leave it out")


@pytest.mark.parametrize(("leaf", "moduli", "scaling", "given", "asked", "them"), [
    ("cublas", 3, "norm", None, "moduli and scaling", "them"), ("fused", 3, "max", None, "moduli", "it"),
    ("cublas", None, "norm", None, "scaling", "it"), ("cublas", None, "max", True, "scaling", "it")])
def test_ozaki_options_for_another_leaf_are_named(leaf, moduli, scaling, given, asked, them):
    with pytest.raises(OptionError) as refused:
        check_ozaki_options(leaf, moduli, scaling, scaling_given=given)
    assert str(refused.value) == (
        f"{asked} set the ozaki leaf's emulation, and the {leaf} leaf has none: ask for the ozaki leaf "
        f"(--leaf ozaki, leaf='ozaki') or leave {them} out")


def test_ozaki_options_for_the_ozaki_leaf_or_none_asked_pass():
    assert check_ozaki_options("ozaki", 3, "norm") is None
    assert check_ozaki_options("cublas", None, "max") is None
    assert check_ozaki_options("cublas", None, "norm", scaling_given=False) is None


def test_check_count_takes_whole_numbers_from_least_as_python_ints():
    """A bool is refused even where it is at least ``least`` (True is 1)."""
    assert (check_count(np.int64(3), "n", 3), type(check_count(np.int64(3), "n", 3))) == (3, int)
    for value, least in ((True, 1), (2, 3), (2.0, 1)):
        with pytest.raises(ValueError) as refused:
            check_count(value, "n", least)
        assert str(refused.value) == f"n must be a whole number of at least {least}, not {value!r}"


def test_a_byte_count_is_a_whole_number_from_0_to_2_63_minus_1():
    assert [bool(is_byte_count(value)) for value in (0, MAX_BYTES, np.int64(5), -1, MAX_BYTES + 1, True, 1.0)] == [
        True, True, True, False, False, False, False]


@pytest.mark.parametrize(("dtype", "name"), [
    (np.float64, "float64"), (np.dtype("f4"), "float32"), ("f8", "float64"), ("double", "float64"),
    ("float32", "float32"), (np.int8, "int8"), ("i1", "i1"), ("nonsense", "nonsense"), (None, None), (3, 3)])
def test_plain_dtype_names_numpys_types_and_keeps_strings_it_would_refuse_as_written(dtype, name):
    """A string is kept as written unless its name is one of DTYPES; None is not NumPy's default float64."""
    assert plain_dtype(dtype) == name


def test_plain_dtype_keeps_numpy_values_which_are_no_types():
    value, array = np.float64(2.0), np.array([1.0])
    assert plain_dtype(value) is value
    assert plain_dtype(array) is array
