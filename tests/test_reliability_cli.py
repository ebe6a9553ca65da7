"""Issue 12, the command line: nothing overwritten, refused early, one message and a non-zero exit."""

from __future__ import annotations

import json
import os
import re
import time
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT, scheme_file
from helpers.adversarial import naive_algorithm
from helpers.cli import run_cli
from helpers.schemes import STRASSEN_UVW

import bilinear

STRASSEN = str(ROOT / "algorithms" / "strassen.bl")
MSMES = str(ROOT / "algorithms" / "msmes.bl")


_run = run_cli  # exit status, stdout and stderr of one command


# --- compile -o and import -o overwrite nothing -----------------------------------------------------


def test_compile_refuses_to_overwrite_without_force(tmp_path, capsys):
    out = tmp_path / "out"
    assert _run(capsys, "compile", STRASSEN, "-o", str(out))[0] == 0
    (out / "manifest.json").write_text("mine", encoding="utf-8")
    code, _, err = _run(capsys, "compile", STRASSEN, "-o", str(out))
    assert code == 1 and "--force" in err and "manifest.json" in err
    assert (out / "manifest.json").read_text(encoding="utf-8") == "mine"
    assert _run(capsys, "compile", STRASSEN, "-o", str(out), "--force")[0] == 0
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["name"] == "strassen"


def test_compile_into_an_earlier_compiles_folder_says_so_once(tmp_path, capsys):
    """It printed "exists; refusing to overwrite it" with its note six times, once per file."""
    out = tmp_path / "out"
    assert _run(capsys, "compile", STRASSEN, "-o", str(out))[0] == 0
    (out / "report.md").unlink()
    code, stdout, err = _run(capsys, "compile", STRASSEN, "-o", str(out))
    assert (code, stdout) == (1, "")
    assert err == (f"error: {out} already holds strassen.cu, strassen.h, manifest.json, report.txt and report.json; "
                   "refusing to overwrite them\n  note: pass --force to replace them\n")


def test_compile_never_writes_through_a_symlink(tmp_path, capsys):
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.txt").symlink_to(outside)
    code, _, err = _run(capsys, "compile", STRASSEN, "-o", str(out))
    assert code == 1 and "report.txt" in err
    assert _run(capsys, "compile", STRASSEN, "-o", str(out), "--force")[0] == 0
    assert outside.read_text(encoding="utf-8") == "keep me"
    assert not (out / "report.txt").is_symlink()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary files left


@pytest.mark.parametrize("force", [(), ("--force",)], ids=["", "force"])
@pytest.mark.parametrize("below", ["", "sub"])
def test_compile_into_a_link_to_nothing_says_so(tmp_path, capsys, force, below):
    """A dangling link as -o (or above it) was "cannot create the output folder link: File exists"."""
    link, missing = tmp_path / "link", tmp_path / "nowhere"
    link.symlink_to(missing)
    out = link / below if below else link
    code, _, err = _run(capsys, "compile", STRASSEN, "-o", str(out), *force)
    assert (code, err) == (1, f"error: cannot create the output folder {out}: {link} is a symbolic link that leads to "
                              f"{missing}, which does not exist\n  note: compile makes no folder through a link (--force "
                              f"neither): create {missing}, or choose another -o\n")
    assert link.is_symlink() and not os.path.lexists(missing)


def test_compile_into_a_chain_of_links_names_the_missing_end(tmp_path, capsys):
    """It said "l2 is a symbolic link to l1, which does not exist ... create l1", and l1 is there, a link."""
    l1, l2, missing = tmp_path / "l1", tmp_path / "l2", tmp_path / "nowhere"
    l1.symlink_to(missing)
    l2.symlink_to(l1)
    assert _run(capsys, "compile", STRASSEN, "-o", str(l2))[1:] == (
        "", f"error: cannot create the output folder {l2}: {l2} is a symbolic link that leads to {missing}, "
            "which does not exist\n  note: compile makes no folder through a link (--force neither): "
            f"create {missing}, or choose another -o\n")


@pytest.mark.parametrize("names", [("loop",), ("a", "b")], ids=["itself", "two"])
def test_compile_into_a_loop_of_links_calls_it_a_loop(tmp_path, capsys, names):
    """``ln -s loop loop`` said "loop is a symbolic link to loop, which does not exist ... create loop"."""
    links = [tmp_path / name for name in names]
    for link, target in zip(links, links[1:] + links[:1]):
        link.symlink_to(target)
    assert _run(capsys, "compile", STRASSEN, "-o", str(links[0]))[1:] == (
        "", f"error: cannot create the output folder {links[0]}: {links[0]} is a symbolic link in a loop of links, "
            "which leads to no folder\n  note: compile makes no folder through a link (--force neither): "
            "choose another -o\n")


@pytest.mark.parametrize("argv", [("import", STRASSEN), ("transform", STRASSEN, "--to", "nkm")],
                         ids=lambda argv: argv[0])
def test_a_bl_output_that_is_a_link_to_nothing_is_replaced_only_with_force(tmp_path, capsys, argv):
    link, missing = tmp_path / "link.bl", tmp_path / "nowhere.bl"
    link.symlink_to(missing)
    assert _run(capsys, *argv, "-o", str(link))[1:] == (
        "", f"error: {link} is a symbolic link; refusing to write through it\n"
            "  note: --force replaces the link itself (never the file it points to)\n")
    assert _run(capsys, *argv, "-o", str(link), "--force")[0] == 0
    assert not link.is_symlink() and "strassen" in link.read_text(encoding="utf-8") and not os.path.lexists(missing)


@pytest.mark.parametrize("where", ["a file", "/dev/null", "below a file"])
def test_compile_output_that_is_not_a_folder_is_one_message(tmp_path, capsys, where):
    target = {"a file": tmp_path / "f", "/dev/null": "/dev/null", "below a file": tmp_path / "f" / "sub"}[where]
    (tmp_path / "f").write_text("x", encoding="utf-8")
    code, _, err = _run(capsys, "compile", STRASSEN, "-o", str(target))
    assert code == 1 and "error" in err and len(err.strip().splitlines()) <= 3
    assert (tmp_path / "f").read_text(encoding="utf-8") == "x"


def test_import_refuses_to_overwrite_its_own_input(tmp_path, capsys):
    source = tmp_path / "s.bl"
    text = (ROOT / "algorithms" / "strassen.bl").read_text(encoding="utf-8")
    source.write_text(text, encoding="utf-8")
    code, _, err = _run(capsys, "import", str(source), "--from", "bl", "-o", str(source))
    assert code == 1 and "--force" in err
    assert source.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("where", ["missing folder", "/dev/null", "a folder"])
def test_import_output_problems_are_one_message(tmp_path, capsys, where):
    target = {"missing folder": tmp_path / "no" / "x.bl", "/dev/null": "/dev/null", "a folder": tmp_path}[where]
    code, _, err = _run(capsys, "import", STRASSEN, "--from", "bl", "-o", str(target))
    assert code == 1 and "error" in err


def test_import_force_replaces_atomically(tmp_path, capsys):
    target = tmp_path / "x.bl"
    target.write_text("old", encoding="utf-8")
    assert _run(capsys, "import", STRASSEN, "--from", "bl", "-o", str(target))[0] == 1
    assert _run(capsys, "import", STRASSEN, "--from", "bl", "-o", str(target), "--force")[0] == 0
    assert "algorithm strassen" in target.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["straßen", "A11", "algorithm", "x y", "9x"])
def test_import_name_must_be_a_bl_name(tmp_path, capsys, name):
    target = tmp_path / "x.bl"
    code, _, err = _run(capsys, "import", STRASSEN, "--from", "bl", "--name", name, "-o", str(target))
    assert code == 2 and "argument --name: must be an identifier in .bl" in err and not target.exists()


# --- transform, product, optimize -o and export: the same protection, checked before any work ------------

DERIVED = [("transform", STRASSEN, "--to", "nkm"), ("product", STRASSEN, STRASSEN), ("optimize", STRASSEN, "--seeds", "1"),
           ("inplace", STRASSEN, "--tries", "1", "--steps", "0")]


@pytest.mark.parametrize("argv", DERIVED, ids=lambda argv: argv[0])
def test_derived_schemes_overwrite_nothing_and_never_write_through_a_link(tmp_path, capsys, argv):
    existing, outside, link = tmp_path / "x.bl", tmp_path / "precious.txt", tmp_path / "link.bl"
    existing.write_text("mine", encoding="utf-8")
    outside.write_text("keep me", encoding="utf-8")
    link.symlink_to(outside)
    assert _run(capsys, *argv, "-o", str(existing))[2] == f"error: {existing} exists; refusing to overwrite it\n  note: pass --force to replace it\n"
    assert _run(capsys, *argv, "-o", str(link))[2].startswith(f"error: {link} is a symbolic link; refusing to write through it")
    assert existing.read_text(encoding="utf-8") == "mine" and outside.read_text(encoding="utf-8") == "keep me"
    assert _run(capsys, *argv, "-o", str(existing), "--force")[0] == 0
    assert "algorithm " in existing.read_text(encoding="utf-8")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary files left


@pytest.mark.parametrize("argv", [("import", STRASSEN), *DERIVED], ids=lambda argv: argv[0])
@pytest.mark.parametrize("name, advice", [
    ("out.npz", "`bilinear export FILE --to alphatensor -o {target}` writes AlphaTensor's format"),
    ("out.sms", "`bilinear export FILE --to plinopt -o {target}` writes PLinOpt's format"),
    # export writes no .json or .txt: it had been suggested for them too
    ("out.bl.txt", "name it {target.parent}/out.bl (`bilinear export` writes the catalogue formats: "
                   "fast-matmul's files have no suffix, PLinOpt's end .sms, AlphaTensor's .npz)"),
    ("out.json", "name it {target.parent}/out.bl (`bilinear export` writes the catalogue formats: "
                 "fast-matmul's files have no suffix, PLinOpt's end .sms, AlphaTensor's .npz)"),
])
def test_bl_writers_refuse_an_output_of_another_format(tmp_path, capsys, argv, name, advice):
    """`import strassen -o out.npz` wrote .bl text into a file named .npz."""
    target = tmp_path / name
    code, out, err = _run(capsys, *argv, "-o", str(target))
    assert (code, out, list(tmp_path.iterdir())) == (2, "", [])
    assert err.splitlines()[-1] == (
        f"bilinear {argv[0]}: error: argument -o/--output: {target}: the output is .bl text, so -o names a .bl file, "
        f"not a {target.suffix} file; " + advice.format(target=target))


@pytest.mark.parametrize("name", ["out.bl", "OUT.BL", "out"])
def test_bl_writers_take_a_bl_name_or_one_without_a_suffix(tmp_path, capsys, name):
    """The README's `-o FILE.bl`, any case; a name without a suffix is written as given and reads back as .bl."""
    target = tmp_path / name
    assert _run(capsys, "transform", STRASSEN, "--to", "nkm", "-o", str(target))[0] == 0
    assert _run(capsys, "verify", str(target))[0] == 0


def test_compile_says_a_scheme_does_not_verify_before_refusing_to_replace_files(tmp_path, capsys):
    """Into a folder of an earlier compile, a wrong scheme got only "exists; refusing to overwrite it"
    (six times); that it does not verify showed only after --force."""
    out, wrong = tmp_path / "out", tmp_path / "wrong.bl"
    wrong.write_text(Path(STRASSEN).read_text(encoding="utf-8").replace("C22 = M1 - M2", "C22 = M1 + M2"), encoding="utf-8")
    assert _run(capsys, "compile", STRASSEN, "-o", out)[0] == 0
    code, _, err = _run(capsys, "compile", wrong, "-o", out)
    assert code == 1 and "refusing" not in err and err.endswith(f"bilinear compile: {wrong} does not verify; nothing written\n")


def test_optimize_refuses_to_overwrite_its_own_input_before_optimizing(tmp_path, capsys):
    source = tmp_path / "w.bl"
    text = (ROOT / "algorithms" / "winograd.bl").read_text(encoding="utf-8")
    source.write_text(text, encoding="utf-8")
    code, _, err = _run(capsys, "optimize", str(source), "-o", str(source))
    assert code == 1 and err.startswith(f"error: {source} is the input file {source}; refusing to overwrite it")
    assert source.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("argv", DERIVED, ids=lambda argv: argv[0])
def test_derived_scheme_names_must_be_bl_names(tmp_path, capsys, argv):
    """A name the grammar cannot read was written, then reported "verified", and the file did not load."""
    target = tmp_path / "x.bl"
    code, _, err = _run(capsys, *argv, "--name", "x y", "-o", str(target))
    assert code == 2 and "argument --name: must be an identifier in .bl" in err and not target.exists()


@pytest.mark.parametrize("argv", [*DERIVED, ("import", STRASSEN, "--from", "bl"), ("product", MSMES, MSMES)],
                         ids=[*(argv[0] for argv in DERIVED), "import", "product-of-schedules"])
def test_a_name_the_reader_would_refuse_is_never_written(tmp_path, capsys, argv):
    """--name of 256 characters was written, reported verified, and the file did not load again ("a name
    of 256 characters, where a name has at most 255"); import and a schedule's product said so only
    after the work, as an internal error (a review)."""
    target = tmp_path / "x.bl"
    code, _, err = _run(capsys, *argv, "--name", "z" * 256, "-o", str(target))
    assert code == 2 and "argument --name: must have at most 255 characters (a .bl name's most), not 256" in err
    assert not target.exists()


@pytest.mark.parametrize(("argv", "base", "length"), [
    (("product", "{long}", STRASSEN), 250, 261), (("inplace", "{long}", "--tries", "1"), 250, 258),
    (("optimize", "{long}", "--seeds", "1"), 253, 257), (("transform", "{long}", "--to", "nkm"), 253, 257)],
    ids=["product", "inplace", "optimize", "transform"])
def test_a_default_name_past_the_longest_is_refused_saying_to_give_one(tmp_path, capsys, argv, base, length):
    long = tmp_path / "long.bl"
    long.write_text(Path(STRASSEN).read_text(encoding="utf-8").replace("algorithm strassen", "algorithm " + "q" * base))
    target = tmp_path / "x.bl"
    code, _, err = _run(capsys, *(a.format(long=long) for a in argv), "-o", str(target))
    assert (code, err) == (1, f"bilinear {argv[0]}: the default name, {'q' * 40}…, would have {length} characters, more "
                              "than the 255 a .bl name may have: give one (--name, name=)\n")
    assert not target.exists()


@pytest.mark.parametrize("argv", [("transform", "{wrong}", "--to", "nkm"), ("product", STRASSEN, "{wrong}"), ("optimize", "{wrong}"),
                                  ("export", "{wrong}", "--to", "fast-matmul"), ("inplace", "{wrong}")],
                         ids=lambda argv: argv[0])
def test_a_wrong_input_is_reported_in_its_own_file_before_anything_is_derived(tmp_path, capsys, argv):
    """The derived scheme's errors were reported instead (blocks of the 4x4 product, a coefficient of
    B21 in M5 that the file never wrote), after the whole optimization had run."""
    wrong = tmp_path / "off1.bl"
    wrong.write_text((ROOT / "algorithms" / "strassen.bl").read_text(encoding="utf-8").replace(
        "M5 = (A11 + A12) * B22", "M5 = (A11 - A12) * B22"), encoding="utf-8")
    out = tmp_path / ("out.txt" if argv[0] == "export" else "out.bl")  # export writes no .bl text
    code, _, err = _run(capsys, *(part.format(wrong=wrong) for part in argv), "-o", str(out))
    assert code == 1 and not out.exists()
    assert f"{wrong}:13:3: error: C11 is wrong" in err
    assert "changing the coefficient of A12 in the left factor of M5 from -1 to 1 (line 9) would make every equation hold" in err
    assert err.rstrip().endswith(f"error: strassen in {wrong} does not verify; nothing was derived from it")


@pytest.mark.parametrize("argv", [("transform", "{wrong}", "--to", "nkm"), ("product", "{wrong}", STRASSEN),
                                  ("product", STRASSEN, "{wrong}"), ("optimize", "{wrong}"),
                                  ("export", "{wrong}", "--to", "fast-matmul"), ("inplace", "{wrong}")],
                         ids=lambda argv: "-".join(argv[:2]).replace("{wrong}", "wrong").replace(STRASSEN, "strassen"))
def test_a_main_schedule_that_does_not_verify_is_reported_before_its_algorithm_is_used(tmp_path, capsys, argv):
    """msmes without its last stage (A and B not restored) was taken for its algorithm, which verifies:
    transform, optimize, product, inplace and export wrote their output and exited 0 (a CLI hunt)."""
    wrong = tmp_path / "msmes_cut.bl"
    text = (ROOT / "algorithms" / "msmes.bl").read_text(encoding="utf-8")
    wrong.write_text(text[:text.index("  stage restore2")].replace('use "strassen.bl"', f'use "{ROOT}/algorithms/strassen.bl"'),
                     encoding="utf-8")
    out = tmp_path / ("out.txt" if argv[0] == "export" else "out.bl")
    code, _, err = _run(capsys, *(part.format(wrong=wrong) for part in argv), "-o", str(out))
    assert code == 1 and not out.exists()
    assert "error: A12 ends holding A12 - A22; `restore` needs it to end as A12" in err
    assert err.rstrip().endswith(f"error: msmes in {wrong} does not verify; nothing was derived from it")


@pytest.mark.parametrize("name", ["_", "__Q", "_x"])
def test_compile_refuses_a_definition_name_that_c_reserves_as_the_librarys(tmp_path, capsys, name):
    """`algorithm _` compiled to _.cu with functions __dgemm and __sgemm (names C reserves), where
    --name _ is refused (a CLI hunt)."""
    source, out = tmp_path / "us.bl", tmp_path / "out"
    source.write_text(f"algorithm {name} <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n", encoding="utf-8")
    code, _, err = _run(capsys, "compile", str(source), "-o", str(out))
    assert (code, out.exists()) == (1, False)
    assert err == (f"bilinear compile: the library would be named {name!r} after the file's main definition, and its C "
                   f"functions ({name}_dgemm) with it, but C reserves names that start with _: give --name\n")
    assert _run(capsys, "compile", str(source), "-o", str(out), "--name", "ok")[0] == 0


def test_a_wrong_levels_schemes_file_is_blamed_itself(tmp_path, capsys):
    """The merged program's errors had no file, and the failure was blamed on FILE (strassen)."""
    wrong = tmp_path / "off1.bl"
    wrong.write_text((ROOT / "algorithms" / "strassen.bl").read_text(encoding="utf-8").replace(
        "M5 = (A11 + A12) * B22", "M5 = (A11 - A12) * B22"), encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = _run(capsys, "compile", "strassen", "--levels-schemes", f"winograd,{wrong}", "-o", str(out))
    assert code == 1 and not out.exists()
    assert f"{wrong}:13:3: error: C11 is wrong" in err
    assert err.rstrip().endswith(f"error: {wrong} (--levels-schemes) does not verify; nothing was built from it")


@pytest.mark.parametrize("spec", ["msmes,,grey333", "", "msmes,"])
def test_levels_schemes_with_an_empty_entry_is_refused(tmp_path, capsys, spec):
    """An empty entry was dropped (one level fewer than written), and "" ignored the option."""
    code, _, err = _run(capsys, "compile", "strassen", "--levels-schemes", spec, "-o", str(tmp_path / "out"))
    assert code == 2
    assert f"argument --levels-schemes: expected one file or shipped name per level, comma-separated, not {spec!r}" in err


def test_a_bl_file_with_a_catalogue_suffix_asks_for_from(tmp_path, capsys):
    """It was read as Perminov's text format: "'algorithm' is not a rational coefficient" at 4:1."""
    source = tmp_path / "s.txt"
    source.write_text((ROOT / "algorithms" / "strassen.bl").read_text(encoding="utf-8"), encoding="utf-8")
    code, _, err = _run(capsys, "verify", str(source))
    assert code == 1 and err.startswith(
        "error: s.txt could be bl or perminov-text (its suffix says perminov-text, its text reads as .bl); give the format with --from")
    assert _run(capsys, "verify", str(source), "--from", "bl")[0] == 0


def test_export_checks_every_file_before_writing_any(tmp_path, capsys):
    (tmp_path / "2x2x2_7_y_P.sms").mkdir()
    code, _, err = _run(capsys, "export", STRASSEN, "--to", "plinopt", "-o", str(tmp_path / "y"))
    assert code == 1 and "2x2x2_7_y_P.sms exists and is not a regular file" in err
    assert [p.name for p in tmp_path.iterdir()] == ["2x2x2_7_y_P.sms"]  # L and R were written before
    target = tmp_path / "s.fm"
    target.write_text("mine", encoding="utf-8")
    assert _run(capsys, "export", STRASSEN, "--to", "fast-matmul", "-o", str(target))[0] == 1
    assert target.read_text(encoding="utf-8") == "mine"
    assert _run(capsys, "export", STRASSEN, "--to", "fast-matmul", "-o", str(target), "--force")[0] == 0
    assert target.read_text(encoding="utf-8") != "mine"


def test_a_product_too_large_is_refused_before_it_is_built(tmp_path, capsys):
    """grey333 squared, squared again, is ⟨81,81,81⟩: refused from the two shapes, where it took 63 s
    and 3 GB to build first."""
    square = tmp_path / "g2.bl"
    assert _run(capsys, "product", "grey333", "grey333", "-o", str(square))[0] == 0
    start = time.perf_counter()
    code, _, err = _run(capsys, "product", str(square), str(square))
    assert code == 1 and "shape ⟨81,81,81⟩ is too large: 531441 classical products" in err
    assert time.perf_counter() - start < 10


def test_a_product_too_large_is_refused_before_its_inputs_are_verified(tmp_path, capsys):
    """⟨9,9,18;920⟩ with itself was refused only after both inputs were verified (21.8 s, a README audit);
    here a wrong input shows it: the shape is said, not that the input does not verify."""
    wrong = tmp_path / "wrong.bl"
    wrong.write_text(naive_algorithm(9, 9, 9).replace("M1 = 1*A11", "M1 = 2*A11"), encoding="utf-8")
    code, _, err = _run(capsys, "product", str(wrong), str(wrong))
    assert (code, err.splitlines()[0]) == (1, "error: shape ⟨81,81,81⟩ is too large: 531441 classical products, and at "
                                              "most 262144 (⟨64,64,64⟩) are supported")


# --- refused early --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, words",
    [
        (("compile", STRASSEN, "--levels", "100000"), "levels"),
        (("compile", STRASSEN, "--levels", "-1"), "levels"),
        (("run", STRASSEN, "-n", "1000000", "--backend", "numpy"), "memory"),
        (("run", STRASSEN, "-n", "0", "--backend", "numpy"), "at least 1"),
        (("run", STRASSEN, "-n", "-5", "--backend", "numpy"), "at least 1"),
        (("run", STRASSEN, "-n", "8", "-m", "0", "--backend", "numpy"), "at least 1"),
        (("run", STRASSEN, "-n", "4", "--levels", "60", "--backend", "numpy"), "levels"),
        (("run", STRASSEN, "-n", "4", "--repeat", "0", "--backend", "numpy"), "repeat"),
        (("run", STRASSEN, "-n", "4", "--cutoff", "0", "--backend", "numpy"), "cutoff"),
        (("bench", STRASSEN, "-n", "8", "--backend", "numpy", "--levels", "100000"), "levels"),
        (("bench", STRASSEN, "-n", "0", "--backend", "numpy"), "at least 1"),
    ],
)
def test_absurd_sizes_and_counts_are_refused_at_once(capsys, argv, words):
    start = time.perf_counter()
    code, _, err = _run(capsys, *argv)
    assert code not in (0, None) and words in err
    assert time.perf_counter() - start < 10


@pytest.mark.parametrize("argv, message", [
    (("run", STRASSEN, "-n", "8", "--backend", "numpy", "--alpha", "nan"), "argument --alpha: must be a finite number, not 'nan'"),
    (("run", STRASSEN, "-n", "8", "--backend", "numpy", "--beta=-inf"), "argument --beta: must be a finite number, not '-inf'"),
    (("run", STRASSEN, "-n", "8", "--backend", "numpy", "--seed", "-1"), "argument --seed: must be at least 0, not -1"),
])
def test_run_refuses_values_that_would_only_fail_later(capsys, argv, message):
    """nan and inf ran and were reported as "EXCEEDS THE BOUND"; a negative seed gave NumPy's message."""
    code, _, err = _run(capsys, *argv)
    assert code == 2 and message in err


def test_plan_and_bench_take_shipped_names_and_bench_runs_outside_the_repository(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # bench's default scheme was the relative path algorithms/msmes.bl
    assert _run(capsys, "plan", "winograd", "--gpus", "2", "-n", "64")[0] == 0
    code, out, _ = _run(capsys, "bench", "-n", "16", "--backend", "numpy", "--repeat", "1")
    assert code == 0 and "msmes" in out
    assert _run(capsys, "bench", "strassen", "-n", "16", "--backend", "numpy", "--repeat", "1")[0] == 0


def test_bench_checks_output_paths_before_measuring(tmp_path, capsys, monkeypatch):
    import bilinear.bench_cli

    def never(*args, **kwargs):
        raise AssertionError("measured before checking the output paths")

    monkeypatch.setattr(bilinear.bench_cli, "bench_one", never)
    for option in ("--plot", "--json"):
        code, _, err = _run(capsys, "bench", STRASSEN, "-n", "8", "--backend", "numpy", option, str(tmp_path / "no" / "x"))
        assert code == 1 and "no" in err


def test_bench_levels_auto_on_numpy(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("BILINEAR_CACHE", str(tmp_path))
    code, out, _ = _run(capsys, "bench", STRASSEN, "-n", "16", "--backend", "numpy", "--levels", "auto", "--repeat", "1")
    assert code == 0 and "strassen" in out


# --- --format: the report's; --from: the input's ------------------------------------------------------


def test_verify_format_is_only_the_report_format(capsys):
    code, _, err = _run(capsys, "verify", STRASSEN, "--format", "fast-matmul")
    assert code == 2 and "--from" in err


def test_verify_json_prints_a_json_error_when_loading_fails(tmp_path, capsys):
    code, out, _ = _run(capsys, "verify", str(tmp_path / "missing.bl"), "--format", "json")
    assert code == 1
    document = json.loads(out)
    assert document["ok"] is False and document["errors"] and "missing.bl" in document["errors"][0]["message"]
    # the same schema as a loaded file's report, versioned like it (a reader had to guess)
    assert list(document)[:4] == ["schema_version", "file", "ok", "entries"] and document["schema_version"] == 1


def test_verify_json_of_a_bad_file_is_json_with_located_errors(tmp_path, capsys):
    path = tmp_path / "bad.bl"
    path.write_text("algorithm x <2,2,2;7>:\n  M1 = A11 * \n", encoding="utf-8")
    code, out, _ = _run(capsys, "verify", str(path), "--format", "json")
    assert code == 1 and json.loads(out)["errors"][0]["line"] == 2


@pytest.mark.parametrize("loads", [True, False], ids=["a scheme", "a file that does not load"])
def test_verify_json_of_a_file_named_in_bytes_that_are_not_utf8_is_utf8(tmp_path, loads):
    """The name's byte 0xff (held as the surrogate U+DCFF) went to stdout as itself: the JSON was not
    UTF-8, and a reader's json.loads failed on it (a hunt)."""
    import subprocess
    import sys

    path = tmp_path / os.fsdecode(b"s\xff.bl")
    path.write_text((ROOT / "algorithms" / "strassen.bl").read_text() if loads else "algorithm x <2,2,2;7>:\n  M1 = A11 *\n")
    # a C.UTF-8 or POSIX locale's stdout (Python's own choice there; captured output is strict, and escaped)
    environment = {**os.environ, "PYTHONIOENCODING": "utf-8:surrogateescape"}
    done = subprocess.run([sys.executable, "-m", "bilinear.cli", "verify", str(path), "--format", "json"],
                          capture_output=True, env=environment, cwd=ROOT, timeout=120)
    assert done.returncode == (0 if loads else 1), done.stderr
    assert json.loads(done.stdout.decode("utf-8"))["file"] == str(path)  # strict UTF-8; the name as Python holds it


def test_symlink_loop_is_one_message(tmp_path, capsys):
    loop = tmp_path / "loop.bl"
    os.symlink(loop, loop)
    code, _, err = _run(capsys, "verify", str(loop))
    assert code == 1 and "loop.bl" in err


def test_version_is_one_line(capsys):
    """`bilinear --version` answered "the following arguments are required: COMMAND"."""
    from importlib.metadata import version

    code, out, _ = _run(capsys, "--version")
    assert code == 0 and out == f"bilinear {version('bilinear')}\n"


@pytest.mark.parametrize(("options", "unused"), [
    (["--moduli", "5"], "moduli"), (["--scaling", "norm"], "scaling"),
    (["--moduli", "5", "--scaling", "norm"], "moduli and scaling"),
])
@pytest.mark.parametrize("command", ["run", "compile"])
def test_ozaki_options_without_the_ozaki_leaf_are_refused(tmp_path, capsys, command, options, unused):
    """They had been ignored without a word: a cuBLAS-leaf run "with 5 moduli" was a plain run."""
    where = ["--backend", "numpy", "-n", "32"] if command == "run" else ["-o", str(tmp_path / "out")]
    code, out, err = _run(capsys, command, STRASSEN, *options, *where)
    them = "them" if " and " in unused else "it"
    assert (code, out) == (2, "")  # a usage error, with the usage line
    assert err.startswith(f"usage: bilinear {command}")
    assert err.endswith(f"bilinear {command}: error: {unused} set the ozaki leaf's emulation, and the cublas leaf has "
                        f"none: ask for the ozaki leaf (--leaf ozaki, leaf='ozaki') or leave {them} out\n")
    assert not (tmp_path / "out").exists()


def test_the_api_refuses_moduli_without_the_ozaki_leaf():
    with pytest.raises(ValueError, match="^moduli set the ozaki leaf's emulation, and the fused leaf has none"):
        bilinear.compile(STRASSEN, leaf="fused", moduli=3, backend="numpy")
    assert bilinear.compile(STRASSEN, leaf="ozaki", moduli=3, backend="numpy") is not None


def test_optimize_refuses_the_table_style_it_cannot_write(tmp_path, capsys):
    """--style table had been ignored: the named sums came out as equations."""
    out = tmp_path / "o.bl"
    code, stdout, err = _run(capsys, "optimize", STRASSEN, "--style", "table", "-o", str(out))
    assert (code, stdout, out.exists()) == (2, "", False)
    assert err.endswith("bilinear optimize: error: optimize writes named sums, which --style table (U, V and W, a column "
                        "per product) cannot hold; leave --style out\n")


def test_optimize_help_does_not_offer_the_table_style_it_refuses(capsys):
    """optimize --help listed --style's table beside equations, as import's does, though optimize refuses it."""
    code, out, _ = _run(capsys, "optimize", "--help")
    style = " ".join(out.split("\n  --style {equations,table}")[1].split("\n  --name")[0].split())
    assert code == 0
    assert style == "equations only (the default): optimize writes named sums, which a table (U, V and W, a column per " \
                    "product) cannot hold"
    code, out, _ = _run(capsys, "import", "--help")  # import writes either
    assert "or table (U, V and W, a row per block, a column per product)" in " ".join(out.split())


@pytest.mark.parametrize(("options", "message"), [
    (["--shape", "2,2,2"], "--shape (shape=) applies"), (["--key", "2,2,2"], "--key (key=) applies"),
    (["--shape", "2,2,2", "--key", "3,3,3"], "--shape (shape=) and --key (key=) apply"),
])
def test_catalogue_options_on_a_bl_file_are_refused(capsys, options, message):
    """They had been ignored without a word, as --mod was refused."""
    code, out, err = _run(capsys, "verify", STRASSEN, *options)
    assert (code, out) == (1, "")
    assert f"{message} to catalogue schemes, not to .bl files" in err.splitlines()[0]


UNWRITABLE = "/proc/bilinear-test"  # a folder where even root cannot create a file


@pytest.mark.parametrize("argv, suffix", [(("import", "{catalogue}"), ".bl"), *((argv, ".bl") for argv in DERIVED),
                                          (("export", STRASSEN, "--to", "fast-matmul"), ""),
                                          (("export", STRASSEN, "--to", "alphatensor"), ".npz"),
                                          (("compile", STRASSEN), "")], ids=lambda x: x[0] if isinstance(x, tuple) else "")
def test_a_folder_that_cannot_be_written_is_refused_before_any_work(tmp_path, capsys, argv, suffix):
    """optimize ran (and printed its counts) before the write failed, naming a hidden temporary file."""
    catalogue = tmp_path / "strassen-fm"
    _run(capsys, "export", STRASSEN, "--to", "fast-matmul", "-o", str(catalogue))
    argv = tuple(str(catalogue) if a == "{catalogue}" else a for a in argv)
    target = f"/proc/x{suffix}" if argv[0] != "compile" else "/proc/bilinear-out"
    code, out, err = _run(capsys, *argv, "-o", target)
    assert code == 1 and out == "" and f"cannot write {target}" in err and ".tmp" not in err
    # /proc takes no new file, and mkstemp's errno there had been quoted: "(No such file or directory)"
    assert "/proc cannot be written (it takes no new files)" in err, err


def test_export_to_plinopt_into_a_folder_writes_inside_it(tmp_path, capsys):
    """-o DIR/ wrote 2x2x2_7_DIR_{L,R,P}.sms beside DIR, in its parent."""
    folder = tmp_path / "out"
    folder.mkdir()
    code, out, _ = _run(capsys, "export", STRASSEN, "--to", "plinopt", "-o", str(folder) + "/")
    assert code == 0 and sorted(p.name for p in folder.iterdir()) == [f"2x2x2_7_strassen_{s}.sms" for s in "LPR"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert _run(capsys, "verify", str(folder / "2x2x2_7_strassen_L.sms"))[0] == 0


@pytest.mark.parametrize("to, name", [("plinopt", "s"), ("fast-matmul", "s.fm")])
def test_export_writes_into_a_folder_it_may_write_but_not_read(tmp_path, capsys, monkeypatch, to, name):
    """The lock that keeps two exports apart opened the folder to read: in a folder of mode 333 export
    said "Permission denied" where import wrote (a hunt; as root, a permission is a patch).  There the
    files are written unlocked, as on a file system without locks."""
    from bilinear import output

    folder = tmp_path / "wx"
    folder.mkdir()
    opened = os.open

    def refused(path, flags, *rest, **kwargs):
        if Path(path) == folder and flags == os.O_RDONLY:
            raise PermissionError(13, "Permission denied", str(path))
        return opened(path, flags, *rest, **kwargs)

    monkeypatch.setattr(output.os, "open", refused)
    code, out, err = _run(capsys, "export", STRASSEN, "--to", to, "-o", str(folder / name))
    assert code == 0 and "wrote" in out, err
    assert _run(capsys, "verify", str(sorted(folder.iterdir())[0]))[0] == 0


@pytest.mark.parametrize("option, value, message", [
    ("--from", "bogus", "argument --from: invalid choice: 'bogus'"),
    ("--shape", "2,2", "argument --shape: expected m,k,n (three whole numbers of at least 1), not '2,2'"),
    ("--shape", "2,0,2", "argument --shape: expected m,k,n (three whole numbers of at least 1), not '2,0,2'"),
    ("--key", "x", "argument --key: expected m,k,n (three whole numbers of at least 1), not 'x'"),
    ("--shape", "²,1,1", "argument --shape: expected m,k,n (three whole numbers of at least 1), not '²,1,1'"),
    ("--mod", "0", "argument --mod: must be at least 2, not 0"),
])
def test_malformed_input_options_are_usage_errors(capsys, option, value, message):
    """They exited 1 (a refused request) instead of 2 (a malformed command line), as -n 0 does."""
    code, _, err = _run(capsys, "verify", STRASSEN, option, value)
    assert code == 2 and message in err


def test_a_shape_option_may_be_spelled_with_x(capsys):
    """bilinear.load took key="3x3x3" where the command line refused --shape 2x3x4 (a hunt)."""
    path = scheme_file("fast-matmul/grey234-20-144")
    code, out, err = _run(capsys, "verify", str(path), "--shape", "2x3x4")
    assert code == 0 and "<2,3,4;20>: verified" in out, err


def test_the_from_choices_are_the_readers():
    from bilinear.cli_args import INPUT_FORMATS
    from bilinear.frontend.importers import FORMATS

    assert INPUT_FORMATS == ("bl", *FORMATS)


@pytest.mark.parametrize(("command", "advice"), [("run", "smaller sizes (-n, -m, -k)"), ("bench", "a smaller -n")])
def test_distributed_sizes_that_cannot_fit_are_refused_before_lowering(capsys, command, advice):
    """`--gpus` skipped the memory check: the job loaded, lowered, then died in allocation (or was killed);
    bench, which has no -m or -k, was told to choose them smaller."""
    start = time.perf_counter()
    code, _, err = _run(capsys, command, STRASSEN, "-n", "10000000", "--levels", "1", "--gpus", "1", "--backend", "numpy")
    assert code == 1 and "needs about" in err and f"GiB of host memory; choose {advice}\n" in err
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize(("argv", "advice"), [
    (["bench", STRASSEN, "-n", "10000000"], "choose a smaller -n"),
    (["run", STRASSEN, "-n", "10000000"], "choose smaller sizes (-n, -m, -k)"),
])
def test_sizes_that_cannot_fit_name_the_options_the_command_has(capsys, argv, advice):
    """bench, which has no -m or -k, was told to 'choose smaller sizes (-n, -m, -k)'."""
    code, _, err = _run(capsys, *argv, "--backend", "numpy")
    assert code == 1 and err.endswith(f"GiB of host memory; {advice}\n")


def test_sizes_from_a_configs_file_that_cannot_fit_name_the_file(tmp_path, capsys):
    """The size came from the file, and bench was told to choose smaller -n, -m, -k, which it has not
    (the message's sizes say which line)."""
    configs = tmp_path / "configs.txt"
    configs.write_text(f"{STRASSEN} 16 float64 1 cublas\n{STRASSEN} 10000000 float64 1 cublas\n")
    code, _, err = _run(capsys, "bench", "--configs", configs, "--backend", "numpy")
    assert code == 1 and err.endswith(f"GiB of host memory; choose a smaller n in {configs}\n")


def test_compile_says_which_options_the_cpp_library_does_not_run(tmp_path, capsys):
    """--launch streams, --workspace-limit and --leaf ozaki were recorded in the manifest only.
    Breadth-first levels, batched launches, the limit and ozaki leaves the library runs itself: no note for them."""
    winograd = str(ROOT / "algorithms" / "winograd.bl")
    code, _, err = _run(capsys, "compile", winograd, "--levels", "2", "--breadth", "2", "--launch", "streams",
                        "--workspace-limit", "24G", "-o", str(tmp_path / "a"))
    assert code == 0
    assert "note: the C++ host layer issues leaf products one at a time on the caller's stream; --launch streams runs " \
           "through the Python runtime" in err
    # the library honours the limit itself: the one note of it says from which size no plan fits
    assert "workspace" not in err.replace("note: --workspace-limit 25769803776: from n = 71792, an n×n×n call can need "
                                          "more workspace than that and return 4000 (nothing run)", "")
    code, _, err = _run(capsys, "compile", STRASSEN, "--leaf", "ozaki", "-o", str(tmp_path / "b"))
    assert code == 0 and "note:" not in err
    host = json.loads((tmp_path / "a" / "manifest.json").read_text())["host"]
    assert {"breadth_first", "launch", "workspace_limit"} <= set(host)
    assert host["breadth_first"]["products"] == "one GEMM after another"
    code, _, err = _run(capsys, "compile", STRASSEN, "-o", str(tmp_path / "c"))
    assert code == 0 and "note:" not in err
    code, _, err = _run(capsys, "compile", winograd, "--levels", "2", "--breadth", "1", "--launch", "batched",
                        "-o", str(tmp_path / "d"))
    sums = "note: winograd's 11 named sums are not shared by the library"  # its own note: no launch's
    assert code == 0 and "note:" not in "\n".join(line for line in err.splitlines() if not line.startswith(sums))
    host = json.loads((tmp_path / "d" / "manifest.json").read_text())["host"]
    assert host["breadth_first"]["products"] == "one strided-batched GEMM" and "launch" not in host


def test_bench_checks_the_plot_format_before_measuring(tmp_path, capsys, monkeypatch):
    """--plot x.xyz measured every configuration, then failed in matplotlib."""
    import bilinear.bench_cli

    pytest.importorskip("matplotlib")
    monkeypatch.setattr(bilinear.bench_cli, "bench_one", lambda *a, **k: pytest.fail("measured before checking --plot"))
    code, _, err = _run(capsys, "bench", STRASSEN, "-n", "8", "--backend", "numpy", "--plot", str(tmp_path / "plot.xyz"))
    assert code == 2 and "--plot: matplotlib cannot write .xyz files; use one of" in err and "png" in err


@pytest.mark.parametrize("option, value", [("--seeds", "99999999999999999999"), ("--starts", "99999999999999999999"),
                                           ("--polish", "10000001"), ("--chains", "100000"), ("--starts", "A=10000001")])
def test_optimize_counts_past_any_real_use_are_usage_errors(capsys, option, value):
    """They were accepted, and the search ran for ever."""
    code, _, err = _run(capsys, "optimize", STRASSEN, option, value)
    assert code == 2 and f"argument {option}: must be at most" in err


def test_product_says_that_the_reading_options_are_first_files(tmp_path, capsys):
    """A many-scheme archive as SECOND asked for --key, which then applied to FILE only."""
    import numpy as np

    np.savez(tmp_path / "two.npz", **{"1,1,1": np.ones((3, 1, 1), dtype=np.int64), "2,1,1": np.ones((3, 2, 2), dtype=np.int64)})
    code, _, err = _run(capsys, "product", STRASSEN, str(tmp_path / "two.npz"), "-o", str(tmp_path / "p.bl"))
    assert code == 1 and "choose one with --key" in err
    assert ("note: --from, --shape, --key, --mod and --allow-pickle read FILE; to choose how SECOND is read, "
            "`bilinear import` it to a .bl file first") in err


def test_a_schedule_product_of_long_named_algorithms_is_written_under_its_name(tmp_path, capsys):
    """--name names the schedule of a schedule product; the algorithms' joined name, 261 characters, was
    refused saying to give --name, which it had been given (a review)."""
    long = "q" * 250
    (tmp_path / "qs.bl").write_text(Path(STRASSEN).read_text(encoding="utf-8").replace("algorithm strassen", f"algorithm {long}"))
    (tmp_path / "qm.bl").write_text(Path(MSMES).read_text(encoding="utf-8").replace('use "strassen.bl"', 'use "qs.bl"')
                                    .replace("schedule msmes for strassen", f"schedule msmes for {long}"))
    code, out, err = _run(capsys, "product", tmp_path / "qm.bl", MSMES, "--name", "ss", "-o", tmp_path / "out.bl")
    assert code == 0, err
    assert out.startswith(f"wrote {tmp_path / 'out.bl'} ({'q' * 126}_x_strassen <4,4,4;49> and schedule ss")
    assert _run(capsys, "verify", tmp_path / "out.bl")[0] == 0


def test_a_schedule_product_of_long_stage_names_cuts_the_joined_names_to_fit(tmp_path, capsys):
    """Stage names of 200 characters joined into ones of 413, which no .bl file may hold, and no option
    renames stages: the product was refused (a hunt).  Joined names are cut to 255, kept apart."""
    long = "s" * 200
    text = re.sub(r"stage (\w+):", rf"stage {long}\1:", Path(MSMES).read_text(encoding="utf-8"))
    (tmp_path / "lm.bl").write_text(text.replace('use "strassen.bl"', f'use "{STRASSEN}"'))
    assert _run(capsys, "verify", tmp_path / "lm.bl")[0] == 0
    code, _, err = _run(capsys, "product", tmp_path / "lm.bl", tmp_path / "lm.bl", "-o", tmp_path / "out.bl")
    assert code == 0, err
    stages = bilinear.load(tmp_path / "out.bl").main.stages
    assert max(len(stage.name) for stage in stages) == 255 and len({stage.name for stage in stages}) == len(stages)
    assert _run(capsys, "verify", tmp_path / "out.bl")[0] == 0


def test_product_says_that_allow_pickle_is_the_first_files_where_second_needs_it(tmp_path, capsys):
    """A pickled .npz as SECOND said "pass --allow-pickle" in a note, which the check for a reading option
    did not read: the option then applied to FILE, and only that second try said so (a hunt)."""
    assert _run(capsys, "export", ROOT / "algorithms" / "grey234.bl", "--to", "alphatensor", "-o", tmp_path / "g.npz")[0] == 0
    code, _, err = _run(capsys, "product", STRASSEN, str(tmp_path / "g.npz"), "-o", str(tmp_path / "p.bl"))
    assert code == 1 and "note: if you trust the file, pass --allow-pickle" in err
    assert ("note: --from, --shape, --key, --mod and --allow-pickle read FILE; to choose how SECOND is read, "
            "`bilinear import` it to a .bl file first") in err


def test_product_says_so_where_a_bl_file_refused_a_reading_option_meant_for_second(tmp_path, capsys):
    """`product strassen two.npz --key 2,1,1` said only that --key applies to catalogue schemes (a hunt)."""
    import numpy as np

    np.savez(tmp_path / "two.npz", **{"1,1,1": np.ones((3, 1, 1), dtype=np.int64), "2,1,1": np.ones((3, 2, 2), dtype=np.int64)})
    code, _, err = _run(capsys, "product", STRASSEN, str(tmp_path / "two.npz"), "--key", "2,1,1", "-o", str(tmp_path / "p.bl"))
    assert code == 1 and "--key (key=) applies to catalogue schemes, not to .bl files" in err
    assert ("note: --from, --shape, --key, --mod and --allow-pickle read FILE; to choose how SECOND is read, "
            "`bilinear import` it to a .bl file first") in err
    assert not (tmp_path / "p.bl").exists()


@pytest.mark.parametrize("second", ["missing.bl", "missing.npz", "broken.bl"])
def test_product_says_nothing_of_reading_options_where_none_would_help(tmp_path, capsys, second):
    """A SECOND that is not there, or a .bl file (which takes no reading options), got the note too."""
    (tmp_path / "broken.bl").write_text("algorithm broken <2,2,2;1>:\n  M1 = A11 * B11\n  C11 = M1 +\n")
    code, _, err = _run(capsys, "product", STRASSEN, str(tmp_path / second), "-o", str(tmp_path / "p.bl"))
    assert code == 1 and "error:" in err and "reading options" not in err and "--allow-pickle" not in err, err


def test_a_rectangular_alphatensor_export_says_how_to_read_it_back(tmp_path, capsys):
    grey234 = str(ROOT / "algorithms" / "grey234.bl")
    code, _, err = _run(capsys, "export", grey234, "--to", "alphatensor", "-o", str(tmp_path / "g.npz"))
    assert code == 0 and "note: a rectangular scheme is stored as AlphaTensor stores its own, an object array" in err
    assert "--allow-pickle" in err
    assert _run(capsys, "verify", str(tmp_path / "g.npz"), "--allow-pickle")[0] == 0
    code, _, err = _run(capsys, "export", STRASSEN, "--to", "alphatensor", "-o", str(tmp_path / "s.npz"))
    assert code == 0 and "rectangular" not in err  # (its note says only that the header comment stays behind)


@pytest.mark.parametrize("scalars", [("--alpha", "1000"), ("--beta=100000",), ("--alpha", "0.00001")])
def test_run_judges_the_error_relative_to_what_alpha_and_beta_scale(capsys, scalars):
    """‖C − C_ref‖ was divided by ‖A‖‖B‖ alone: alpha = 1000 "exceeded the bound", alpha = 1e-5 could not."""
    code, out, _ = _run(capsys, "run", STRASSEN, "-n", "37", "--backend", "numpy", *scalars)
    error = float(out.split("relative error")[1].split()[0])
    assert code == 0 and 1e-18 < error < 1e-15


@pytest.mark.parametrize("options, named", [(("--local", "msmes"), "--local applies"), (("--steps", "2"), "--steps applies"),
                                            (("--decomposition", "2d"), "--decomposition applies"),
                                            (("--inputs", "block2d", "--output", "root"), "--inputs, --output apply")])
def test_distribution_options_without_gpus_are_refused(capsys, options, named):
    """run and bench without --gpus ran on one device and ignored them.  A usage error (status 2), as
    other contradicting options are."""
    for command in ("run", "bench"):
        code, _, err = _run(capsys, command, STRASSEN, "-n", "8", "--levels", "1", "--backend", "numpy", *options)
        assert code == 2 and f"{named} only with --gpus P" in err


def test_plan_refuses_local_which_it_does_not_use(capsys):
    code, _, err = _run(capsys, "plan", STRASSEN, "--gpus", "2", "-n", "64", "--local", "msmes")
    assert code == 2 and "plan lays out the products over the ranks; --local" in err


OPTION_REFUSALS = [
    (("bench", STRASSEN, "-n", "8", "--backend", "numpy", "--json", "{tmp}/r.png", "--plot", "{tmp}/r.png"),
     "--json and --plot name one file, {tmp}/r.png; the plot would replace the numbers"),
    (("bench", STRASSEN, "-n", "8", "--backend", "numpy", "--plot", "{tmp}/r.xyz"),
     "--plot: matplotlib cannot write .xyz files; use one of "),
    (("plan", STRASSEN, "--local", "msmes"), "plan lays out the products over the ranks; --local (what each rank "
     "multiplies its products with) applies to run and bench"),
    (("plan", STRASSEN, "--decomposition", "2d", "--steps", "2"),
     "--steps (steps=) sets the breadth-first (bfs) decomposition's steps; the 2d decomposition has none"),
    (("compile", STRASSEN, "--levels-schemes", "strassen,winograd", "--levels", "3", "-o", "{tmp}/out"),
     "--levels 3 contradicts --levels-schemes, which names 2 levels; leave --levels out"),
    (("run", STRASSEN, "-n", "8", "--backend", "numpy", "--levels-schemes", "strassen,"),
     "argument --levels-schemes: expected one file or shipped name per level, comma-separated, not 'strassen,'"),
    (("optimize", STRASSEN, "--style", "table", "-o", "{tmp}/o.bl"), "optimize writes named sums, which --style "
     "table (U, V and W, a column per product) cannot hold; leave --style out"),
    (("transform", STRASSEN, "--to", "nkm", "--name", "A11", "-o", "{tmp}/t.bl"),
     "argument --name: must be an identifier in .bl (an ASCII letter or _, then letters, digits or _; not a keyword "
     "or a block name like A11), not 'A11'"),
    (("run", STRASSEN, "-n", "8", "--gpus", "1", "--backend", "numpy", "--alpha", "2"),
     "--alpha applies only to a one-device run; the distributed product takes --levels, --leaf, --dtype and --local "
     "for what each rank multiplies"),
    (("bench", STRASSEN, STRASSEN, "-n", "8", "--gpus", "1", "--backend", "numpy"),
     "bench --gpus times one scheme, level count, leaf and dtype at a time (several -n are fine)"),
    (("bench", STRASSEN, "-n", "8", "--gpus", "1", "--levels", "auto", "--backend", "numpy"),
     "bench --gpus needs a whole number of local levels, not 'auto'"),
]


@pytest.mark.parametrize("argv, message", OPTION_REFUSALS, ids=lambda x: x[0] if isinstance(x, tuple) else "")
def test_conflicting_or_malformed_options_are_usage_errors(tmp_path, capsys, argv, message):
    """Each exited 1, as a well-formed request that cannot be done does, without the usage line;
    options at odds with each other or malformed are usage errors, status 2, as `-n 0` is."""
    if "--plot" in argv:
        pytest.importorskip("matplotlib")
    code, out, err = _run(capsys, *(part.format(tmp=tmp_path) for part in argv))
    assert (code, out, list(tmp_path.iterdir())) == (2, "", [])
    assert err.startswith("usage: bilinear ")
    assert err.splitlines()[-1].startswith(f"bilinear {argv[0]}: error: {message.format(tmp=tmp_path)}")


@pytest.mark.parametrize("scalars", [("--alpha", "-1e5"), ("--beta", "-2.5E-3"), ("--alpha", "-1e5", "--beta", "-.5e1")])
def test_negative_scalars_in_scientific_notation_are_values_not_options(capsys, scalars):
    """argparse before Python 3.13 took `-1e5` for an option: "argument --alpha: expected one argument"."""
    code, out, _ = _run(capsys, "run", STRASSEN, "-n", "16", "--backend", "numpy", *scalars)
    assert code == 0 and "relative error" in out


@pytest.mark.parametrize("scalars", [("--alph", "-1e5"), ("--bet", "-2.5E-3")])
def test_a_prefix_of_alpha_or_beta_is_no_option(capsys, scalars):
    """argparse had taken prefixes, so these ran; options are now taken whole (`--fo` had meant --force)."""
    code, out, err = _run(capsys, "run", STRASSEN, "-n", "16", "--backend", "numpy", *scalars)
    assert (code, out) == (2, "") and f"unrecognized arguments: {scalars[0]}" in err


@pytest.mark.parametrize("command, options, refusal", [
    ("run", ("-n", "64", "--backend", "numpy"), "1 modulus is too few for an inner dimension of 32 (it keeps no correct "
     "bit past 15): give 2 or more (--moduli 2, moduli=2), or none to have them chosen from k (leave --moduli out, "
     "moduli=None)\n"),
    ("compile", ("-o", "lib"), "1 modulus is too few for 1 level over leaves of any inner dimension: its error "
     "bound, 0.25 of the scale even at k = 1, can grow 6 times through the levels, past the largest C can be, so every "
     "call that runs them would return 5000; give 2 or more (--moduli 2, moduli=2), fewer levels (a lower --levels, "
     "levels=), or none to have them chosen from k (leave --moduli out, moduli=None)\n"),
])
def test_too_few_moduli_refused_say_how_to_leave_them_out_on_the_command_line(capsys, tmp_path, command, options,
                                                                              refusal):
    """The refusal said "or none to have them chosen from k", the Python API's moduli=None, to a command line
    where --moduli has no such value: it names the flag beside the API's argument, as other refusals do."""
    options = tuple(str(tmp_path / word) if word == "lib" else word for word in options)
    code, _, err = _run(capsys, command, STRASSEN, "--leaf", "ozaki", "--moduli", "1", *options)
    assert code == (1 if command == "run" else 2) and refusal in err, err


def test_a_negative_infinite_scalar_is_judged_as_a_number(capsys):
    code, _, err = _run(capsys, "run", STRASSEN, "-n", "8", "--backend", "numpy", "--alpha", "-inf")
    assert code == 2 and "argument --alpha: must be a finite number, not '-inf'" in err


def test_too_few_moduli_that_miss_the_bound_are_named(capsys):
    """--moduli 8 failed the bound with no word on why; the default at the leaves' k is 15."""
    code, out, err = _run(capsys, "run", STRASSEN, "-n", "64", "--backend", "numpy", "--leaf", "ozaki", "--moduli", "8")
    assert code == 1 and "EXCEEDS THE BOUND" in out
    assert ("note: 8 moduli keep 29 and 28 bits of A's and B's elements at the leaves' k = 32; float64's 53 bits "
            "need 15, the number chosen when --moduli is left out") in err
    code, _, err = _run(capsys, "run", STRASSEN, "-n", "64", "--backend", "numpy", "--leaf", "ozaki")
    assert code == 0 and "note:" not in err


def test_one_modulus_that_misses_the_bound_is_named_in_the_singular():
    """It said "1 moduli keep 2 and 1 bits"."""
    from bilinear.run_cli import _too_few_moduli

    assert _too_few_moduli(1, 8, "float32") == (
        "1 modulus keeps 2 and 1 bits of A's and B's elements at the leaves' k = 8; float32's 24 bits need 7, the number "
        "chosen when --moduli is left out")


def test_a_folder_named_like_a_shipped_scheme_does_not_hide_it(capsys, tmp_path, monkeypatch):
    """`bilinear compile strassen -o strassen` and then `bilinear verify strassen`: "strassen is a directory"."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "strassen").mkdir()
    code, out, _ = _run(capsys, "verify", "strassen")
    assert code == 0 and "algorithm strassen <2,2,2;7>: verified" in out


def test_product_takes_algorithm_as_transform_does(capsys, tmp_path):
    """`product two.bl strassen --algorithm nosuch` multiplied two.bl's last algorithm without a word."""
    two = tmp_path / "two.bl"
    two.write_text((ROOT / "algorithms" / "naive2x2.bl").read_text() + "\n" + (ROOT / "algorithms" / "strassen.bl").read_text())
    code, _, err = _run(capsys, "product", str(two), "strassen", "--algorithm", "nosuch")
    assert code == 1 and "no algorithm named 'nosuch'; the file defines naive2x2, strassen" in err
    code, out, _ = _run(capsys, "product", str(two), "strassen", "--algorithm", "naive2x2")
    assert code == 0 and "algorithm naive2x2_x_strassen <4,4,4;56>:" in out


@pytest.mark.parametrize("command", [("transform", "--to", "nkm"), ("optimize",), ("export", "--to", "fast-matmul"),
                                     ("product", "strassen"), ("inplace",)])
def test_mod_is_refused_on_a_bl_file_by_every_command_that_reads_one(capsys, command, tmp_path):
    """verify and import refused it; transform, optimize, export and product ignored it."""
    name, *rest = command
    code, _, err = _run(capsys, name, STRASSEN, *rest, "--mod", "3", "-o", str(tmp_path / "x"))
    assert code == 1 and "--mod (modulus=) applies to catalogue schemes, not to .bl files" in err


def test_mod_reads_a_catalogue_file_modulo_p_in_transform(capsys, tmp_path):
    """A mod-2 scheme named without `mod2` was read over Q with --mod 2, and its 20 wrong blocks printed."""

    source = scheme_file("kauers/378-ffdb2d875f.mod2.exp")
    renamed = tmp_path / "v378.exp"
    renamed.write_bytes(source.read_bytes())
    code, _, err = _run(capsys, "transform", str(renamed), "--shape", "3,7,8", "--mod", "2", "--to", "nkm")
    assert code == 1 and "is a scheme valid only modulo 2" in err and "is wrong" not in err


@pytest.mark.parametrize("options", [("strassen",), ("winograd", "--levels", "2", "--breadth", "2"),
                                     ("msmes", "--leaf", "fused")])
def test_compile_counts_and_lists_every_kernel_of_the_cu(capsys, tmp_path, options):
    """It said "(5 kernels)" for strassen's 10 (one element type's) and "(0 kernels)" for 6 breadth-first ones."""
    name, *rest = options
    code, out, _ = _run(capsys, "compile", name, "-o", str(tmp_path), *rest)
    assert code == 0
    in_source = (tmp_path / f"{name}.cu").read_text().count("__global__")
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    listed = manifest["kernels"] + [k for names in manifest["host"]["other_kernels"].values() for k in names]
    assert len(listed) == len(set(listed)) == in_source
    assert f"({in_source} kernels" in out.splitlines()[-1]


def test_levels_that_contradict_levels_schemes_are_refused(capsys, tmp_path):
    """`--levels-schemes strassen,grey333 --levels 5` built 2 levels without a word."""
    code, _, err = _run(capsys, "compile", "strassen", "--levels-schemes", "strassen,grey333", "--levels", "5",
                        "-o", str(tmp_path / "x"))
    assert code == 2 and "--levels 5 contradicts --levels-schemes, which names 2 levels; leave --levels out" in err
    assert not (tmp_path / "x").exists()
    # --levels 1, the default's value, had been dropped without a word
    code, _, err = _run(capsys, "compile", "strassen", "--levels-schemes", "strassen,grey333", "--levels", "1",
                        "-o", str(tmp_path / "x"))
    assert code == 2 and "--levels 1 contradicts --levels-schemes, which names 2 levels; leave --levels out" in err
    assert _run(capsys, "compile", "strassen", "--levels-schemes", "strassen,grey333", "--levels", "2",
                "-o", str(tmp_path / "x"))[0] == 0
    # one scheme named: "which names 1 levels"
    code, _, err = _run(capsys, "compile", "strassen", "--levels-schemes", "strassen", "--levels", "2",
                        "-o", str(tmp_path / "y"))
    assert code == 2 and "--levels 2 contradicts --levels-schemes, which names 1 level; leave --levels out" in err


def test_recompiling_another_scheme_into_a_folder_removes_the_earlier_library(capsys, tmp_path):
    """compile strassen -o D, then compile winograd -o D --force left strassen.cu and .h beside winograd's manifest."""
    assert _run(capsys, "compile", "strassen", "-o", str(tmp_path))[0] == 0
    (tmp_path / "notes.txt").write_text("mine")
    code, _, err = _run(capsys, "compile", "winograd", "-o", str(tmp_path), "--force")
    assert code == 0 and "note: removed strassen.cu and strassen.h, the earlier library in this folder" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json", "notes.txt", "report.json", "report.md",
                                                          "report.txt", "winograd.cu", "winograd.h"]


# What each command that uses a file's last definition needs besides FILE ({out}: a new output path).
LAST_DEFINITION_USERS = {
    "compile": ("-o", "{out}"),
    "run": ("-n", "8", "--backend", "numpy", "--repeat", "1"),
    "bench": ("-n", "8", "--backend", "numpy", "--levels", "1", "--repeat", "1"),
    "plan": ("--gpus", "2", "-n", "64"),
    "export": ("--to", "fast-matmul", "-o", "{out}"),
    "transform": ("--to", "nkm", "-o", "{out}.bl"),
    "product": ("naive2x2", "-o", "{out}.bl"),
    "optimize": ("--seeds", "0", "-o", "{out}.bl"),
}
CHOOSES_WITH_ALGORITHM = ("export", "transform", "product", "optimize")  # they take --algorithm NAME


def _two_algorithms(folder: Path) -> Path:
    two = folder / "two.bl"
    two.write_text((ROOT / "algorithms" / "naive2x2.bl").read_text() + "\n" + (ROOT / "algorithms" / "strassen.bl").read_text())
    return two


@pytest.mark.parametrize("command", LAST_DEFINITION_USERS)
def test_every_command_says_which_of_several_algorithms_it_uses(capsys, tmp_path, command):
    """A file of two algorithms was compiled, run, benched, planned, exported, transformed, multiplied and
    optimized by its last; all but compile and run said nothing, and export's note left out --algorithm
    (msmes's algorithm and schedule need no note)."""
    two = _two_algorithms(tmp_path)
    code, _, err = _run(capsys, command, two, *(o.format(out=tmp_path / "a") for o in LAST_DEFINITION_USERS[command]))
    another = "--algorithm NAME" if command in CHOOSES_WITH_ALGORITHM else "put it last, or in a file of its own"
    note = (f"bilinear {command}: note: {two} also defines naive2x2; {command} uses its last definition, strassen "
            f"(another: {another})\n")
    assert code == 0 and err.count(note) == 1, err
    code, _, err = _run(capsys, command, "msmes", *(o.format(out=tmp_path / "b") for o in LAST_DEFINITION_USERS[command]))
    assert code == 0 and "also defines" not in err


def test_export_of_the_algorithm_asked_for_has_no_note(capsys, tmp_path):
    code, _, err = _run(capsys, "export", _two_algorithms(tmp_path), "--algorithm", "naive2x2", "--to", "fast-matmul",
                        "-o", tmp_path / "n.fm")
    assert code == 0 and "also defines" not in err


def test_compile_into_a_new_folder_named_with_a_slash(capsys, tmp_path):
    """compile -o new/ was refused ("names a folder, and there is none"), though compile makes it."""
    code, _, err = _run(capsys, "compile", "strassen", "-o", f"{tmp_path / 'new'}/")
    assert code == 0 and (tmp_path / "new" / "strassen.cu").is_file(), err


def _strassen_named(folder: Path, name: str) -> Path:
    source = folder / "long.bl"
    source.write_text(Path(STRASSEN).read_text().replace("algorithm strassen", f"algorithm {name}"))
    return source


@pytest.mark.parametrize("where", ["-o out", "build/", "build/ that exists"])
def test_compile_of_a_name_too_long_for_a_file_is_refused_leaving_nothing(capsys, tmp_path, monkeypatch, where):
    """A valid .bl name of 255 characters, the longest: writing NAME.cu failed ("File name too long") and
    left the folder it had made, empty (with an existing build/, a bare OSError naming the whole path)."""
    most = os.pathconf(tmp_path, "PC_NAME_MAX")
    if most >= 258:
        pytest.skip(f"this file system takes names of {most} bytes")
    name = "s" + "x" * 254
    source = _strassen_named(tmp_path, name)
    monkeypatch.chdir(tmp_path)
    if where == "build/ that exists":
        (tmp_path / "build").mkdir()
    code, out, err = _run(capsys, "compile", source, *(["-o", "out"] if where == "-o out" else []))
    folder = "out" if where == "-o out" else f"build/{name[:28]}…{name[-10:]}"
    assert (code, out) == (1, "")
    assert err == (f"error: cannot write {folder}/{name[:28]}…{name[-7:]}.cu: its name has 258 bytes, more than the "
                   f"{most} a file name may have here\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == [*(["build"] if where.endswith("exists") else []), "long.bl"]
    assert not list((tmp_path / "build").glob("*"))


def test_compile_of_a_name_near_the_limit_writes_it(capsys, tmp_path):
    """NAME.cu of 252 bytes fits, but its temporary file, .NAME.cu.XXXXXXXX.tmp, did not.  (249 characters:
    one more, and the header's lib<name>.so would be past 255 bytes, which compile refuses.)"""
    name = "s" + "y" * 248
    code, _, err = _run(capsys, "compile", _strassen_named(tmp_path, name), "-o", tmp_path / "out")
    assert code == 0 and (tmp_path / "out" / f"{name}.cu").is_file(), err


@pytest.mark.parametrize("folder_existed", [False, True])
def test_a_compile_that_fails_while_writing_leaves_nothing_behind(capsys, tmp_path, monkeypatch, folder_existed):
    """A full disk at the third file: the first two, and the folder made for them, are removed again
    (files that were there before are kept).  The six files are renamed together, once all are written."""
    import bilinear.output
    from bilinear.diagnostics import BilinearError, Diagnostic

    real_copy = bilinear.output._temporary_copy

    def full_at_the_third(path, data, written=[]):  # noqa: B006 - counts the calls of one test
        if len(written) == 2:
            raise BilinearError(Diagnostic(f"cannot write {path}: No space left on device"))
        written.append(path)
        return real_copy(path, data)

    monkeypatch.setattr(bilinear.output, "_temporary_copy", full_at_the_third)
    out = tmp_path / "new" / "out"
    if folder_existed:
        out.mkdir(parents=True)
        (out / "notes.txt").write_text("mine")
    code, _, err = _run(capsys, "compile", STRASSEN, "-o", out)
    assert code == 1 and err == f"error: cannot write {out / 'manifest.json'}: No space left on device\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == (["new", "notes.txt", "out"] if folder_existed else [])


def test_compile_never_writes_over_its_input(capsys, tmp_path):
    """A scheme file named report.txt in the output folder was replaced by the report under --force."""
    scheme = tmp_path / "report.txt"
    scheme.write_text((ROOT / "algorithms" / "strassen.bl").read_text())
    for force in ((), ("--force",)):
        code, _, err = _run(capsys, "compile", scheme, "--from", "bl", "-o", str(tmp_path), *force)
        assert code == 1 and f"-o {tmp_path} would replace the input file {scheme} with compile's report.txt" in err
    assert scheme.read_text().startswith("#")


def test_force_removes_only_files_bilinear_wrote(capsys, tmp_path):
    """A web app's manifest.json {"name": "app"} made compile --force delete the user's app.cu and app.h."""
    (tmp_path / "manifest.json").write_text('{"name": "app", "version": "1.0"}')
    (tmp_path / "app.cu").write_text("int main() {}\n")
    (tmp_path / "app.h").write_text("// my header\n")
    code, _, err = _run(capsys, "compile", "strassen", "-o", str(tmp_path), "--force")
    assert code == 0 and "removed" not in err, err
    assert (tmp_path / "app.cu").read_text() == "int main() {}\n" and (tmp_path / "app.h").exists()


@pytest.mark.parametrize("command", [("compile", "strassen"), ("import", "strassen"), ("export", "strassen", "--to", "fast-matmul"),
                                     ("transform", "strassen", "--to", "nkm")])
def test_an_empty_output_name_is_a_usage_error(capsys, command):
    """compile -o "" wrote its six files into the working folder."""
    code, _, err = _run(capsys, *command, "-o", "")
    assert code == 2 and "argument -o/--output: expected a file or folder name, not ''" in err


def test_mod_on_a_scheme_that_holds_over_q_reads_it_as_exact(capsys, tmp_path):
    """`import --mod 3` of a scheme exact over Q said it was "valid only modulo 3" (verify: "verified over Q")."""

    renamed = tmp_path / "v333.exp"
    renamed.write_bytes(scheme_file("kauers/k000000011c4745e-333-23-mod0.exp").read_bytes())
    code, out, err = _run(capsys, "import", str(renamed), "--shape", "3,3,3", "--mod", "3")
    assert code == 0 and "algorithm " in out and "<3,3,3;23>" in out, err


def test_transform_drops_a_product_no_output_uses(capsys, tmp_path):
    """Strassen with an unused M8 = A11*B11: `--to knm` failed with "product M8 has a zero factor", a
    product the permuted scheme would have had, not one the user wrote."""
    source = tmp_path / "unused.bl"
    source.write_text((ROOT / "algorithms" / "strassen.bl").read_text().replace("<2,2,2;7>", "<2,2,2;8>").replace(
        "  C11 = M1 + M4 - M5 + M7", "  M8 = A11 * B11\n  C11 = M1 + M4 - M5 + M7"))
    code, out, err = _run(capsys, "transform", str(source), "--to", "knm")
    assert code == 0 and "<2,2,2;7>" in out
    assert "note: dropped M8, which no output uses (a permutation would turn its zero W column into a zero factor)" in err


@pytest.mark.parametrize("options, message", [
    (("--levels", "1", "--breadth", "2"), "breadth must be between 0 and the 1 level(s) asked for, not 2"),
    (("--leaf", "ozaki", "--moduli", "25"), "moduli must be a whole number from 1 to 20, not 25"),
    (("--moduli", "3"), "moduli set the ozaki leaf's emulation, and the cublas leaf has none"),
    (("--leaf", "fused", "--levels", "2", "--breadth", "1"), "breadth-first levels multiply single operands"),
])
def test_contradictory_lowering_options_are_usage_errors(capsys, tmp_path, options, message):
    """They exited 1 without a usage line, where an out-of-range --levels exits 2 with one."""
    code, _, err = _run(capsys, "compile", "strassen", "-o", str(tmp_path / "x"), *options)
    assert code == 2 and err.startswith("usage: bilinear compile") and f"bilinear compile: error: {message}" in err


def test_contradictory_lowering_options_are_said_before_the_scheme_and_the_folder(capsys, tmp_path):
    """They were checked after loading, verifying and checking -o: a folder holding a library said
    "refusing to overwrite" (exit 1) and the usage error came only with --force, a scheme that does
    not verify said so (exit 1), and an 11x11x11 scheme was read and verified for 6 s first."""
    assert _run(capsys, "compile", "strassen", "-o", str(tmp_path / "x"))[0] == 0
    usage = "bilinear compile: error: moduli set the ozaki leaf's emulation, and the cublas leaf has none"
    for source in ("strassen", str(FIXTURES / "msmes_thesis_printed.bl")):
        code, _, err = _run(capsys, "compile", source, "-o", str(tmp_path / "x"), "--moduli", "3")
        assert code == 2 and usage in err, err


@pytest.mark.parametrize("scheme, given", [("2x2x2_7_Winograd", "_L.slp"), ("3x4x7_63_rational", "-CoB_R.sms")],
                         ids=["programs", "alternative-basis"])
def test_compile_names_every_plinopt_file_it_read_as_a_source(capsys, tmp_path, scheme, given):
    """The manifest's source named the one file given, where the library is built from the scheme's _L,
    _R and _P (each .slp checked against the .sms beside it; a change of basis read with its -ALT
    scheme): every one is named now, the one given first."""
    files = sorted(scheme_file(f"plinopt/{scheme}{given}").parent.glob(f"{scheme}*"))
    for path in files:
        (tmp_path / path.name).write_bytes(path.read_bytes())
    code, _, err = _run(capsys, "compile", tmp_path / f"{scheme}{given}", "-o", str(tmp_path / "out"))
    assert code == 0, err
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    read = [str(tmp_path / path.name) for path in files if given.endswith(".slp") or path.suffix == ".sms"]
    assert manifest["source"][0] == str(tmp_path / f"{scheme}{given}")
    assert sorted(manifest["source"]) == sorted(read)


def test_a_scheme_named_modulo_p_that_holds_over_q_compiles(capsys, tmp_path):
    """Strassen in Kauers's form under a ``mod2`` name: verify said "verified over Q (and so modulo 2)",
    compile and run that it was "valid only modulo 2"."""

    renamed = tmp_path / "v333-mod2.exp"
    renamed.write_bytes(scheme_file("kauers/k000000011c4745e-333-23-mod0.exp").read_bytes())
    code, out, err = _run(capsys, "verify", str(renamed), "--shape", "3,3,3")
    assert code == 0 and "verified over Q (and so modulo 2)" in out, out + err
    code, out, err = _run(capsys, "run", str(renamed), "--shape", "3,3,3", "-n", "30", "--backend", "numpy")
    assert code == 0 and "relative error" in out, out + err


def test_a_report_format_hint_names_only_real_input_formats(capsys):
    """`--format markdown` was told to say `--from markdown`, a format that does not exist."""
    code, _, err = _run(capsys, "verify", STRASSEN, "--format", "markdown")
    assert code == 2 and "not 'markdown'" in err and "say --from" not in err
    code, _, err = _run(capsys, "verify", STRASSEN, "--format", "kauers")
    assert code == 2 and "say --from kauers" in err


def test_optimize_takes_products_named_like_its_own_sums(capsys, tmp_path):
    """A product named X__1 left none of the prefixes X, X_, X__ free: a StopIteration traceback."""

    source = tmp_path / "xname.bl"
    source.write_text((ROOT / "algorithms" / "strassen.bl").read_text().replace("M1", "X__1"))
    code, out, err = _run(capsys, "optimize", str(source), "--seeds", "1", "-o", str(tmp_path / "out.bl"))
    assert code == 0, err
    assert bilinear.verify(str(tmp_path / "out.bl")).ok


def test_optimize_takes_a_product_whose_long_name_begins_with_its_prefix(capsys, tmp_path):
    """A product named X, 253 underscores and a (255 characters, legal) grew the prefix X_..._ to 255
    characters, and the sums named after it were refused as too long (a hunt): only a name the new sums
    could take (the prefix, a letter, digits) keeps the prefix from being used."""

    source = tmp_path / "long.bl"
    source.write_text((ROOT / "algorithms" / "winograd.bl").read_text().replace("P1", "X" + "_" * 253 + "a"))
    assert bilinear.verify(str(source)).ok
    code, _, err = _run(capsys, "optimize", str(source), "--seeds", "0", "-o", str(tmp_path / "out.bl"))
    assert code == 0, err
    assert bilinear.verify(str(tmp_path / "out.bl")).ok


@pytest.mark.parametrize("name", ["_c___z", "_c1"])
def test_optimize_takes_products_named_like_its_scaled_copies(capsys, tmp_path, name):
    """The scaled copies' prefix was the first of _c, _c_, _c__, _c___ no name began with: a product
    named _c___z left none, a StopIteration traceback (found beside the hunt above)."""

    source = tmp_path / "c.bl"
    source.write_text(re.sub(r"\bP1\b", name, (ROOT / "algorithms" / "winograd.bl").read_text()))
    code, _, err = _run(capsys, "optimize", str(source), "--seeds", "0", "-o", str(tmp_path / "out.bl"))
    assert code == 0, err
    assert bilinear.verify(str(tmp_path / "out.bl")).ok


def test_optimize_says_it_writes_no_schedule(capsys, tmp_path):
    """`optimize msmes` wrote strassen_cse under MSMES's header and dropped the schedule silently."""
    code, _, err = _run(capsys, "optimize", "msmes", "--seeds", "1", "-o", str(tmp_path / "m.bl"))
    assert code == 0 and "note: msmes is a schedule; optimize rewrites its algorithm strassen and writes no schedule" in err
    code, _, err = _run(capsys, "optimize", "strassen", "--seeds", "1", "-o", str(tmp_path / "s.bl"))
    assert code == 0 and "schedule" not in err


def test_optimize_says_when_search_options_have_nothing_to_work_on(capsys, tmp_path):
    """--polish, --chains and --starts were ignored without a word where no side is small, and
    --chains without --polish always."""
    code, _, err = _run(capsys, "optimize", "strassen", "--seeds", "1", "--chains", "3", "-o", str(tmp_path / "a.bl"))
    assert code == 0 and "note: --chains applies with --polish" in err
    code, _, err = _run(capsys, "optimize", "strassen", "--seeds", "1", "--polish", "1", "-o", str(tmp_path / "b.bl"))
    assert code == 0 and "note:" not in err
    # every start draws the same candidate with --seeds 0: N starts took N times as long for one result
    code, _, err = _run(capsys, "optimize", "strassen", "--seeds", "0", "--starts", "3", "-o", str(tmp_path / "c.bl"))
    assert code == 0 and ("note: --starts draws seeds, and --seeds 0 draws none: every start is the same "
                          "greedy elimination; give --seeds") in err, err
    # A=1 is every side's default one start: nothing given (it had drawn the note above; a hunt)
    code, _, err = _run(capsys, "optimize", "strassen", "--seeds", "0", "--starts", "A=1", "-o", str(tmp_path / "d.bl"))
    assert code == 0 and "note:" not in err, err


@pytest.mark.parametrize("command", [("import", STRASSEN), ("transform", STRASSEN, "--to", "nkm"),
                                     ("product", STRASSEN, STRASSEN), ("optimize", STRASSEN, "--seeds", "0"),
                                     ("inplace", STRASSEN, "--tries", "1", "--steps", "1")])
def test_force_without_output_is_said(capsys, command):
    """--force without -o was ignored without a word (a hunt)."""
    code, out, err = _run(capsys, *command, "--force")
    assert code == 0 and out.startswith(("algorithm", "#", "schedule"))
    assert "note: --force replaces an -o file that exists; without -o the .bl text goes to standard output" in err


def test_optimize_says_when_no_side_is_small(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr("bilinear.optimize.small_sides", lambda algorithm: [])  # as for AlphaTensor's <10,10,10>
    code, _, err = _run(capsys, "optimize", "strassen", "--seeds", "1", "--polish", "5", "--starts", "2",
                        "-o", str(tmp_path / "c.bl"))
    assert code == 0 and "note: --polish, --starts apply to small sides only, and none of strassen's is small" in err


def test_optimize_says_when_starts_names_a_side_that_is_not_small(capsys, tmp_path, monkeypatch):
    """On a <1,2,40;80> whose B side alone is not small, --starts B=3 was dropped without a word (a hunt)."""
    monkeypatch.setattr("bilinear.optimize.small_sides", lambda algorithm: ["A", "C"])  # the note reads it
    code, _, err = _run(capsys, "optimize", "strassen", "--seeds", "1", "--starts", "B=3,C=2",
                        "-o", str(tmp_path / "c.bl"))
    assert code == 0 and ("note: --starts B=3 names a side that is not small; it takes the greedy elimination "
                          "alone") in err, err
    code, _, err = _run(capsys, "optimize", "strassen", "--seeds", "1", "--starts", "C=2", "-o", str(tmp_path / "d.bl"))
    assert code == 0 and "note:" not in err, err


def test_allow_pickle_is_refused_where_there_is_nothing_to_unpickle(capsys):
    code, _, err = _run(capsys, "verify", STRASSEN, "--allow-pickle")
    assert code == 1 and "--allow-pickle (allow_pickle=) applies to catalogue schemes, not to .bl files" in err

    code, _, err = _run(capsys, "verify", str(scheme_file("fast-matmul/strassen")), "--allow-pickle")
    assert code == 1 and ("--allow-pickle (allow_pickle=) lets an AlphaTensor .npz archive's pickled entries load; "
                          "strassen is a fast-matmul file, which has none") in err


def test_mod_p_that_divides_a_denominator_says_so(capsys, tmp_path):
    """It said the scheme was "valid only modulo 13", of a scheme valid over Q and undefined modulo 13."""

    path = scheme_file("plinopt/2x2x2_7_DPS-integral-12.0662_L.sms")
    code, _, err = _run(capsys, "optimize", str(path), "--mod", "13", "-o", str(tmp_path / "x.bl"))
    assert code == 1 and ("does not hold modulo 13: the coefficient 1857786/6449885 has no value modulo 13: its "
                          "denominator is not invertible (written 1857786/6449885·A22 in M2's A factor)") in err
    assert "valid only modulo" not in err


def _first_product_scaled(uvw: str, factors) -> str:
    """A fast-matmul text with each block's first column (product 1) multiplied by its factor."""
    blocks = []
    for block, factor in zip(uvw.split("#\n"), factors):
        rows = (row.split(" ", 1) for row in block.splitlines())
        blocks.append("".join(f"{Fraction(first) * factor} {rest}\n" for first, rest in rows))
    return "#\n".join(blocks)


HALF_STRASSEN = "# Strassen, product 1 doubled on the A side and halved in C\n" + _first_product_scaled(
    STRASSEN_UVW, (2, 1, Fraction(1, 2)))


def test_a_coefficient_with_no_value_modulo_p_is_shown_where_it_is_written(capsys, tmp_path):
    """It was located at the scheme's first line (a comment here; with PLinOpt, another file's
    header): now at the first coefficient written with a denominator p divides."""
    path = tmp_path / "half"
    path.write_text(HALF_STRASSEN)
    code, out, _ = _run(capsys, "verify", str(path), "--from", "fast-matmul", "--mod", "2")
    assert code == 1
    assert out.startswith(f"{path}:12:1: error: the coefficient 1/2 has no value modulo 2: its denominator is not "
                          "invertible (written 1/2·M1 in C11 = ...)\n   12 | 1/2 0 0 1 -1 0 1\n")


def test_the_coefficient_with_no_value_modulo_p_is_the_one_shown(capsys, tmp_path):
    """It named the smallest such coefficient of the expanded scheme (1/3, product 2's) beside another that is
    written (-2/3·M1), as if they were one (a hunt)."""
    path = tmp_path / "s111-2.exp"
    path.write_text("(a11)*(b11)*(-6*c11)/9\n(5*a11)*(b11)*(c11)/3\n")
    code, out, _ = _run(capsys, "verify", str(path), "--mod", "3")
    assert code == 1
    assert out.startswith(f"{path}:1:17: error: the coefficient -2/3 has no value modulo 3: its denominator is not "
                          "invertible (written -2/3·M1 in C11 = ...)\n")


def test_a_scheme_its_name_claims_modulo_p_that_has_no_value_there_but_holds_over_q_is_read(capsys, tmp_path):
    """A PLinOpt export named ..._mod2 of a scheme with a coefficient 1/2 did not import again: the name's
    claim failed, and verify's report said that the file `bilinear import` writes of it verifies (a hunt).
    (Export now refuses such a name; the files are renamed here, as a catalogue might name them.)"""
    half = tmp_path / "half"
    half.write_text(HALF_STRASSEN)
    code, _, err = _run(capsys, "export", str(half), "--from", "fast-matmul", "--to", "plinopt", "-o",
                        str(tmp_path / "half"))
    assert code == 0, err
    for part in "LRP":
        (tmp_path / f"2x2x2_7_half_{part}.sms").rename(tmp_path / f"2x2x2_7_half_mod2_{part}.sms")
    left = tmp_path / "2x2x2_7_half_mod2_L.sms"
    code, out, _ = _run(capsys, "verify", str(left))
    assert code == 1 and "over Q it is an exact algorithm: the .bl file `bilinear import` writes of it verifies" in out
    code, _, err = _run(capsys, "import", str(left), "-o", str(tmp_path / "half.bl"))
    assert code == 0, err
    assert ("note: plinopt_2x2x2_7_half_mod2 is claimed modulo 2 (the name 2x2x2_7_half_mod2 says so), where it has "
            "no value (the coefficient 1/2 has no value modulo 2: its denominator is not invertible (written 1/2·M1 in "
            "C11 = ...)); it holds over Q, and is read as the exact algorithm it is") in err
    assert bilinear.verify(tmp_path / "half.bl").ok


def _halves_npz(path: Path) -> Path:
    import numpy as np

    np.savez(path, **{"1,1,1": np.array([[[0.5, 0.5]], [[1.0, 1.0]], [[1.0, 1.0]]])})
    return path


@pytest.mark.parametrize("name, text", [
    ("111-x.mod3.exp", "(a11)*(b11)*(2*c11)/3\n(a11)*(b11)*(c11)/3\n"),
    ("111-x.mod2.m", "{{{{1/2}}, {{1}}, {{1}}}, {{{1/2}}, {{1}}, {{1}}}}"),
    ("1x1x1_m2_Z2.json", '{"n": [1, 1, 1], "m": 2, "z2": true, "u": [["1/2"], ["1/2"]], "v": [[1], [1]], "w": [[1], [1]]}'),
    ("halves_f2.npz", None),
])
def test_every_reader_reads_a_modular_claim_with_no_value_there_as_the_exact_algorithm(capsys, tmp_path, name, text):
    """The Kauers, Mathematica and Perminov readers, and the .npz reader for a _f2 archive, refused such a file
    themselves ("a scheme valid modulo 3 has no coefficient without a value modulo 3 ..."), before the claim
    could be weighed as it is for PLinOpt files (a hunt)."""
    path = _halves_npz(tmp_path / name) if text is None else tmp_path / name
    if text is not None:
        path.write_text(text)
    code, out, _ = _run(capsys, "verify", str(path))
    assert code == 1 and "over Q it is an exact algorithm: the .bl file `bilinear import` writes of it verifies" in out
    code, _, err = _run(capsys, "import", str(path), "-o", str(tmp_path / "exact.bl"))
    assert code == 0 and "it holds over Q, and is read as the exact algorithm it is" in err, err
    assert "()" not in err, err  # a reader that gives no reason for its claim had printed "modulo 2 ()" (a hunt)
    assert bilinear.verify(tmp_path / "exact.bl").ok


def test_mod_given_is_the_users_claim_whatever_the_file_name_says(tmp_path):
    """--mod 2 on a file whose name also says mod2 was dropped for the name's claim: where the scheme has no
    value modulo 2 but holds over Q, it was read as the exact algorithm with a note, as if --mod had not been
    given, where an unnamed copy is refused as README says (a hunt)."""
    from bilinear.diagnostics import BilinearError

    text = "(a11)*(b11)*(c11/2)\n(a11)*(b11)*(c11/2)\n"
    for name in ("h-111-2.exp", "h-111-2-mod2.exp"):
        (tmp_path / name).write_text(text)
        with pytest.raises(BilinearError, match="does not hold modulo 2"):
            bilinear.load(tmp_path / name, modulus=2)
    assert bilinear.load(tmp_path / "h-111-2-mod2.exp").main.name  # without --mod: the name's claim, weighed


def test_a_modular_scheme_with_no_value_there_counts_its_blocks_wrong_over_q(capsys, tmp_path):
    """Its JSON said "wrong_over_q": 0 beside "exact_over_q": false: with a coefficient of no value modulo p
    the blocks wrong over Q had not been looked for (a hunt)."""
    path = tmp_path / "w-222-7-mod2.exp"
    path.write_text("(a11/2+a22)*(b11+b22)*(c11+c22)\n(a21+a22)*(b11)*(c12-c22)\n(a11)*(b12-b22)*(c21+c22)\n"
                    "(a22)*(b21-b11)*(c11+c12)\n(a11+a12)*(b22)*(-c11+c21)\n(a21-a11)*(b11+b12)*(c22)\n"
                    "(a12-a22)*(b21+b22)*(c11)\n")
    code, out, _ = _run(capsys, "verify", str(path), "--format", "json")
    (entry,) = json.loads(out)["entries"]
    assert code == 1 and (entry["holds_modulo"], entry["wrong_over_q"], entry["exact_over_q"]) == (False, 2, False)
    assert [e["message"].split(":")[0] for e in entry["errors"]] == [
        "the coefficient 1/2 has no value modulo 2", "C11 is wrong over Q too", "C22 is wrong over Q too"]


def test_product_says_how_it_read_second_as_it_does_file(capsys, tmp_path):
    """A SECOND claimed modulo 2 that holds over Q was read as the exact algorithm without the note FILE gets (a
    hunt)."""
    code, _, err = _run(capsys, "export", STRASSEN, "--to", "plinopt", "-o", str(tmp_path / "s"))
    assert code == 0, err
    for part in "LRP":
        (tmp_path / f"2x2x2_7_s_{part}.sms").rename(tmp_path / f"2x2x2_7_s_mod2_{part}.sms")
    claimed = tmp_path / "2x2x2_7_s_mod2_L.sms"
    for order in ((str(claimed), STRASSEN), (STRASSEN, str(claimed))):
        code, _, err = _run(capsys, "product", *order, "-o", str(tmp_path / "p.bl"), "--force")
        assert code == 0 and "note: plinopt_2x2x2_7_s_mod2 is claimed modulo 2 (the name 2x2x2_7_s_mod2 says so) and " \
                             "holds over Q (and so modulo 2)" in err, err


def test_mod_p_that_divides_a_denominator_of_a_scheme_exact_over_q_says_to_leave_it_out(capsys, tmp_path):
    path = tmp_path / "s111-2.exp"
    path.write_text("(a11)*(b11)*(-6*c11)/9\n(5*a11)*(b11)*(c11)/3\n")
    code, _, err = _run(capsys, "import", str(path), "--mod", "3", "-o", str(tmp_path / "x.bl"))
    assert code == 1 and "note: it holds over Q: without --mod it is read as the exact algorithm it is" in err
    assert not (tmp_path / "x.bl").exists()


def test_a_plinopt_coefficient_with_no_value_modulo_p_is_shown_in_its_own_file(capsys):
    path = scheme_file("plinopt/3x4x7_63_rational-CoB_L.sms")
    code, out, _ = _run(capsys, "verify", str(path), "--mod", "2")
    assert code == 1 and "3x4x7_63_rational-CoB_R.sms:2:1: error: the coefficient 1/2 has no value modulo 2" in out


def test_verify_says_where_n_and_dtype_change_nothing(capsys):
    """--dtype counts a schedule's bytes and -n sizes an algorithm's counts: a report with neither
    took them without a word (README: "No option is ignored without a word")."""
    code, out, err = _run(capsys, "verify", "strassen", "--dtype", "float32")
    assert code == 0 and err == ("bilinear verify: --dtype float32 changes nothing here: it counts a schedule's bytes, "
                                 "and strassen.bl has no schedule\n")
    assert out == _run(capsys, "verify", "strassen")[1]
    assert _run(capsys, "verify", "msmes", "--dtype", "float32", "-n", "4096")[2] == ""  # its schedule's bytes
    assert _run(capsys, "verify", "strassen", "-n", "4096")[2] == ""  # its GFLOP at n


def test_verify_of_a_modular_scheme_says_n_changes_nothing(capsys):
    path = scheme_file("kauers/378-ffdb2d875f.mod2.exp")
    err = _run(capsys, "verify", str(path), "-n", "17")[2]
    assert "bilinear verify: -n 17 changes nothing here: the report of 378-ffdb2d875f.mod2.exp counts no sizes\n" in err


def test_a_written_header_names_its_source_and_no_absolute_path(capsys, tmp_path):
    """A LICENSE three folders up was written as "Licence of the source: /abs/path/LICENSE (...)", and the
    `from NAME` line went missing whenever one was found."""

    (tmp_path / "LICENSE").write_text("Some licence\n")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    source = deep / "strassen"
    source.write_bytes(scheme_file("fast-matmul/strassen").read_bytes())
    out = tmp_path / "s.bl"
    code, _, err = _run(capsys, "import", str(source), "-o", str(out))
    text = out.read_text()
    assert code == 0 and "# from strassen" in text, err + text
    assert "# Licence file found near the source: ../../LICENSE (Some licence)\n" in text


@pytest.mark.parametrize("unreadable", ["folder", "licence"])
def test_a_licence_search_passes_over_what_it_cannot_read(capsys, tmp_path, monkeypatch, unreadable):
    """A folder above the source that could not be listed, or a licence file that could not be read,
    ended import, export, transform, product and optimize ("…: Permission denied") on a file that read
    well: the search is an extra the user never asked for (a hunt; as root, a permission is a patch)."""

    (tmp_path / "LICENSE").write_text("Some licence\n")
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "COPYING").write_text("Another licence\n")
    source = tmp_path / "a" / "b" / "strassen"
    source.write_bytes(scheme_file("fast-matmul/strassen").read_bytes())
    denied = {"folder": tmp_path / "a", "licence": tmp_path / "a" / "COPYING"}[unreadable]
    method = {"folder": "iterdir", "licence": "read_text"}[unreadable]
    original = getattr(Path, method)

    def refused(self, *args, **kwargs):
        if self == denied:
            raise PermissionError(13, "Permission denied", str(self))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Path, method, refused)
    out = tmp_path / "s.bl"
    code, _, err = _run(capsys, "import", str(source), "-o", str(out))
    assert code == 0 and "Permission denied" not in err, err
    assert "# Licence file found near the source: ../../LICENSE (Some licence)\n" in out.read_text()


def test_optimize_also_with_an_archive_says_how_to_give_it(capsys, tmp_path):
    """`--also factorizations_r.npz` said "choose one with --key" though --key was given (for FILE)."""

    archive = str(scheme_file("alphatensor/factorizations_r.npz"))
    code, _, err = _run(capsys, "optimize", archive, "--key", "2,2,2", "--also", archive, "-o", str(tmp_path / "x.bl"))
    assert code == 1 and f"--also {archive} reads the file as detected, with no reading options" in err


def test_dash_as_output_is_a_usage_error(capsys):
    code, _, err = _run(capsys, "optimize", "strassen", "-o", "-")
    assert code == 2 and "'-' names no file here: give a file name (import, transform, product and optimize" in err


def test_optimize_says_what_it_starts_and_how_long_it_took(capsys, tmp_path):
    """A <2,5,7;55> took 372 s with nothing printed until the end."""
    code, out, err = _run(capsys, "optimize", "strassen", "--seeds", "1")
    assert code == 0 and out.startswith("#") and "optimizing" not in out
    assert err.startswith("optimizing strassen: 7 products, sides A B C small enough") and "optimized in " in err


def test_optimize_of_a_one_product_scheme_counts_it_in_the_singular(capsys, tmp_path):
    """It said "optimizing one: 1 products"."""
    scheme = tmp_path / "one.bl"
    scheme.write_text("algorithm one <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n")
    code, _, err = _run(capsys, "optimize", str(scheme), "--seeds", "1", "-o", str(tmp_path / "out.bl"))
    assert code == 0 and err.startswith("optimizing one: 1 product, sides A B C small enough")


def test_optimize_of_a_large_scheme_says_that_the_seeded_orders_take_minutes(capsys, monkeypatch):
    """AlphaTensor's ⟨11,12,12;990⟩ ran past ten minutes after its first line with nothing more said, where --seeds 0
    takes under a minute (a hunt).  Strassen's sides hold 12 terms each."""
    from bilinear import compose_cli

    monkeypatch.setattr(compose_cli, "LARGE_OPTIMIZE", 12)
    code, _, err = _run(capsys, "optimize", "strassen", "--seeds", "2")
    assert code == 0 and ("note: strassen's seeded orders (2 a side) take minutes on a side of 12 terms "
                          "(⟨11,11,11;896⟩'s 13,206: 3.8 min with 16); --seeds 0 runs the greedy order alone "
                          "(41 s there, for 2,610 additions on that side against 2,320)") in err
    code, _, err = _run(capsys, "optimize", "strassen", "--seeds", "0")
    assert code == 0 and "seeded orders" not in err
    monkeypatch.setattr(compose_cli, "LARGE_OPTIMIZE", 13)
    code, _, err = _run(capsys, "optimize", "strassen", "--seeds", "2")
    assert code == 0 and "seeded orders" not in err


@pytest.mark.parametrize("levels, breadth, k", [("1", "1", 16), ("2", "2", 8)])
def test_too_few_moduli_name_the_leaves_k_below_breadth_first_levels(capsys, levels, breadth, k):
    """It named the k below the depth-first levels only (32 where the leaves' k was 16 or 8)."""
    code, _, err = _run(capsys, "run", STRASSEN, "--backend", "numpy", "--leaf", "ozaki", "-n", "32", "--levels", levels,
                        "--breadth", breadth, "--moduli", "6", "--repeat", "1")
    assert code == 1 and f"at the leaves' k = {k};" in err


def test_scaling_max_with_another_leaf_is_refused_as_norm_is(capsys):
    """`--scaling max` with the cublas leaf was accepted without a word (max is the default)."""
    code, _, err = _run(capsys, "run", STRASSEN, "--backend", "numpy", "-n", "8", "--scaling", "max")
    assert code == 2 and "scaling set the ozaki leaf's emulation, and the cublas leaf has none" in err
    code, _, err = _run(capsys, "run", STRASSEN, "--backend", "numpy", "-n", "8", "--leaf", "ozaki", "--scaling", "max",
                        "--repeat", "1")
    assert code == 0, err


def test_an_output_ending_in_a_slash_names_a_folder(capsys, tmp_path):
    """`-o newdir/` wrote a file named newdir (transform) or files beside it (export --to plinopt)."""
    code, _, err = _run(capsys, "transform", "strassen", "--to", "nkm", "-o", f"{tmp_path}/newdir/")
    assert code == 2 and not (tmp_path / "newdir").exists()
    # a .bl writer takes no folder, made or not (it said "and there is none", then "is not a regular file")
    assert f"{tmp_path}/newdir/ names a folder (it ends with /), and .bl text goes into one file: name it " \
           f"({tmp_path}/newdir/NAME.bl)" in err, err
    (tmp_path / "made").mkdir()
    code, _, err = _run(capsys, "inplace", "strassen", "-o", f"{tmp_path}/made/")
    assert code == 2 and f"({tmp_path}/made/NAME.bl)" in err, err
    (tmp_path / "there").mkdir()
    code, _, err = _run(capsys, "export", "strassen", "--to", "plinopt", "-o", f"{tmp_path}/there/")
    assert code == 0 and len(list((tmp_path / "there").glob("*.sms"))) == 3, err
    # a file there: not "there is none" (a hunt's report)
    (tmp_path / "afile").write_text("kept\n")
    code, _, err = _run(capsys, "export", "strassen", "--to", "plinopt", "-o", f"{tmp_path}/afile/")
    assert code == 2 and f"{tmp_path}/afile/ names a folder (it ends with /), and {tmp_path}/afile is not a folder" in err
    assert (tmp_path / "afile").read_text() == "kept\n"


@pytest.mark.parametrize("to, name", [("fast-matmul", "NAME"), ("alphatensor", "NAME.npz")])
def test_a_one_file_export_into_a_folder_says_to_name_the_file(capsys, tmp_path, to, name):
    """-o zz/ said "there is none", as if making the folder would do, and an existing folder "exists and is not a
    regular file", with status 1 (a hunt): fast-matmul and alphatensor write one file, which -o names.  A name
    ending with / is a usage error; an existing folder named without it is what is on disk, status 1 as an output
    that exists (a hunt)."""
    (tmp_path / "made").mkdir()
    for given in (f"{tmp_path}/none/", f"{tmp_path}/made/", f"{tmp_path}/made"):
        code, _, err = _run(capsys, "export", "strassen", "--to", to, "-o", given)
        folder = given.rstrip("/")
        assert code == (2 if given.endswith("/") else 1) and (f"-o {given}: export --to {to} writes one file, and {folder} is a folder (or names one, "
                              f"ending with /): name the file ({folder}/{name})") in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["made"] and not any((tmp_path / "made").iterdir())


def test_export_checks_its_file_before_work_and_says_how_to_read_it_back(capsys, tmp_path):
    code, _, err = _run(capsys, "export", "strassen", "--to", "fast-matmul", "-o", str(tmp_path / "nodir" / "x.fm"))
    assert code == 1 and "nodir does not exist" in err
    code, _, err = _run(capsys, "export", "strassen", "--to", "fast-matmul", "-o", str(tmp_path / "rat.txt"))
    assert code == 0 and "note: .txt is the suffix of perminov-text files: read it back with --from fast-matmul" in err
    code, _, _ = _run(capsys, "verify", str(tmp_path / "rat.txt"), "--from", "fast-matmul")
    assert code == 0


def test_derived_headers_name_their_sources_without_this_machines_paths(capsys, tmp_path):
    out = tmp_path / "t.bl"
    assert _run(capsys, "transform", "grey234", "--to", "kmn", "-o", str(out))[0] == 0
    # (its copied comments may name the catalogue's own relative paths, codegen/algorithms/...)
    assert "from grey234.bl." in out.read_text() and str(ROOT) not in out.read_text()


def test_algorithm_naming_a_schedule_says_so(capsys, tmp_path):
    code, _, err = _run(capsys, "transform", "msmes", "--algorithm", "msmes", "--to", "nkm", "-o", str(tmp_path / "x.bl"))
    assert code == 1 and "msmes is a schedule (for strassen); --algorithm names an algorithm: --algorithm strassen" in err


@pytest.mark.parametrize("relative, options, says", [
    ("plinopt/3x4x7_63_rational-ALT_L.sms", (), "is an alternative-basis scheme"),
    ("kauers/k000000011c4745e-333-23-mod0.exp", ("--mod", "7"), "is claimed modulo 7 (given with --mod 7) and holds over Q"),
])
def test_compiles_report_says_what_verify_says_of_a_catalogue_scheme(capsys, tmp_path, relative, options, says):
    """compile's report.* left out verify's note on an alternative basis and on a scheme claimed modulo p."""
    path = scheme_file(relative)
    code, _, err = _run(capsys, "compile", path, *options, "-o", str(tmp_path / "out"))
    assert code == 0, err
    for report in ("report.txt", "report.md", "report.json"):
        assert says in (tmp_path / "out" / report).read_text(), report


def test_a_coefficient_past_float32_leaves_the_float32_function_out(capsys, tmp_path):
    """compile (float64 asked) refused a scheme that float64 runs: the float32 function could not be
    generated, and the message said "cannot be run in floating point"."""
    big, small = "1" + "0" * 39, "1/1" + "0" * 39
    text = (ROOT / "algorithms" / "strassen.bl").read_text()
    text = text.replace("M1 = (A11 + A22) * (B11 + B22)", f"M1 = ({big}*A11 + {big}*A22) * (B11 + B22)")
    text = text.replace("C11 = M1 + M4", f"C11 = {small}*M1 + M4").replace("C22 = M1 - M2", f"C22 = {small}*M1 - M2")
    path = tmp_path / "big.bl"
    path.write_text(text)
    code, _, err = _run(capsys, "compile", path, "-o", str(tmp_path / "out"))
    assert code == 0 and "note: no float32 function: " in err and "it cannot be run in float32" in err, err
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["host"]["functions"] == {"float64": "strassen_dgemm"} and "left_out" in manifest["host"]
    header = (tmp_path / "out" / "strassen.h").read_text()
    assert "strassen_sgemm" not in header
    # the header said nothing of it, as compile --help says it does: a reader of it alone met an undeclared name
    assert "// Left out: no float32 function: " in header and "beyond the float32 range" in header
    # --dtype (the report's byte counts) float32 refused the library float64 had written
    code, _, err = _run(capsys, "compile", path, "--dtype", "float32", "-o", str(tmp_path / "f32"))
    assert code == 0 and "note: no float32 function: " in err, err
    assert json.loads((tmp_path / "f32" / "manifest.json").read_text())["host"]["functions"] == {"float64": "strassen_dgemm"}


def _lopsided(tmp_path, exponent: int) -> Path:
    """<1,2,1;3> with coefficients 10^±exponent, each in range as written, whose products through
    the lowering are 10^(2·exponent) (found by an audit)."""
    e = "1" + "0" * exponent
    path = tmp_path / f"lopsided{exponent}.bl"
    path.write_text(f"algorithm lopsided <1,2,1;3>:\n  M1 = (A11/{e} + {e}*A12) * B11\n  M2 = {e}*A12 * B11\n"
                    f"  M3 = A12 * B21\n  C11 = {e}*M1 - {e}*M2 + M3\n")
    return path


@pytest.mark.parametrize("command", [("run", "-n", "8", "--backend", "numpy"), ("compile",), ("compile", "--leaf", "fused")],
                         ids=["run", "compile", "compile-fused"])
def test_coefficients_that_multiply_past_the_range_are_refused_not_a_traceback(capsys, tmp_path, command):
    """Each coefficient 10^±300 is in float64's range, so the scheme verifies; the leaf product's
    10^300 · 10^300 raised OverflowError in float() with a traceback (run, compile, both leaves)."""
    path = _lopsided(tmp_path, 300)
    assert _run(capsys, "verify", path)[0] == 0
    out = ("-o", str(tmp_path / "out")) if command[0] == "compile" else ()
    code, _, err = _run(capsys, *command[:1], path, *command[1:], *out)
    assert code == 1 and "Traceback" not in err, err
    assert "multiplies its product by a coefficient of about 1e600, beyond the float64 range (2.23e-308 to 1.8e+308 in " \
           "magnitude); it cannot be run in float64" in err, err


def test_a_fused_kernel_past_float32_leaves_that_function_out(capsys, tmp_path):
    """10^±20: float32 holds each, and the fused kernel's 10^40 was written as real(1e+40), an
    infinity, without a word; now the float32 function is left out, as for a coefficient written
    past the range, and float64's is written."""
    path = _lopsided(tmp_path, 20)
    code, _, err = _run(capsys, "compile", path, "--leaf", "fused", "--dtype", "float32", "-o", str(tmp_path / "out"))
    assert code == 0 and "note: no float32 function: " in err and "a coefficient of about 1e40, beyond the float32 range" in err
    manifest = (tmp_path / "out" / "manifest.json").read_text()
    assert json.loads(manifest)["host"]["functions"] == {"float64": "lopsided_dgemm"}
    # the report counts in the dtype of the library's main function, as the manifest says (it said float32)
    report = (tmp_path / "out" / "report.json").read_text()
    assert re.findall(r'"dtype": "(\w+)"', manifest) == ["float64"]
    assert set(re.findall(r'"dtype": "(\w+)"', report)) == {"float64"}  # the verification's and the library's
    assert "the library's main function is float64, and report.txt counts in it" in err


def test_a_fused_kernels_normalized_sum_past_the_range_is_refused(capsys, tmp_path):
    """Every coefficient of these leaf problems is in float64's range (10^-200, 10^200, 10^200/2), but the
    fused kernel factors A's first coefficient out of the sum 10^-200·A11 + 10^200·A12, and 10^400 is
    not.  cuBLAS leaves form the sum element-wise and compile."""
    e = "1" + "0" * 200
    path = tmp_path / "ratio.bl"
    path.write_text(f"algorithm ratio <1,2,1;3>:\n  M1 = (A11/{e} + {e}*A12) * B11\n  M2 = ({e}*A12 - A11/{e}) * B11\n"
                    f"  M3 = A12 * B21\n  C11 = {e}/2*M1 - {e}/2*M2 + M3\n")
    assert _run(capsys, "verify", path)[0] == 0
    code, _, err = _run(capsys, "compile", path, "--leaf", "fused", "-o", str(tmp_path / "fused"))
    assert code == 1 and "a fused product kernel 1 level(s) down multiplies by a coefficient of about 1e400, beyond the " \
           "float64 range" in err, err
    assert _run(capsys, "compile", path, "-o", str(tmp_path / "cublas"))[0] == 0


def test_breadth_first_levels_whose_kronecker_power_passes_the_range_are_refused(capsys, tmp_path):
    """M1 = (10^200·A11)·B11, C11 = M1/10^200: two breadth-first levels multiply A by 10^400 and the
    products by 10^-400; depth-first, each leaf's coefficients fold to 1, and it runs."""
    e = "1" + "0" * 200
    path = tmp_path / "kron.bl"
    path.write_text(f"algorithm kron <1,1,1;1>:\n  M1 = ({e}*A11) * B11\n  C11 = M1/{e}\n")
    code, _, err = _run(capsys, "run", path, "-n", "8", "--levels", "2", "--breadth", "2", "--backend", "numpy")
    assert code == 1 and "kron.bl:1:1: error: 2 breadth-first level(s) of kron multiply by a coefficient of about 1e400, " \
           "beyond the float64 range" in err, err
    assert _run(capsys, "run", path, "-n", "8", "--levels", "2", "--backend", "numpy")[0] == 0


def test_a_bound_of_one_or_more_checks_nothing(capsys, tmp_path):
    """(2^53+1)·A·B − 2^53·A·B verifies (exactly A·B) but rounds 2^53+1 to 2^53: an 18 % error, which
    run passed against its bound of 90 (growth factor 1.8e16)."""
    path = tmp_path / "huge.bl"
    path.write_text("algorithm huge <1,1,1;2>:\n  M1 = 9007199254740993*A11 * B11\n  M2 = A11 * B11\n"
                    "  C11 = M1 - 9007199254740992*M2\n")
    assert _run(capsys, "verify", path)[0] == 0
    code, out, _ = _run(capsys, "run", path, "-n", "32", "--backend", "numpy", "--repeat", "1")
    assert code == 1 and "NOT CHECKED: the bound passes even a C of zeros (its error would be " in out
    assert "; the scheme's error growth is too large)" in out


def test_a_schedule_multiplying_sums_under_library_leaves_is_refused_where_it_is_written(capsys, tmp_path):
    """Strassen's products of sums in one stage verify; cuBLAS leaves refused them at the first call,
    without a location ("library GEMM leaves multiply single views"); then quoted the statement a pass
    had split (`... -> +C11` for a line reading `-> +C11 +C22`): the product as written now."""
    path = tmp_path / "sums.bl"
    path.write_text((ROOT / "algorithms" / "strassen.bl").read_text() + "\nschedule sums for strassen\n"
                    "  stage p:  (A11 + A22) * (B11 + B22) -> +C11 +C22\n            (A21 + A22) * B11 -> +C21 -C22\n"
                    "            A11 * (B12 - B22) -> +C12 +C22\n            A22 * (B21 - B11) -> +C11 +C21\n"
                    "            (A11 + A12) * B22 -> -C11 +C12\n            (A21 - A11) * (B11 + B12) -> +C22\n"
                    "            (A12 - A22) * (B21 + B22) -> +C11\n")
    lines = path.read_text().splitlines()
    row = next(i for i, line in enumerate(lines) if "stage p:" in line) + 1
    assert _run(capsys, "verify", path)[0] == 0
    code, _, err = _run(capsys, "run", path, "-n", "32", "--backend", "numpy")
    assert code == 1 and f"sums.bl:{row}:13: error: the product (A11 + A22) * (B11 + B22) in schedule sums multiplies a sum " \
           "of blocks, and cublas leaves multiply single blocks: form the sum in an element-wise statement first (as the " \
           "default schedules do), or use --leaf fused" in err, err
    assert _run(capsys, "run", path, "-n", "32", "--backend", "numpy", "--leaf", "fused")[0] == 0


def test_levels_schemes_files_say_they_are_read_without_files_options(capsys, tmp_path):
    """An archive among --levels-schemes asked for --key although --key was given (it reads FILE)."""
    archive = scheme_file("alphatensor/factorizations_r.npz")
    code, _, err = _run(capsys, "run", archive, "--key", "2,2,2", "--levels-schemes", f"{archive},strassen", "-n", "30",
                        "--backend", "numpy")
    assert code == 1 and "is a --levels-schemes file: it is read as detected, without FILE's reading options" in err


def test_a_levels_schemes_file_no_reading_option_helps_draws_no_note_to_import_it(capsys):
    """A mod-2 scheme among --levels-schemes was refused as valid only modulo 2, then told to `bilinear
    import` it first, which refuses it alike (a hunt): the note is for errors that ask for an option."""
    code, _, err = _run(capsys, "run", "strassen", "--levels-schemes", scheme_file("kauers/378-ffdb2d875f.mod2.exp"),
                        "-n", "24", "--backend", "numpy")
    assert code == 1 and "modulo 2" in err and "is a --levels-schemes file" not in err, err


def test_a_levels_schemes_file_says_how_it_was_read_as_file_does(capsys, tmp_path):
    """A level's scheme claimed modulo 2 that holds over Q was read as the exact algorithm without the
    note FILE gets (a hunt)."""
    claimed = tmp_path / "111-x.mod2.exp"
    claimed.write_text("(a11)*(b11)*(c11/2)\n(a11)*(b11)*(c11/2)\n")
    for command in (("run", "--backend", "numpy", "--repeat", "1"), ("compile", "-o", str(tmp_path / "lib"))):
        code, _, err = _run(capsys, *command, "strassen", "--levels-schemes", f"strassen,{claimed},{claimed}", "-n", "8")
        assert code == 0 and err.count("it holds over Q, and is read as the exact algorithm it is") == 1, err


def test_a_file_whose_definition_only_shares_a_levels_name_is_said_to_be_unused(capsys, tmp_path):
    """Winograd renamed strassen, with --levels-schemes strassen,winograd: the shipped Strassen ran
    at level 1 and nothing said FILE's definition was not used."""
    renamed = tmp_path / "strassen.bl"
    renamed.write_text((ROOT / "algorithms" / "winograd.bl").read_text().replace("algorithm winograd", "algorithm strassen"))
    code, _, err = _run(capsys, "run", renamed, "--levels-schemes", "strassen,winograd", "-n", "16", "--backend", "numpy")
    assert code == 0 and f"{renamed}'s strassen is not one of them and is not used" in err, err
    code, _, err = _run(capsys, "run", "strassen", "--levels-schemes", "strassen,winograd", "-n", "16", "--backend", "numpy")
    assert code == 0 and "is not used" not in err


def test_transform_and_product_keep_the_sources_reference(capsys, tmp_path):
    """import, optimize and export kept a catalogue file's reference and licence lines; transform and
    product dropped them."""
    source = scheme_file("fast-matmul/hk323-15-94")
    assert _run(capsys, "transform", source, "--to", "nkm", "-o", str(tmp_path / "t.bl"))[0] == 0
    assert "# (0, 2, 1) permutation of hk332-2" in (tmp_path / "t.bl").read_text()
    assert _run(capsys, "product", "strassen", source, "-o", str(tmp_path / "p.bl"))[0] == 0
    assert "# (0, 2, 1) permutation of hk332-2" in (tmp_path / "p.bl").read_text()


def test_a_schedules_algorithm_is_written_with_the_header_of_the_file_that_defines_it(capsys, tmp_path):
    """msmes.bl's comments describe the in-place schedule: export wrote them over a plain Strassen table
    (then noted it), and dropped strassen.bl's, where a licence asking to be kept would be."""
    notice = "# Copyright (c) 1969 V. Strassen; keep this notice.\n"
    (tmp_path / "strassen.bl").write_text(notice + (ROOT / "algorithms" / "strassen.bl").read_text())
    (tmp_path / "msmes.bl").write_text((ROOT / "algorithms" / "msmes.bl").read_text())
    msmes = str(tmp_path / "msmes.bl")
    for command in (["export", msmes, "--to", "fast-matmul", "-o", str(tmp_path / "x")],
                    ["transform", msmes, "--to", "kmn", "-o", str(tmp_path / "t.bl")],
                    ["optimize", msmes, "-o", str(tmp_path / "o.bl")]):
        code, _, err = _run(capsys, *command)
        written = (tmp_path / command[-1].rsplit("/", 1)[-1]).read_text()
        assert code == 0 and "may describe" not in err, err
        assert "from strassen.bl" in written and "Copyright (c) 1969 V. Strassen; keep this notice." in written
        assert "Strassen with zero workspace" not in written  # msmes.bl's own comment
    # a product of two schedules writes the schedule and its algorithm: both files' headers
    code, _, err = _run(capsys, "product", msmes, msmes, "--name", "m2", "-o", str(tmp_path / "m2.bl"))
    written = (tmp_path / "m2.bl").read_text()
    assert code == 0 and "# from msmes.bl\n# MSMES: Strassen with zero workspace" in written, err
    assert "# from strassen.bl\n# Copyright (c) 1969 V. Strassen; keep this notice.\n" in written


def test_a_hybrids_manifest_names_its_level_files(capsys, tmp_path):
    """The manifest named FILE as the source, which --levels-schemes had left unused; then its level files
    comma-joined in one string (a path can hold a comma), each level's, where report.json names each file once."""
    code, _, err = _run(capsys, "compile", "winograd", "--levels-schemes", "strassen,grey333,strassen", "-o", str(tmp_path))
    assert code == 0, err
    shipped = (ROOT / "algorithms").resolve()
    files = [f"{shipped}/strassen.bl", f"{shipped}/grey333.bl"]
    assert json.loads((tmp_path / "manifest.json").read_text())["source"] == files


def test_the_manifest_names_its_sources_by_absolute_paths(capsys, tmp_path, monkeypatch):
    """The source was the path as typed: schemes/mine.bl, relative to where compile ran, named nothing
    where the manifest was read from its own folder (a shipped name's was absolute already)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "schemes").mkdir()
    (tmp_path / "schemes" / "mine.bl").write_text((ROOT / "algorithms" / "strassen.bl").read_text(), encoding="utf-8")
    mine, shipped = tmp_path.resolve() / "schemes" / "mine.bl", (ROOT / "algorithms").resolve()
    comma = tmp_path.resolve() / "schemes" / "a,b.bl"
    comma.write_text(mine.read_text(), encoding="utf-8")
    for argv, source in ((["schemes/mine.bl"], [f"{mine}"]), (["strassen"], [f"{shipped}/strassen.bl"]),
                         (["schemes/a,b.bl"], [f"{comma}"]),
                         (["winograd", "--levels-schemes", "schemes/mine.bl, strassen"], [f"{mine}", f"{shipped}/strassen.bl"])):
        code, _, err = _run(capsys, "compile", *argv, "-o", "build", "--force")
        assert code == 0, err
        assert json.loads((tmp_path / "build" / "manifest.json").read_text())["source"] == source, argv


def test_the_manifest_names_the_files_its_sources_use(capsys, tmp_path, monkeypatch):
    """msmes.bl's `use "strassen.bl"` (the algorithm its schedule runs) was not in the manifest, which named
    msmes.bl alone: now `uses` lists every file read through `use`, by absolute path, each once, those a
    file only passes on too, in the order read; a hybrid's level file is a source, not a use."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "schemes").mkdir()
    msmes = (ROOT / "algorithms" / "msmes.bl").read_text()
    mine = msmes.replace('use "strassen.bl"', 'use "relay.bl"')
    (tmp_path / "schemes" / "mine.bl").write_text(mine, encoding="utf-8")
    (tmp_path / "schemes" / "relay.bl").write_text('use "strassen.bl"\n', encoding="utf-8")  # defines nothing itself
    strassen = (ROOT / "algorithms" / "strassen.bl").read_text()
    (tmp_path / "schemes" / "strassen.bl").write_text(strassen, encoding="utf-8")
    schemes, shipped = tmp_path.resolve() / "schemes", (ROOT / "algorithms").resolve()
    for argv, uses in ((["msmes"], [f"{shipped}/strassen.bl"]), (["strassen"], []),
                       (["schemes/mine.bl"], [f"{schemes}/strassen.bl", f"{schemes}/relay.bl"]),
                       (["strassen", "--levels-schemes", "msmes,grey333"], [f"{shipped}/strassen.bl"]),
                       (["strassen", "--levels-schemes", "msmes,strassen"], [])):
        code, _, err = _run(capsys, "compile", *argv, "-o", "build", "--force")
        assert code == 0, err
        assert json.loads((tmp_path / "build" / "manifest.json").read_text())["uses"] == uses, argv


def test_the_reports_beside_the_manifest_name_its_sources_by_absolute_paths(capsys, tmp_path, monkeypatch):
    """report.json's file, its diagnostics' files and report.txt/.md named schemes/mine.bl as typed, where
    the manifest beside them names /…/schemes/mine.bl; now all name the manifest's sources (a hybrid's
    comma-joined); compile's own output, read where it ran, still names the file as typed."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "schemes").mkdir()
    strassen = (ROOT / "algorithms" / "strassen.bl").read_text()  # M8 is never used: a warning located in mine.bl
    unused = strassen.replace("strassen <2,2,2;7>", "mine <2,2,2;8>").replace("  C11 =", "  M8 = A11 * B11\n\n  C11 =")
    (tmp_path / "schemes" / "mine.bl").write_text(unused, encoding="utf-8")
    mine, shipped = tmp_path.resolve() / "schemes" / "mine.bl", (ROOT / "algorithms").resolve()
    for argv, file in ((["schemes/mine.bl"], f"{mine}"),
                       (["winograd", "--levels-schemes", "schemes/mine.bl,strassen"], f"{mine}, {shipped}/strassen.bl")):
        code, out, err = _run(capsys, "compile", *argv, "-o", "build", "--force")
        assert code == 0 and out.startswith("schemes/mine.bl:13:3: warning") and f"{mine}" not in out + err, err
        report = json.loads((tmp_path / "build" / "report.json").read_text())
        assert report["file"] == ", ".join(json.loads((tmp_path / "build" / "manifest.json").read_text())["source"]) == file
        assert [w["file"] for entry in report["entries"] for w in entry["warnings"]] == [f"{mine}"]
        text = (tmp_path / "build" / "report.txt").read_text()
        assert text.startswith(f"{mine}:") and f"\n{file}: " in text, argv
        assert (tmp_path / "build" / "report.md").read_text().startswith(f"# Verification report: `{file}`"), argv


def test_compile_knows_a_level_file_named_with_spaces_around_commas(capsys, tmp_path, monkeypatch):
    """"winograd, report.md" got past the input check (the space) and --force replaced report.md."""
    monkeypatch.chdir(tmp_path)
    scheme = tmp_path / "report.md"
    scheme.write_text((ROOT / "algorithms" / "strassen.bl").read_text().replace("algorithm strassen", "algorithm s2"))
    code, _, err = _run(capsys, "compile", "winograd", "--levels-schemes", "winograd, report.md", "-o", ".", "--force")
    assert code == 1 and "would replace the input file" in err and scheme.read_text().startswith("#"), err


def test_a_link_among_the_artifacts_is_replaced_not_taken_for_the_input(capsys, tmp_path):
    """A report.txt linking to FILE was refused as "the input file": --force replaces the link itself."""
    scheme = tmp_path / "s.bl"
    scheme.write_text((ROOT / "algorithms" / "strassen.bl").read_text())
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.txt").symlink_to(scheme)
    code, _, err = _run(capsys, "compile", scheme, "-o", str(tmp_path / "out"), "--force")
    assert code == 0 and scheme.read_text().startswith("#") and not (tmp_path / "out" / "report.txt").is_symlink(), err


def test_a_level_file_with_a_syntax_error_gets_no_reading_options_note(capsys, tmp_path):
    bad = tmp_path / "bad.bl"
    bad.write_text("algorithm x <1,1,1;1>:\n  M1 = A11 * B11 here\n")
    code, _, err = _run(capsys, "run", "strassen", "--levels-schemes", f"strassen,{bad}", "-n", "8", "--backend", "numpy")
    assert code == 1 and "--levels-schemes file" not in err, err


@pytest.mark.parametrize("first, second", [("strassen", "strassen"), ("msmes", "strassen"), ("strassen", "msmes")])
def test_product_of_one_algorithms_file_with_itself_copies_its_header_once(capsys, tmp_path, first, second):
    """msmes's algorithm is strassen.bl's: `product msmes strassen` copied strassen.bl's header twice (a hunt)."""
    assert _run(capsys, "product", first, second, "-o", str(tmp_path / "p.bl"))[0] == 0
    assert (tmp_path / "p.bl").read_text().count("# from strassen.bl") == 1


def test_a_header_note_only_where_comments_were_copied(capsys, tmp_path):
    """transform --algorithm strassen of a comment-less two-definition file noted copied comments."""
    two = tmp_path / "two.bl"
    strip = lambda text: "\n".join(line for line in text.splitlines() if not line.startswith("#"))  # noqa: E731
    two.write_text(strip((ROOT / "algorithms" / "strassen.bl").read_text()) + "\n"
                   + strip((ROOT / "algorithms" / "winograd.bl").read_text()) + "\n")
    code, _, err = _run(capsys, "transform", two, "--algorithm", "strassen", "--to", "nkm", "-o", str(tmp_path / "t.bl"))
    assert code == 0 and "header comments" not in err, err


def test_run_with_alpha_zero_under_a_limit_no_plan_fits(capsys):
    """The call needs no workspace, but run then asked which levels ran and failed after timing."""
    code, out, err = _run(capsys, "run", "strassen", "-n", "64", "--levels", "2", "--workspace-limit", "100",
                          "--alpha", "0", "--backend", "numpy", "--repeat", "1")
    assert code == 0 and "levels run      0 of the 2 requested (alpha = 0 or an empty product" in out, err


# --- the CLI audit of session 33 --------------------------------------------------------------------------


def test_a_workspace_limit_past_float_range_is_a_usage_error(capsys):
    """1e308G gave an OverflowError traceback (1.1G stays 1.1 GiB, rounded down to whole bytes), then "must be a
    finite number", which it is (a hunt): past 2^63 - 1, as 16777216T."""
    for given in ("1e308G", "1e400"):
        code, _, err = _run(capsys, "run", "winograd", "-n", "32", "--workspace-limit", given, "--backend", "numpy")
        assert code == 2 and err.rstrip().endswith(
            f"argument --workspace-limit: bytes must be at most 2^63 - 1 (8 EiB), not '{given}'"), err
    for given in ("inf", "nan", "-1"):
        code, _, err = _run(capsys, "run", "winograd", "-n", "32", "--workspace-limit", given, "--backend", "numpy")
        assert code == 2 and err.rstrip().endswith(f"bytes must be a finite number >= 0, not '{given}'"), err
    from bilinear.cli_args import byte_count

    assert byte_count("1.1G") == int(1.1 * 2**30) and byte_count("0.3M") == 314572
    assert byte_count("9223372036854775807") == 2**63 - 1  # through a float it was 2^63, refused as too many
    # 16 EiB had been written into the C++ library as a literal past 64 bits (0 once truncated)
    code, _, err = _run(capsys, "compile", "strassen", "--workspace-limit", "16777216T", "-o", "/nonexistent/x")
    assert code == 2 and err.rstrip().endswith(
        "argument --workspace-limit: bytes must be at most 2^63 - 1 (8 EiB), not '16777216T'"), err


def test_a_workspace_limit_of_a_tiny_number_is_zero_at_once():
    """--workspace-limit 1e-10000000 sat for 12 s (1e-100000000 for minutes) while the exact value
    built 10^10000000, to round it down to 0 bytes (a hunt)."""

    from bilinear.cli_args import byte_count

    start = time.perf_counter()
    assert byte_count("1e-10000000") == byte_count("1e-100000000G") == byte_count("0.99") == 0
    assert time.perf_counter() - start < 1
    assert byte_count("1e-1K") == 102 and byte_count("1.0") == 1


def test_bench_plot_replaces_only_a_plot_it_wrote(tmp_path, capsys):
    """--plot doc.pdf replaced a user's PDF with a plot, without --force (bench has none)."""
    pytest.importorskip("matplotlib")
    document, plot = tmp_path / "doc.pdf", tmp_path / "plot.pdf"
    document.write_text("precious", encoding="utf-8")
    bench = ("bench", "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--repeat", "1", "--plot")
    code, _, err = _run(capsys, *bench, document)
    assert code == 1 and f"--plot {document} exists and is no plot bench wrote" in err
    assert document.read_text(encoding="utf-8") == "precious"
    assert _run(capsys, *bench, plot)[0] == 0 and _run(capsys, *bench, plot)[0] == 0  # its own plot, again
    # a figure matplotlib made for a paper says "matplotlib" too: it had been replaced
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    for suffix in (".png", ".pdf", ".svg", ".eps"):
        figure_path = tmp_path / f"figure{suffix}"
        pyplot.figure().savefig(figure_path)
        before = figure_path.read_bytes()
        code, _, err = _run(capsys, *bench, figure_path)
        assert code == 1 and "exists and is no plot bench wrote" in err and figure_path.read_bytes() == before, suffix
        mine = tmp_path / f"mine{suffix}"
        assert _run(capsys, *bench, mine)[0] == 0 and _run(capsys, *bench, mine)[0] == 0, suffix  # bench's own, again
    victim, link = tmp_path / "victim.txt", tmp_path / "link.png"  # matplotlib would write through a link
    victim.write_text("precious", encoding="utf-8")
    link.symlink_to(victim)
    code, _, err = _run(capsys, *bench, link)
    assert code == 1 and f"--plot {link} is a symbolic link; refusing to write through it" in err
    assert victim.read_text(encoding="utf-8") == "precious"


def test_run_says_when_breadth_first_levels_ran_depth_first(capsys):
    """Under --workspace-limit the breadth-first levels (and --launch batched) went without a word."""
    code, out, _ = _run(capsys, "run", "winograd", "-n", "32", "--levels", "2", "--breadth", "2", "--launch", "batched",
                        "--workspace-limit", "5120", "--backend", "numpy", "--repeat", "1")
    assert code == 0 and ("levels run      2 (0 of the 2 breadth-first levels asked for: the workspace limit runs the "
                          "others depth-first)") in out
    # where the size stops them, they do not run at all: no such note
    code, out, _ = _run(capsys, "run", "strassen", "-n", "4", "--levels", "3", "--breadth", "2", "--backend", "numpy",
                        "--repeat", "1")
    assert code == 0 and "levels run      1 of the 3 requested (the blocks got too small)\n" in out


def test_alpha_beyond_float32_is_refused_for_float32(capsys):
    """It became inf: "relative error nan ... EXCEEDS THE BOUND" and NumPy's overflow warnings."""
    code, _, err = _run(capsys, "run", "strassen", "-n", "16", "--dtype", "float32", "--alpha", "1e39", "--backend", "numpy")
    assert code == 1 and "alpha 1e+39 and beta 0 may carry this run's product past float32's range" in err


def test_alpha_and_beta_that_carry_the_product_past_the_range_are_refused(capsys):
    """--beta=-1e308 passed the range check, and beta·C became inf: "relative error nan ... EXCEEDS THE BOUND"."""
    code, _, err = _run(capsys, "run", "strassen", "-n", "8", "--backend", "numpy", "--beta=-1e308")
    assert code == 1 and "alpha 1 and beta -1e+308 may carry this run's product past float64's range" in err


@pytest.mark.parametrize("dtype, alpha", [("float64", "1e-315"), ("float32", "1e-40")])
def test_alpha_that_brings_the_product_below_the_normal_range_is_refused(capsys, dtype, alpha):
    """A correct product "EXCEEDS THE BOUND": on the subnormal grid the rounding is coarser than
    the bound's unit roundoff (relative error 4.5e-11 against a bound of 1.3e-14)."""
    code, _, err = _run(capsys, "run", "strassen", "-n", "64", "--dtype", dtype, "--alpha", alpha, "--backend", "numpy")
    tiny = {"float64": "1e-292", "float32": "9.86e-32"}[dtype]  # the smallest normal over epsilon
    assert code == 1 and f"may bring this run's product below {tiny}, {dtype}'s smallest normal number over its" in err, err
    code, out, _ = _run(capsys, "run", "strassen", "-n", "64", "--dtype", dtype, "--alpha", "1e-250" if dtype == "float64" else "1e-25",
                        "--backend", "numpy", "--repeat", "1")
    assert code == 0 and "EXCEEDS" not in out


def test_a_large_beta_times_without_numpy_warnings(capsys):
    """Each timed call adds beta·out again: out overflowed, and NumPy's RuntimeWarnings quoted our source."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        code, out, err = _run(capsys, "run", "strassen", "-n", "16", "--beta", "1e300", "--backend", "numpy", "--repeat", "3")
    assert code == 0 and err == "", err


def test_also_with_a_missing_file_says_only_that(capsys):
    """It added a hint to import the file with --key, which is no help for a file that is not there."""
    code, _, err = _run(capsys, "optimize", "strassen", "--also", "no_such_file.bl")
    assert code == 1 and err.strip() == "error: cannot read no_such_file.bl: No such file or directory"


def test_a_shape_too_large_says_so(capsys):
    """A 20-digit size was told it was not "three whole numbers"."""
    code, _, err = _run(capsys, "verify", STRASSEN, "--shape", "99999999999999999999,1,1")
    assert code == 2 and "argument --shape: 99999999999999999999 is too large (at most 999999999)" in err


def test_memory_needed_is_printed_readably(capsys):
    """-n 10**30 printed the memory it would need as a 55-digit number of GiB."""
    code, _, err = _run(capsys, "run", STRASSEN, "-n", str(10**30), "--backend", "numpy")
    assert code == 1 and "needs about 6.7e+52 GiB, more than the" in err


def test_a_cutoff_past_an_int_is_a_usage_error(capsys, tmp_path):
    """--cutoff 2147483648 wrapped round in the library's `const int CUTOFF`: it allocated workspace
    its manifest said it never needs."""
    code, _, err = _run(capsys, "compile", STRASSEN, "--cutoff", str(2**31), "-o", str(tmp_path / "c"))
    assert code == 2 and "argument --cutoff: must be at most 2147483647, not 2147483648" in err
    assert not (tmp_path / "c").exists()

    with pytest.raises(ValueError, match=r"^cutoff must be between 1 and 2147483647 \(2\^31 - 1\), not 2147483648$"):
        bilinear.compile(STRASSEN, backend="numpy", cutoff=2**31)


@pytest.mark.parametrize("argv", [["export", "--to", "fast-matmul", "-o", "{tmp}/big.fm"],
                                  ["export", "--to", "plinopt", "-o", "{tmp}/bm"],
                                  ["transform", "--to", "nkm", "-o", "{tmp}/t.bl"],
                                  ["import", "-o", "{tmp}/i.bl"]])
def test_a_coefficient_past_the_readers_digits_is_refused_not_written_as_a_placeholder(tmp_path, capsys, argv):
    """A 4401-digit coefficient was written as `<a 4401-digit number>`: the commands said "wrote",
    and the files did not read back."""
    c = 10**2200
    scheme = tmp_path / "bigmul.bl"
    scheme.write_text(f"algorithm bigmul <1,1,1;1>:\n  M1 = {c}*{c}*A11 * (B11/{c}/{c})\n  C11 = M1\n")
    assert _run(capsys, "verify", str(scheme))[0] == 0
    before = sorted(tmp_path.iterdir())
    command, *rest = argv
    code, out, err = _run(capsys, command, str(scheme), *(part.format(tmp=tmp_path) for part in rest))
    message = "a coefficient has 4401 digits, more than the readers take (4300): a file with it would not read back"
    assert code == 1 and message in err + out and "wrote" not in out, err
    assert sorted(tmp_path.iterdir()) == before


@pytest.mark.parametrize("name", ["2x2x2_7_mine-ALT", "mine-CoB", "mine_ALT", "mine16CoB"])
def test_a_plinopt_export_named_like_an_alternative_basis_is_refused(tmp_path, capsys, name):
    """Such files were written, then read as an alternative basis whose change of basis is missing."""
    code, _, err = _run(capsys, "export", STRASSEN, "--to", "plinopt", "-o", str(tmp_path / name))
    assert code == 1 and f"the name 2x2x2_7_{name.removeprefix('2x2x2_7_')} ends in {name[-3:]}" in err, err
    assert list(tmp_path.iterdir()) == []


def test_an_integer_scheme_past_int64_is_exported_as_float64_where_exact(tmp_path, capsys):
    """2^70 was refused ("a 64-bit integer .npz cannot hold"), though a float64 holds it exactly."""
    scheme = tmp_path / "p70.bl"
    scheme.write_text(f"table p70 <1,1,1;3>:\n  U: {2**70} {2**70} 1\n  V: 1 -1 1\n  W: 1 1 1\n")
    assert _run(capsys, "export", str(scheme), "--to", "alphatensor", "-o", str(tmp_path / "p70.npz"))[0] == 0
    code, out, _ = _run(capsys, "verify", str(tmp_path / "p70.npz"), "--key", "1,1,1")
    assert code == 0 and "verified" in out
    scheme.write_text(f"table p71 <1,1,1;3>:\n  U: {2**70 + 1} {2**70 + 1} 1\n  V: 1 -1 1\n  W: 1 1 1\n")
    code, _, err = _run(capsys, "export", str(scheme), "--to", "alphatensor", "-o", str(tmp_path / "p71.npz"))
    assert code == 1 and "which a binary floating-point .npz cannot hold exactly" in err


@pytest.mark.parametrize("command, fmt", [("verify", "text"), ("verify", "md"), ("compile", None)])
def test_a_report_size_past_what_a_float_counts_is_a_usage_error(capsys, tmp_path, command, fmt):
    """`verify -n 1e103` ended in an OverflowError traceback from the report's GFLOP figure."""
    extra = ["--format", fmt] if fmt else ["-o", str(tmp_path / "out")]
    code, _, err = _run(capsys, command, STRASSEN, "-n", "1" + "0" * 103, *extra)
    assert code == 2 and "argument -n: must be at most 1099511627776, not 1000" in err
    assert not (tmp_path / "out").exists()
    code, out, _ = _run(capsys, "verify", STRASSEN, "-n", str(2**40))
    assert code == 0 and "one level at n=1099511627776:" in out


def test_an_alphatensor_export_named_like_a_mod_2_archive_is_refused(tmp_path, capsys):
    """strassen_f2.npz was written, then read back as a scheme modulo 2 ("holds modulo 2 only")."""
    code, _, err = _run(capsys, "export", STRASSEN, "--to", "alphatensor", "-o", str(tmp_path / "strassen_f2.npz"))
    assert code == 1 and ("the name strassen_f2.npz ends in _f2, which AlphaTensor's archives keep for schemes "
                          "modulo 2: the file would read back as one; choose another") in err, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("to, name, says", [
    ("alphatensor", "strassen_F2.npz", "ends in _F2, which AlphaTensor's archives keep for schemes modulo 2"),
    ("alphatensor", "s_mod1.npz", "says mod1, which the readers take for a scheme valid only modulo 1"),
    ("alphatensor", "s.mod3.npz", "says mod3, which the readers take for a scheme valid only modulo 3"),
    ("plinopt", "k_mod_3", "says mod_3, which the readers take for a scheme valid only modulo 3"),
    # fast-matmul's reader reads the name's modulus too, since session 75 (a review)
    ("fast-matmul", "strassen-mod1", "says mod1, which the readers take for a scheme valid only modulo 1"),
    ("fast-matmul", "strassen-mod3", "says mod3, which the readers take for a scheme valid only modulo 3"),
])
def test_an_export_named_like_a_modular_scheme_is_refused(tmp_path, capsys, to, name, says):
    """An exact scheme exported as k_mod3 read back claimed modulo 3 (and failed there: 2/3 has no value); s_mod1.npz
    did not read back at all ("a modulus is at least 2"); strassen_F2.npz read back modulo 2 (a hunt)."""
    code, _, err = _run(capsys, "export", STRASSEN, "--to", to, "-o", str(tmp_path / name))
    assert code == 1 and f"{says}: the file would read back as one; choose another" in err, err
    assert list(tmp_path.iterdir()) == []


def test_a_plinopt_export_into_a_folder_of_a_scheme_named_modulo_p_is_refused(tmp_path, capsys):
    """The files' stem is the scheme's name, and a scheme imported from a ….mod3.exp file (exact over Q) keeps
    mod3 in its name: the three files read back claimed modulo 3."""
    source = tmp_path / "111-x.mod3.exp"
    source.write_text("(a11)*(b11)*(2*c11)/3\n(a11)*(b11)*(c11)/3\n")
    code, _, err = _run(capsys, "import", str(source), "-o", str(tmp_path / "x.bl"))
    assert code == 0, err
    out = tmp_path / "out"
    out.mkdir()
    code, _, err = _run(capsys, "export", str(tmp_path / "x.bl"), "--to", "plinopt", "-o", str(out))
    assert code == 1 and "says mod3, which the readers take for a scheme valid only modulo 3" in err, err
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("argv, command", [
    (("list", "foo"), "list"),
    (("bench", "strassen", "--repeat", "1", "winograd", "-n", "16", "--backend", "numpy"), "bench"),
    (("verify", "strassen", "extra"), "verify"),
])
def test_a_stray_word_is_the_subcommands_usage_error(capsys, argv, command):
    """It got the top-level usage and "bilinear: error: unrecognized arguments", not the command's own."""
    code, _, err = _run(capsys, *argv)
    assert code == 2 and f"usage: bilinear {command} " in err and f"bilinear {command}: error: unrecognized arguments: " in err, err


def test_verify_mod_p_that_divides_a_denominator_does_not_call_an_exact_scheme_inexact(capsys):
    """It said "not an exact algorithm over Q, so it is never compiled" of a scheme that verifies over Q
    (check_modular stopped at the coefficient with no value modulo 13, before the check over Q)."""

    path = str(scheme_file("plinopt/2x2x2_7_DPS-integral-12.0662_L.sms"))
    assert _run(capsys, "verify", path)[0] == 0
    code, out, _ = _run(capsys, "verify", path, "--mod", "13")
    assert code == 1 and "FAILED modulo 13" in out and "not an exact algorithm over Q" not in out
    assert "over Q it is an exact algorithm: without --mod it verifies and compiles" in out


def test_verify_mod_p_of_a_scheme_exact_over_q_says_where_its_figures_are(capsys):
    """A scheme given with --mod that holds over Q printed its modular entry alone: no products,
    additions or stability, and nothing saying that they are shown without --mod."""

    path = str(scheme_file("kauers/k000000011c4745e-333-23-mod0.exp"))
    code, out, _ = _run(capsys, "verify", path, "--mod", "7")
    assert code == 0 and "verified over Q (and so modulo 7)" in out
    assert ("  over Q it is an exact algorithm: without --mod it verifies with its figures (products, additions, "
            "stability) and compiles") in out
    code, out, _ = _run(capsys, "verify", path, "--mod", "13", "--format", "json")
    assert json.loads(out)["entries"][0]["exact_over_q"] is True


def test_a_scheme_its_name_claims_modulo_p_is_not_told_to_drop_a_mod_it_was_not_given(capsys, tmp_path):
    """"without --mod it verifies with its figures", where no --mod was given: the file's name said
    mod3, and only a .bl file of it (bilinear import) is read over Q (a hunt)."""

    path = tmp_path / "223-11-mod3.exp"
    path.write_text(scheme_file("flips/223-11-mod0.exp").read_text())
    code, out, _ = _run(capsys, "verify", str(path))
    assert code == 0 and "verified over Q (and so modulo 3)" in out and "--mod" not in out
    assert ("  over Q it is an exact algorithm: the .bl file `bilinear import` writes of it verifies with its figures "
            "(products, additions, stability) and compiles") in out
    imported = tmp_path / "x.bl"
    assert _run(capsys, "import", str(path), "-o", str(imported))[0] == 0
    code, out, _ = _run(capsys, "verify", str(imported))
    assert code == 0 and "products" in out and "modulo" not in out


def test_a_stdout_that_cannot_encode_the_report_still_gets_it(tmp_path):
    """On a cp1252 stdout, verify of a scheme that verifies exited 1: the report's γ raised
    UnicodeEncodeError (a ValueError) and was reported as the failure."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "bilinear.cli", "verify", "strassen"], capture_output=True,
                          env={**os.environ, "PYTHONIOENCODING": "cp1252"}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert b"\\u03b3" in done.stdout  # γ, escaped: the rest of the report as written


def _carried(tmp_path, exponent: int) -> Path:
    """<2,2,2;9> whose P1 = (2^e·A11 + A12)·B11 and C11 = (P1 − P2)/2^e + P3: each coefficient in range,
    and depth-only levels refuse the 2^-2e of the second level's targets (a review of compile)."""
    e = str(2**exponent) if exponent >= 0 else f"1/{2**-exponent}"
    path = tmp_path / f"carried{exponent}.bl"
    path.write_text(f"algorithm carried <2,2,2;9>:\n  P1 = ({e}*A11 + A12) * B11\n  P2 = A12 * B11\n  P3 = A12 * B21\n"
                    "  M3 = A11 * B12\n  M4 = A12 * B22\n  M5 = A21 * B11\n  M6 = A22 * B21\n  M7 = A21 * B12\n"
                    f"  M8 = A22 * B22\n  C11 = (P1 - P2)/({e}) + P3\n  C12 = M3 + M4\n  C21 = M5 + M6\n  C22 = M7 + M8\n")
    return path


@pytest.mark.parametrize("levels", [("--levels", "2"), ("--levels", "2", "--breadth", "1")], ids=["depth", "mixed"])
def test_depth_first_coefficients_times_breadth_first_ones_are_checked(capsys, tmp_path, levels):
    """A depth-first level above a breadth-first one: each was checked alone, so 2^-70 · 2^-70 went
    through, and the library's float32 function returned NaN with status 0 (2^600 in float64 likewise)."""
    code, _, err = _run(capsys, "compile", _carried(tmp_path, 70), *levels, "--dtype", "float32", "-o", str(tmp_path / "f"))
    assert code == 0 and "note: no float32 function: " in err and "below the float32 range" in err, err
    assert json.loads((tmp_path / "f" / "manifest.json").read_text())["host"]["functions"] == {"float64": "carried_dgemm"}
    code, _, err = _run(capsys, "run", _carried(tmp_path, 600), *levels, "-n", "8", "--backend", "numpy")
    assert code == 1 and "below the float64 range" in err and "Traceback" not in err, err


@pytest.mark.parametrize("levels", [("--levels", "2"), ("--levels", "2", "--breadth", "1")], ids=["depth", "mixed"])
def test_depth_first_coefficients_times_breadth_first_ones_are_checked_past_the_top_of_the_range(capsys, tmp_path,
                                                                                                 levels):
    """The same with 2^-70 in the product and 2^70 in the target: 2^140 is beyond float32's range."""
    code, _, err = _run(capsys, "compile", _carried(tmp_path, -70), *levels, "--dtype", "float32", "-o", str(tmp_path / "f"))
    assert code == 0 and "note: no float32 function: " in err and "beyond the float32 range" in err, err
    assert json.loads((tmp_path / "f" / "manifest.json").read_text())["host"]["functions"] == {"float64": "carried_dgemm"}


def _strassen_scaled(tmp_path, factor: str, target: str) -> Path:
    """Strassen with M3 = factor·A11·(B12 − B22) and M3 taken into C12 and C22 as target·M3 (their product 1)."""
    text = (ROOT / "algorithms" / "strassen.bl").read_text(encoding="utf-8")
    text = text.replace("M3 = A11 * (B12 - B22)", f"M3 = {factor}*A11 * (B12 - B22)")
    text = text.replace("C12 = M3 + M5", f"C12 = {target}*M3 + M5").replace("C22 = M1 - M2 + M3 + M6",
                                                                           f"C22 = M1 - M2 + {target}*M3 + M6")
    path = tmp_path / "scaled.bl"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_schedule_with_coefficients_past_the_float64_range_verifies(capsys, tmp_path):
    """A stage X = 10^400·A11 + 10^400·A22 whose product is taken back by 1/10^400: exactly right, yet verify
    said "SVD did not converge" (the compiled counts' basis measured a condition number of float(10^400))."""
    big = "1" + "0" * 400
    path = tmp_path / "tiny400.bl"
    path.write_text(f'use "{ROOT / "algorithms" / "strassen.bl"}"\n\nschedule tiny for strassen\n  temp X: A\n  temp Y: B\n'
                    f"  stage a:  X = {big}*A11 + {big}*A22;  Y = B11 + B22\n  stage p:  X * Y -> +1/{big}*C11 +1/{big}*C22\n"
                    "  stage a2: X = A21 + A22\n  stage p2: X * B11 -> +C21 -C22\n  stage a3: Y = B12 - B22\n"
                    "  stage p3: A11 * Y -> +C12 +C22\n  stage a4: Y = B21 - B11\n  stage p4: A22 * Y -> +C11 +C21\n"
                    "  stage a5: X = A11 + A12\n  stage p5: X * B22 -> -C11 +C12\n"
                    "  stage a6: X = A21 - A11;  Y = B11 + B12\n  stage p6: X * Y -> +C22\n"
                    "  stage a7: X = A12 - A22;  Y = B21 + B22\n  stage p7: X * Y -> +C11\n", encoding="utf-8")
    code, out, err = _run(capsys, "verify", str(path))
    assert code == 0 and "SVD" not in err and "2 verified, 0 failed" in out, out + err


def test_coefficients_in_range_whose_products_are_not_run_on_cublas_leaves(capsys, tmp_path):
    """M3 = 10^170·A11·(B12 − B22), taken back by 1/10^170: every coefficient is a float64; cublas leaves
    said "SVD did not converge" where fused ones ran it (a hunt)."""
    big = "1" + "0" * 170
    code, out, err = _run(capsys, "run", _strassen_scaled(tmp_path, big, f"1/{big}"), "-n", "16", "--backend", "numpy")
    assert code == 0 and "SVD" not in err, out + err


def test_a_coefficient_below_the_float64_range_is_refused_on_cublas_leaves_too(capsys, tmp_path):
    """M3 = 10^-400·A11·(B12 − B22), taken back by 10^400: cublas leaves ended in an OverflowError traceback
    from the basis's condition number; fused ones refused it in words (a hunt)."""
    big = "1" + "0" * 400
    for leaf in ("cublas", "fused"):
        code, _, err = _run(capsys, "run", _strassen_scaled(tmp_path, f"1/{big}", big), "-n", "16", "--backend", "numpy",
                            "--leaf", leaf)
        assert code == 1 and "M3 has a coefficient of about 1e-400, below the float64 range" in err, err
        assert "Traceback" not in err


@pytest.mark.parametrize("stop", ["interrupt", "terminate"])
def test_a_compile_stopped_while_writing_leaves_nothing_behind(capsys, tmp_path, monkeypatch, stop):
    """Ctrl-C in the middle of a file left its '.NAME.XXXX.tmp' (only an OSError removed it), so the
    folder stayed; SIGTERM (a timeout, a cancelled CI job) had no handler and left the files written
    so far (a review of compile)."""
    import signal

    from bilinear import output

    real_fdopen = output.os.fdopen
    written: list[str] = []

    class Stopping:
        def __init__(self, fd, mode):
            self.file = real_fdopen(fd, mode)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

        def write(self, data):
            written.append(self.file.name)
            self.file.write(data[: len(data) // 2])
            if len(written) == 2:  # halfway through the second file
                if stop == "interrupt":
                    raise KeyboardInterrupt
                os.kill(os.getpid(), signal.SIGTERM)
            self.file.write(data[len(data) // 2:])

    monkeypatch.setattr(output.os, "fdopen", Stopping)
    before = signal.getsignal(signal.SIGTERM)
    out = tmp_path / "lib"
    code, _, err = _run(capsys, "compile", STRASSEN, "-o", str(out))
    assert (code, err.strip()) == ((130, "bilinear: interrupted") if stop == "interrupt" else (143, "bilinear: terminated"))
    assert len(written) == 2 and not out.exists()
    assert signal.getsignal(signal.SIGTERM) == before  # main puts the handler back


def test_a_workspace_limit_that_some_sizes_pass_says_from_where(capsys, tmp_path):
    """--workspace-limit 1536 was taken without a word, and every call from 20x20x20 up returned 4000
    (a review of compile): the note and the manifest say from which n; a limit no call passes (up to
    the C API's 2^31 - 1) says nothing."""
    code, _, err = _run(capsys, "compile", STRASSEN, "--workspace-limit", "1536", "-o", str(tmp_path / "small"))
    assert code == 0 and ("note: --workspace-limit 1536: from n = 20, an n×n×n call can need more workspace "
                          "than that and return 4000 (nothing run)") in err, err
    limit = json.loads((tmp_path / "small" / "manifest.json").read_text())["host"]["workspace_limit"]
    assert limit["refused_from_n"] == 20
    msmes = ROOT / "algorithms" / "msmes.bl"  # in place: no call needs workspace
    code, _, err = _run(capsys, "compile", msmes, "--levels", "2", "--workspace-limit", "0", "-o", str(tmp_path / "none"))
    assert code == 0 and "returns 4000" not in err
    assert "refused_from_n" not in json.loads((tmp_path / "none" / "manifest.json").read_text())["host"]["workspace_limit"]
    # (it had said nothing at all: a limit that changes nothing is said to, as --cutoff at --levels 0 is; a hunt)
    assert ("note: --workspace-limit 0 changes nothing: this library needs no workspace at any size" in err), err


def test_a_cutoff_with_no_level_to_cut_says_it_changes_nothing(capsys, tmp_path):
    code, _, err = _run(capsys, "compile", STRASSEN, "--levels", "0", "--cutoff", "64", "-o", str(tmp_path / "c"))
    assert code == 0 and "note: --cutoff 64 changes nothing: at --levels 0 no level recurses" in err, err
    code, _, err = _run(capsys, "compile", STRASSEN, "--levels", "1", "--cutoff", "64", "-o", str(tmp_path / "d"))
    assert code == 0 and "changes nothing" not in err, err


def test_a_launch_mode_with_no_level_says_it_changes_nothing(capsys, tmp_path):
    """--launch streams at --levels 0 was taken without a word (a hunt)."""
    code, _, err = _run(capsys, "compile", STRASSEN, "--levels", "0", "--launch", "streams", "-o", str(tmp_path / "a"))
    assert code == 0 and "note: --launch streams changes nothing: at --levels 0 the product is one GEMM" in err, err
    assert _run(capsys, "compile", STRASSEN, "--levels", "0", "-o", str(tmp_path / "b"))[0] == 0
    assert (tmp_path / "a" / "strassen.cu").read_text() == (tmp_path / "b" / "strassen.cu").read_text()
    code, _, err = _run(capsys, "compile", STRASSEN, "--levels", "1", "--launch", "streams", "-o", str(tmp_path / "c"))
    assert code == 0 and "changes nothing" not in err, err


@pytest.mark.parametrize("levels", [(), ("--levels", "2", "--breadth", "2")], ids=["depth-first", "all-breadth-first"])
def test_run_on_the_cpu_says_leaves_on_streams_run_in_order(capsys, levels):
    """The numpy backend runs what --launch streams would put on concurrent streams one after another;
    where every level was breadth-first, it said nothing (a hunt)."""
    code, _, err = _run(capsys, "run", STRASSEN, "-n", "32", "--backend", "numpy", "--repeat", "1", "--launch", "streams",
                        *levels)
    assert code == 0 and err == ("bilinear run: note: --launch streams changes nothing on the numpy backend: it runs "
                                 "the calls streams would overlap one after another\n"), err


@pytest.mark.parametrize("options", [("--levels", "0"), ("--leaf", "fused")], ids=["levels-0", "fused-leaf"])
def test_no_fuse_where_nothing_would_be_fused_says_it_changes_nothing(capsys, tmp_path, options):
    """--no-fuse wrote the same .cu as without it, without a word (a hunt): no option is ignored silently."""
    code, _, err = _run(capsys, "compile", STRASSEN, *options, "--no-fuse", "-o", str(tmp_path / "a"))
    assert code == 0 and "note: --no-fuse changes nothing: no level has consecutive element-wise stages to fuse" in err
    assert _run(capsys, "compile", STRASSEN, *options, "-o", str(tmp_path / "b"))[0] == 0
    assert (tmp_path / "a" / "strassen.cu").read_text() == (tmp_path / "b" / "strassen.cu").read_text()


@pytest.mark.parametrize("options, note", [
    (("--levels", "0", "--cutoff", "4"), "--cutoff 4 changes nothing: at --levels 0 no level recurses"),
    (("--levels", "0", "--no-fuse"), "--no-fuse changes nothing: no level has consecutive element-wise stages to fuse"),
    (("--workspace-limit", "1G"), "--workspace-limit 1073741824 changes nothing: this product needs no workspace at any size"),
    (("--levels", "0", "--launch", "streams"), "--launch streams changes nothing: at --levels 0 the product is one GEMM"),
], ids=["cutoff", "no-fuse", "workspace-limit", "launch"])
def test_run_says_an_option_changes_nothing_as_compile_does(capsys, options, note):
    """run took them without a word where compile notes them (a hunt)."""
    source = ROOT / "algorithms" / ("msmes.bl" if "--workspace-limit" in options else "strassen.bl")  # msmes: in place
    code, _, err = _run(capsys, "run", source, "-n", "32", "--backend", "numpy", "--repeat", "1", *options)
    assert code == 0 and f"bilinear run: note: {note}" in err, err


def test_no_fuse_where_stages_would_be_fused_is_taken_without_a_note(capsys, tmp_path):
    code, _, err = _run(capsys, "compile", ROOT / "algorithms" / "msmes.bl", "--no-fuse", "-o", str(tmp_path / "a"))
    assert code == 0 and "--no-fuse changes nothing" not in err, err
    assert _run(capsys, "compile", ROOT / "algorithms" / "msmes.bl", "-o", str(tmp_path / "b"))[0] == 0
    assert (tmp_path / "a" / "msmes.cu").read_text() != (tmp_path / "b" / "msmes.cu").read_text()


@pytest.mark.parametrize("options", [(), ("--leaf", "ozaki"), ("--leaf", "ozaki", "--moduli", "14"),
                                     ("--leaf", "fused", "--levels", "2"), ("--levels", "2", "--breadth", "1")],
                         ids=["cublas", "ozaki", "ozaki-14", "fused", "breadth"])
def test_compile_counts_every_kernel_of_its_source(capsys, tmp_path, options):
    """The count left out the ozaki leaf's passes (14 kernels said, 39 in the .cu; review of compile)."""
    code, out, _ = _run(capsys, "compile", STRASSEN, *options, "-o", str(tmp_path / "lib"))
    assert code == 0
    said = int(re.search(r"\((\d+) kernels\)", out).group(1))
    assert said == (tmp_path / "lib" / "strassen.cu").read_text().count("__global__")


def test_compile_n_adds_its_size_to_the_manifests_workspace_table(capsys, tmp_path):
    """report.txt counts one level's workspace at -n; the manifest, the whole call's, had only its
    fixed sizes (a review of compile)."""
    code, _, _ = _run(capsys, "compile", STRASSEN, "--levels", "2", "-n", "5000", "-o", str(tmp_path / "lib"))
    table = json.loads((tmp_path / "lib" / "manifest.json").read_text())["workspace_bytes"]
    assert code == 0 and list(table) == ["1024", "2048", "4096", "5000", "8192", "16384"]
    product = bilinear.compile("strassen", levels=2, backend="numpy")
    assert table["5000"] >= product.workspace_bytes(5000, 5000, 5000) > table["4096"]


def test_main_runs_in_a_thread_that_is_not_the_main_one(capsys):
    """Signal handlers belong to the main thread: main() from another thread raised ValueError from
    signal.signal (SIGPIPE's, before the new guard for SIGTERM's; a review)."""
    import threading

    from bilinear.cli import main

    outcome: list = []
    worker = threading.Thread(target=lambda: outcome.append(main(["list"])))
    worker.start()
    worker.join(timeout=60)
    assert outcome == [0] and "strassen" in capsys.readouterr().out


def test_bench_json_never_replaces_a_link(capsys, tmp_path):
    """--json LINK renamed its results over the link (as root, --json /dev/stdout turned the system's
    link into a file; a review of bench): refused, as --plot refuses a link."""
    target = tmp_path / "precious.txt"
    target.write_text("precious\n")
    link = tmp_path / "results.json"
    link.symlink_to(target)
    code, _, err = _run(capsys, "bench", STRASSEN, "-n", "16", "--levels", "1", "--backend", "numpy", "--repeat", "1",
                        "--json", str(link))
    assert code == 1 and f"--json {link} is a symbolic link; refusing to write through it (--json - writes to standard " \
                          "output)" in err, err
    assert link.is_symlink() and target.read_text() == "precious\n"


def test_a_bound_that_a_c_of_zeros_would_pass_checks_nothing(capsys, monkeypatch):
    """A float32 bound of 4e-2 at K = 1000 (Kauers' <2,5,7;55>, two levels) passed C = 0, whose error
    is about 1/√K: only a bound of 1 or more was 'NOT CHECKED' (a review of run)."""
    from bilinear.measure import bound_verdict, within_bound

    assert not within_bound(1e-5, 0.04, trivial=0.031) and within_bound(1e-5, 0.02, trivial=0.031)
    assert bound_verdict(0.031, 0.04, trivial=0.031, growth=2650.0) == (
        "   NOT CHECKED: the bound passes even a C of zeros (its error would be 3.1e-02; the scheme's error growth is too large)")
    code, out, _ = _run(capsys, "run", scheme_file("kauers/k108391c6c35ad0c4.exp"), "-m", "8", "-k", "1000", "-n", "98",
                        "--levels", "2", "--dtype", "float32", "--backend", "numpy", "--repeat", "1")
    assert code == 1 and "NOT CHECKED: the bound passes even a C of zeros" in out, out


def test_a_bound_that_passes_zeros_before_any_growth_blames_k(capsys):
    """No level ran at 1x3000000 @ 3000000x1 in float32, so nothing grew: 8·u·√K (8.3e-4) alone passes
    C = 0 (4.3e-4, about 1/√K), and the run blamed 'the scheme's error growth'.  It still exits 1:
    the run cannot tell a right product from zeros (as README has it for NOT CHECKED)."""
    from bilinear.measure import bound_verdict

    assert bound_verdict(0.0, 0.04, trivial=0.031, growth=1.0) == (
        "   NOT CHECKED: the bound passes even a C of zeros (its error would be 3.1e-02; 8·u·√K alone, 4.0e-02, "
        "passes it at this K, before any error growth)")
    assert "the scheme's error growth is too large" in bound_verdict(0.0, 0.04, trivial=0.031, growth=2.0)
    for levels in ((), ("--levels", "0")):
        code, out, _ = _run(capsys, "run", "strassen", "-m", "1", "-k", "3000000", "-n", "1", "--dtype", "float32",
                            "--backend", "numpy", "--repeat", "1", *levels)
        assert code == 1 and ("bound 8.259e-04)   NOT CHECKED: the bound passes even a C of zeros (its error would be "
                              "4.3e-04; 8·u·√K alone, 8.3e-04, passes it at this K, before any error growth)\n") in out, out


def test_a_beta_c_that_outweighs_the_product_has_the_product_checked_alone(capsys):
    """The error is the whole output's, against |α|‖A‖‖B‖ + |β|‖C‖, so a β·C that outweighs the product hides
    its error: with --beta 1e14 a 2-modulus Ozaki leaf's 1.7 % error in A·B passed at exit 0, and at 1e16
    β·C alone would have (a hunt, then a review).  Where |β|‖C‖ passes |α|‖A‖‖B‖ the run checks A·B
    alone too (β = 0), and exits 1 where that misses its bound; α = 0 multiplies nothing to check."""
    ozaki = ("run", "strassen", "-n", "64", "--backend", "numpy", "--leaf", "ozaki", "--moduli", "2", "--repeat", "1")
    for scalars in (("--beta", "1e14"), ("--beta", "1e16"), ("--alpha", "1e-16", "--beta", "1")):
        code, out, _ = _run(capsys, *ozaki, *scalars)
        line = next(line for line in out.splitlines() if line.startswith("  A·B alone"))
        assert code == 1 and line.startswith("  A·B alone       relative error 1.7") and line.endswith(
            "|α|·‖A‖‖B‖ and hides an error in A·B that much)   EXCEEDS THE BOUND"), out
    code, out, _ = _run(capsys, *ozaki, "--beta", "1e3")
    assert code == 1 and "EXCEEDS THE BOUND" in out, out
    code, out, _ = _run(capsys, "run", "strassen", "-n", "64", "--backend", "numpy", "--beta", "1e14", "--repeat", "1")
    assert code == 0 and "  A·B alone       relative error " in out and "EXCEEDS" not in out, out
    code, out, _ = _run(capsys, "run", "strassen", "-n", "64", "--backend", "numpy", "--beta", "1", "--repeat", "1")
    assert code == 0 and "A·B alone" not in out, out  # |β|‖C‖ is 1/64 of |α|‖A‖‖B‖: the whole output shows A·B
    for scalars in (("--alpha", "0", "--beta", "1"), ("--alpha", "0", "--beta", "2", "--dtype", "float32")):
        code, out, _ = _run(capsys, "run", "msmes", "-n", "64", "--backend", "numpy", "--repeat", "1", *scalars)
        assert code == 0 and "A·B alone" not in out and "NOT CHECKED" not in out, out


def test_a_schedule_report_counts_one_stage_and_one_block_in_the_singular(capsys, tmp_path):
    """"1 stages" and "1 C block(s)" (found by an audit)."""
    path = tmp_path / "one.bl"
    algorithm = "algorithm one <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n"
    path.write_text(algorithm + "schedule s for one:\n  stage p: A11 * B11 -> +C11\n")
    code, out, _ = _run(capsys, "verify", str(path))
    assert code == 0 and "  computes C += A*B; 1 stage (0 element-wise, 1 with products)\n" in out
    path.write_text(algorithm + "schedule s for one:\n  temp T: C\n  stage p: T = A11 * B11\n  stage q: C11 += T\n")
    code, out, _ = _run(capsys, "verify", str(path))
    assert code == 0 and "  workspace per level: 1 C block = 512.00 MiB at n=8192 float64\n" in out
    code, out, _ = _run(capsys, "verify", "msmes")
    assert "; 7 stages (" in out


def test_breadth_on_an_in_place_schedule_says_what_the_library_holds(capsys, tmp_path):
    """compile msmes --breadth 1 built breadth-first Strassen with a 2.6 GiB workspace while its console
    and report said "workspace per level: none = 0 bytes", without a note (a review of compile)."""
    out = tmp_path / "bfs"
    code, printed, err = _run(capsys, "compile", MSMES, "--breadth", "1", "-o", str(out))
    manifest = json.loads((out / "manifest.json").read_text())
    held = manifest["workspace_bytes"]["8192"]
    assert code == 0 and held == 2818572288
    note = ("--breadth 1: the innermost level runs strassen's products breadth-first, from operand sums in a workspace "
            "(2.62 GiB at n=8192); msmes's in-place stages run at no level: --levels 2 --breadth 1 keeps one, and "
            "without --breadth the library allocates nothing")
    assert f"note: {note}" in err and manifest["host"]["workspace_note"] == note
    library = ["library msmes: 1 level, cublas leaves, --breadth 1; msmes_dgemm, msmes_sgemm; 6 kernels",
               "  workspace of an n×n×n call at n=8192 float64: 2.62 GiB (msmes_dgemm_workspace_bytes)"]
    assert "\n".join(library) in printed
    assert (out / "report.txt").read_text().endswith("\n".join([*library, f"  note: {note}"]) + "\n")
    facts = json.loads((out / "report.json").read_text())["library"]
    assert (facts["workspace_bytes"], facts["kernels"], facts["notes"]) == (held, 6, [note])
    assert "## Library" in (out / "report.md").read_text()
    code, _, err = _run(capsys, "compile", MSMES, "--levels", "2", "--breadth", "1", "-o", str(tmp_path / "two"))
    assert code == 0 and "msmes's in-place stages run at the outer level only" in err
    code, _, err = _run(capsys, "compile", MSMES, "--leaf", "ozaki", "-o", str(tmp_path / "ozaki"))
    assert code == 0 and "note: ozaki leaves need a workspace of their own (" in err
    code, _, err = _run(capsys, "compile", MSMES, "--levels", "2", "-o", str(tmp_path / "plain"))
    assert code == 0 and "workspace" not in err  # in place with cuBLAS leaves: nothing to say


def test_compile_refuses_an_n_its_library_functions_cannot_take(capsys, tmp_path):
    """-n 4294967296 wrote a manifest whose workspace at n was 7.4e19 bytes, from a C function that takes
    an int and returns a size_t (an audit); the summary said it in GiB past a billion of them."""
    from bilinear.report_sizes import bytes_text

    code, _, err = _run(capsys, "compile", "strassen", "-n", "2147483648", "-o", str(tmp_path / "big"))
    assert code == 2 and err.endswith("bilinear compile: error: -n 2147483648: the library's functions take sizes up to "
                                      "2147483647 (a C int); give a smaller -n\n"), err
    assert not (tmp_path / "big").exists()
    assert _run(capsys, "compile", "msmes", "-n", "2147483647", "-o", str(tmp_path / "most"))[0] == 0  # 0 bytes
    # a size the functions take whose workspace their long long cannot count (a review)
    code, _, err = _run(capsys, "compile", "winograd", "--levels", "2", "--breadth", "2", "-n", "2147483647", "-o",
                        str(tmp_path / "wide"))
    assert code == 2 and "bilinear compile: error: -n 2147483647: an n×n×n call needs 338958921091692627456 bytes " \
        "of workspace, more than the library's functions count (9223372036854775807); give a smaller -n" in err, err
    assert not (tmp_path / "wide").exists()
    assert [bytes_text(2**40 * 3), bytes_text(2**60 * 64)] == ["3.00 TiB", "64.00 EiB"]


def test_the_library_summary_names_the_ozaki_scaling_it_was_built_with(capsys, tmp_path):
    """--scaling norm went into the manifest but not into the summary's options (an audit)."""
    code, printed, err = _run(capsys, "compile", "grey234", "--leaf", "ozaki", "--dtype", "float32", "--scaling", "norm",
                              "-o", str(tmp_path / "o"))
    assert code == 0, err
    assert "library grey234: 1 level, ozaki leaves, --scaling norm; " in printed


@pytest.mark.parametrize("options, note", [
    (("--breadth", "1", "--workspace-limit", "0"),
     "--breadth 1 --workspace-limit 0: at n=8192 no breadth-first level fits the limit: msmes's in-place stages run at "
     "every level, and the library allocates nothing"),
    (("--levels", "2", "--breadth", "2", "--workspace-limit", "1G"),
     "--breadth 2 --workspace-limit 1073741824: at n=8192 the 2 breadth-first levels asked for need more workspace "
     "than the limit, and a call runs 1: the innermost level runs strassen's products breadth-first, from operand sums "
     "in a workspace (672.00 MiB at n=8192; a call whose workspace would pass the limit runs fewer breadth-first "
     "levels); msmes's in-place stages run at the outer level only"),
    (("--breadth", "1", "--workspace-limit", "100M", "-n", "1024"),
     "--breadth 1: the innermost level runs strassen's products breadth-first, from operand sums in a workspace "
     "(42.00 MiB at n=1024; a call whose workspace would pass --workspace-limit 104857600 runs fewer breadth-first "
     "levels); msmes's in-place stages run at no level: --levels 2 --breadth 1 keeps one, and without --breadth the "
     "library allocates nothing"),
], ids=["none-fits", "one-of-two-fits", "all-fit-at-n"])
def test_the_in_place_workspace_note_describes_the_plan_a_workspace_limit_leaves(capsys, tmp_path, options, note):
    """--breadth 1 --workspace-limit 0 noted breadth-first products from a workspace "(0 bytes at n=8192)" and
    msmes's in-place stages at no level, while the library falls back to the plan without breadth-first
    levels at every size: msmes runs in place."""
    out = tmp_path / "wl"
    code, _, err = _run(capsys, "compile", MSMES, *options, "-o", str(out))
    assert code == 0 and f"note: {note}\n" in err, err
    assert json.loads((out / "manifest.json").read_text())["host"]["workspace_note"] == note


@pytest.mark.parametrize("options, note", [
    (("--levels-schemes", "strassen,msmes", "--leaf", "ozaki"), None),
    (("--levels-schemes", "strassen,msmes", "--breadth", "1"), None),
    (("--levels-schemes", "msmes,strassen", "--breadth", "1"),
     "--breadth 1: the innermost level runs strassen's products breadth-first, from operand sums in a workspace "
     "(672.00 MiB at n=8192); msmes's in-place stages run at the outer level only"),
    (("--levels-schemes", "msmes", "--breadth", "1"),
     "--breadth 1: the innermost level runs strassen's products breadth-first, from operand sums in a workspace "
     "(2.62 GiB at n=8192); msmes's in-place stages run at no level: every level of --levels-schemes runs "
     "breadth-first, and without --breadth the library allocates nothing"),
    (("--breadth", "1", "--leaf", "ozaki"),
     "--breadth 1: the innermost level runs strassen's products breadth-first, from operand sums in a workspace "
     "(4.13 GiB at n=8192, the ozaki leaves' own included); msmes's in-place stages run at no level: --levels 2 "
     "--breadth 1 keeps one"),
    (("--levels-schemes", "msmes,msmes2", "--leaf", "ozaki"),
     "ozaki leaves need a workspace of their own (90.02 MiB at n=8192): msmes's and msmes2's in-place stages "
     "allocate nothing, their leaves do"),
], ids=["strassen-outside-ozaki", "strassen-outside-breadth", "msmes-outside-breadth", "hybrid-of-one", "ozaki-breadth",
        "two-in-place"])
def test_the_in_place_workspace_note_names_what_runs_at_each_level(capsys, tmp_path, options, note):
    """The note was built from the program's last definition: a hybrid whose outer level is strassen with
    temporaries blamed its workspace on msmes's leaves or on breadth-first levels, and named msmes, which ran
    at no level (a review of compile).  Beside ozaki leaves it said that without --breadth the library
    allocates nothing; a hybrid was told to give --levels."""
    out = tmp_path / "lib"
    code, _, err = _run(capsys, "compile", "msmes", *options, "-o", str(out))
    assert code == 0, err
    assert json.loads((out / "manifest.json").read_text())["host"].get("workspace_note") == note
    assert (f"note: {note}\n" in err) if note else ("in-place stages" not in err)


def test_too_few_moduli_for_long_leaves_are_said_at_compile(capsys, tmp_path):
    """--moduli 1 wrote a library that returns 5000 from 64x64x64 up without a word (run refuses it).  Under
    levels the note said the same 15 (4079 for --moduli 2), while each Strassen level that runs can grow the
    leaves' error bound 6 times: the library now returns 5000 past the k the levels a call runs leave."""
    code, _, err = _run(capsys, "compile", STRASSEN, "--leaf", "ozaki", "--moduli", "1", "--levels", "0", "-o",
                        str(tmp_path / "one"))
    note = ("--moduli 1 keeps enough bits only for a leaf GEMM whose inner dimension (a chunk of k) is at most 15: a "
            "call with a longer one returns 5000 and runs nothing; leave --moduli out to have each call choose enough")
    assert code == 0 and f"note: {note}" in err
    assert json.loads((tmp_path / "one" / "manifest.json").read_text())["host"]["moduli_note"] == note
    code, _, err = _run(capsys, "compile", STRASSEN, "--leaf", "ozaki", "--moduli", "2", "--levels", "2", "-o",
                        str(tmp_path / "two"))
    note = ("--moduli 2 keeps enough bits only for a leaf GEMM whose inner dimension (a chunk of k) is at most 4079 where "
            "no level runs, 127 where 1 runs and 3 where 2 run: a call with a longer one returns 5000 and runs nothing; "
            "leave --moduli out to have each call choose enough")
    assert code == 0 and f"note: {note}" in err
    assert json.loads((tmp_path / "two" / "manifest.json").read_text())["host"]["moduli_note"] == note
    code, _, err = _run(capsys, "compile", STRASSEN, "--leaf", "ozaki", "-o", str(tmp_path / "chosen"))
    assert code == 0 and "--moduli" not in err


def test_a_fixed_moduli_count_below_a_functions_dtype_is_said_at_compile(capsys, tmp_path):
    """--dtype float32 --moduli 7 fixed 7 moduli for strassen_dgemm too: it ran at float32's accuracy (1.6e-8)
    without a word, where `bilinear run` fails the same product on its bound (a hunt)."""
    code, _, err = _run(capsys, "compile", STRASSEN, "--leaf", "ozaki", "--dtype", "float32", "--moduli", "7",
                        "--levels", "1", "-o", str(tmp_path / "seven"))
    note = ("--moduli 7 keeps fewer than float32's 24 bits of A's and B's elements in strassen_sgemm's leaves from a "
            "leaf inner dimension (a chunk of k) of 105, and fewer than float64's 53 in strassen_dgemm's at every one: "
            "their results are less accurate than the type (`bilinear run --leaf ozaki --moduli 7` measures it); leave "
            "--moduli out to have each call choose enough")
    assert code == 0 and f"note: {note}" in err
    assert json.loads((tmp_path / "seven" / "manifest.json").read_text())["host"]["accuracy_note"] == note
    code, _, err = _run(capsys, "compile", STRASSEN, "--leaf", "ozaki", "--moduli", "16", "-o", str(tmp_path / "full"))
    assert code == 0 and "less accurate" not in err
    assert "accuracy_note" not in json.loads((tmp_path / "full" / "manifest.json").read_text())["host"]


@pytest.mark.parametrize("levels, said", [
    ("0", "A row of A (column of B) holding Inf or NaN gives NaN in its row (column) of C."),
    ("1", "A row of A (column of B) holding Inf or NaN gives NaN in its row (column) of each leaf's product; the\n"
          " * levels add blocks of A (of B) before they multiply, so it can reach other rows (columns) of C too."),
])
def test_an_ozaki_header_says_where_inf_and_nan_reach(capsys, tmp_path, levels, said):
    """The header said Inf or NaN stays in its row of C under a Strassen level too, where strassen_dgemm with
    A[0] = Inf turned 4 entries of row 4 NaN besides row 0 (a hunt)."""
    code, _, err = _run(capsys, "compile", STRASSEN, "--leaf", "ozaki", "--levels", levels, "-o", str(tmp_path / "o"))
    assert code == 0, err
    assert said in (tmp_path / "o" / "strassen.h").read_text()


def test_compile_keeps_the_sources_header_and_licence_in_the_library(capsys, tmp_path):
    """grey333.bl reproduces fast-matmul's BSD notice "as it requires", and export kept it, but the
    .cu and .h that compile wrote carried none of it (a review of compile)."""
    out = tmp_path / "g"
    code, _, _ = _run(capsys, "compile", str(ROOT / "algorithms" / "grey333.bl"), "-o", str(out))
    source, header = (out / "grey333.cu").read_text(), (out / "grey333.h").read_text()
    assert code == 0 and source.startswith("// Generated by bilinear for grey333: ")  # as earlier_library reads it
    for text in (source, header):
        assert "\n// from grey333.bl\n// grey333: a ⟨3,3,3;23⟩ scheme: 23 products" in text
        assert "\n// Copyright (c) 2014, Sandia Corporation.\n" in text
    code, _, _ = _run(capsys, "compile", "msmes", "--levels-schemes", "msmes,grey333", "-o", str(tmp_path / "h"))
    hybrid = (tmp_path / "h" / "msmes_grey333.h").read_text()
    assert code == 0 and "// from msmes.bl\n// MSMES: Strassen with zero workspace" in hybrid and "Sandia" in hybrid


def test_compile_keeps_the_header_and_licence_of_the_files_its_source_uses(capsys, tmp_path):
    """msmes.bl `use`s strassen.bl, whose header could hold a licence asking to be kept: the library
    carried the schedule file's header alone (its .cu named strassen.bl nowhere)."""
    notice = "# Copyright (c) 1969 V. Strassen; keep this notice.\n"
    (tmp_path / "strassen.bl").write_text(notice + (ROOT / "algorithms" / "strassen.bl").read_text())
    (tmp_path / "msmes.bl").write_text((ROOT / "algorithms" / "msmes.bl").read_text())
    code, _, err = _run(capsys, "compile", str(tmp_path / "msmes.bl"), "-o", str(tmp_path / "out"))
    assert code == 0, err
    for text in ((tmp_path / "out" / "msmes.cu").read_text(), (tmp_path / "out" / "msmes.h").read_text()):
        assert "\n// from msmes.bl\n// MSMES: Strassen with zero workspace" in text
        assert "\n// from strassen.bl\n// Copyright (c) 1969 V. Strassen; keep this notice.\n// Strassen (1969)" in text


def test_a_levels_schemes_file_of_two_definitions_is_noted_once(capsys, tmp_path):
    """A --levels-schemes file of two algorithms was used by its last without a word, where FILE's gets the
    "also defines" note every command gives (an audit)."""
    both = tmp_path / "both.bl"
    both.write_text((ROOT / "algorithms/strassen.bl").read_text().replace("algorithm strassen", "algorithm half")
                    + "\n" + (ROOT / "algorithms/winograd.bl").read_text())
    code, _, err = _run(capsys, "compile", "strassen", "--levels-schemes", f"{both},{both}", "-o", str(tmp_path / "h"))
    assert code == 0, err
    note = (f"bilinear compile: note: {both} also defines half; compile uses its last definition, winograd (another: "
            "put it last, or in a file of its own)")
    assert err.count(note) == 1, err


def test_a_hybrid_that_does_not_use_file_carries_no_header_of_it(capsys, tmp_path):
    """compile strassen --levels-schemes grey234,winograd said strassen is not used, and left it out of the
    manifest's sources, yet its .cu and .h opened with "// from strassen.bl" (an audit)."""
    code, _, err = _run(capsys, "compile", "strassen", "--levels-schemes", "grey234,winograd", "-o", str(tmp_path / "h"))
    assert code == 0, err
    for text in ((tmp_path / "h" / "grey234_winograd.cu").read_text(), (tmp_path / "h" / "grey234_winograd.h").read_text()):
        assert "// from strassen.bl" not in text and "// from grey234.bl" in text and "// from winograd.bl" in text
    # the files the levels' files use are carried (msmes's strassen.bl, rsmm's winograd.bl: a review)
    code, _, err = _run(capsys, "compile", "strassen", "--levels-schemes", "msmes,rsmm", "-o", str(tmp_path / "m"))
    assert code == 0, err
    text = (tmp_path / "m" / "msmes_rsmm.cu").read_text()
    assert all(f"// from {name}.bl" in text for name in ("msmes", "rsmm", "strassen", "winograd")), text[:600]


def test_the_manifest_lists_the_generated_source_and_header_with_their_hashes(capsys, tmp_path):
    """The manifest named no file it came with (a review of compile): a build can check what it got."""
    import hashlib

    out = tmp_path / "lib"
    assert _run(capsys, "compile", STRASSEN, "-o", str(out))[0] == 0
    files = json.loads((out / "manifest.json").read_text())["files"]
    assert sorted(files) == ["strassen.cu", "strassen.h"]
    for name, facts in files.items():
        data = (out / name).read_bytes()
        assert facts == {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


@pytest.mark.parametrize("command", [["transform", "strassen", "--to", "nkm"], ["product", "strassen", "strassen"],
                                     ["import", "strassen"], ["verify", "strassen"]])
def test_a_closed_stdout_is_a_write_error_not_a_traceback(command):
    """`bilinear transform strassen --to nkm >&-` raised AttributeError: 'NoneType' object has no
    attribute 'write' (Python sets sys.stdout to None), exit 1 with a traceback (found by an audit)."""
    import subprocess
    import sys

    done = subprocess.run(f"{sys.executable} -m bilinear.cli {' '.join(command)} >&-", shell=True, capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.splitlines()[-1] == f"bilinear {command[0]}: error: cannot write to standard output: it is closed"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("words", ["--help", "--version", "verify --help"])
def test_help_that_cannot_be_written_is_a_write_error_not_a_success(words):
    """`bilinear --help > /dev/full` exited 0 with nothing written: argparse drops its own write
    errors (found by an audit)."""
    import subprocess
    import sys

    done = subprocess.run(f"{sys.executable} -m bilinear.cli {words} > /dev/full", shell=True, capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr == "bilinear: error: cannot write to standard output: No space left on device\n"


def test_import_of_a_file_of_two_algorithms_says_which_it_writes_and_checks_only_that_one(tmp_path, capsys):
    """It wrote the last without a word, and refused the file when the first, which it does not write,
    was wrong (found by an audit)."""
    strassen = (ROOT / "algorithms" / "strassen.bl").read_text()
    naive = (ROOT / "algorithms" / "naive2x2.bl").read_text()
    two = tmp_path / "two.bl"
    two.write_text(strassen.replace("C11 = M1 + M4 - M5 + M7", "C11 = 2*M1 + M4 - M5 + M7") + "\n" + naive)
    code, out, err = _run(capsys, "import", str(two), "-o", str(tmp_path / "g.bl"))
    assert code == 0 and "(naive2x2, <2,2,2;8>)" in out
    assert f"bilinear import: note: {two} also defines strassen; import uses its last definition, naive2x2" in err


def test_import_says_what_verify_notes_of_what_it_reads(tmp_path, capsys):
    """`import --mod 3` of a scheme exact over Q wrote it without the note `verify` gives (found by an audit)."""
    source = str(scheme_file("fast-matmul/strassen"))
    code, _, err = _run(capsys, "import", source, "--mod", "3", "-o", str(tmp_path / "s.bl"))
    assert code == 0
    assert "note: strassen is claimed modulo 3 (given with --mod 3) and holds over Q (and so modulo 3)" in err


@pytest.mark.parametrize("command", [
    ("export", "--to", "fast-matmul", "-o", "{out}.fm"), ("transform", "--to", "nkm", "-o", "{out}.bl"),
    ("product", "strassen", "-o", "{out}.bl"), ("optimize", "-o", "{out}.bl"), ("inplace", "-o", "{out}.bl"),
    ("run", "-n", "16", "--repeat", "1"), ("bench", "-n", "16", "--levels", "1", "--backend", "numpy", "--repeat", "1"),
    ("plan", "--gpus", "2", "-n", "64"), ("run", "-n", "16", "--gpus", "1", "--backend", "numpy"),
    ("bench", "-n", "16", "--gpus", "1", "--levels", "1", "--backend", "numpy"),
], ids=lambda command: " ".join(command[:1] + tuple(w for w in command if w == "--gpus")))
def test_every_command_says_what_verify_notes_of_what_it_reads(tmp_path, capsys, command):
    """Only import, compile and run said that a scheme claimed modulo p holds over Q; export, transform,
    product, optimize and inplace wrote it without a word (a hunt); bench, plan and --gpus ran it without
    one (another)."""
    name, *options = command
    source = str(scheme_file("fast-matmul/strassen"))
    argv = [name, source, "--mod", "3", *(option.format(out=tmp_path / "out") for option in options)]
    if name == "product":  # SECOND comes after FILE
        argv = [name, source, *argv[2:]]
    code, _, err = _run(capsys, *argv)
    assert code == 0, err
    assert err.count("note: strassen is claimed modulo 3 (given with --mod 3) and holds over Q (and so modulo 3)") == 1


def test_optimize_also_with_a_file_no_reading_option_would_read_gives_no_such_hint(capsys, tmp_path):
    """After "approximate (border-rank) scheme", --also suggested `bilinear import ... --key m,k,n`, which
    import refuses for such a file (found by an audit)."""
    approximate = str(scheme_file("fast-matmul/bini322-10-52-approx"))
    code, _, err = _run(capsys, "optimize", "strassen", "--also", approximate, "-o", str(tmp_path / "x.bl"))
    assert code == 1 and "approximate" in err and "reads the file as detected" not in err


def test_one_search_option_that_cannot_apply_is_noted_in_the_singular(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr("bilinear.optimize.small_sides", lambda algorithm: [])  # as for AlphaTensor's <10,10,10>
    code, _, err = _run(capsys, "optimize", "strassen", "--polish", "2", "-o", str(tmp_path / "x.bl"))
    assert code == 0 and "note: --polish applies to small sides only, and none of strassen's is small" in err


def test_header_comments_of_a_file_of_several_definitions_are_noted_as_possibly_another_s(capsys, tmp_path):
    """optimize of strassen.bl + naive2x2.bl headed naive2x2_cse with Strassen's comment, without a note
    (found by an audit)."""
    two = tmp_path / "two.bl"
    two.write_text((ROOT / "algorithms" / "strassen.bl").read_text() + "\n" + (ROOT / "algorithms" / "naive2x2.bl").read_text())
    code, _, err = _run(capsys, "optimize", str(two), "-o", str(tmp_path / "x.bl"))
    assert code == 0 and ("note: the header comments copied from two.bl may describe another of its definitions, "
                          "strassen, rather than naive2x2") in err


def test_compile_of_a_scheme_with_named_sums_says_the_library_forms_them_from_the_blocks(capsys, tmp_path):
    """The report said "additions: 62 as written" of an optimized grey333 whose library does 97, and the
    .cu was the one of grey333.bl, without a note (found by an audit)."""
    out = tmp_path / "w"
    code, _, err = _run(capsys, "compile", "winograd", "-o", str(out))
    manifest = json.loads((out / "manifest.json").read_text())
    note = ("winograd's 11 named sums are not shared by the library: it forms each product's operand sums and each "
            "output from the blocks, 24 block additions a level where the scheme as written has 15")
    assert code == 0 and f"note: {note}" in err and manifest["host"]["sums_note"] == note
    assert f"note: {note}" in (out / "report.txt").read_text()
    code, _, err = _run(capsys, "compile", "strassen", "-o", str(tmp_path / "s"))
    assert code == 0 and "named sums" not in err


@pytest.mark.parametrize("levels", [["--levels", "1", "--breadth", "1"], ["--levels", "2", "--breadth", "2"]])
def test_breadth_first_levels_alone_say_their_named_sums_are_formed_from_the_blocks(capsys, tmp_path, levels):
    """With every level breadth-first, the split and merge kernels do 24 block additions of winograd's 15 as
    written, and compile said nothing (it looked at depth-first levels alone; a hunt)."""
    out = tmp_path / "w"
    code, _, err = _run(capsys, "compile", "winograd", *levels, "-o", str(out))
    note = ("winograd's 11 named sums are not shared by the library: it forms each product's operand sums and each "
            "output from the blocks, 24 block additions a level where the scheme as written has 15")
    assert code == 0 and f"note: {note}" in err
    assert json.loads((out / "manifest.json").read_text())["host"]["sums_note"] == note


def test_optimize_drops_a_product_no_output_uses_and_says_so(capsys, tmp_path):
    """M9, used by no output, was kept and counted without the warning verify gives (found by an audit);
    then kept with the warning; now it goes, with a note (tests/test_optimize_dead.py)."""
    naive = (ROOT / "algorithms" / "naive2x2.bl").read_text()
    extra = "  M8 = A22 * B22\n  M9 = (A11 + A22) * (B11 - B22)\n"
    unused = naive.replace("<2,2,2;8>", "<2,2,2;9>").replace("  M8 = A22 * B22\n", extra)
    source = tmp_path / "u.bl"
    source.write_text(unused)
    code, _, err = _run(capsys, "optimize", str(source), "-o", str(tmp_path / "u.opt.bl"))
    assert code == 0 and "note: dropped M9, which no output uses: naive2x2_cse has 8 products, <2,2,2;8>" in err, err
    assert "never used" not in err and "<2,2,2;8>" in (tmp_path / "u.opt.bl").read_text()


def test_optimize_also_with_a_bl_file_credits_no_licence_found_near_it(capsys, tmp_path):
    """A .bl FILE's header never looks for a licence file in the folders above it (its own comments say
    what it is), but --also's did: a project's "Proprietary" LICENSE.txt was credited to the result."""
    (tmp_path / "LICENSE.txt").write_text("Proprietary - do not distribute\n")
    (tmp_path / "a" / "b").mkdir(parents=True)
    for name in ("w.bl", "W.BL"):  # a .BL file is a .bl file (it got the licence: a review)
        also = tmp_path / "a" / "b" / name
        also.write_text((ROOT / "algorithms" / "winograd.bl").read_text())
        code, _, err = _run(capsys, "optimize", "winograd", "--also", str(also), "-o", str(tmp_path / "out.bl"),
                            "--force")
        assert code == 0, err
        assert "Licence file found near" not in (tmp_path / "out.bl").read_text()


def test_product_notes_the_definitions_second_leaves_out(capsys, tmp_path):
    """FILE of two algorithms got "also defines ...; product uses its last definition", SECOND nothing,
    and --algorithm does not choose SECOND's: the note says how to."""
    both = tmp_path / "both.bl"
    both.write_text((ROOT / "algorithms/strassen.bl").read_text() + "\n" + (ROOT / "algorithms/winograd.bl").read_text())
    code, _, err = _run(capsys, "product", "strassen", str(both), "-o", str(tmp_path / "p.bl"))
    assert code == 0, err
    assert (f"bilinear product: note: {both} also defines strassen; product uses its last definition, winograd "
            "(another: put it last, or in a file of its own)") in err, err


def test_a_number_past_the_digit_limit_says_so(capsys):
    """A 5,000-digit --mod was "expected a whole number": it is one, too long to read (a hunt)."""
    code, _, err = _run(capsys, "verify", STRASSEN, "--mod", "9" * 5000)
    assert code == 2 and f"argument --mod: '{'9' * 28}…{'9' * 10}': a number of more than 4300 digits cannot be read" in err


def test_a_hybrid_named_past_a_librarys_longest_name_asks_for_name(capsys, tmp_path):
    """Eight levels of winograd and strassen named the library with 71 characters, which --name refuses;
    at 32 levels the build failed on a 290-byte file name without a word of --name (a hunt)."""
    code, _, err = _run(capsys, "compile", STRASSEN, "--levels-schemes", ",".join(["winograd,strassen"] * 4),
                        "-o", str(tmp_path / "h"))
    assert code == 1 and "more than --name takes (64): give --name" in err, err
    assert not (tmp_path / "h").exists()
    code, _, err = _run(capsys, "compile", STRASSEN, "--levels-schemes", ",".join(["winograd,strassen"] * 4),
                        "--name", "hy", "-o", str(tmp_path / "h"))
    assert code == 0, err


def test_the_summary_says_a_call_past_the_workspace_limit_returns_4000(capsys, tmp_path):
    """It gave 1.75 GiB as the workspace of the n=8192 call, which returns 4000 under a 300K limit (a hunt)."""
    code, out, err = _run(capsys, "compile", STRASSEN, "--leaf", "ozaki", "--workspace-limit", "300K", "-o", str(tmp_path / "o"))
    assert code == 0, err
    assert "  an n×n×n call at n=8192 float64 returns 4000 under --workspace-limit 307200: it needs 1.75 GiB" in out, out


def test_workspace_limit_help_says_what_a_call_past_it_does(capsys):
    """It named the breadth-first and ozaki fallbacks only: a depth-first call past the limit is refused,
    status 4000 in the library (a hunt)."""
    code, out, _ = _run(capsys, "compile", "--help")
    assert code == 0 and "a call that needs more even then is refused (the compiled library returns 4000)" in " ".join(
        out.split())


def test_a_seed_past_64_bits_is_a_usage_error(capsys):
    """A 600-digit --seed ran on one device but failed every rank of a distributed run with an internal
    "a value to agree on is too long (628 bytes)" (a hunt): a seed is at most 64 bits everywhere."""
    code, _, err = _run(capsys, "run", STRASSEN, "-n", "8", "--backend", "numpy", "--seed", "9" * 600)
    assert code == 2
    assert err.endswith(f"bilinear run: error: argument --seed: must be at most {2**64 - 1}, not {'9' * 28}…{'9' * 10}\n"), err
    assert _run(capsys, "run", STRASSEN, "-n", "8", "--backend", "numpy", "--seed", str(2**64 - 1))[0] == 0


INTERRUPTED_IMPORT = """
import builtins, sys
real = builtins.__import__
def interrupted(name, globals=None, locals=None, fromlist=(), level=0):
    if name == "cli" and level == 1 or name == "bilinear.cli":  # Ctrl-C while the command line's modules load
        raise KeyboardInterrupt
    return real(name, globals, locals, fromlist, level)
builtins.__import__ = interrupted
from bilinear.__main__ import main
sys.exit(main())
"""


def test_ctrl_c_while_the_command_line_loads_is_said_as_an_interrupt():
    """Ctrl-C in the half second `bilinear.cli` takes to import, before main's handlers existed, printed a
    traceback (on every rank of an MPI job; a hunt).  The script's entry point imports it inside main."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", INTERRUPTED_IMPORT, "verify", STRASSEN], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert (done.returncode, done.stderr) == (130, "bilinear: interrupted\n")
    scripts = (ROOT / "pyproject.toml").read_text()
    assert 'bilinear = "bilinear.__main__:main"' in scripts  # the entry point the script runs


def test_ctrl_c_while_the_arguments_are_read_is_said_as_an_interrupt(capsys, monkeypatch):
    from bilinear import cli

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["verify", STRASSEN]) == 130
    assert capsys.readouterr().err == "bilinear: interrupted\n"


@pytest.mark.parametrize("argv, said", [
    (("optimize", "strassen", "--seeds", "\u0661\u0662"), "argument --seeds: expected a whole number, not '\u0661\u0662'"),
    (("run", "strassen", "-n", "1_6", "--backend", "numpy"), "argument -n: expected a whole number, not '1_6'"),
    (("run", "strassen", "-n", "16", "--levels", "\u0662", "--backend", "numpy"),
     "argument --levels: expected a whole number of levels, not '\u0662'"),
    (("run", "strassen", "-n", "16", "--alpha", "1_0", "--backend", "numpy"), "argument --alpha: expected a number, not '1_0'"),
    (("compile", "strassen", "--workspace-limit", "1_0G"), "argument --workspace-limit: expected bytes such as 0, 512M or "
                                                          "24G, not '1_0G'"),
], ids=["arabic-indic seeds", "underscore n", "arabic-indic levels", "underscore alpha", "underscore bytes"])
def test_numbers_on_the_command_line_are_ascii_digits(capsys, argv, said):
    """int() and float() read 1_6 as 16 and Arabic-Indic digits as digits: --seeds ١٢ ran 12 seeds."""
    code, _, err = _run(capsys, *argv)
    assert code == 2 and said in err, err


def test_two_compiles_into_one_new_folder_leave_one_library(tmp_path):
    """Both passed the check for earlier files before either wrote, and both said "wrote": the folder
    held grey333's .cu and .h beside rsmm's, and one manifest."""
    import subprocess
    import sys

    out = tmp_path / "lib"
    runs = [subprocess.Popen([sys.executable, "-m", "bilinear", "compile", scheme, "-o", str(out)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for scheme in ("strassen", "winograd")]
    finished = [(run.wait(timeout=300), run.stderr.read()) for run in runs]
    assert sorted(code for code, _ in finished) == [0, 1], finished
    refused = next(err for code, err in finished if code == 1)
    assert "refusing to overwrite" in refused, refused
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(p.name for p in out.glob("*.cu")) == [f"{manifest['name']}.cu"]


def test_import_of_a_catalogue_name_too_long_for_bl_says_so(tmp_path, capsys):
    """A PLinOpt program's variable of 254 characters is P_ and 254 in .bl: import wrote nothing, saying
    "internal error: the imported text does not read back" (a review)."""
    import shutil

    for part in "LRP":
        for suffix in ("slp", "sms"):
            shutil.copy(scheme_file(f"plinopt/2x2x2_7_Winograd_{part}.{suffix}"), tmp_path)
    program = tmp_path / "2x2x2_7_Winograd_P.slp"
    program.write_text(program.read_text(encoding="utf-8").replace("t5", "t" * 254), encoding="utf-8")
    code, _, err = _run(capsys, "import", program, "-o", tmp_path / "x.bl")
    assert (code, err) == (1, f"bilinear import: the name P_{'t' * 38}… has 256 characters, more than the 255 a .bl name "
                              "may have: a .bl file cannot hold it\n")
    assert not (tmp_path / "x.bl").exists()


def test_json_nested_past_the_parsers_depth_where_an_output_goes_is_one_message(capsys, tmp_path):
    """bench --json onto a file of 1000 nested lists, and compile --force into a folder whose manifest.json
    is one, ended in a RecursionError's traceback (a hunt); the cache reader had caught it already."""
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "deep.json").write_text(deep)
    code, _, err = _run(capsys, "bench", "strassen", "-n", "8", "--levels", "1", "--backend", "numpy", "--repeat", "1",
                        "--json", str(tmp_path / "deep.json"))
    assert code == 1 and "holds no results bilinear bench wrote" in err, err
    folder = tmp_path / "library"
    folder.mkdir()
    (folder / "manifest.json").write_text(deep)
    assert _run(capsys, "compile", "strassen", "-o", str(folder), "--force")[0] == 0


@pytest.mark.parametrize("modulus", [2**63, 2**64 + 13])
def test_a_modulus_past_64_bits_is_checked_in_whole_numbers(capsys, tmp_path, modulus):
    """--mod 9223372036854775808 ended in OverflowError, "Python int too large to convert to C long", where the Brent
    tensor of small residues came back as int64 (a hunt): a scheme that holds modulo 2 fails modulo 2^63, as said."""
    path = tmp_path / "strassen-plus"
    path.write_text(STRASSEN_UVW.replace("-1", "1"))  # Strassen modulo 2
    code, out, err = _run(capsys, "verify", str(path), "--mod", "2")
    assert code == 1 and "1 holding modulo 2 only" in out, err
    code, out, err = _run(capsys, "verify", str(path), "--mod", str(modulus))
    assert code == 1 and "Traceback" not in err and f"C11 is wrong modulo {modulus}: has +2*A11*B22" in out + err


def test_compile_refuses_an_output_it_cannot_write_before_verifying(capsys, tmp_path, monkeypatch):
    """-o /proc/foo was refused only after the scheme was verified (98 s for a ⟨9,9,36;1600⟩ product), where README
    says paths are checked first (a hunt); a folder holding an earlier run's files is still refused after the
    verification, so that a scheme that does not verify says so first."""
    import importlib

    def verified_too_early(*args, **kwargs):
        raise AssertionError("verified before the output was checked")

    # (compile imports it when it runs; bilinear.verify the attribute is the API's function)
    monkeypatch.setattr(importlib.import_module("bilinear.verify"), "verify_program", verified_too_early)
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _, err = _run(capsys, "compile", "strassen", "-o", str(blocker / "out"))
    assert code == 1 and f"cannot create the output folder {blocker / 'out'}: {blocker} is not a folder" in err, err


@pytest.mark.parametrize("name", ["strassen-mod2", "strassen_mod_2"])
def test_a_fast_matmul_file_named_modulo_2_is_checked_modulo_2(capsys, tmp_path, name):
    """README lists `mod2` in the name among a modular scheme's marks; the fast-matmul reader ignored it, so Strassen
    modulo 2 "failed" unless --mod 2 was given (a hunt)."""
    path = tmp_path / name
    path.write_text(STRASSEN_UVW.replace("-1", "1"))
    code, out, err = _run(capsys, "verify", str(path))
    assert code == 1 and "0 verified, 1 holding modulo 2 only" in out, out + err


@pytest.mark.parametrize("option, value", [("--alpha", "1e305"), ("--beta", "1e307")])
def test_a_run_whose_error_scale_passes_float64_s_range_is_judged_as_any_other(capsys, option, value):
    """|α|·‖A‖‖B‖ (or |β|·‖C‖) overflowed to inf: the error read 0.000e+00, C = 0's NaN, and an accurate product was
    "NOT CHECKED" or "EXCEEDS THE BOUND", exit 1 (a hunt); the scale is exact now."""
    code, out, err = _run(capsys, "run", "strassen", "-n", "64", option, value, "--backend", "numpy", "--repeat", "1")
    assert code == 0 and "EXCEEDS" not in out and "NOT CHECKED" not in out, out + err
    error = float(out.split("relative error")[1].split()[0])
    assert 0 < error < 1e-14, out


def test_compile_says_when_its_library_has_more_kernels_than_nvcc_builds_in_minutes(capsys, tmp_path, monkeypatch):
    """A ⟨9,9,9;529⟩ scheme (grey333 ⊗ grey333) compiled depth-first wrote 1,128 kernels in 14 MB of CUDA, which nvcc
    had not built after ten minutes, without a word (a hunt); --breadth 1 builds it as 6."""
    from bilinear.lower import notes
    from bilinear.report_sizes import bytes_text

    code, printed, err = _run(capsys, "compile", "grey333", "-o", str(tmp_path / "few"))
    assert code == 0 and "note: the library holds" not in err  # 50 kernels
    monkeypatch.setattr(notes, "MANY_KERNELS", 40)
    code, printed, err = _run(capsys, "compile", "grey333", "-o", str(tmp_path / "many"))
    assert code == 0, err
    size = (tmp_path / "many" / "grey333.cu").stat().st_size
    assert f"note: the library holds 50 kernels in {bytes_text(size)} of CUDA, more than 40: nvcc takes minutes " \
           "to build it; --breadth runs a level's products as one batch of a few kernels (in more workspace)" in err
    report = json.loads((tmp_path / "many" / "report.json").read_text())
    assert any(note.startswith("the library holds 50 kernels") for note in report["library"]["notes"])
    code, printed, err = _run(capsys, "compile", "grey333", "--breadth", "1", "-o", str(tmp_path / "breadth"))
    assert code == 0 and "note: the library holds" not in err
