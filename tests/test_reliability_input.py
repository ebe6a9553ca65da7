"""Issue 12, hostile or careless .bl input: bounded time and output, one message, never a traceback."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest
from conftest import ROOT

import bilinear
from bilinear.cli import main
from bilinear.diagnostics import MAX_ERRORS, BilinearError, Diagnostic, render
from bilinear.frontend.loader import program_from_text
from bilinear.ir import block_name
from bilinear.report import RENDERERS

BIG = "1" + "0" * 400  # beyond float64's range
HUGE = "1" + "0" * 2000  # products of three of these pass Python's 4300-digit limit for str(int)


def _all_rendered(report) -> str:
    return "\n".join(renderer(report) for renderer in RENDERERS.values())


def test_huge_shapes_are_refused_at_once_with_a_located_message():
    start = time.perf_counter()
    with pytest.raises(BilinearError) as caught:
        program_from_text("algorithm h <1000,1000,1000;1>:\n  M1 = A11 * B11\n  C11 = M1\n", "h.bl")
    assert time.perf_counter() - start < 2
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.span.line == 1 and "too large" in diagnostic.message


@pytest.mark.parametrize("shape", ["100000,100000,100000", "1000,1000,1000"])
def test_huge_shape_option_is_refused_at_once(tmp_path, capsys, shape):
    path = tmp_path / "strassen.fm"
    path.write_text("1 0\n", encoding="utf-8")
    start = time.perf_counter()
    assert main(["verify", str(path), "--from", "fast-matmul", "--shape", shape]) == 1
    assert time.perf_counter() - start < 2 and "too large" in capsys.readouterr().err


def test_errors_are_reported_up_to_a_limit_then_counted():
    text = "algorithm h <40,40,40;1>:\n  M1 = A11 * B11\n  C11 = M1\n"
    with pytest.raises(BilinearError) as caught:
        program_from_text(text, "h.bl")
    diagnostics = caught.value.diagnostics
    assert len(diagnostics) == MAX_ERRORS + 1
    assert f"{40 * 40 - 1 - MAX_ERRORS} more" in diagnostics[-1].message  # every C block but C11 lacks an equation


def test_verification_errors_are_limited_too():
    rows = "\n".join(f"  C{i}{j} = M1" for i in range(1, 10) for j in range(1, 10))
    text = f"algorithm h <9,9,9;1>:\n  M1 = A11 * B11\n{rows}\n"
    report = bilinear.verify(program_from_text(text, "h.bl"))
    errors = report.entries[0].errors
    assert len(errors) == MAX_ERRORS + 1 and "more" in errors[-1].message
    assert len(_all_rendered(report).splitlines()) < 2000


def test_repeated_errors_are_told_apart_without_comparing_every_pair(monkeypatch):
    """Each new error was compared with every one before it (a list scan): 10,000 copies of one
    product line took `verify` 70 s.  The errors are kept in order, each once."""
    text = "algorithm d <1,1,1;1>:\n" + "  M1 = A11 * B11\n" * 1000 + "  C11 = M1\n"
    comparisons = []
    equal = Diagnostic.__eq__
    monkeypatch.setattr(Diagnostic, "__eq__", lambda self, other: comparisons.append(1) or equal(self, other))
    with pytest.raises(BilinearError) as caught:
        program_from_text(text, "d.bl")
    assert len(comparisons) < 1000, len(comparisons)
    diagnostics = caught.value.diagnostics
    assert [d.span.line for d in diagnostics[:3]] == [3, 4, 5]
    assert diagnostics[0].message == "M1 is defined twice" and diagnostics[0].notes == ("first defined at d.bl:2:3",)
    # 999 lines defining M1 again (the rank counts M1 once, as declared)
    assert diagnostics[-1].message == f"{999 - MAX_ERRORS} more errors like these are not shown (only the first {MAX_ERRORS} are)"


def test_close_names_are_searched_for_the_undefined_names_shown_only(monkeypatch):
    """Every undefined name was compared with every defined one though 20 errors are shown:
    5000 of them took `verify` 103 s, 81 in difflib."""
    import difflib

    searches = []
    close_matches = difflib.get_close_matches
    monkeypatch.setattr(difflib, "get_close_matches", lambda *args, **kw: searches.append(args[0]) or close_matches(*args, **kw))
    products = "".join(f"  P{r} = A11 * B11\n" for r in range(1, 201))
    sums = "".join(f"  S{r} = T{r} + A11\n" for r in range(1, 101))
    output = "  C11 = " + " + ".join(f"Q{r}" for r in range(1, 201)) + "\n"
    with pytest.raises(BilinearError) as caught:
        program_from_text(f"algorithm u <1,1,1;200>:\n{products}{sums}{output}", "u.bl")
    shown = caught.value.diagnostics
    assert len(searches) <= MAX_ERRORS + 1, len(searches)
    assert [(d.message, d.span.line, d.notes) for d in (shown[0], shown[10])] == [
        ("T1 is not defined", 202, ()),
        # the names known when T11 was met: T1 and T10 (of unknown kind), not T12 met after it
        ("T11 is not defined", 212, ("did you mean T1 or T10 or S11?",)),
    ]
    assert shown[-1].message == f"{300 - MAX_ERRORS} more errors like these are not shown (only the first {MAX_ERRORS} are)"


def test_coefficients_beyond_float_range_verify_and_render():
    text = f"algorithm s <1,1,1;1>:\n  M1 = {BIG}*A11 * B11\n  C11 = M1/{BIG}\n"
    report = bilinear.verify(program_from_text(text, "s.bl"))
    assert report.ok and report.entries[0].stability.growth_factor == pytest.approx(1.0)  # exact in range
    # (1 + 10^400)·A11·B11 - 10^400·A11·B11: correct, with a growth factor past the float range
    text = f"algorithm s <1,1,1;2>:\n  M1 = (A11 + {BIG}*A11) * B11\n  M2 = {BIG}*A11 * B11\n  C11 = M1 - M2\n"
    report = bilinear.verify(program_from_text(text, "s.bl"))
    assert report.ok and "inf" in _all_rendered(report)


@pytest.mark.parametrize("fuse", [True, False])
def test_coefficients_beyond_float_range_are_refused_by_the_lowering(fuse):
    text = f"algorithm s <1,1,1;1>:\n  M1 = {BIG}*A11 * B11\n  C11 = M1/{BIG}\n"
    with pytest.raises(BilinearError, match="float64"):
        bilinear.compile(program_from_text(text, "s.bl"), backend="numpy", fuse=fuse)


def test_coefficients_that_underflow_are_refused_by_the_lowering():
    text = f"algorithm s <1,1,1;1>:\n  M1 = A11/{BIG} * B11\n  C11 = {BIG}*M1\n"
    with pytest.raises(BilinearError, match="float32"):
        bilinear.compile(program_from_text(text, "s.bl"), backend="numpy", dtype="float32")


def test_float32_range_is_checked_for_float32():
    text = "algorithm s <1,1,1;1>:\n  M1 = 10000000000000000000000000000000000000000*A11 * B11\n" \
           "  C11 = M1/10000000000000000000000000000000000000000\n"
    program = program_from_text(text, "s.bl")
    bilinear.compile(program, backend="numpy", dtype="float64")
    with pytest.raises(BilinearError, match="float32"):
        bilinear.compile(program, backend="numpy", dtype="float32")


def test_numbers_past_pythons_digit_limit_render():
    text = f"algorithm s <1,1,1;1>:\n  M1 = {HUGE}*A11 * {HUGE}*B11\n  C11 = {HUGE}*M1\n"
    report = bilinear.verify(program_from_text(text, "s.bl"))
    assert not report.ok
    rendered = _all_rendered(report) + "\n".join(render(d) for e in report.entries for d in e.errors)
    assert "6001-digit" in rendered


MIXED = """\
use "strassen.bl"
schedule mixed for strassen: accumulate
  temp X: A
  temp Y: B
  temp Z: A
  stage s1:  X = A11 + A22;  Y = B11 + B22
  stage p1:  X * Y -> +C11 +C22;  Z = A21 + A22
  stage p2:  Z * B11 -> +C21 -C22
  stage s3:  Y = B12 - B22
  stage p3:  A11 * Y -> +C12 +C22
  stage s4:  Y = B21 - B11
  stage p4:  A22 * Y -> +C11 +C21
  stage s5:  X = A11 + A12
  stage p5:  X * B22 -> -C11 +C12
  stage s6:  X = A21 - A11;  Y = B11 + B12
  stage p6:  X * Y -> +C22
  stage s7:  X = A12 - A22;  Y = B21 + B22
  stage p7:  X * Y -> +C11
"""


def test_a_stage_mixing_products_and_updates_is_rejected_by_the_verifier(tmp_path):
    path = tmp_path / "mixed.bl"
    path.write_text(MIXED, encoding="utf-8")
    report = bilinear.verify(path)
    messages = [d.message for entry in report.entries for d in entry.errors]
    assert not report.ok and any("Z = A21 + A22" in m and "p1" in m for m in messages), messages
    with pytest.raises(BilinearError):
        bilinear.compile(path, backend="numpy")
    split = MIXED.replace("X * Y -> +C11 +C22;  Z = A21 + A22", "X * Y -> +C11 +C22\n  stage s2:  Z = A21 + A22")
    path.write_text(split, encoding="utf-8")
    A, B = np.random.default_rng(0).standard_normal((2, 8, 8))
    assert np.allclose(bilinear.compile(path, backend="numpy")(A, B), A @ B)


def _long_output(products: int) -> str:
    """``products`` copies of A11·B11 summed with alternating signs into C11 on one line."""
    lines = [f"algorithm long <1,1,1;{products}>:"] + [f"  M{r} = A11 * B11" for r in range(1, products + 1)]
    terms = ["M1"] + [f"{'+' if r % 2 == 0 else '-'} M{r}" for r in range(2, products + 1)]
    return "\n".join([*lines, "  C11 = " + " ".join(terms)]) + "\n"


def _seconds_to_verify(text: str) -> float:
    start = time.perf_counter()
    report = bilinear.verify(program_from_text(text, "long.bl"))
    for renderer in RENDERERS.values():
        renderer(report)
    assert report.ok
    return time.perf_counter() - start


def test_verification_time_grows_about_linearly_with_the_products():
    small, large = _seconds_to_verify(_long_output(501)), _seconds_to_verify(_long_output(2001))
    # 4 times the products: about 4 times the time; a quadratic step (adding Forms pairwise along
    # a long sum, a dense W table) makes it 16 and took minutes at 10^4 products
    assert large < 8 * small + 0.5, (small, large)


def _dense_wrong(n: int) -> str:
    """⟨n,n,n;1⟩: one product of every A block's sum and every B block's, in every C block."""
    def block(operand, i, j):
        return f"{operand}[{i},{j}]"
    every = [(i, j) for i in range(1, n + 1) for j in range(1, n + 1)]
    return "\n".join([f"algorithm dense <{n},{n},{n};1>:",
                      "  S = " + " + ".join(block("A", i, j) for i, j in every),
                      "  T = " + " + ".join(block("B", i, j) for i, j in every),
                      "  M1 = S * T",
                      *(f"  {block('C', i, j)} = M1" for i, j in every)]) + "\n"


def test_a_small_file_whose_residual_is_dense_is_described_in_bounded_time(tmp_path, capsys):
    """A 4 KB wrong ⟨12,12,12;1⟩ scheme had not finished in 90 s and held 1.4 GB (every one of its 3
    million wrong terms a Fraction, described and searched for a fix); ⟨8,8,8⟩ took 28 s.  Past 20,000
    wrong terms each block's are counted and a few shown."""
    path = tmp_path / "dense.bl"
    path.write_text(_dense_wrong(12))
    start = time.perf_counter()
    assert main(["verify", str(path)]) == 1
    assert time.perf_counter() - start < 20
    out = capsys.readouterr().out
    classical = " + ".join(f"{block_name('A', 1, l)}*{block_name('B', l, 1)}" for l in range(1, 13))
    first = out.splitlines()[0]
    assert first.startswith(f"{path}:5:3: error: C11 is wrong: 20724 of its terms differ from {classical}, the classical "
                            "sum, among them +A11*B12, +A11*B13, "), first  # 12^4 pairs less the 12 right ones
    assert "note: no single-coefficient fix was searched for: 2984256 terms are wrong (the search covers up to 20000)" in out
    assert out.count("is wrong:") == min(144, MAX_ERRORS)


STRASSEN_JSON = {  # Perminov's JSON layout: rows of u, v, w over the row-major blocks, one per product
    "n": [2, 2, 2], "m": 7, "z2": False,
    "u": [[1, 0, 0, 1], [0, 0, 1, 1], [1, 0, 0, 0], [0, 0, 0, 1], [1, 1, 0, 0], [-1, 0, 1, 0], [0, 1, 0, -1]],
    "v": [[1, 0, 0, 1], [1, 0, 0, 0], [0, 1, 0, -1], [-1, 0, 1, 0], [0, 0, 0, 1], [1, 1, 0, 0], [0, 0, 1, 1]],
    "w": [[1, 0, 0, 1], [0, 1, 0, -1], [0, 0, 1, 1], [1, 1, 0, 0], [-1, 0, 1, 0], [0, 0, 0, 1], [1, 0, 0, 0]],
}


@pytest.mark.parametrize("coefficient", ["1e1000000000", "-2.5E+999999999", "1e5000", "3e-5000", "1" * 5000])
def test_coefficient_strings_past_the_digit_limit_are_refused_before_they_are_computed(tmp_path, capsys, coefficient):
    """Fraction("1e1000000000") computes 10**1e9: the reader hung.  Refused at once, located."""
    import json

    scheme = dict(STRASSEN_JSON, u=[[coefficient, 0, 0, 1]] + STRASSEN_JSON["u"][1:])
    (tmp_path / "s.json").write_text(json.dumps(scheme), encoding="utf-8")
    text = "2 2 2 7\n" + " ".join([coefficient] + ["0"] * 27) + "\n" + "\n".join([" ".join(["0"] * 28)] * 2) + "\n"
    (tmp_path / "s.txt").write_text(text, encoding="utf-8")
    for name in ("s.json", "s.txt"):
        start = time.perf_counter()
        assert main(["verify", str(tmp_path / name)]) == 1
        err = capsys.readouterr().err
        assert time.perf_counter() - start < 5
        assert f"{name}:" in err and "more than 4300 digits" in err and len(err) < 1000


def test_a_json_integer_past_the_digit_limit_is_a_located_refusal_in_json_too(tmp_path, capsys):
    import json

    (tmp_path / "s.json").write_text(json.dumps(STRASSEN_JSON).replace("[1, 0, 0, 1]", "[1" + "0" * 5000 + ", 0, 0, 1]", 1))
    assert main(["verify", str(tmp_path / "s.json"), "--format", "json"]) == 1
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert document["ok"] is False and "s.json" in err and "4300 digits" in document["errors"][0]["message"]


def test_verify_json_is_json_for_a_shape_refused_before_loading(tmp_path, capsys):
    import json

    (tmp_path / "s.json").write_text(json.dumps(dict(STRASSEN_JSON, n=[1000, 1000, 1000])), encoding="utf-8")
    assert main(["verify", str(tmp_path / "s.json"), "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["ok"] is False and "too large" in document["errors"][0]["message"]


def test_a_scheme_of_rank_zero_is_reported_not_a_traceback(tmp_path, capsys):
    """An AlphaTensor entry with no products: every C block is wrong; the report divided by the rank."""
    import json

    np.savez(tmp_path / "zero.npz", **{"2,2,2": np.zeros((3, 4, 0), dtype=np.int64)})
    for fmt in ("text", "md", "json"):
        assert main(["verify", str(tmp_path / "zero.npz"), "--format", fmt]) == 1
        out = capsys.readouterr().out
        assert "C11" in out
    assert json.loads(out)["ok"] is False


@pytest.mark.parametrize("line", [
    "(" + "9" * 5000 + "*a11)*(b11)*(c11)",  # the plain form, read by a regular expression
    "(a11)*(b11)*((" + "9" * 5000 + ")*c11)",  # the full reader: Python's parser
])
def test_a_product_line_with_a_number_past_the_digit_limit_is_located(tmp_path, capsys, line):
    (tmp_path / "big-111.exp").write_text(line + "\n", encoding="utf-8")
    assert main(["verify", str(tmp_path / "big-111.exp")]) == 1
    err = capsys.readouterr().err
    assert "big-111.exp:1:" in err and "a number of more than 4300 digits cannot be read" in err
    assert "sys.set_int_max_str_digits" not in err


def _strassen_table() -> str:
    """Strassen as `bilinear import --style table` writes it: a comment, a blank line, the table from line 3."""
    from bilinear.frontend.export import to_bl

    return to_bl(bilinear.load(ROOT / "algorithms" / "strassen.bl").main, style="table")


@pytest.mark.parametrize("old, new, message, line", [
    ("1  0  1  0  1 -1  0  # A11", "1  0  1  0  1 -1  # A11", "this row has 6 entries; table strassen declares rank 7", 5),
    ("0  0  0  1  0  0  1  # B21", "0  0  0  1  0  0  1  1  # B21", "this row has 8 entries; table strassen declares rank 7", 12),
    ("<2,2,2;7>", "<2,2,2>", "this row has 6 entries; the other rows have 7", 5),
])
def test_a_table_row_of_the_wrong_length_is_the_one_blamed(old, new, message, line):
    """The first row of U set the width: when it was the short one, every correct row was blamed."""
    text = _strassen_table().replace(old, new, 1)
    if new == "<2,2,2>":
        text = text.replace("1  0  1  0  1 -1  0  # A11", "1  0  1  0  1 -1  # A11", 1)
    with pytest.raises(BilinearError) as caught:
        program_from_text(text, "t.bl")
    assert [(d.message, d.span.line) for d in caught.value.diagnostics] == [(message, line)]


def test_a_table_whose_rows_all_disagree_with_its_rank_is_one_error():
    text = re.sub(r" +-?\d+  #", "  #", _strassen_table())  # every row loses its last entry
    with pytest.raises(BilinearError) as caught:
        program_from_text(text, "t.bl")
    assert [d.message for d in caught.value.diagnostics] == ["table strassen declares rank 7 but has 6 columns"]


def test_control_characters_from_a_file_never_reach_the_terminal(tmp_path, capsys):
    """An escape sequence in a scheme file was echoed raw (it can retitle or reprogram a terminal)."""
    (tmp_path / "esc-111.exp").write_text("(a11)*(b11)*(c11) \x1b]0;PWN\x07\n", encoding="utf-8")
    (tmp_path / "esc.bl").write_text("algorithm e\x1b[31m <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n", encoding="utf-8")
    for name in ("esc-111.exp", "esc.bl"):
        assert main(["verify", str(tmp_path / name)]) == 1
        err = capsys.readouterr().err
        assert "\x1b" not in err and "\x07" not in err and "\ufffd" in err


def test_a_schedule_may_come_before_its_algorithm():
    """It was refused: "naive is not defined; define it in this file", though the file defined it."""
    program = program_from_text(
        "schedule s for naive\n  stage p: A11 * B11 -> +C11\n\nalgorithm naive <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n",
        "order.bl")
    assert [s.name for s in program.schedules] == ["s"] and program.main.name == "naive"
    assert bilinear.verify(program).ok


def test_a_schedule_for_a_schedule_is_told_so():
    text = ("algorithm naive <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n"
            "schedule s for naive\n  stage p: A11 * B11 -> +C11\nschedule t for s\n  stage p: A11 * B11 -> +C11\n")
    with pytest.raises(BilinearError) as caught:
        program_from_text(text, "s.bl")
    assert [d.message for d in caught.value.diagnostics] == [
        "schedule t is for s, which is a schedule (for naive); a schedule is for an algorithm: write `schedule t for naive`"]


def test_a_temporary_of_an_unknown_shape_is_named_plainly():
    with pytest.raises(BilinearError) as caught:
        program_from_text("algorithm n <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\nschedule s for n: overwrite\n"
                          "  temp X: D\n  stage p: C11 = A11 * B11\n", "t.bl")
    assert caught.value.diagnostics[0].message == "a temporary is shaped like an A, B or C block, not 'D'"


def test_decimal_coefficients_are_exact_rationals():
    """The grammar had a DECIMAL rule that the lexer never chose: 0.5*A11 was `unexpected '.'`."""
    from fractions import Fraction

    program = program_from_text(
        "algorithm h <2,1,1;2>:\n  M1 = (0.5*A11) * (2*B11)\n  M2 = A21 * B11\n  C11 = M1\n  C21 = 0.1*M2 + 0.9*M2\n", "h.bl")
    assert program.main.products[0].left.as_dict() == {"A11": Fraction(1, 2)}
    assert program.main.outputs[1].form.as_dict() == {"M2": Fraction(1)}  # 1/10 + 9/10, exactly
    assert bilinear.verify(program).ok


def test_import_writes_coefficients_of_up_to_4300_digits(tmp_path, capsys):
    """Strassen with M1's A side scaled by 10^4000 and its C side by 10^-4000: it verified, but import
    wrote `<a 4001-digit number>` (anything past 3900 digits) and refused its own output."""
    big = "1" + "0" * 4000
    source = tmp_path / "bigcoef-222.exp"
    source.write_text(
        f"(({big})*a11+({big})*a22)*(b11+b22)*((1/{big})*c11+(1/{big})*c22)\n"
        "(a21+a22)*(b11)*(c12-c22)\n(a11)*(b12-b22)*(c21+c22)\n(a22)*(b21-b11)*(c11+c12)\n"
        "(a11+a12)*(b22)*(-c11+c21)\n(-a11+a21)*(b11+b12)*(c22)\n(a12-a22)*(b21+b22)*(c11)\n"
    )
    assert main(["verify", str(source)]) == 0, capsys.readouterr()
    capsys.readouterr()
    out = tmp_path / "big.bl"
    assert main(["import", str(source), "-o", str(out)]) == 0, capsys.readouterr().err
    assert big in out.read_text() and bilinear.verify(str(out)).ok


@pytest.mark.parametrize("name", ["ff.exp", "ff.npz", "ff.json", "ff"])
def test_a_fifo_in_a_catalogue_format_is_refused_not_waited_on(tmp_path, capsys, name):
    """Format detection (and the .npz reader) opened the FIFO first, and waited for a writer for ever."""
    import os
    import subprocess
    import sys

    fifo = tmp_path / name
    os.mkfifo(fifo)
    run = subprocess.run([sys.executable, "-m", "bilinear.cli", "verify", str(fifo)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "is not a regular file (a device, FIFO or socket)" in run.stderr, run.stderr


@pytest.mark.parametrize("text", ["\ufeffalgorithm one <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n",
                                  "algorithm\tone <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n"])
def test_bl_text_under_a_catalogue_suffix_is_asked_about(tmp_path, capsys, text):
    """A byte-order mark, or a tab after `algorithm`, hid the .bl text from detection: the
    perminov-text reader said "'algorithm' is not a rational coefficient"."""
    path = tmp_path / "one.txt"
    path.write_text(text, encoding="utf-8")
    assert main(["verify", str(path)]) == 1
    assert "could be bl or perminov-text" in capsys.readouterr().err


LONG_NAME = "a" * 300  # past the file system's 255: stat raises ENAMETOOLONG, as it raises EACCES in a folder one cannot enter


@pytest.mark.parametrize("command", [
    ["verify", LONG_NAME + ".exp"], ["verify", LONG_NAME], ["compile", LONG_NAME + ".exp"], ["import", LONG_NAME + ".exp"],
    ["run", LONG_NAME + ".bl", "-n", "8", "--backend", "numpy"], ["bench", LONG_NAME + ".bl", "-n", "8", "--backend", "numpy"],
    ["export", LONG_NAME + ".bl", "--to", "fast-matmul", "-o", "out"], ["plan", LONG_NAME + ".bl"], ["optimize", LONG_NAME + ".bl"],
    ["transform", LONG_NAME + ".bl", "--to", "kmn"], ["product", LONG_NAME + ".bl", "strassen"],
])
def test_a_file_that_cannot_be_looked_at_is_an_error_not_a_traceback(tmp_path, capsys, monkeypatch, command):
    """Path.is_file() raised the OSError in find_scheme, an argparse type: a traceback."""
    monkeypatch.chdir(tmp_path)
    assert main(command) in (1, 2)
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"{LONG_NAME}" in err and "File name too long" in err, err


def test_verify_json_says_why_a_file_cannot_be_looked_at(tmp_path, capsys, monkeypatch):
    import json

    monkeypatch.chdir(tmp_path)
    assert main(["verify", LONG_NAME + ".exp", "--format", "json"]) == 1
    (error,) = json.loads(capsys.readouterr().out)["errors"]
    assert error["message"] == f"cannot read {LONG_NAME}.exp: File name too long"


def test_load_says_why_a_file_cannot_be_looked_at(tmp_path):
    with pytest.raises(BilinearError, match=f"cannot read .*{LONG_NAME}.exp: File name too long"):
        bilinear.load(tmp_path / f"{LONG_NAME}.exp")


@pytest.mark.parametrize("leaf", ["cublas", "fused"])
def test_a_coefficient_past_the_range_in_an_algorithm_is_located_where_it_is_written(leaf):
    """It was said of a statement of the default schedule ("`Y = 10…0*B11 + …` in schedule
    s_cublas"), internal names with no place in the file."""
    text = f"algorithm s <2,1,1;2>:\n  M1 = A11 * {BIG}*B11\n  M2 = A21 * B11\n  C11 = M1/{BIG}\n  C21 = M2\n"
    with pytest.raises(BilinearError) as caught:
        bilinear.compile(program_from_text(text, "s.bl"), backend="numpy", leaf=leaf)
    (error,) = caught.value.diagnostics
    assert (error.span.line, error.span.column) == (2, 3)
    assert error.message == ("M1 has a coefficient of about 1e400, beyond the float64 range (2.23e-308 to 1.8e+308 in "
                             "magnitude); it cannot be run in float64")


def test_an_npz_archive_under_another_suffix_is_said_to_be_one(tmp_path, capsys):
    """It was 'a binary file, not Kauers text', with no word of what it was or how to read it."""
    archive = tmp_path / "factors.exp"
    np.savez(archive.with_suffix(".npz"), **{"2,2,2": np.zeros((3, 4, 7), dtype=np.int64)})
    archive.with_suffix(".npz").rename(archive)
    assert main(["verify", str(archive)]) == 1
    err = capsys.readouterr().err
    assert f"{archive}:1:1: error: {archive} is a zip archive (an AlphaTensor .npz?), not Kauers text" in err
    assert "note: to read it as AlphaTensor factors, give --from alphatensor" in err


@pytest.mark.parametrize("name, text, where", [
    ("t.m", "{{{{" + "7" * 5000 + "}},{{1}},{{1}}}}\n", "t.m:1:"),
    ("1x1x1_1_big_L.slp", "o0:=" + "7" * 5000 + "*i0;\n", "1x1x1_1_big_L.slp:1:"),
])
def test_a_number_past_the_digit_limit_in_mathematica_or_slp_text_is_said_in_words(tmp_path, capsys, name, text, where):
    """Both printed Python's own message, cut at its first full stop: "(Exceeds the limit (4300 digits) for
    integer string conversion: value has 5000 digits; use sys)" (a hunt)."""
    for part in "RP":  # PLinOpt's scheme is three files
        (tmp_path / f"1x1x1_1_big_{part}.slp").write_text("o0:=i0;\n", encoding="utf-8")
    (tmp_path / name).write_text(text, encoding="utf-8")
    assert main(["verify", str(tmp_path / name)]) == 1
    err = capsys.readouterr().err
    assert where in err and "a number of more than 4300 digits cannot be read" in err, err
    assert "integer string conversion" not in err and "use sys" not in err
