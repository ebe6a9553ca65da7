"""Every single-coefficient mutation of strassen, winograd and msmes is reported as wrong.

The mutations are enumerated, not sampled (see helpers/mutations.py for what
one is).  A mutant counts as reported when the frontend's static checks
refuse it (a BilinearError: a cycle, a B block in a left factor, ...), when
the IR refuses it (a product with a zero factor), or when exact verification
returns errors.  None survives: no single coefficient of these three is
redundant, so there is no still-correct mutant to explain away.
"""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import ROOT
from helpers.mutations import (
    algorithm_mutations,
    apply_fix,
    changes,
    judge_algorithm,
    judge_schedule,
    schedule_mutations,
)

import bilinear

# How many mutations each enumeration yields; a change here means the
# enumeration (or the shipped file) changed, so look before updating.
EXPECTED_COUNTS = {"strassen": 720, "winograd": 1784, "msmes": 636}


def _program(stem: str):
    return bilinear.load(ROOT / "algorithms" / f"{stem}.bl")


def test_changes_cover_adding_and_altering_a_coefficient():
    assert changes(0) == (1, -1)
    assert changes(1) == (-1, 0, 2)
    assert changes(-2) == (-3, -1, 0, 2)


@pytest.mark.parametrize("stem", ["strassen", "winograd"])
def test_every_algorithm_mutation_is_reported_with_the_undoing_fix(stem):
    original = _program(stem).algorithm(stem)
    assert judge_algorithm(original) == (None, ()), "the unmutated algorithm must pass the same judge"
    mutations = algorithm_mutations(original)
    assert len(mutations) == EXPECTED_COUNTS[stem]
    survivors, unsuggested, wrong_fixes, verdicts = [], [], [], Counter()
    for mutation in mutations:
        verdict, errors = judge_algorithm(mutation.mutant) if mutation.mutant else ("ir", ())
        verdicts[verdict] += 1
        if verdict is None:
            survivors.append(str(mutation))
        if verdict != "verify":
            continue
        notes = [note for error in errors for note in error.notes]
        # Undoing the mutation is a single-coefficient fix, so the verifier must print it ...
        if not any(note.startswith(f"changing {mutation.undo}") for note in notes):
            unsuggested.append(f"{mutation}: notes {notes}")
        # ... and every other fix it prints must really make the algorithm verify.
        others = [note for note in notes if not note.startswith(f"changing {mutation.undo}")]
        wrong_fixes += [f"{mutation}: {note}" for note in others if judge_algorithm(apply_fix(mutation.mutant, note))[0]]
    assert not survivors, f"mutations of {stem} that still verify:\n" + "\n".join(survivors)
    assert not unsuggested, "the fix that undoes the mutation is not suggested:\n" + "\n".join(unsuggested)
    assert not wrong_fixes, "suggested fixes that do not fix:\n" + "\n".join(wrong_fixes)
    # Both kinds of rejection occur, so neither judge is vacuous.
    assert verdicts["static"] and verdicts["verify"]


def test_every_msmes_mutation_is_reported():
    program = _program("msmes")
    schedule, algorithm = program.schedule("msmes"), program.algorithm("strassen")
    assert judge_schedule(schedule, algorithm) == (None, ())
    mutations = schedule_mutations(schedule, algorithm)
    assert len(mutations) == EXPECTED_COUNTS["msmes"]
    survivors = [str(m) for m in mutations if m.mutant is not None and judge_schedule(m.mutant, algorithm)[0] is None]
    assert not survivors, "mutations of msmes that still verify:\n" + "\n".join(survivors)


def test_mutations_the_ir_refuses_are_zero_factors_or_targetless_products():
    strassen = [m for m in algorithm_mutations(_program("strassen").algorithm("strassen")) if m.mutant is None]
    # M2..M5 each have a one-term factor that the mutation zeroes.
    assert sorted(m.site for m in strassen) == [
        "the coefficient of A11 in the left factor of M3",
        "the coefficient of A22 in the left factor of M4",
        "the coefficient of B11 in the right factor of M2",
        "the coefficient of B22 in the right factor of M5",
    ]
    assert {m.refusal for m in strassen} == {f"product M{i} has a zero factor" for i in (2, 3, 4, 5)}
    program = _program("msmes")
    msmes = [m for m in schedule_mutations(program.schedule("msmes"), program.algorithm("strassen")) if m.mutant is None]
    # products2 has two single-target statements; removing the target leaves none.
    assert [m.refusal for m in msmes] == ["a product statement needs at least one target"] * 2
