"""The catalogue checks that scale: straight-line programs read with integer arithmetic, an A block
that no product reads (both Brent strategies; the rest is in test_brent_strategies), the tally's --files."""

from __future__ import annotations

import dataclasses
import importlib
import json
from fractions import Fraction

from conftest import ROOT, scheme_file

from bilinear.frontend.importers import read_catalogue
from bilinear.ir import Form
from bilinear.verify.algorithm import wrong_blocks
from bilinear.verify.expand import Expansion
from bilinear.verify.tensor import STRATEGIES, residual_entries


def test_a_program_with_fractions_signs_and_cancellation_reads_exactly(tmp_path):
    from bilinear.frontend.formats.sparse import read_slp

    program = tmp_path / "x_L.slp"
    program.write_text(
        "t1:=i0*18/17+i1*2;\n"  # (18/17, 2)
        "t2:=t1*17/-6-i2/4;\n"  # (-3, -17/3, -1/4)
        "t3:=t2+i0*3;\n"  # i0 cancels
        "o0:=-t3/2;\n"
        "o1:=t1-t1+i1*0;\n"  # an empty row
        "o2:=(t1+t1)*17/36;\n"
    )
    matrix = read_slp(program)
    assert (matrix.rows, matrix.cols) == (3, 3)
    assert matrix.entries == {(0, 1): Fraction(17, 6), (0, 2): Fraction(1, 8), (2, 0): Fraction(1), (2, 1): Fraction(17, 9)}


def _strassen():
    return read_catalogue(scheme_file("fast-matmul/strassen"))


def test_an_a_block_that_no_product_reads_is_wrong():
    scheme = _strassen()
    bare = [p for p in scheme.products if "A21" not in p.left.names()]
    dropped = {p.name for p in scheme.products} - {p.name for p in bare}
    outputs = tuple(
        dataclasses.replace(o, form=Form.of({n: c for n, c in o.form.terms if n not in dropped})) for o in scheme.outputs
    )
    mutant = dataclasses.replace(scheme, products=tuple(bare), outputs=outputs, declared_rank=len(bare))
    assert wrong_blocks(mutant) == ("C21", "C22")  # A21 reaches C21 and C22 only
    expansion = Expansion(mutant)
    for strategy in STRATEGIES:
        entries = residual_entries(mutant.shape, *zip(*expansion.factors), expansion.weights, strategy)
        assert {c for _, _, c in entries} == {"C21", "C22"}


def test_the_tally_runs_only_the_files_a_list_names(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))  # its worker processes import it by name
    tally = importlib.import_module("catalogue_tally")
    folder = tmp_path / "arbenson+fast-matmul" / "codegen" / "algorithms"
    folder.mkdir(parents=True)
    for name in ("strassen", "classical222-8-24"):
        (folder / name).write_bytes(scheme_file(f"fast-matmul/{name}").read_bytes())
    listed = tmp_path / "list.txt"
    listed.write_text("arbenson+fast-matmul/codegen/algorithms/strassen\n")
    out = tmp_path / "out.json"
    assert tally.main([str(tmp_path), "--only", "fast-matmul", "--files", str(listed), "--jobs", "1", "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    assert [(r["path"].rsplit("/", 1)[1], r["outcome"]) for r in results] == [("strassen", "verified")]


def test_the_tally_reads_a_folder_per_catalogue_by_its_short_name(tmp_path, monkeypatch):
    """../shared/schemes holds fast-matmul/, kauers/, ...: the tally wanted owner+name folders and found
    nothing there (found by an audit)."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    tally = importlib.import_module("catalogue_tally")
    folder = tmp_path / "fast-matmul"
    folder.mkdir()
    (folder / "strassen").write_bytes(scheme_file("fast-matmul/strassen").read_bytes())
    out = tmp_path / "out.json"
    assert tally.main([str(tmp_path), "--only", "fast-matmul", "--jobs", "1", "--json", str(out)]) == 0
    assert [(r["path"].rsplit("/", 1)[1], r["outcome"]) for r in json.loads(out.read_text())] == [("strassen", "verified")]


def test_the_tally_counts_a_plinopt_scheme_once_whatever_files_hold_it(tmp_path, monkeypatch):
    """An alternative-basis scheme is four `_L` files (ALT and CoB, each as .sms and .slp), and a scheme
    with a program two: the tally counted each file as a scheme (found by an audit)."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    tally = importlib.import_module("catalogue_tally")
    source = scheme_file("plinopt/2x2x2_7_Winograd_L.sms").parent
    (tmp_path / "plinopt").symlink_to(source)
    out = tmp_path / "out.json"
    assert tally.main([str(tmp_path), "--only", "plinopt", "--jobs", "1", "--json", str(out)]) == 0
    read = sorted(r["path"].rsplit("/", 1)[1] for r in json.loads(out.read_text()))
    assert read == ["2x2x2_7_DPS-integral-12.0662_L.sms", "2x2x2_7_Strassen_L.sms", "2x2x2_7_Winograd_L.slp",
                    "3x4x7_63_rational-ALT_L.slp"]
