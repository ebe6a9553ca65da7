"""Hypothesis: random valid schemes verify, random corruptions do not.

Valid schemes come from the shipped algorithms by symmetries of matrix
multiplication (helpers/schemes.py); corrupted ones change one coefficient,
drop a product or swap two output coefficients.  Each is written as .bl text
(equations or a U/V/W table) and goes through the whole frontend and the
verifier.  An independent NumPy Brent check (``matmul_errors``) says what the
answer must be, down to which C blocks are wrong.  Schedules are judged
against a numeric run on random integer blocks (helpers/execute.py).
"""

from __future__ import annotations

import re
from dataclasses import replace

from conftest import ALGORITHMS, FIXTURES, ROOT
from helpers import schemes as S
from helpers.execute import conflicts, honest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import bilinear
from bilinear.diagnostics import BilinearError
from bilinear.frontend.loader import program_from_text
from bilinear.ir import Stage, Update, block_name
from bilinear.verify import verify_program
from bilinear.verify.algorithm import brent_residual, single_coefficient_fixes
from bilinear.verify.expand import Expansion
from bilinear.verify import verify_schedule

SETTINGS = settings(max_examples=15, deadline=None)
SCHEDULE_SETTINGS = settings(max_examples=40, deadline=None)  # a schedule check is cheap


def _shipped_schemes(max_rank: int) -> dict[str, S.Scheme]:
    found = {}
    for path in ALGORITHMS:
        for algorithm in bilinear.load(path).algorithms:
            if algorithm.rank <= max_rank:
                found.setdefault(algorithm.name, S.from_algorithm(algorithm))
    return dict(sorted(found.items()))


BASES = _shipped_schemes(max_rank=23)
SMALL = {name: s for name, s in BASES.items() if s.shape == (2, 2, 2)}
WRITERS = {"equations": S.to_equations, "table": S.to_table}

small_ints = st.integers(-2, 2)
operations = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), small_ints), max_size=3)
nonzero = st.fractions(min_value=-3, max_value=3, max_denominator=3).filter(lambda x: x != 0)


ALL_STEPS = ("groote", "transpose", "cyclic", "permute", "rescale")


@st.composite
def transformed(draw, scheme: S.Scheme | None = None, steps_from=ALL_STEPS) -> tuple[S.Scheme, list[str]]:
    """A shipped scheme (or ``scheme``) after up to four random symmetries; the steps taken."""
    if scheme is None:
        name = draw(st.sampled_from(sorted(BASES)))
        scheme, steps = BASES[name], [name]
    else:
        steps = ["given"]
    for step in draw(st.lists(st.sampled_from(steps_from), max_size=4)):
        if step == "groote":
            m, k, n = scheme.shape
            factors = [S.unimodular(size, draw(operations)) for size in (m, k, n)]
            scheme = S.de_groote(scheme, *factors[0], *factors[1], *factors[2])
        elif step == "transpose":
            scheme = S.transpose(scheme)
        elif step == "cyclic":
            scheme = S.cyclic(scheme)
        elif step == "permute":
            scheme = S.permute(scheme, draw(st.permutations(range(scheme.rank))))
        else:
            scheme = S.rescale(scheme, draw(st.integers(0, scheme.rank - 1)), draw(nonzero), draw(nonzero))
        steps.append(step)
    return scheme, steps


def _verify_text(text: str):
    """(report, None) when the text loads, (None, error) when the frontend refuses it."""
    try:
        return verify_program(program_from_text(text, "generated.bl")), None
    except BilinearError as error:
        return None, error


def _named_blocks(report) -> set[str]:
    """The C blocks the verifier's errors call wrong."""
    return {m.group(1) for e in report.entries for d in e.errors if (m := re.match(r"(C\S+) is wrong", d.message))}


# --- algorithms ------------------------------------------------------------------------


@SETTINGS
@given(transformed(), st.sampled_from(sorted(WRITERS)))
def test_symmetry_transforms_of_shipped_schemes_verify(case, writer):
    scheme, steps = case
    assert S.matmul_errors(scheme) == set(), f"the oracle rejects {steps}: the transform is wrong"
    report, error = _verify_text(WRITERS[writer](scheme, "transformed"))
    assert error is None, [d.message for d in error.diagnostics]
    assert report.ok, (steps, [d.message for e in report.entries for d in e.errors])


@settings(max_examples=8, deadline=None)
@given(st.sampled_from(sorted(SMALL)), st.sampled_from(sorted(SMALL)), st.data())
def test_kronecker_products_of_two_by_two_schemes_verify(first, second, data):
    # No de Groote step here: dense 4x4 changes of basis make every factor full and the check slow.
    scheme, steps = data.draw(transformed(S.kron(SMALL[first], SMALL[second]), ("transpose", "cyclic", "permute")))
    assert scheme.shape[0] == 4 and scheme.rank == SMALL[first].rank * SMALL[second].rank
    assert S.matmul_errors(scheme) == set(), steps
    report, error = _verify_text(S.to_table(scheme, "kron"))
    assert error is None and report.ok, (first, second, steps)


def test_strassen_times_naive_is_four_by_four_with_56_products():
    scheme = S.kron(SMALL["strassen"], SMALL["naive2x2"])
    report, _ = _verify_text(S.to_equations(scheme, "strassen_naive"))
    assert report.ok
    assert report.entries[0].algorithm.shape.m == 4 and report.entries[0].counts.products == 56


def _undo(table: str, r: int, row: int, col: int, before, after) -> str:
    """The verifier's wording of the fix that reverts one changed table entry."""
    if table == "W":
        site = f"the coefficient of M{r + 1} in {block_name('C', row + 1, col + 1)}"
    else:
        side, operand = ("left", "A") if table == "U" else ("right", "B")
        site = f"the coefficient of {block_name(operand, row + 1, col + 1)} in the {side} factor of M{r + 1}"
    return f"{site} from {S.number(after)} to {S.number(before)}"


@SETTINGS
@given(transformed(), st.sampled_from("UVW"), st.data(), st.sampled_from(sorted(WRITERS)))
def test_a_changed_coefficient_is_caught_the_wrong_blocks_named_and_the_fix_suggested(case, table, data, writer):
    scheme, _ = case
    r = data.draw(st.integers(0, scheme.rank - 1))
    matrix = getattr(scheme, table)[r]
    row, col = data.draw(st.integers(0, matrix.shape[0] - 1)), data.draw(st.integers(0, matrix.shape[1] - 1))
    delta = data.draw(st.integers(-3, 3).filter(lambda x: x != 0))
    before = matrix[row, col]
    corrupted = S.with_entry(scheme, table, r, row, col, before + delta)
    wrong = S.matmul_errors(corrupted)
    assert wrong, "changing one coefficient of a product that is used always changes the tensor"
    report, error = _verify_text(WRITERS[writer](corrupted, "corrupted"))
    if error is not None:  # the change zeroed a factor or an output
        assert any("zero" in d.message or "constant" in d.message for d in error.diagnostics), error
        return
    assert not report.ok
    assert _named_blocks(report) == wrong
    algorithm = report.entries[0].algorithm
    expansion = Expansion(algorithm)
    fixes = single_coefficient_fixes(expansion, brent_residual(expansion))
    undo = _undo(table, r, row, col, before, before + delta)
    assert any(fix.startswith(undo) for fix in fixes), (undo, fixes[:5])


@SETTINGS
@given(transformed(), st.data())
def test_a_dropped_product_is_caught(case, data):
    scheme, _ = case
    r = data.draw(st.integers(0, scheme.rank - 1))
    dropped = S.without_product(scheme, r)
    wrong = S.matmul_errors(dropped)
    assert wrong
    report, error = _verify_text(S.to_table(dropped, "dropped", declare_rank=False))
    assert error is None
    assert not report.ok and _named_blocks(report) == wrong


@SETTINGS
@given(transformed(), st.data())
def test_swapped_output_coefficients_are_caught_when_they_change_the_tensor(case, data):
    scheme, _ = case
    m, _, n = scheme.shape
    r, s = data.draw(st.integers(0, scheme.rank - 1)), data.draw(st.integers(0, scheme.rank - 1))
    p = (data.draw(st.integers(0, m - 1)), data.draw(st.integers(0, n - 1)))
    q = (data.draw(st.integers(0, m - 1)), data.draw(st.integers(0, n - 1)))
    swapped = S.with_entry(S.with_entry(scheme, "W", r, *p, scheme.W[s][q]), "W", s, *q, scheme.W[r][p])
    wrong = S.matmul_errors(swapped)
    assume(wrong)
    report, error = _verify_text(S.to_equations(swapped, "swapped"))
    if error is not None:
        assert any("constant" in d.message for d in error.diagnostics)  # an output became 0
        return
    assert not report.ok and _named_blocks(report) == wrong


# --- schedules -------------------------------------------------------------------------------

SCHEDULES = {}
for _stem in ("msmes", "rsmm"):
    _program = bilinear.load(ROOT / "algorithms" / f"{_stem}.bl")
    _schedule = _program.schedule(_stem)
    SCHEDULES[_stem] = (_schedule, _program.algorithm(_schedule.algorithm))


def _statements(schedule) -> list[tuple[int, int]]:
    return [(s, t) for s, stage in enumerate(schedule.stages) for t in range(len(stage.statements))]


def _with_stages(schedule, stages):
    return replace(schedule, stages=tuple(stages))


def _verifies(schedule, algorithm) -> bool:
    return not verify_schedule(schedule, algorithm).errors


@SCHEDULE_SETTINGS
@given(st.sampled_from(sorted(SCHEDULES)), st.data())
def test_reordering_inside_stages_and_splitting_stages_keep_a_schedule_valid(name, data):
    schedule, algorithm = SCHEDULES[name]
    stages = []
    for stage in schedule.stages:
        statements = data.draw(st.permutations(stage.statements))
        cut = data.draw(st.integers(0, len(statements)))
        if 0 < cut < len(statements):
            stages += [replace(stage, statements=tuple(statements[:cut])), Stage(stage.name + "_b", tuple(statements[cut:]))]
        else:
            stages.append(replace(stage, statements=tuple(statements)))
    changed = _with_stages(schedule, stages)
    assert honest(changed, algorithm)
    assert _verifies(changed, algorithm), [d.message for d in verify_schedule(changed, algorithm).errors]


def _flip(statement, data):
    """The statement with one coefficient's sign flipped."""
    if isinstance(statement, Update):
        fields = ["form"]
    else:
        fields = ["left", "right", "targets"]
    field = data.draw(st.sampled_from(fields))
    form = getattr(statement, field)
    name = data.draw(st.sampled_from(form.names()))
    return replace(statement, **{field: form.with_coefficient(name, -form.coefficient(name))})


@SCHEDULE_SETTINGS
@given(st.sampled_from(sorted(SCHEDULES)), st.data())
def test_a_flipped_sign_breaks_a_schedule(name, data):
    schedule, algorithm = SCHEDULES[name]
    s, t = data.draw(st.sampled_from(_statements(schedule)))
    stage = schedule.stages[s]
    flipped = _flip(stage.statements[t], data)
    statements = stage.statements[:t] + (flipped,) + stage.statements[t + 1:]
    changed = _with_stages(schedule, schedule.stages[:s] + (replace(stage, statements=statements),) + schedule.stages[s + 1:])
    assert not honest(changed, algorithm), f"flipping a sign in `{stage.statements[t]}` left the schedule correct"
    assert not _verifies(changed, algorithm), f"`{flipped}` (stage {stage.name}) was not caught"


def _moved(schedule, data):
    """The schedule with one statement moved to another stage, or two statements of different stages swapped."""
    places = _statements(schedule)
    (s1, t1) = data.draw(st.sampled_from(places))
    others = [(s, t) for s, t in places if s != s1]
    (s2, t2) = data.draw(st.sampled_from(others))
    stages = [list(stage.statements) for stage in schedule.stages]
    if data.draw(st.booleans()):  # swap
        stages[s1][t1], stages[s2][t2] = stages[s2][t2], stages[s1][t1]
        what = f"swapped `{stages[s2][t2]}` and `{stages[s1][t1]}`"
    else:  # move
        statement = stages[s1].pop(t1)
        stages[s2].insert(t2, statement)
        what = f"moved `{statement}` from {schedule.stages[s1].name} to {schedule.stages[s2].name}"
    rebuilt = [replace(stage, statements=tuple(body)) for stage, body in zip(schedule.stages, stages) if body]
    return _with_stages(schedule, rebuilt), what


@SCHEDULE_SETTINGS
@given(st.sampled_from(sorted(SCHEDULES)), st.data())
def test_moving_a_statement_across_stages_verifies_exactly_when_it_still_runs_correctly(name, data):
    schedule, algorithm = SCHEDULES[name]
    changed, what = _moved(schedule, data)
    expected = honest(changed, algorithm)
    assert _verifies(changed, algorithm) == expected, (
        f"{what}: numeric run {'correct' if expected else 'wrong'} ({conflicts(changed)}), verifier disagrees: "
        f"{[d.message for d in verify_schedule(changed, algorithm).errors]}"
    )


def test_the_numeric_oracle_accepts_the_shipped_schedules_and_rejects_the_printed_thesis():
    for schedule, algorithm in SCHEDULES.values():
        assert honest(schedule, algorithm)
    printed = bilinear.load(FIXTURES / "msmes_thesis_printed.bl")
    schedule = printed.schedule("msmes_printed")
    assert not honest(schedule, printed.algorithm("strassen"))


def test_form_of_drops_zeros_in_any_spelling():
    """Form.of tested c != 0 before converting: a "0" stayed as a zero term (Form._checked skips the checks)."""
    from fractions import Fraction

    from bilinear.ir import Form

    assert Form.of({"a": "0", "b": 1, "c": Fraction(0), "d": "1/2"}).terms == (("b", Fraction(1)), ("d", Fraction(1, 2)))
