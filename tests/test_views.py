"""The layout predicates of bilinear.runtime.views, on NumPy views (the same code reads CuPy ones)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bilinear.runtime import views


def test_overlap_is_by_element():
    big = np.zeros((8, 8))
    assert views.overlaps(big[:4], big[2:6])
    assert not views.overlaps(big[:4], big[4:])
    # interleaved rows: the byte ranges meet, the elements do not (these were refused as overlapping)
    assert not views.overlaps(big[:, :4], big[:, 4:]) and views.spans_meet(big[:, :4], big[:, 4:])
    assert views.overlaps(big[:, :5], big[:, 4:]) and views.overlaps(big[2:3, 1:2], big[:, 1:3])
    assert not views.overlaps(big[:0], big)  # an empty view touches nothing
    assert views.overlaps(big.T, big[3:4]) and not views.overlaps(big.T[:, :2], big[3:, 2:])  # NumPy's answer
    with pytest.raises(ValueError, match="^out must not overlap A or B$"):
        views.check_out_apart(big[1:3], big[:2], np.zeros((2, 2)))


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_overlap_of_row_major_views_is_numpys_shares_memory(data):
    """Two slices of one buffer, at one row stride or two (a reshaped parent): exact (at one row stride by
    the rows that meet, as for device views; at two by NumPy)."""
    base = np.zeros(96, dtype=np.float32)
    shapes = data.draw(st.lists(st.sampled_from([(8, 12), (12, 8), (6, 16)]), min_size=2, max_size=2))

    def view(shape):
        rows, cols = shape
        r0, c0 = data.draw(st.integers(0, rows - 1)), data.draw(st.integers(0, cols - 1))
        r1, c1 = data.draw(st.integers(r0 + 1, rows)), data.draw(st.integers(c0 + 1, cols))
        return base.reshape(shape)[r0:r1, c0:c1]

    x, y = view(shapes[0]), view(shapes[1])
    shared = bool(np.shares_memory(x, y))
    assert views.overlaps(x, y) == views.overlaps(y, x) == shared
    assert views.spans_meet(x, y) >= shared  # what two device views of row strides that differ are judged by


def test_views_of_one_buffer_at_two_row_strides_are_apart_where_no_element_is_shared():
    """They were judged by byte ranges: out = X.reshape(32, 256)[:, 200:232] beside A = X[:32, :32]
    was refused as overlapping A (a review of the API, session 43)."""
    X = np.zeros((64, 128))
    A, out = X[:32, :32], X.reshape(32, 256)[:, 200:232]
    assert views.spans_meet(A, out) and not np.shares_memory(A, out)
    assert not views.overlaps(A, out)
    views.check_out_apart(out, A, np.zeros((32, 32)))


def test_disjoint_column_slices_are_out_and_operand():
    """matmul(X[:, :20], I, out=X[:, 30:50]) was refused: "out must not overlap A or B"."""
    import bilinear

    X = np.random.default_rng(0).standard_normal((40, 60))
    A = X[:, :20].copy()
    assert np.array_equal(bilinear.matmul(X[:, :20], np.eye(20), out=X[:, 30:50]), A)
    product = bilinear.compile("strassen", backend="numpy", levels=1)
    assert np.allclose(product(X[:, :20], np.eye(20), out=X[:, 40:60]), A, rtol=1e-14, atol=1e-14)


def test_a_row_stride_of_part_of_an_element_is_not_row_major():
    """One column of 8-byte elements 12 bytes apart passed, and cuBLAS's leaf would have been given a
    leading dimension of 12 // 8 = 1 (a hunt); layout_refusal already had its words."""
    one_column = np.ndarray(shape=(4, 1), dtype=np.float64, buffer=np.zeros(64, dtype=np.uint8), strides=(12, 8))
    assert not views.is_row_major(one_column)
    assert "A steps 12 bytes a row and 8 a column, not whole 8-byte elements" in views.layout_refusal(one_column, "A",
                                                                                                       "cupy")


def test_row_major_views_and_their_leading_dimensions():
    big = np.zeros((6, 10), dtype=np.float32)
    block = big[1:4, 2:7]
    assert views.is_row_major(block) and views.is_row_major(big)
    assert not views.is_row_major(big.T) and not views.is_row_major(big[:, ::2])
    assert views.row_stride(block) == 10 == views.leading_dimension(block, "A") == views.blas_leading_dimension(block)
    assert views.row_pitch(big[:1]) == 10 and views.row_pitch(big[::-1]) is None
    with pytest.raises(ValueError, match=r"A must be row-major with unit stride along its rows.*column-major"):
        views.leading_dimension(np.asfortranarray(big), "A")
    with pytest.raises(ValueError, match="unusable row stride"):
        views.leading_dimension(big[::-1], "B")


def test_alignment_is_of_every_row_start():
    assert views.rows_aligned(32, 8, 4, 4) and not views.rows_aligned(32, 6, 4, 4) and not views.rows_aligned(36, 8, 4, 4)
    big = np.zeros((4, 8))
    assert views.vector_aligned(big, 1)
    assert views.vector_aligned(big[:, 2:], 2) == (views.address(big[:, 2:]) % 16 == 0)
    assert not views.vector_aligned(big[:, 1:], 2) or views.address(big) % 16 != 0


def test_fingerprint_tells_views_apart():
    big = np.zeros((4, 4))
    assert views.fingerprint(big[:2]) == views.fingerprint(big[:2])
    assert views.fingerprint(big[:2]) != views.fingerprint(big[2:]) != views.fingerprint(big[2:, :2])


def test_a_column_major_out_is_not_told_to_pass_a_copy():
    """bilinear.matmul on the GPU refused a Fortran-ordered out with "pass cupy.ascontiguousarray(...)":
    the product would then go into the copy (NumPy arrays stand in: only the strides are read)."""
    column_major = np.zeros((4, 3), order="F")
    with pytest.raises(ValueError, match="the product is written into out, so give a row-major one") as refused:
        views.leading_dimension(column_major, "out")
    assert "ascontiguousarray" not in str(refused.value)
    with pytest.raises(ValueError, match=r"pass cupy\.ascontiguousarray"):
        views.leading_dimension(column_major, "A")
