"""to_bl: algorithms written as .bl text parse back to the same algorithm."""

from __future__ import annotations

import dataclasses
import re
from fractions import Fraction

import pytest
from conftest import ALGORITHMS, ROOT, SCHEMES, scheme_file
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import bilinear
from bilinear.cli import main
from bilinear.diagnostics import BilinearError
from bilinear.frontend import program_from_text
from bilinear.frontend.export import to_bl
from bilinear.frontend.importers import read_catalogue
from bilinear.ir import Algorithm, Form, Output, Product, Shape, Sum
from bilinear.verify.expand import Expansion


def _without_positions(algorithm: Algorithm) -> Algorithm:
    """The algorithm with every source span dropped (and the table flag, a matter of layout)."""
    return dataclasses.replace(
        algorithm,
        span=None,
        tabular=False,
        sums=tuple(dataclasses.replace(s, span=None) for s in algorithm.sums),
        products=tuple(dataclasses.replace(p, span=None) for p in algorithm.products),
        outputs=tuple(dataclasses.replace(o, span=None) for o in algorithm.outputs),
    )


def _parsed(text: str, name: str) -> Algorithm:
    return program_from_text(text, f"<{name}>").algorithm(name)


def _round_trips(algorithm: Algorithm, style: str) -> bool:
    return _without_positions(_parsed(to_bl(algorithm, style), algorithm.name)) == _without_positions(algorithm)


def _catalogue_algorithms() -> list[Algorithm]:
    """Every exact scheme of the catalogues that loads (none when they are absent).

    Which files load is the importers' tests' business; this only collects
    exact algorithms to export, so a file the readers refuse is left out.
    """
    found = []
    for path in sorted(p for p in SCHEMES.glob("*/*") if p.is_file()):
        if path.suffix in (".md", ".slp"):
            continue
        keys = ("2,2,2", "3,3,3", "4,4,4") if path.suffix == ".npz" else (None,)
        for key in keys:
            try:
                scheme = read_catalogue(path, key=key)
            except BilinearError:
                continue
            if isinstance(scheme, Algorithm):
                found.append(scheme)
    return found


CATALOGUE = _catalogue_algorithms()
SHIPPED = [a for path in ALGORITHMS for a in bilinear.load(path).algorithms]


@pytest.mark.parametrize("style", ["equations", "table"])
@pytest.mark.parametrize("algorithm", CATALOGUE + SHIPPED, ids=lambda a: a.name)
def test_every_catalogue_and_shipped_algorithm_round_trips(algorithm, style):
    if style == "table" and (algorithm.sums or [p.name for p in algorithm.products] != [f"M{r + 1}" for r in range(algorithm.rank)]):
        # A table has no named sums and numbers its products M1..MR: the same U, V, W is what survives.
        back = _parsed(to_bl(algorithm, style), algorithm.name)
        assert Expansion(back).tables() == Expansion(algorithm).tables()
    else:
        assert _round_trips(algorithm, style)


def test_the_catalogue_round_trip_covers_every_reader():
    if not SCHEMES.exists():
        pytest.skip("catalogues absent")
    names = {a.name for a in CATALOGUE}
    assert {"grey333_23_152", "eliminated_grey333_23_125", "plinopt_2x2x2_7_Strassen",
            "kauers_446_k0a44a47e90f9bce", "factorizations_r_3x3x3"} <= names


# --- random algorithms -----------------------------------------------------------------------------

_COEFFICIENTS = st.sampled_from([Fraction(n, d) for n in range(-7, 8) if n for d in (1, 2, 3, 12)])


def _form(draw, names) -> Form:
    return Form.of(draw(st.dictionaries(st.sampled_from(list(names)), _COEFFICIENTS, min_size=1, max_size=4)))


@st.composite
def algorithms(draw) -> Algorithm:
    """Random well-formed algorithms (not correct ones: to_bl is about the text), indices past 9 included."""
    shape = Shape(draw(st.sampled_from([1, 2, 3, 10])), draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    rank = draw(st.integers(1, 5))
    prefix = draw(st.sampled_from(["M", "P", "prod_"]))
    sums = ()
    a_side = list(shape.blocks("A"))
    if draw(st.booleans()):
        sums = (Sum("S1", _form(draw, shape.blocks("A"))),)
        a_side.append("S1")
    products = tuple(
        Product(f"{prefix}{r + 1}", _form(draw, a_side), _form(draw, shape.blocks("B"))) for r in range(rank)
    )
    outputs = tuple(Output(block, _form(draw, [p.name for p in products])) for block in shape.blocks("C"))
    name = draw(st.sampled_from(["random", "x", "grey_1"]))
    algorithm = Algorithm(name, shape, sums, products, outputs, rank, None, draw(st.booleans()))
    # Well-formed means no factor expands to zero (A11 - 6·S1 with S1 = A11/6 does): the reader
    # rightly refuses such a text, which is no fault of to_bl.
    assume(not any(u.is_zero() for u, _ in Expansion(algorithm).factors))
    return algorithm


@settings(max_examples=40, deadline=None)
@given(algorithms())
def test_random_algorithms_round_trip_as_equations(algorithm):
    assert _round_trips(algorithm, "equations")


@settings(max_examples=40, deadline=None)
@given(algorithms())
def test_random_algorithms_keep_their_tables(algorithm):
    back = _parsed(to_bl(algorithm, "table"), algorithm.name)
    assert Expansion(back).tables() == Expansion(algorithm).tables()


# --- headers, styles and the shipped conversions ----------------------------------------------------


def test_the_header_says_where_the_algorithm_came_from():
    text = to_bl(bilinear.load(ROOT / "algorithms" / "strassen.bl").algorithm("strassen"))
    assert text.splitlines()[0] == f"# strassen: converted by bilinear from {ROOT / 'algorithms' / 'strassen.bl'}"
    custom = to_bl(_parsed(text, "strassen"), header=("from Strassen (1969)", "", "public domain"))
    assert custom.splitlines()[:4] == ["# from Strassen (1969)", "#", "# public domain", ""]


def test_a_table_of_an_algorithm_with_sums_says_what_it_changed():
    winograd = bilinear.load(ROOT / "algorithms" / "winograd.bl").algorithm("winograd")
    text = to_bl(winograd, "table")
    assert "# Written as a table: named sums are multiplied out and products are numbered M1..MR." in text
    assert "     1  0  1  0  0 -1  1  # A11" in text  # in P1, P3 (via S4), P6 (via S2), P7 (via S3)


def test_bad_styles_and_zero_outputs_are_refused():
    strassen = bilinear.load(ROOT / "algorithms" / "strassen.bl").algorithm("strassen")
    with pytest.raises(ValueError, match="style must be one of equations, table, not 'latex'"):
        to_bl(strassen, "latex")
    zero = dataclasses.replace(strassen, outputs=(Output("C11", Form()),) + strassen.outputs[1:])
    with pytest.raises(ValueError, match="C11 of strassen is identically zero; write it with style='table'"):
        to_bl(zero)
    assert "  U:" in to_bl(zero, "table")


@pytest.mark.parametrize("stem, source", [("grey333", "fast-matmul/grey333-23-152"), ("grey234", "fast-matmul/grey234-20-144")])
def test_shipped_conversions_equal_their_catalogue_source(stem, source):
    shipped = bilinear.load(ROOT / "algorithms" / f"{stem}.bl").algorithm(stem)
    converted = dataclasses.replace(read_catalogue(scheme_file(source)), name=stem)
    assert _without_positions(shipped) == _without_positions(converted)
    text = (ROOT / "algorithms" / f"{stem}.bl").read_text(encoding="utf-8")
    assert f"codegen/algorithms/{source.split('/')[1]}" in text and "BSD 2-Clause" in text


def test_coefficients_survive_as_exact_fractions():
    algorithm = Algorithm(
        "frac", Shape(1, 1, 1), (), (Product("M1", Form.of({"A11": Fraction(-3, 7)}), Form.of({"B11": Fraction(7, 3)})),),
        (Output("C11", Form.of({"M1": Fraction(-1)})),), 1,
    )
    text = to_bl(algorithm)
    assert "  M1 = (-3/7*A11) * (7/3*B11)" in text and "  C11 = -M1" in text
    assert _round_trips(algorithm, "equations") and bilinear.verify(program_from_text(text, "<frac>")).ok


def _strassen_with_cancelling(coefficient: str) -> Algorithm:
    """Strassen and two products that cancel, c·A11·B11 − c·A11·B11: c must survive the export."""
    text = (ROOT / "algorithms" / "strassen.bl").read_text(encoding="utf-8").replace("<2,2,2;7>", "<2,2,2;9>")
    text = text.replace("  C11 = M1 + M4 - M5 + M7", f"  M8 = {coefficient}*A11 * B11\n  M9 = {coefficient}*A11 * B11\n"
                        "  C11 = M1 + M4 - M5 + M7 + M8 - M9")
    return program_from_text(text, "cancel.bl").main


@pytest.mark.parametrize("coefficient, why", [
    ("9007199254740993/2", "which a binary floating-point .npz cannot hold exactly"),  # dyadic, 54 bits
    ("9007199254740993/2048", "which a binary floating-point .npz cannot hold exactly"),
    ("9223372036854775809", "which a binary floating-point .npz cannot hold exactly"),  # 2^63 + 1: nor an int64
    # exact in a float, but past the places the reader takes for a written fraction rather than a rounding
    ("1/2097152", r"a binary fraction of more than 20 places, which the \.npz reader refuses as a rounding"),
])
def test_alphatensor_export_refuses_a_coefficient_it_would_round(coefficient, why):
    """(2^53+1)/2 was written as a float64 rounded to 2^52: the file said `wrote` and read back wrong;
    2^63 ended in numpy's OverflowError traceback."""
    from bilinear.frontend.writers import to_alphatensor

    algorithm = _strassen_with_cancelling(coefficient)
    assert bilinear.verify(program_from_text(to_bl(algorithm), "cancel.bl")).ok
    with pytest.raises(ValueError, match=f"has the coefficient {coefficient}, {why}"):
        to_alphatensor(algorithm)


def test_alphatensor_export_keeps_integers_up_to_int64_exactly():
    from bilinear.frontend.writers import to_alphatensor

    _, factors = to_alphatensor(_strassen_with_cancelling("9223372036854775807"))  # 2^63 - 1
    assert factors.dtype == "int64" and int(factors[0].max()) == 2**63 - 1


@pytest.mark.parametrize("separator", ["\u2028", "\x0c", "\x85"])
def test_a_plinopt_export_reads_back_whatever_line_separators_its_header_holds(tmp_path, separator):
    """A header with U+2028 (or a form feed, or NEL) was written into the .sms comment line as it
    was; the readers split lines at it and met a comment's second half where the header should be."""
    from bilinear.frontend.writers import write

    strassen = bilinear.load(ROOT / "algorithms" / "strassen.bl").main
    written = write(strassen, "plinopt", tmp_path / "s", (f"Strassen{separator} second part",))
    left = next(path for path in written if path.name.endswith("_L.sms"))
    assert bilinear.verify(left).ok


@pytest.mark.parametrize("header", ["2 is a placeholder for sqrt(7)", "5 is a placeholder for sqrt(3)"])
def test_a_plinopt_export_reads_back_over_q_whatever_its_header_says_of_placeholders(tmp_path, capsys, header):
    """The source's header, quoted in each file's comment, was read back as the file's own claim: strassen
    became a scheme modulo 22, or failed to load with "a modulus is at least 2, not -3" (a hunt)."""
    source = tmp_path / "src.bl"
    source.write_text(f"# {header}\n" + (ROOT / "algorithms/strassen.bl").read_text())
    assert main(["export", str(source), "--to", "plinopt", "-o", str(tmp_path / "S")]) == 0
    left = tmp_path / "2x2x2_7_S_L.sms"
    assert header in left.read_text().splitlines()[0]
    read = read_catalogue(left)
    assert isinstance(read, Algorithm) and bilinear.verify(left).ok
    assert main(["verify", str(left)]) == 0 and "modulo" not in capsys.readouterr().out


def test_an_alphatensor_export_says_the_header_it_cannot_keep(tmp_path, capsys):
    """export's help said the header (a reference, a licence) goes into the formats' comments; an .npz
    has none, and the header was dropped without a word (a hunt)."""
    assert main(["export", "strassen", "--to", "alphatensor", "-o", str(tmp_path / "s.npz")]) == 0
    assert ("note: an .npz has no place for a comment: the header comment of strassen.bl (Strassen (1969): 2x2 "
            "blocks,…additions.) is not in s.npz") in capsys.readouterr().err
    bare = tmp_path / "bare.bl"
    bare.write_text("algorithm one <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n")
    assert main(["export", str(bare), "--to", "alphatensor", "-o", str(tmp_path / "b.npz")]) == 0
    assert "no place for a comment" not in capsys.readouterr().err  # nothing to keep, nothing to say


def test_a_plinopt_name_whose_shape_prefix_contradicts_the_scheme_is_refused(tmp_path):
    """-o 2x3x3_15_foo for a ⟨3,2,3;15⟩ scheme wrote files PLinOpt's readers take for ⟨2,3,3⟩ (they did not read back)."""
    from bilinear.frontend.writers import rendered

    grey = bilinear.load(ROOT / "algorithms" / "grey234.bl").main  # ⟨2,3,4;20⟩
    with pytest.raises(ValueError, match=r"^the name 3x2x4_20_foo says ⟨3,2,4⟩ with 20 products, but grey234 is "
                                         r"⟨2,3,4;20⟩: PLinOpt's readers take the shape from the name"):
        rendered(grey, "plinopt", tmp_path / "3x2x4_20_foo")
    assert [p.name for p in rendered(grey, "plinopt", tmp_path / "2x3x4_20_foo")][0] == "2x3x4_20_foo_L.sms"


@pytest.mark.parametrize("given", ["2x3x4_20_foo_L.sms", "2x3x4_20_foo_P.sms", "foo_R.sms", "2x3x4_20_foo.sms",
                                   "2x3x4_20_foo_L.SMS"])  # (it had written 2x3x4_20_foo_L.SMS_L.sms: an audit)
def test_a_plinopt_file_name_given_whole_names_its_three_files(tmp_path, given):
    """-o 2x2x2_7_mine_L.sms, one of the three files named whole, wrote 2x2x2_7_mine_L_L.sms, _L_R, _L_P."""
    from bilinear.frontend.writers import rendered

    grey = bilinear.load(ROOT / "algorithms" / "grey234.bl").main  # ⟨2,3,4;20⟩
    assert sorted(p.name for p in rendered(grey, "plinopt", tmp_path / given)) == \
        ["2x3x4_20_foo_L.sms", "2x3x4_20_foo_P.sms", "2x3x4_20_foo_R.sms"]


def test_a_plinopt_scheme_exported_into_a_folder_keeps_its_name(tmp_path, capsys):
    """plinopt_2x2x2_7_Strassen was written as 2x2x2_7_plinopt_2x2x2_7_Strassen_L.sms, and its name
    grew on every round trip."""

    source = tmp_path / "2x2x2_7_Strassen_L.sms"
    assert main(["export", "strassen", "--to", "plinopt", "-o", str(tmp_path / "2x2x2_7_Strassen")]) == 0
    once = tmp_path / "once"
    once.mkdir()
    assert main(["export", str(source), "--to", "plinopt", "-o", str(once)]) == 0
    assert sorted(path.name for path in once.iterdir()) == [f"2x2x2_7_Strassen_{part}.sms" for part in "LPR"]


def test_an_alternative_basis_scheme_exported_into_a_folder_reads_back_as_written(tmp_path, capsys):
    """Its name (…_rational_ALT) would make the files an alternative basis without a change of basis:
    the folder's files are named …_ALT_expanded, as what they hold is the scheme in the standard basis."""

    source = scheme_file("plinopt/3x4x7_63_rational-ALT_L.sms")
    assert main(["export", str(source), "--to", "plinopt", "-o", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"3x4x7_63_rational_ALT_expanded_{part}.sms" for part in "LPR"]
    assert bilinear.verify(tmp_path / "3x4x7_63_rational_ALT_expanded_L.sms").ok


def test_a_plinopt_export_that_cannot_write_every_file_writes_none(tmp_path, capsys, monkeypatch):
    """The disk filled up on the second of the three files: the first stayed, so a retry was refused
    ("exists"), and with --force a new _L.sms sat beside the old _R and _P.  Now all three or none."""
    import errno
    import os

    from bilinear import output

    real_fdopen, opened = os.fdopen, []

    def second_fails(fd, *args, **kwargs):  # the second file's data does not fit
        opened.append(fd)
        if len(opened) == 2:
            os.close(fd)
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_fdopen(fd, *args, **kwargs)

    monkeypatch.setattr(output.os, "fdopen", second_fails)
    target = tmp_path / "2x2x2_7_s"
    assert main(["export", "strassen", "--to", "plinopt", "-o", str(target)]) == 1
    assert "No space left on device" in capsys.readouterr().err and list(tmp_path.iterdir()) == []
    monkeypatch.setattr(output.os, "fdopen", real_fdopen)
    assert main(["export", "strassen", "--to", "plinopt", "-o", str(target)]) == 0  # nothing was left to refuse
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    opened.clear()
    monkeypatch.setattr(output.os, "fdopen", second_fails)
    assert main(["export", "winograd", "--to", "plinopt", "--force", "-o", str(target)]) == 1
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before  # the old trio, whole


@pytest.mark.parametrize("to", ["alphatensor", "fast-matmul", "plinopt"])
def test_export_refuses_a_bl_name_for_what_is_not_bl_text(tmp_path, capsys, to):
    """export --to alphatensor -o o.bl wrote an .npz under a .bl name without a word, and `verify o.bl`
    then said "binary file, not .bl text" (fast-matmul: a .bl syntax error), with no hint of --from;
    plinopt wrote 2x2x2_7_o.bl_L.sms, _R and _P (an audit)."""

    target = tmp_path / "o.bl"
    with pytest.raises(SystemExit) as stopped:  # a usage error, as import's -o x.npz
        main(["export", "strassen", "--to", to, "-o", str(target)])
    err = " ".join(capsys.readouterr().err.split())
    # the name it takes, not `bilinear import` (which writes .bl) alone
    meant = tmp_path / ("o.npz" if to == "alphatensor" else "o")
    why = ("names its three files after -o (MxKxN_R_OUT_L.sms, _R.sms and _P.sms), and .bl would sit inside their "
           "names" if to == "plinopt" else f"writes {to} files, and one named .bl would be read back as .bl text")
    assert stopped.value.code == 2 and f"export --to {to} {why}: name it {meant} instead" in err, err
    assert list(tmp_path.iterdir()) == []
    if to == "fast-matmul":  # PLinOpt's -o is a stem or a folder: a folder named x.bl is no .bl file
        folder = tmp_path / "x.bl"
        folder.mkdir()
        assert main(["export", "strassen", "--to", "plinopt", "-o", str(folder)]) == 0
        assert sorted(path.suffix for path in folder.iterdir()) == [".sms"] * 3


def test_a_rename_that_fails_is_an_error_and_leaves_no_temporary_file(tmp_path):
    """A raw IsADirectoryError had escaped write_together, where every other failure is a BilinearError."""
    from bilinear.output import write_together

    folder = tmp_path / "b"
    folder.mkdir()
    with pytest.raises(BilinearError, match=f"cannot write {folder}"):
        write_together({tmp_path / "a": "new", folder: "x"})
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a", "b"] and list(folder.iterdir()) == []


def test_exports_help_says_how_plinopt_files_are_named(tmp_path, capsys):
    """It had said OUT was the stem of the three files; they are MxKxN_R_OUT_{L,R,P}.sms."""
    with pytest.raises(SystemExit):
        main(["export", "-h"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "plinopt: OUT names MxKxN_R_OUT_L.sms, _R.sms and _P.sms; a folder gets MxKxN_R_NAME_*.sms" in help_text
    assert main(["export", "strassen", "--to", "plinopt", "-o", str(tmp_path / "foo")]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["2x2x2_7_foo_L.sms", "2x2x2_7_foo_P.sms", "2x2x2_7_foo_R.sms"]


def test_plinopt_exports_name_the_scheme_and_mark_the_sources_comment_as_the_sources(tmp_path):
    """Each file read "Post matrix (C blocks x products) of from 2x2x2_7_Strassen_L.sms Strassen's left
    HM matrix (5 add) ...": the L file's comment, on all three, after "of from"."""
    source = tmp_path / "src.bl"
    source.write_text("# Strassen's left HM matrix (5 add)\n" + (ROOT / "algorithms/strassen.bl").read_text())
    assert main(["export", str(source), "--to", "plinopt", "-o", str(tmp_path / "S")]) == 0
    first = (tmp_path / "2x2x2_7_S_P.sms").read_text().splitlines()[0]
    assert first.startswith("# Post matrix (C blocks x products) of strassen; source: "), first
    assert " of from " not in first



def _header(path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith("#")]


@pytest.mark.parametrize("to", ["plinopt", "fast-matmul"])
def test_a_round_trip_keeps_the_original_header_once_and_does_not_grow(tmp_path, capsys, to):
    """Export then import wrapped the whole header in the next one's on every round trip ("Left matrix
    ... of plinopt_2x2x2_7_s1; source: from s2.bl from 2x2x2_7_s1_L.sms Left matrix ... of strassen;
    source: from strassen.bl Strassen (1969) ..."): the bilinear-written wrappers and hop notes of a
    source go, its own text stays, once."""
    original = "Strassen (1969): 2x2 blocks, 7 products, 18 block additions."
    written = []
    source = ROOT / "algorithms/strassen.bl"
    for trip in range(3):
        out = tmp_path / (f"s{trip}" if to == "plinopt" else f"s{trip}.txt")
        assert main(["export", str(source), "--to", to, "-o", str(out)]) == 0
        exported = tmp_path / f"2x2x2_7_s{trip}_L.sms" if to == "plinopt" else out
        source = tmp_path / f"t{trip}.bl"
        reading = ["--from", to] if to == "fast-matmul" else []  # .txt is read as another format's first
        assert main(["import", str(exported), *reading, "-o", str(source)]) == 0
        written.append(_header(source))
    capsys.readouterr()
    for header in written:
        assert sum(line.count(original) for line in header) == 1, header
        assert not any("source: from" in line or "Exported by" in line for line in header), header
    renamed = [[re.sub(r"s[0-9]", "sN", line) for line in header] for header in written]
    assert renamed[1] == renamed[2], (written[1], written[2])
    assert len(" ".join(written[2])) <= len(" ".join(written[0])) + 20


def test_a_fast_matmul_name_whose_shape_or_count_contradicts_the_scheme_is_refused(tmp_path):
    """-o grey234-20-144 for the ⟨4,3,2⟩ transpose wrote a file its own reader took for ⟨2,3,4⟩ and could
    not read back (found by an audit)."""
    from bilinear.frontend.writers import rendered

    grey = bilinear.load(ROOT / "algorithms" / "grey234.bl").main  # ⟨2,3,4;20⟩
    with pytest.raises(ValueError, match=r"^the name grey432-20-144 says ⟨4,3,2⟩ with 20 products, but grey234 is "
                                         r"⟨2,3,4;20⟩: fast-matmul's reader takes the shape from the name"):
        rendered(grey, "fast-matmul", tmp_path / "grey432-20-144")
    with pytest.raises(ValueError, match=r"^the name grey234-7-1 says ⟨2,3,4⟩ with 7 products"):
        rendered(grey, "fast-matmul", tmp_path / "grey234-7-1")
    assert list(rendered(grey, "fast-matmul", tmp_path / "grey234-20-144")) == [tmp_path / "grey234-20-144"]
    assert list(rendered(grey, "fast-matmul", tmp_path / "mine")) == [tmp_path / "mine"]


def test_a_derived_plinopt_scheme_exported_into_a_folder_gets_its_own_shape_prefix(tmp_path, capsys):
    """The product of two PLinOpt Strassens kept the source's 2x2x2_7_ prefix in its default name, and the
    export into a folder refused the name the user never gave (found by an audit)."""

    source = scheme_file("plinopt/2x2x2_7_Strassen_L.sms")
    product = tmp_path / "sxs.bl"
    assert main(["product", str(source), str(source), "-o", str(product)]) == 0
    folder = tmp_path / "out"
    folder.mkdir()
    assert main(["export", str(product), "--to", "plinopt", "-o", str(folder)]) == 0
    names = sorted(path.name for path in folder.iterdir())
    assert names[0].startswith("4x4x4_49_") and all(name.count("2x2x2_7_") == 1 for name in names), names
    assert bilinear.verify(folder / names[0]).ok


def test_a_users_header_line_that_starts_with_from_survives_a_second_derivation(tmp_path, capsys):
    """Once a file carried bilinear's "Imported by" note, every header line lost a leading "from WORD"
    ("from the 1969 paper ..." became "1969 paper ...", a line "from https://..." went): only bilinear's
    own first line is taken off."""
    source = tmp_path / "fr.bl"
    lines = ["My Strassen variant", "from the 1969 paper by V. Strassen, Numer. Math. 13",
             "from https://example.org/strassen-notes"]
    source.write_text("".join(f"# {line}\n" for line in lines) + (ROOT / "algorithms/strassen.bl").read_text())
    assert main(["import", str(source), "-o", str(tmp_path / "fr1.bl")]) == 0
    assert main(["transform", str(tmp_path / "fr1.bl"), "--to", "nkm", "-o", str(tmp_path / "fr2.bl")]) == 0
    header = _header(tmp_path / "fr2.bl")
    for line in lines:
        assert f"# {line}" in header, header


def test_a_long_header_is_kept_whole(tmp_path, capsys):
    """Header comments were cut at 40 lines without a word, a second licence's disclaimer with them."""
    source = tmp_path / "long.bl"
    source.write_text("".join(f"# licence line {i}\n" for i in range(1, 61)) + (ROOT / "algorithms/strassen.bl").read_text())
    assert main(["import", str(source), "-o", str(tmp_path / "o.bl")]) == 0
    assert sum(line.startswith("# licence line") for line in _header(tmp_path / "o.bl")) == 60


def test_a_byte_order_mark_does_not_hide_the_header(tmp_path, capsys):
    """A file starting with a UTF-8 BOM verified (the parser skips it), but its header was dropped."""
    source = tmp_path / "bom.bl"
    source.write_bytes(b"\xef\xbb\xbf" + (ROOT / "algorithms/strassen.bl").read_bytes())
    assert main(["import", str(source), "-o", str(tmp_path / "o.bl")]) == 0
    assert any("Strassen (1969)" in line for line in _header(tmp_path / "o.bl"))


def test_a_fraction_of_two_long_numbers_reads_back_from_fast_matmul_and_plinopt(tmp_path):
    """(10^2500+1)/(10^2500+3): each number within the readers' digit limit, the export was written,
    and read back as "a number of more than 4300 digits" (the two counted together; a hunt)."""
    from bilinear.frontend.writers import to_fast_matmul, to_plinopt

    big = 10**2500
    algorithm = _strassen_with_cancelling(f"{big + 1}/{big + 3}")
    (tmp_path / "big-fast").write_text(to_fast_matmul(algorithm), encoding="utf-8")
    for suffix, text in to_plinopt(algorithm).items():
        (tmp_path / f"2x2x2_9_big_{suffix}.sms").write_text(text, encoding="utf-8")
    for path in (tmp_path / "big-fast", tmp_path / "2x2x2_9_big_L.sms"):
        assert Fraction(big + 1, big + 3) in read_catalogue(path).products[7].left.as_dict().values()


@pytest.mark.parametrize("name", ["plinopt_", "plinopt_2x2x2_7_"])
def test_a_plinopt_export_into_a_folder_stays_inside_it_whatever_the_schemes_name(tmp_path, capsys, name):
    """A name that shortened to nothing wrote 2x2x2_7_out_L.sms, _R and _P beside the folder out (a hunt)."""
    source = tmp_path / "s.bl"
    source.write_text((ROOT / "algorithms" / "strassen.bl").read_text().replace("algorithm strassen", f"algorithm {name}"))
    folder = tmp_path / "out"
    folder.mkdir()
    assert main(["export", str(source), "--to", "plinopt", "-o", str(folder)]) == 0
    written = sorted(p.name for p in folder.iterdir())
    assert written == [f"{stem}_{part}.sms" for stem in ["2x2x2_7_plinopt_" if name == "plinopt_" else "2x2x2_7_"]
                       for part in "LPR"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "s.bl"]


def test_a_plinopt_export_to_what_is_not_a_regular_file_is_refused(tmp_path, capsys):
    """-o a FIFO (or /dev/null) wrote 2x2x2_7_pipe_L.sms, _R and _P beside it (a hunt)."""
    import os

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    assert main(["export", "strassen", "--to", "plinopt", "-o", str(pipe)]) == 1
    assert f"{pipe} exists and is not a regular file; choose another output" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_a_plinopt_export_under_a_file_says_it_is_not_a_folder(tmp_path, capsys):
    (tmp_path / "q").write_text("")
    assert main(["export", "strassen", "--to", "plinopt", "-o", str(tmp_path / "q" / "x")]) == 1
    assert f"cannot write {tmp_path / 'q' / 'x'}: {tmp_path / 'q'} is not a folder" in capsys.readouterr().err


def test_a_name_the_reader_would_refuse_is_not_written():
    """A catalogue's variable of 254 characters (P_ and 254 in .bl), or a sum name optimize grew past 255:
    the text was written, said verified, and did not read back (a review)."""
    algorithm = bilinear.load(ROOT / "algorithms" / "strassen.bl").main
    with pytest.raises(ValueError, match=re.escape(f"the name {'z' * 40}… has 256 characters, more than the 255 a .bl "
                                                   "name may have: a .bl file cannot hold it")):
        to_bl(dataclasses.replace(algorithm, name="z" * 256))
    assert to_bl(dataclasses.replace(algorithm, name="z" * 255)).count("z" * 255) == 2  # the comment and the header


def test_a_text_past_what_bilinear_reads_in_either_style_is_refused_with_what_to_do(monkeypatch):
    from bilinear.frontend import loader

    strassen = bilinear.load(ROOT / "algorithms" / "strassen.bl").main
    monkeypatch.setattr(loader, "MAX_SOURCE_BYTES", 200)
    with pytest.raises(ValueError) as refused:
        to_bl(strassen, style="table")
    # (the size: the default header names the file read, whose path differs between checkouts)
    assert re.fullmatch(r"the table text of strassen would be \d+ bytes, more than the 200 bytes bilinear "
                        r"reads from a \.bl file; export it to a catalogue format instead \(bilinear export\)",
                        str(refused.value))


def test_an_export_larger_than_bilinear_reads_back_is_refused(tmp_path, capsys, monkeypatch):
    """export --to fast-matmul of <27,27,27;12167> would be dense text past the 64 MiB its reader takes.  Here the
    limit is set between strassen ⊗ strassen's .bl file and its dense fast-matmul text."""
    from bilinear.frontend import loader

    source, dense = tmp_path / "s49.bl", tmp_path / "s49.txt"
    assert main(["product", "strassen", "strassen", "-o", str(source)]) == 0
    assert main(["export", str(source), "--to", "fast-matmul", "-o", str(dense)]) == 0
    assert dense.stat().st_size > source.stat().st_size
    monkeypatch.setattr(loader, "MAX_SOURCE_BYTES", (dense.stat().st_size + source.stat().st_size) // 2)
    dense.unlink()
    capsys.readouterr()
    assert main(["export", str(source), "--to", "fast-matmul", "-o", str(dense)]) == 1
    assert re.fullmatch(r"bilinear export: the fast-matmul text s49\.txt of strassen_x_strassen would be [\d.]+ KiB, "
                        r"more than the [\d.]+ KiB bilinear reads from a scheme file; export it to alphatensor "
                        r"\(an \.npz\) or plinopt \(sparse\)\n", capsys.readouterr().err)
    assert not dense.exists()
    assert main(["export", str(source), "--to", "alphatensor", "-o", str(tmp_path / "s.npz")]) == 0  # no text


def test_a_name_that_says_one_product_says_product(tmp_path):
    """-o 2x3x4_1_foo and grey234-1-1 were refused with "says ⟨2,3,4⟩ with 1 products"."""
    from bilinear.frontend.writers import rendered

    grey = bilinear.load(ROOT / "algorithms" / "grey234.bl").main  # ⟨2,3,4;20⟩
    with pytest.raises(ValueError, match=r"^the name 2x3x4_1_foo says ⟨2,3,4⟩ with 1 product, but grey234 is "):
        rendered(grey, "plinopt", tmp_path / "2x3x4_1_foo")
    with pytest.raises(ValueError, match=r"^the name grey234-1-1 says ⟨2,3,4⟩ with 1 product, but grey234 is "):
        rendered(grey, "fast-matmul", tmp_path / "grey234-1-1")
