"""The stage grouping, fusion, from-zero and default-schedule passes (schedule/stages.py,
schedule/from_zero.py, schedule/default.py) pinned where the rest of the suite let a changed line
pass: a source-mutation audit of the three modules.

The suite checks these passes mostly through what they make: every shipped schedule regrouped,
fused, made from zero or derived by default still verifies, and msmes's from-zero plan matches its
text.  A pass that still verifies but groups, names, splits or refuses another way went unseen.  Of
the dependencies: a set after an accumulation into one block, an accumulation reading another's
target, read-after-write and write-after-read each alone, two reads of one block.  Of the grouping:
the earliest stage of a statement's kind (products and element-wise statements apart) after its
dependencies, the stage names, each kind of last reader and writer a statement waits on, and the
last use kept as the largest stage index when a statement lands in an earlier stage.  Of the fusion:
the name, span and order of a fused stage.  Of from-zero: each refusal (an overwrite schedule, a
factor reading a zero block, a product into zero and non-zero blocks, two products setting one
block, zero written over a written block, a C block never written), the products split into a
setting stage and its ``.2`` stage, and the element-wise statements dropped, kept and put in order.
Of the default schedule: the fused chunks' budget at its edges, the default names and properties, an
unused product, an ozaki leaf given the cuBLAS schedule (the fused one would form sums it cannot),
split fused stages numbered from one, and Strassen's cuBLAS stages and temporaries.

Each test builds a few statements, a schedule or a small algorithm inline (or loads Strassen, or a
catalogue scheme where present) and checks exact values.
"""

from __future__ import annotations

import bilinear
from bilinear.frontend.loader import program_from_text
from bilinear.ir import Form, Multiply, Schedule, Span, Stage, Update
from bilinear.schedule import default_schedule, from_zero, fuse_elementwise, group_stages
from bilinear.schedule.default import default_name, fused_chunks, is_default_name
from bilinear.schedule.stages import depends

from conftest import scheme_file


def _set(target: str, *names: str) -> Update:
    """``target = names[0] + names[1] + ...``."""
    return Update(target, Form.of({name: 1 for name in names}))


def _add(target: str, *names: str) -> Update:
    """``target += names[0] + ...`` (stored as ``target := target + ...``)."""
    return Update(target, Form.of({target: 1, **{name: 1 for name in names}}))


def _product(left: str, right: str, *targets: str, overwrite: bool = False) -> Multiply:
    return Multiply(Form.symbol(left), Form.symbol(right), Form.of({t: 1 for t in targets}), overwrite)


def _grouped(*statements) -> list[list[str]]:
    return [[str(s) for s in stage.statements] for stage in group_stages(statements)]


def _schedule(*stages: Stage, properties=("accumulate",)) -> Schedule:
    return Schedule("s", "a", frozenset(properties), (), stages)


def _text(schedule: Schedule) -> list[str]:
    return [f"{stage.name}{' (ordered)' if stage.ordered else ''}: " + "; ".join(map(str, stage.statements))
            for stage in schedule.stages]


# ---- stages.py: depends --------------------------------------------------------------------------------


def test_a_set_and_an_accumulation_into_one_block_depend_both_ways():
    """Only two accumulations commute: a set after one (or before) is ordered (`and` made `or` said not)."""
    assert depends(_set("C11", "X"), _add("C11", "Y")) and depends(_add("C11", "Y"), _set("C11", "X"))
    assert not depends(_add("C11", "X"), _add("C11", "Y"))


def test_an_accumulation_reading_anothers_target_depends_on_it():
    """``C11 += X`` and ``D += C11`` share no target: C11 read by one and written by the other orders them."""
    assert depends(_add("C11", "X"), _add("D", "C11")) and depends(_add("D", "C11"), _add("C11", "X"))


def test_read_after_write_and_write_after_read_each_order_alone():
    """``D = X`` after ``X = A11`` (a read of a write) and ``X = A11`` after ``D = X`` (a write of a read)."""
    assert depends(_set("D", "X"), _set("X", "A11"))
    assert depends(_set("X", "A11"), _set("D", "X"))
    assert not depends(_set("D", "X"), _set("E", "X"))


# ---- stages.py: group_stages ---------------------------------------------------------------------------


def test_a_statement_joins_the_first_stage_after_its_dependency():
    """``F = X`` goes with ``D = X`` in stage 2, not into stage 1 with X's writer, nor a stage 3."""
    assert _grouped(_set("X", "A11"), _set("D", "X"), _set("F", "X")) == [["X = A11"], ["D = X", "F = X"]]


def test_stages_are_named_from_one_with_the_prefix():
    stages = group_stages((_set("X", "A11"), _set("D", "X")), prefix="pre")
    assert [stage.name for stage in stages] == ["pre1", "pre2"]


def test_a_statement_of_the_other_kind_opens_its_own_stage():
    """A product after an element-wise stage, an element-wise statement reading it after both, and an
    independent element-wise statement after a product stage."""
    assert _grouped(_set("X", "A11", "A12"), _product("X", "B11", "C11"), _set("Y", "B11"), _set("D", "C11")) == [
        ["X = A11 + A12", "Y = B11"], ["X * B11 -> +C11"], ["D = C11"]]
    assert _grouped(_product("A11", "B11", "C11"), _set("Y", "B12")) == [["A11 * B11 -> +C11"], ["Y = B12"]]


def test_each_kind_of_last_use_orders_the_next_statement():
    """Per buffer the grouping waits on accumulating and other writers, and on other readers; two
    accumulations into one block, and two reads, share a stage."""
    two = [["C11 += Y"], ["C11 = X"]]
    assert _grouped(_add("C11", "Y"), _set("C11", "X")) == two  # a set after an accumulation
    assert _grouped(_set("C11", "X"), _add("C11", "Y")) == [["C11 = X"], ["C11 += Y"]]  # and before one
    assert _grouped(_set("D", "C11"), _add("C11", "X")) == [["D = C11"], ["C11 += X"]]  # an accumulation after a read
    assert _grouped(_add("C11", "X"), _set("D", "C11")) == [["C11 += X"], ["D = C11"]]  # a read after an accumulation
    assert _grouped(_set("D", "C11"), _set("C11", "X")) == [["D = C11"], ["C11 = X"]]  # a set after a read
    assert _grouped(_add("C11", "X"), _add("C11", "Y")) == [["C11 += X", "C11 += Y"]]
    assert _grouped(_set("D", "A11"), _set("E", "A11")) == [["D = A11", "E = A11"]]


def test_the_last_writer_is_the_latest_stage_not_the_latest_statement():
    """``C11 += B11`` lands in stage 1 after ``C11 += X`` went to stage 2: ``D = C11`` still waits for stage 2."""
    grouped = _grouped(_set("X", "A11"), _add("C11", "X"), _add("C11", "B11"), _set("D", "C11"))
    assert grouped == [["X = A11", "C11 += B11"], ["C11 += X"], ["D = C11"]]


def test_the_last_reader_is_the_latest_stage_not_the_latest_statement():
    """``F = T`` lands in stage 1 after ``E = X + T`` read T in stage 2: ``T = A11`` still waits for stage 2."""
    grouped = _grouped(_set("X", "A11"), _set("E", "X", "T"), _set("F", "T"), _set("T", "A11"))
    assert grouped == [["X = A11", "F = T"], ["E = T + X"], ["T = A11"]]


# ---- stages.py: fuse_elementwise -----------------------------------------------------------------------


def test_fused_stages_are_named_ordered_and_placed_at_the_first():
    first, second = (Span("f.bl", line, 1, line, 9) for line in (3, 4))
    schedule = _schedule(Stage("s1", (_set("X", "A11"),), first), Stage("s2", (_add("A12", "X"),), second),
                         Stage("p", (_product("A12", "B11", "C11"),)), Stage("s3", (_set("Y", "B11"),)))
    fused = fuse_elementwise(schedule).stages
    assert [(s.name, s.span, s.ordered) for s in fused] == [("s1+s2", first, True), ("p", None, False), ("s3", None, False)]
    assert [str(s) for s in fused[0].statements] == ["X = A11", "A12 += X"]


# ---- from_zero.py --------------------------------------------------------------------------------------


def test_from_zero_sets_the_first_products_and_makes_an_overwrite_schedule():
    zeroed = from_zero(_schedule(Stage("p", (_product("A11", "B11", "C11"), _product("A12", "B21", "C12")))), ("C11", "C12"))
    assert _text(zeroed) == ["p: C11 = A11 * B11; C12 = A12 * B21"]
    assert zeroed.properties == frozenset({"overwrite"})


def test_from_zero_refuses_an_overwrite_schedule():
    schedule = _schedule(Stage("p", (_product("A11", "B11", "C11", overwrite=True),)), properties=("overwrite",))
    assert from_zero(schedule, ("C11",)) is None


def test_from_zero_refuses_a_factor_reading_a_zero_block_on_either_side():
    """C12 is read while zero, though a later stage sets it (so the refusal is not for a block never written)."""
    later = Stage("p2", (_product("A12", "B21", "C12"),))
    for product in (_product("C12", "B11", "C11"), _product("A11", "C12", "C11")):
        assert from_zero(_schedule(Stage("p", (product,)), later), ("C11", "C12")) is None


def test_from_zero_refuses_a_product_into_zero_and_written_blocks():
    """C11 written, C12 still zero (and set only after): the sum into both is refused."""
    first, last = Stage("p1", (_product("A11", "B11", "C11"),)), Stage("p3", (_product("A22", "B21", "C12"),))
    both = Stage("p2", (_product("A12", "B21", "C11", "C12"),))
    assert from_zero(_schedule(first, both, last), ("C11", "C12")) is None


def test_a_product_adding_into_a_block_set_in_an_earlier_stage_stays_in_its_stage():
    stages = (Stage("p1", (_product("A11", "B11", "C11"),)), Stage("p2", (_product("A12", "B21", "C11"),)))
    assert _text(from_zero(_schedule(*stages), ("C11",))) == ["p1: C11 = A11 * B11", "p2: A12 * B21 -> +C11"]


def test_from_zero_refuses_two_products_setting_one_block():
    stage = Stage("p", (_product("A11", "B11", "C11", overwrite=True), _product("A12", "B21", "C11", overwrite=True)))
    assert from_zero(_schedule(stage), ("C11",)) is None


def test_from_zero_refuses_a_c_block_no_statement_writes():
    assert from_zero(_schedule(Stage("p", (_product("A11", "B11", "C11"),))), ("C11", "C12")) is None


def test_a_product_adding_into_a_block_set_in_its_stage_goes_to_a_second_stage():
    stage = Stage("p", (_product("A11", "B11", "C11"), _product("A12", "B21", "C11"), _product("A11", "B12", "C12")))
    assert _text(from_zero(_schedule(stage), ("C11", "C12"))) == [
        "p: C11 = A11 * B11; C12 = A11 * B12", "p.2: A12 * B21 -> +C11"]


def test_an_overwrite_product_into_a_written_block_sets_it_before_the_additions():
    """A product that already sets a block C11 another stage wrote still sets it first in its stage."""
    stages = (Stage("p1", (_product("A11", "B11", "C11"),)),
              Stage("p2", (_product("A12", "B21", "C11", overwrite=True), _product("A11", "B12", "C11"))))
    assert _text(from_zero(_schedule(*stages), ("C11",))) == [
        "p1: C11 = A11 * B11", "p2: C11 = A12 * B21", "p2.2: A11 * B12 -> +C11"]


def test_from_zero_drops_zero_reads_and_statements_left_with_nothing_to_do():
    """``C12 += C11`` on two zero blocks goes with its stage; ``C22 += C12`` with C12 zero is ``C22 = C22``
    and goes; ``C21 += C11`` with C21 zero copies C11; ``C11 -= C12`` keeps only its own target."""
    stages = (Stage("e1", (_add("C12", "C11"),)), Stage("p1", (_product("A11", "B11", "C11"), _product("A22", "B22", "C22"))),
              Stage("e2", (_add("C22", "C12"), _add("C21", "C11"))),
              Stage("e3", (Update("C11", Form.of({"C11": 2, "C12": -1})),)), Stage("p2", (_product("A12", "B21", "C12"),)))
    assert _text(from_zero(_schedule(*stages), ("C11", "C12", "C21", "C22"))) == [
        "p1: C11 = A11 * B11; C22 = A22 * B22", "e2: C21 = C11", "e3: C11 = 2*C11", "p2: C12 = A12 * B21"]


def test_from_zero_refuses_writing_zero_over_a_written_block():
    stages = (Stage("p1", (_product("A11", "B11", "C11"),)), Stage("e", (_set("C11", "C12"),)),
              Stage("p2", (_product("A12", "B21", "C12"),)))
    assert from_zero(_schedule(*stages), ("C11", "C12")) is None


def test_two_additions_into_a_zero_block_are_put_in_order_and_an_ordered_stage_stays_so():
    made = (Stage("x", (_set("X", "A11"), _set("T", "A12"))), Stage("p", (_product("X", "B11", "C12"),)))
    concurrent = Stage("e", (_add("C11", "X"), _add("C11", "T")))
    ordered = Stage("o", (_add("C11", "X"), _add("C12", "T")), ordered=True)
    plain = Stage("c", (_add("C11", "X"), _add("C12", "T")))
    assert [_text(from_zero(_schedule(*made, stage), ("C11", "C12")))[-1] for stage in (concurrent, ordered, plain)] == [
        "e (ordered): C11 = X; C11 += T", "o (ordered): C11 = X; C12 += T", "c: C11 = X; C12 += T"]


# ---- default.py ----------------------------------------------------------------------------------------


def test_fused_chunks_count_a_repeated_pair_once_and_fill_to_the_budget():
    """A pair already loaded costs nothing; a chunk may load exactly the budget; views add up."""
    assert fused_chunks([(2, 2), (2, 2), (1, 1)], budget=5) == [[0, 1], [2]]
    assert fused_chunks([(2, 2), (1, 0)], budget=5) == [[0, 1]]
    assert fused_chunks([(1, 1), (2, 1), (1, 2)], budget=7) == [[0, 1], [2]]


def test_a_new_fused_chunk_starts_with_its_first_pair_alone():
    """A new chunk forgets the pairs of the last one and counts its first pair's views."""
    assert fused_chunks([(2, 2), (3, 3), (2, 2)], budget=6) == [[0], [1], [2]]
    assert fused_chunks([(2, 2), (3, 3), (1, 1)], budget=6) == [[0], [1], [2]]


def test_the_fused_stage_budget_is_sixty_four_views():
    assert fused_chunks([(31, 31), (1, 1)]) == [[0, 1]] and fused_chunks([(32, 31), (1, 1)]) == [[0], [1]]


def test_default_names_and_what_counts_as_one():
    assert (default_name("strassen", "fused"), default_name("strassen", "cublas")) == ("strassen_fused", "strassen_cublas")
    names = ("strassen_fused", "strassen_cublas", "strassen_mine", "winograd_fused")
    assert [is_default_name(Schedule(name, "strassen", frozenset(), (), ())) for name in names] == [True, True, False, False]


def test_a_product_no_output_uses_is_not_computed():
    """And no sum needs a temporary: none is declared; the schedule adds into C."""
    algorithm = program_from_text("algorithm un <1,1,1;2>:\n  M1 = A11 * B11\n  M2 = A11 * B11\n  C11 = M1\n").main
    for leaf, name in (("cublas", "stage1"), ("fused", "products")):
        assert _text(default_schedule(algorithm, leaf)) == [f"{name}: A11 * B11 -> +C11"]
        assert default_schedule(algorithm, leaf).temporaries == ()
        assert default_schedule(algorithm, leaf).properties == frozenset({"accumulate"})


def test_ozaki_leaves_get_the_cublas_default_schedule():
    """Only fused leaves form sums: an ozaki leaf multiplies two buffers as cuBLAS does."""
    strassen = bilinear.load("algorithms/strassen.bl").main
    assert default_name("strassen", "ozaki") == "strassen_cublas"
    assert default_schedule(strassen, "ozaki") == default_schedule(strassen, "cublas")


def test_split_fused_stages_are_numbered_from_one():
    algorithm = bilinear.load(scheme_file("kauers/446-k0a44a47e90f9bce.exp")).main
    assert [stage.name for stage in default_schedule(algorithm, "fused").stages] == [f"products_{i}" for i in range(1, 14)]


def test_strassens_default_cublas_schedule_pairs_each_product_with_its_sums():
    """Ten stages: X and Y formed together, then the products that read them (two where one reads a single block)."""
    schedule = default_schedule(bilinear.load("algorithms/strassen.bl").main, "cublas")
    assert [(t.name, t.like) for t in schedule.temporaries] == [("X", "A"), ("Y", "B")]
    assert _text(schedule) == [
        "stage1: X = A11 + A22; Y = B11 + B22", "stage2: X * Y -> +C11 +C22",
        "stage3: X = A21 + A22; Y = B12 - B22", "stage4: X * B11 -> +C21 -C22; A11 * Y -> +C12 +C22",
        "stage5: Y = -B11 + B21; X = A11 + A12", "stage6: A22 * Y -> +C11 +C21; X * B22 -> -C11 +C12",
        "stage7: X = -A11 + A21; Y = B11 + B12", "stage8: X * Y -> +C22",
        "stage9: X = A12 - A22; Y = B21 + B22", "stage10: X * Y -> +C11",
    ]
