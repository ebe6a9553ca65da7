"""Sums of names lexed whole (NAME_SUM in bilinear/frontend/grammar.py, read by frontend/name_sums.py).

The fast parser must read every text as the language's own parser (LARK) does: the same definitions with
every name's place, or the same diagnostics.  The property test compares the two on generated equations
and statements; the others pin the edges where a sum must not be one token."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lark.exceptions import UnexpectedInput

from bilinear.diagnostics import BilinearError
from bilinear.frontend.grammar import LARK, NAME_SUMS_LARK
from bilinear.frontend.name_sums import refuse_long_names
from bilinear.frontend.parser import _transformed, parse_text
from bilinear.frontend.syntax_errors import syntax_error
from bilinear.ir import Form


def _deep(value):
    """A value with every Form's spans in it (Forms compare without them)."""
    if isinstance(value, Form):
        return "Form", value.terms, value.spans
    if dataclasses.is_dataclass(value):
        return (type(value).__name__, *(_deep(getattr(value, field.name)) for field in dataclasses.fields(value)))
    if isinstance(value, (tuple, list)):
        return tuple(_deep(item) for item in value)
    return value


def _read(parse, text: str):
    """What ``parse`` makes of ``text``: its definitions, or the diagnostics it raises."""
    try:
        return "read", _deep(parse(text, "t.bl"))
    except BilinearError as error:
        return "refused", [(d.message, d.span, d.notes) for d in error.diagnostics]


def _by_the_language(text: str, path: str):
    """parse_text with the language's parser alone, as it read every text before NAME_SUM."""
    try:
        tree = LARK.parse(text if text.endswith("\n") else text + "\n")
    except UnexpectedInput as error:
        raise BilinearError(syntax_error(error, text, path)) from None
    refuse_long_names(tree, path)
    return _transformed(tree, path)


_CLEAN_NAMES = ["M1", "M2", "A11", "B21", "C12", "t", "x", "stagex", "_q", "B[1,2]", "A[ 2 , 1 ]", "C[10,3]"]
_NAMES = _CLEAN_NAMES + ["stage", "temp", "for", "B [1,2]", "X[1,1]", "A[0,1]", "B[1,", "x" * 300]
_CLEAN_JOINS = [" + ", " - ", "+", "-", " +\t", "\f+ ", "  -  "]
_JOINS = _CLEAN_JOINS + [" * ", "*", " / ", " ", " + - "]
_ATOMS = _NAMES + ["2", "1/2", "0.5", "(A11 + A12)", "(-B11)", "-M1", "+M2", "2*M1"]
_ENDS = ["", " # note", ";", " )", " 2", "x", ".5", "[1,1]", " (", "é", " -> C11", " * B11"]


@st.composite
def _expressions(draw) -> str:
    """Mostly sums of names as the fast parser takes them whole; one in four with anything else mixed in."""
    clean = draw(st.integers(0, 3)) > 0
    atoms = draw(st.lists(st.sampled_from(_CLEAN_NAMES if clean else _ATOMS), min_size=1, max_size=6))
    text = draw(st.sampled_from(["", "-", "+", "- "] if clean else ["", "-", "(", "-(", "+ -"]))
    for index, atom in enumerate(atoms):
        text += (draw(st.sampled_from(_CLEAN_JOINS if clean else _JOINS)) if index else "") + atom
    if text.count("(") > text.count(")") and draw(st.booleans()):
        text += ")"
    return text + draw(st.sampled_from(["", " # note", ";"] if clean else _ENDS))


@st.composite
def _files(draw) -> str:
    if draw(st.booleans()):  # an algorithm's equations
        lines = [f"  {draw(st.sampled_from(['M1', 'M2', 'C11', 'S']))} = {draw(_expressions())}"
                 for _ in range(draw(st.integers(1, 3)))]
        return "algorithm a <1,1,1>:\n" + "\n".join(lines) + "\n"
    statements = [draw(st.sampled_from(["A11 += ", "B11 -= ", "C11 = ", "T = ", ""])) + draw(_expressions())
                  for _ in range(draw(st.integers(1, 3)))]
    return ("use \"strassen.bl\"\nschedule s for strassen:\n  temp T: A\n  stage one:\n    "
            + "\n    ".join(statements) + "\n")


@settings(max_examples=400, deadline=None)
@given(_files())
def test_the_fast_parser_reads_every_text_as_the_language_does(text):
    assert _read(parse_text, text) == _read(_by_the_language, text)


@pytest.mark.parametrize("expression, whole", [
    ("M1 + M2 - B[1,2] + A[ 2 , 1 ]", True),
    ("- M1 + M2", True),
    ("M1 + M2*2", False),  # `M2*2` binds tighter: M1 + (M2*2)
    ("M1 + M2 / 2", False),
    ("M1 + M2 [1,2]", False),  # ref's other form, a block written with a blank
    ("stage + x", False),  # a keyword where a statement may begin is LARK's keyword there
    ("M1 + 2", False),
    ("M1", False),
])
def test_a_sum_is_one_token_only_where_no_term_binds_tighter(expression, whole):
    tokens = [token.type for token in NAME_SUMS_LARK.parse(f"algorithm a <1,1,1>:\n  S = {expression}\n")
              .scan_values(lambda value: hasattr(value, "type"))]
    assert ("NAME_SUM" in tokens) is whole


def test_each_term_of_a_sum_keeps_its_place():
    """`S = M1 - B[1,2] + M1`: M1 at columns 7–9, B[1,2] at 12–18 (its indices included), M1 again at 21."""
    (_, (algorithm,)) = parse_text("algorithm a <1,1,1>:\n  S = M1 - B[1,2] + M1\n", "t.bl")
    (total,) = algorithm.sums
    assert dict(total.form.terms) == {"M1": 2, "B12": -1}
    assert [(name, span.line, span.column, span.end_column) for name, span in total.form.spans] == [
        ("M1", 2, 7, 9), ("B12", 2, 12, 18), ("M1", 2, 21, 23)]


def test_a_long_name_inside_a_sum_is_refused_where_it_stands():
    name = "y" * 300
    with pytest.raises(BilinearError) as caught:
        parse_text(f"algorithm a <1,1,1>:\n  S = M1 + {name} - M2\n", "t.bl")
    (diagnostic,) = caught.value.diagnostics
    assert (diagnostic.message, diagnostic.span.column, diagnostic.span.end_column) == (
        f"a name of 300 characters, where a name has at most 255: '{'y' * 40}…'", 12, 312)


def test_a_long_sum_is_one_token():
    """A C block of a Kronecker product sums hundreds of products: one token, not two a term."""
    text = "algorithm a <1,1,1>:\n  C11 = " + " + ".join(f"M{r}" for r in range(1, 501)) + "\n"
    tokens = list(NAME_SUMS_LARK.lex(text))
    assert [token.type for token in tokens].count("NAME_SUM") == 1 and len(tokens) < 20


@pytest.mark.parametrize("line, column, expected", [
    ("    stage + x -> C11", 11, "a name"), ("  stage + x -> C11", 9, "a name"), ("    temp + x -> C11", 10, "a name"),
    ("algorithm + x -> C11", 11, "a name"), ("table + x -> C11", 7, "a name"), ("schedule + x -> C11", 10, "a name"),
    ("use + x -> C11", 5, 'a quoted file name ("file.bl")'),
])
def test_a_sum_never_begins_at_a_keyword(line, column, expected):
    """Where a statement may begin, so may a stage, a temporary or the next definition: LARK takes `stage` for the
    keyword and stops at the '+'.  A sum lexed from the keyword on made it a statement, refused as "the left side of
    '->' must be a product of two factors, not the sum stage + x"."""
    text = f"schedule s for strassen:\n  temp T: A\n  stage one:\n    A11 * B11 -> C11\n{line}\n"
    with pytest.raises(BilinearError) as caught:
        parse_text(text, "t.bl")
    assert [(d.message, d.span.line, d.span.column) for d in caught.value.diagnostics] == [
        (f"unexpected '+'; expected {expected}", 5, column)]


def test_of_several_long_names_the_first_written_is_refused():
    """`S = yyy…(300) + zzz…(400)` then `T = www…(500)`: the 300-character name at line 2, column 7, is the one said."""
    text = f"algorithm a <1,1,1>:\n  S = {'y' * 300} + {'z' * 400}\n  T = {'w' * 500}\n"
    with pytest.raises(BilinearError) as caught:
        parse_text(text, "t.bl")
    assert [(d.message[:12], d.span.line, d.span.column) for d in caught.value.diagnostics] == [("a name of 30", 2, 7)]
