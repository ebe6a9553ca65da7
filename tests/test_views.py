"""The layout predicates of bilinear.runtime.views, on NumPy views (the same code reads CuPy ones)."""

from __future__ import annotations

import numpy as np
import pytest

from bilinear.runtime import views


def test_overlap_is_by_byte_range():
    big = np.zeros((8, 8))
    assert views.overlaps(big[:4], big[2:6])
    assert not views.overlaps(big[:4], big[4:])
    assert views.overlaps(big[:, :4], big[:, 4:])  # interleaved rows: ranges meet, so refused (conservative)
    assert not views.overlaps(big[:0], big)  # an empty view touches nothing
    with pytest.raises(ValueError, match="^out must not overlap A or B$"):
        views.check_out_apart(big[1:3], big[:2], np.zeros((2, 2)))


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
