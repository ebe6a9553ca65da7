"""How the command line takes its options: each once, in full (a hunt found repeats and prefixes taken
without a word)."""

from __future__ import annotations

import pytest
from helpers.cli import run_cli


@pytest.mark.parametrize("argv, said", [
    (["run", "strassen", "-n", "16", "-n", "4096", "--backend", "numpy"], "-n given twice (16, then 4096)"),
    (["verify", "strassen", "--mod", "2", "--mod", "3"], "--mod given twice (2, then 3)"),
    (["run", "strassen", "-n", "16", "--levels=1", "--levels", "2"], "--levels given twice (1, then 2)"),
])
def test_an_option_of_one_value_given_twice_is_a_usage_error(capsys, argv, said):
    """The last had been taken: `verify … --mod 2 --mod 3` proved modulo 3 alone, and said nothing of 2."""
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert err.splitlines()[-1].endswith(f"error: {said}; give it once")


def test_an_output_given_twice_writes_neither(capsys, tmp_path):
    """`import strassen -o a.bl -o b.bl` wrote b.bl alone, and said so."""
    first, second = tmp_path / "a.bl", tmp_path / "b.bl"
    code, _, err = run_cli(capsys, "import", "strassen", "-o", first, "--output", second)
    assert code == 2 and not first.exists() and not second.exists()
    assert err.splitlines()[-1].endswith(f"error: -o/--output given twice ({first}, then {second}); give it once")


def test_an_option_is_not_taken_by_a_prefix(capsys, tmp_path):
    """`--fo` had meant --force, and replaced the file; a prefix now names no option."""
    kept = tmp_path / "kept.bl"
    kept.write_text("precious\n")
    code, _, err = run_cli(capsys, "import", "strassen", "-o", kept, "--fo")
    assert code == 2 and kept.read_text() == "precious\n"
    assert "unrecognized arguments: --fo" in err


def test_a_flag_given_twice_and_options_that_collect_are_still_taken(capsys, tmp_path):
    out = tmp_path / "s.bl"
    assert run_cli(capsys, "import", "strassen", "-o", out, "--force", "--force")[0] == 0
    code, text, _ = run_cli(capsys, "bench", "strassen", "-n", "8", "-n", "16", "--levels", "1", "--backend", "numpy",
                            "--repeat", "1")
    assert code == 0 and " 8 " in text and " 16 " in text
