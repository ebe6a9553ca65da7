"""--levels-schemes' merge of several files (bilinear/hybrid.py) pinned where the rest of the suite let a
changed line pass: a source-mutation audit of the module.

The suite reaches the merge through whole compiles and runs, whose lowering finds a definition by name in
either list and never reads the merged program's own path, so these went unseen when changed: which list a
schedule lands in, the path the merged program keeps (the outermost level's file), the spaces around the
commas, an empty name between two commas, and a class among a definition's values.  21 mutants, 14 killed
by the suite's hybrid tests, 2 equivalent (the fields `_unlocated` takes: equality skips a field with
compare=False whatever it holds, and no IR field has init=False), 5 killed here.  No bug was found.
"""

from __future__ import annotations

import pytest

import bilinear
from bilinear.hybrid import _unlocated, level_names, merge
from bilinear.ir import Span
from bilinear.paths import algorithms_dir


def _shipped(*names: str):
    return [bilinear.load(algorithms_dir() / f"{name}.bl") for name in names]


def test_a_merged_schedule_stays_a_schedule_and_the_outermost_files_path_is_kept():
    """msmes.bl holds the algorithm strassen and the schedule msmes; the merge keeps each in its own list,
    in the order read, and the program's path is the outermost level's file, not the last one's."""
    msmes, grey333 = _shipped("msmes", "grey333")
    merged = merge([msmes, grey333])
    assert [a.name for a in merged.algorithms] == ["strassen", "grey333"]
    assert [s.name for s in merged.schedules] == ["msmes"]
    assert merged.path == msmes.path != grey333.path
    assert merged.own == ("msmes", "grey333")


def test_level_names_drop_the_spaces_around_the_commas_and_refuse_an_empty_name():
    assert level_names(" msmes , grey333 ,strassen") == ["msmes", "grey333", "strassen"]
    with pytest.raises(ValueError) as refused:
        level_names("msmes,,grey333")
    assert str(refused.value) == ("--levels-schemes takes one file or shipped name per level, comma-separated, "
                                  "not 'msmes,,grey333'")
    with pytest.raises(ValueError):
        level_names("msmes, ")


def test_a_class_among_a_definitions_values_is_kept_as_it_is():
    """A dataclass *type* is not an instance to rebuild without its spans (dataclasses.replace refuses it)."""
    assert _unlocated(Span) is Span
    assert _unlocated((Span, Span("f.bl", 1, 2, 1, 5))) == (Span, None)
