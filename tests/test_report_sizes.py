"""report_sizes: how reports say sizes, bytes, flops and durations (from a source-mutation audit, session 78:
each test fails under a change the suite had let through)."""

from __future__ import annotations

from bilinear.ir import Shape
from bilinear.report_sizes import at_n, bytes_text, duration_text, flops_text, level_bytes, split_part


def test_the_split_part_peels_each_dimension_by_its_own_side():
    assert split_part(Shape(2, 3, 4), 10) == [10, 9, 8]


def test_at_n_names_the_part_where_any_dimension_is_peeled():
    assert at_n(10, [10, 10, 8]) == "n=10 (its 10×10×8 part; the rest is peeled)"
    assert at_n(8, [8, 8, 8]) == "n=8"


def test_level_bytes_counts_each_operands_blocks_with_its_own_size():
    shape = Shape(2, 3, 4)  # at n=12: A blocks 6×4, B blocks 4×3, C blocks 6×3
    assert level_bytes(shape, {"A": 1}, 12) == 6 * 4 * 8
    assert level_bytes(shape, {"B": 2}, 12) == 2 * 4 * 3 * 8
    assert level_bytes(shape, {"C": 1}, 12, "float32") == 6 * 3 * 4


def test_byte_and_flop_units_start_at_exactly_one_unit():
    assert bytes_text(2**30) == "1.00 GiB"
    assert bytes_text(1023) == "1023 bytes"
    assert bytes_text(1024) == "1.00 KiB"
    assert flops_text(1e12) == "1.00 TFLOP"
    assert flops_text(0) == "0 FLOP"


def test_durations_change_unit_where_they_would_round_to_the_next():
    assert duration_text(45) == "45 s"
    assert duration_text(119.6) == "2 min"
    assert duration_text(7169) == "119 min"
    assert duration_text(7180) == "2.0 h"
    assert duration_text(3 * 86400 - 1) == "72.0 h"
    assert duration_text(3 * 86400) == "3 days"
