"""`optimize` drops a product no output uses: verify only warns of one (it is never computed), so
the scheme is the same without it, one product smaller, and the header's rank says so."""

from __future__ import annotations

from conftest import ROOT

import bilinear
from bilinear.cli import main
from bilinear.optimize import optimize
from bilinear.verify import report_algorithm

STRASSEN = (ROOT / "algorithms" / "strassen.bl").read_text()


def _strassen_with(tmp_path, extra: str, rank: int = 8, outputs: dict[str, str] | None = None):
    """strassen.bl with ``extra`` product lines before its outputs (``outputs``: lines replaced)."""
    text = STRASSEN.replace("<2,2,2;7>", f"<2,2,2;{rank}>").replace("  C11 =", f"{extra}\n  C11 =", 1)
    for old, new in (outputs or {}).items():
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "dead.bl"
    path.write_text(text)
    return path


def test_optimize_command_drops_a_product_no_output_uses_and_says_so(capsys, tmp_path):
    """Strassen with M8 = (A11 + A21)(B11 - B12), which no output uses: the result kept it (8
    products, 2 more additions) and only warned "M8 is never used in an output"."""
    source = _strassen_with(tmp_path, "  M8 = (A11 + A21) * (B11 - B12)")
    out = tmp_path / "out.bl"
    assert main(["optimize", str(source), "--seeds", "1", "-o", str(out)]) == 0
    captured = capsys.readouterr()
    notes = [line for line in captured.err.splitlines() if "M8" in line]
    assert notes == ["note: dropped M8, which no output uses: strassen_cse has 7 products, <2,2,2;7>"], captured.err
    assert captured.out == f"wrote {out} (strassen_cse <2,2,2;7>, verified)\n"
    text = out.read_text()
    assert "algorithm strassen_cse <2,2,2;7>:" in text and "M8" not in text
    report = bilinear.verify(out)
    assert report.ok and not [w for entry in report.entries for w in entry.warnings]


def test_products_no_output_uses_go_with_the_sums_only_they_used(tmp_path):
    """Two dead products, one in the middle and one using a named sum nothing else uses; the others
    keep their names and order."""
    extra = "  S = A11 + A21\n  M8 = S * (B11 - B12)\n  M9 = A12 * B21"
    algorithm = bilinear.load(_strassen_with(tmp_path, extra, rank=9)).main
    result, counts = optimize(algorithm, seeds=1)
    assert [p.name for p in result.products] == [f"M{r}" for r in range(1, 8)]
    assert result.rank == result.declared_rank == 7
    report = report_algorithm(result)
    assert report.ok and not report.warnings
    # "before" is the scheme as given: its dead products' factors cost additions too
    assert counts["A"]["before"] == (6, 0) and counts["B"]["before"] == (6, 0)


def test_a_product_whose_weights_cancel_is_dropped_from_a_written_program(tmp_path):
    """M8 is named by a sum over products and again by an output, its weights cancelling: the
    program as written (a candidate) names it, so it cannot be taken as it is."""
    source = _strassen_with(tmp_path, "  M8 = A11 * B11\n  S = M5 - M8", outputs={
        "C11 = M1 + M4 - M5 + M7": "C11 = M1 + M4 - S + M7 - M8"})
    algorithm = bilinear.load(source).main
    assert report_algorithm(algorithm).ok
    result, _ = optimize(algorithm, seeds=1)
    assert result.rank == result.declared_rank == 7 and "M8" not in {p.name for p in result.products}
    report = report_algorithm(result)
    assert report.ok and not report.warnings


def test_another_program_with_or_without_the_dead_product_is_a_candidate(capsys, tmp_path):
    """--also takes a program of the scheme as given (M8 kept, as optimize wrote it before) and one
    without M8 (as it writes it now): both compute the sides of what is optimized."""
    source = _strassen_with(tmp_path, "  M8 = (A11 + A21) * (B11 - B12)")
    without = tmp_path / "without.bl"
    assert main(["optimize", str(source), "--seeds", "1", "-o", str(without)]) == 0
    capsys.readouterr()
    out = tmp_path / "out.bl"
    assert main(["optimize", str(source), "--seeds", "1", "--also", str(source), "--also", str(without), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"--also {source}: sides A, B, C of strassen tried too" in err
    assert f"--also {without}: sides A, B, C of strassen_cse tried too" in err
    assert "<2,2,2;7>" in out.read_text()


def test_a_scheme_left_with_one_product_says_product(capsys, tmp_path):
    """M2 repeats M1 and no output uses it: the note said "two_cse has 1 products"."""
    source = tmp_path / "two.bl"
    source.write_text("algorithm two <1,1,1;2>:\n  M1 = A11 * B11\n  M2 = A11 * B11\n  C11 = M1\n")
    assert main(["optimize", str(source), "--seeds", "1", "-o", str(tmp_path / "out.bl")]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note: dropped")]
    assert notes == ["note: dropped M2, which no output uses: two_cse has 1 product, <1,1,1;1>"]
