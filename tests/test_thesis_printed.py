"""The MSMES stages exactly as the thesis prints them fail, at the misprints."""

from __future__ import annotations

import bilinear
from conftest import FIXTURES

PRINTED = FIXTURES / "msmes_thesis_printed.bl"


def _lines_of(text: str) -> dict[str, int]:
    """Line numbers of the fixture's stages by name."""
    return {
        line.split()[1].rstrip(":"): number
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip().startswith("stage ")
    }


def test_printed_schedule_fails():
    """Strassen itself verifies; the schedule as printed does not."""
    report = bilinear.verify(PRINTED)
    assert [(type(e).__name__, e.ok) for e in report.entries] == [("AlgorithmReport", True), ("ScheduleReport", False)]
    assert report.entries[1].schedule.name == "msmes_printed" and not report.ok


def test_diagnostics_point_at_the_misprinted_statements():
    text = PRINTED.read_text()
    stages = _lines_of(text)
    report = bilinear.verify(PRINTED)
    errors = [d for entry in report.entries for d in entry.errors]
    located = {(d.span.line, d.span.column) for d in errors if d.span}
    stage4 = text.splitlines()[stages["stage4"] - 1]
    stage7 = text.splitlines()[stages["stage7"] - 1]
    # stage 4 prints "B0 = B1 + B0": B11 is overwritten while the same stage reads it.
    assert (stages["stage4"], stage4.index("B11 = B12 + B11") + 1) in located
    # stage 7 repeats stage 6's "A0 = A0 - A3" and "B0 = B0 - B3".
    assert (stages["stage7"], stage7.index("A11 = A11 - A22") + 1) in located
    assert (stages["stage7"], stage7.index("B11 = B11 - B22") + 1) in located


def test_product_diagnostic_traces_back_to_stage_four():
    report = bilinear.verify(PRINTED)
    messages = [(d.message, d.notes) for entry in report.entries for d in entry.errors]
    traced = [notes for message, notes in messages if "is not a product of strassen" in message]
    assert any("B11 holds B11 + B12" in " ".join(notes) and "B11 += B12" in " ".join(notes) for notes in traced)


def test_restore_failures_are_named():
    report = bilinear.verify(PRINTED)
    messages = " ".join(d.message for entry in report.entries for d in entry.errors)
    assert "A11 ends holding A11 - A22" in messages
    assert "A21 ends holding -A11 + A21" in messages


def test_a_product_of_a_wrong_operand_is_compared_with_a_product_not_computed_yet(tmp_path):
    """With `A21 -= A11` dropped from msmes's stage mid2 the note compared M6's statement with M2, computed two
    stages before, and blamed B12, the right factor, which is M6's (a hunt): A21 is the wrong one."""
    from conftest import ROOT

    (tmp_path / "strassen.bl").write_text((ROOT / "algorithms" / "strassen.bl").read_text())
    text = (ROOT / "algorithms" / "msmes.bl").read_text()
    assert text.count("stage mid2:       A21 -= A11;  ") == 1
    (tmp_path / "msmes.bl").write_text(text.replace("stage mid2:       A21 -= A11;  ", "stage mid2:       "))
    errors = [d for entry in bilinear.verify(tmp_path / "msmes.bl").entries for d in entry.errors]
    wrong = next(d for d in errors if "which is not a product of strassen" in d.message)
    assert wrong.notes[0] == ("M6 = (-A11 + A21) * (B11 + B12) shares a factor; its left factor is -A11 + A21, but A21 "
                              "holds A21 + A22")
