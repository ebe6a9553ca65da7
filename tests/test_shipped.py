"""Every shipped algorithm and schedule verifies, and the key facts about each hold."""

from __future__ import annotations

import bilinear
from bilinear.verify import ScheduleReport

from conftest import ALGORITHMS


def test_every_shipped_file_verifies(shipped):
    report = bilinear.verify(shipped)
    assert report.entries, f"{shipped.name} defines nothing"
    assert report.ok, [d.message for e in report.entries for d in e.errors]


def test_the_required_algorithms_are_shipped():
    names = {p.stem for p in ALGORITHMS}
    assert {"naive2x2", "strassen", "winograd", "msmes", "rsmm"} <= names


def _entry(path_stem: str, name: str):
    report = bilinear.verify(next(p for p in ALGORITHMS if p.stem == path_stem))
    return next(e for e in report.entries if (e.schedule.name if isinstance(e, ScheduleReport) else e.algorithm.name) == name)


def test_winograd_has_fifteen_additions_through_named_sums():
    entry = _entry("winograd", "winograd")
    assert entry.counts.products == 7
    assert entry.counts.additions == 15
    assert entry.counts.additions_unshared == 24


def test_strassen_counts_and_growth_factor():
    entry = _entry("strassen", "strassen")
    assert (entry.counts.products, entry.counts.additions) == (7, 18)
    # Dumas, Pernet and Sedoglavic (2024): 12 + 2*sqrt(2) for Strassen, 17.853 for Winograd.
    assert abs(entry.stability.growth_factor - 14.8284) < 1e-4
    assert abs(_entry("winograd", "winograd").stability.growth_factor - 17.8530) < 1e-4


def test_msmes_is_in_place_and_restores():
    entry = _entry("msmes", "msmes")
    assert entry.ok
    assert entry.workspace == {}
    assert entry.schedule.inplace and entry.schedule.restores
    assert [u.product for u in entry.product_uses] == ["M2", "M3", "M4", "M5", "M1", "M6", "M7"]


def test_rsmm_uses_two_temporaries_and_overwrites_c():
    entry = _entry("rsmm", "rsmm")
    assert entry.ok
    assert entry.workspace == {"A": 1, "B": 1}
    assert entry.schedule.overwrites_c
    assert sorted(u.product for u in entry.product_uses) == [f"P{i}" for i in range(1, 8)]
