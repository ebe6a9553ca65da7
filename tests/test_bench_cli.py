"""`bilinear bench` on the CPU: what it refuses before timing, how it names things, what it writes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from helpers.cli import run_cli

STRASSEN = str(ROOT / "algorithms" / "strassen.bl")


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    return run_cli(capsys, "bench", *argv)


@pytest.fixture(autouse=True)
def _wide_output(monkeypatch):
    """Output to a pipe, 200 columns wide, as the tests expect unless one sets COLUMNS itself: under
    pytest-xdist a worker has COLUMNS=80, and the table then gave way to plain lines (rich takes
    FORCE_COLOR and TTY_COMPATIBLE for a terminal)."""
    for name in ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)


def test_json_onto_an_input_is_refused_before_timing(capsys, tmp_path):
    scheme = tmp_path / "my.bl"
    scheme.write_text((ROOT / "algorithms" / "strassen.bl").read_text())
    code, out, err = _run(capsys, str(scheme), "-n", "16", "--levels", "1", "--backend", "numpy", "--json", str(scheme))
    assert code == 1 and f"--json {scheme} is the input file {scheme}; choose another name" in err, err
    assert scheme.read_text().startswith("#") and "ours" not in out
    configs = tmp_path / "cfg.txt"
    configs.write_text(f"{STRASSEN} 16 float64 1 cublas\n")
    code, _, err = _run(capsys, "--configs", str(configs), "--backend", "numpy", "--json", str(configs))
    assert code == 1 and "is the input file" in err and configs.read_text().startswith(STRASSEN)


def test_json_replaces_earlier_results_only(capsys, tmp_path):
    """--json onto any file replaced it (a scheme that was not an input, notes): only JSON is results."""
    victim = tmp_path / "victim.bl"
    victim.write_text((ROOT / "algorithms" / "strassen.bl").read_text())
    code, out, err = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--json", str(victim))
    assert code == 1 and f"--json {victim} exists and holds no results bilinear bench wrote" in err, err
    assert victim.read_text().startswith("#") and "ours" not in out
    manifest = tmp_path / "manifest.json"  # JSON, but not bench's (compile's manifest had been replaced)
    manifest.write_text('{"name": "strassen", "kernels": []}')
    code, _, err = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--json", str(manifest))
    assert code == 1 and "holds no results bilinear bench wrote" in err and manifest.read_text().startswith('{"name"')
    # hyperfine --export-json writes {"results": [...]}: it had been replaced as if bench had written it
    hyperfine = tmp_path / "hyperfine.json"
    hyperfine.write_text('{"results": [{"command": "sleep 1", "mean": 1.0}]}')
    code, _, err = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--json", str(hyperfine))
    assert code == 1 and "holds no results bilinear bench wrote" in err and "sleep 1" in hyperfine.read_text()
    empty = tmp_path / "empty.json"  # as mktemp leaves it
    empty.write_text("")
    code, _, err = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--json", str(empty))
    assert code == 0 and json.loads(empty.read_text())["results"], err
    results = tmp_path / "r.json"
    for _ in range(2):  # written, then replaced
        code, out, err = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--json", str(results))
        assert code == 0 and json.loads(results.read_text())["results"], err
    assert json.loads(results.read_text())["written_by"] == "bilinear bench"
    earlier = tmp_path / "earlier.json"  # bench's own results from before they were marked are still its own
    earlier.write_text('{"ceilings": {}, "results": []}')
    code, _, err = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--json", str(earlier))
    assert code == 0 and json.loads(earlier.read_text())["results"], err


def test_no_model_time_is_a_dash_not_nan(capsys):
    """On the CPU there are no ceilings: the line and the table said "model nan ms"."""
    code, out, err = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--repeat", "1")
    assert code == 0 and "model ms" in out and "nan" not in out, out + err


def test_plot_onto_a_device_is_refused():
    pytest.importorskip("matplotlib")
    from bilinear.bench_cli import _plot_file

    with pytest.raises(ValueError, match="^--plot /dev/null exists and is not a regular file"):
        _plot_file(Path("/dev/null"))


def test_json_and_plot_on_one_file_are_refused(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "r.png"
    code, _, err = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy",
                        "--json", str(target), "--plot", str(target))
    assert code == 2 and "--json and --plot name one file" in err and not target.exists(), err


@pytest.mark.parametrize("spelt", ["sub/../r.png", "here/r.png"], ids=["dot-dot", "linked-folder"])
def test_json_and_plot_on_one_file_spelt_two_ways_are_refused(capsys, tmp_path, monkeypatch, spelt):
    """`--json sub/../r.png --plot r.png` (or through a link to the folder) wrote the numbers, then the
    plot over them, and said it wrote both (a hunt): the paths were compared as written."""
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "here").symlink_to(tmp_path)
    code, _, err = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy",
                        "--json", spelt, "--plot", "r.png")
    assert code == 2 and f"--json and --plot name one file, {spelt}" in err and not (tmp_path / "r.png").exists(), err


def test_plot_without_a_suffix_names_the_file_matplotlib_writes(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    (tmp_path / "z.png").mkdir()
    code, out, err = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--plot", str(tmp_path / "z"))
    assert code == 1 and "z.png exists and is not a regular file" in err and "ours" not in out, err
    code, out, err = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--plot", str(tmp_path / "q"))
    assert code == 0 and f"wrote {tmp_path / 'q.png'}" in out and (tmp_path / "q.png").exists(), out + err


def test_on_the_cpu_the_library_is_numpy_and_breakdown_is_refused(capsys, tmp_path):
    target = tmp_path / "r.json"
    code, out, err = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--json", str(target))
    assert code == 0 and "cuBLAS" not in out and "NumPy" in out, out
    assert json.loads(target.read_text())["results"][0]["backend"] == "numpy"
    code, out, err = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--breakdown")
    assert code == 2 and "--breakdown times each stage with CUDA events; it needs the cupy backend" in err, err


def test_the_levels_shown_are_the_levels_that_ran(capsys, tmp_path):
    target = tmp_path / "r.json"
    code, out, _ = _run(capsys, "strassen", "-n", "4", "--levels", "6", "--backend", "numpy", "--repeat", "1", "--json", str(target))
    (row,) = json.loads(target.read_text())["results"]
    assert code == 0 and (row["levels"], row["levels_requested"]) == (2, 6) and "L2 (6 requested)" in out, out


def test_a_bad_scheme_or_config_line_is_refused_before_anything_is_timed(capsys, tmp_path):
    bad = tmp_path / "bad.bl"
    bad.write_text((ROOT / "algorithms" / "strassen.bl").read_text().replace("C12 = M3 + M5", "C12 = M3 - M5"))
    code, out, err = _run(capsys, "strassen", str(bad), "-n", "16", "--levels", "1", "--backend", "numpy")
    assert code == 1 and "C12 is wrong" in err and "ours" not in out, out + err
    configs = tmp_path / "c.txt"
    configs.write_text(f"{STRASSEN} 16 float64 1 cublas\n{STRASSEN} 16 float64 1 auto\n")
    code, out, err = _run(capsys, "--configs", str(configs), "--backend", "numpy")
    # what a file holds is no command-line mistake: status 1, as for a bad scheme (it was 2, with the usage)
    assert code == 1 and f"{configs}:2: a leaf of auto needs levels auto" in err and "ours" not in out, out + err
    configs.write_bytes(b"strassen 16\0 float64 1 cublas\n")
    code, _, err = _run(capsys, "--configs", str(configs), "--backend", "numpy")
    assert code == 1 and f"{configs} is a binary file, not a text list of configurations" in err, err


@pytest.mark.parametrize(("n", "says"), [("0", "n must be at least 1, not 0"),
                                          ("16.5", "n must be a whole number, not '16.5'")])
def test_a_config_lines_size_that_is_no_size_is_named(capsys, tmp_path, n, says):
    """The line's n was refused as 'must be at least 1, not 0', naming no field (levels said 'levels must ...')."""
    configs = tmp_path / "c.txt"
    configs.write_text(f"strassen {n} float64 1 cublas\n")
    code, _, err = _run(capsys, "--configs", str(configs), "--backend", "numpy")
    assert (code, err) == (1, f"bilinear bench: {configs}:1: {says}, got 'strassen {n} float64 1 cublas'\n")


def test_configs_take_no_other_configuration_options_and_must_list_one(capsys, tmp_path):
    configs = tmp_path / "c.txt"
    configs.write_text(f"{STRASSEN} 16 float64 1 cublas\n")
    code, _, err = _run(capsys, "winograd", "-n", "999", "--configs", str(configs), "--backend", "numpy")
    assert code == 2 and "--configs lists every configuration; leave out FILE, -n" in err, err
    configs.write_text("# nothing yet\n")
    code, _, err = _run(capsys, "--configs", str(configs), "--backend", "numpy")
    assert code == 1 and f"{configs} lists no configurations" in err, err


def test_a_missing_configs_file_is_not_looked_for_as_a_shipped_scheme(capsys, tmp_path, monkeypatch):
    """`bench --configs strasen` added "no shipped scheme of that name: did you mean strassen?": a
    configurations list is never a shipped scheme."""
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, "--configs", "strasen", "--backend", "numpy")
    assert (code, err) == (1, "error: cannot read strasen: No such file or directory\n")


@pytest.mark.parametrize(("words", "said", "example"), [
    (["-n", "16", "strassen"], "argument -n: expected a whole number, not 'strassen'", "-n 4096"),
    (["--levels", "1", "strassen"], "argument --levels: expected a whole number of levels, or auto, not 'strassen'",
     "--levels 1"),
])
def test_a_scheme_after_a_list_option_is_told_where_it_goes(capsys, words, said, example):
    """`bench -n 16 strassen` said only "expected a whole number, not 'strassen'" (an audit)."""
    code, _, err = _run(capsys, *words, "--backend", "numpy")
    assert code == 2 and err.endswith(f"{said} (FILE goes before options that take several values, or after --: "
                                      f"bench strassen {example})\n"), err
    for word in ("x", "1e3"):  # no scheme's name: no such hint (a review)
        code, _, err = _run(capsys, words[0], word, "--backend", "numpy")
        assert code == 2 and "FILE goes" not in err and f"not {word!r}" in err, err
    code, _, err = _run(capsys, "-n", "0", "--backend", "numpy")
    assert code == 2 and err.endswith("argument -n: must be at least 1, not 0\n")


def test_a_config_line_with_auto_levels_keeps_its_leaf(capsys, tmp_path):
    configs, target = tmp_path / "c.txt", tmp_path / "r.json"
    configs.write_text(f"{STRASSEN} 16 float64 auto ozaki\n")  # --leaf's default, cublas, was taken instead
    code, out, err = _run(capsys, "--configs", str(configs), "--backend", "numpy", "--repeat", "1", "--json", str(target))
    assert code == 0 and json.loads(target.read_text())["results"][0]["leaf"] == "ozaki", out + err


def test_two_files_defining_one_name_are_told_apart(capsys, tmp_path):
    other = tmp_path / "strassen.bl"
    other.write_text((ROOT / "algorithms" / "strassen.bl").read_text())
    target = tmp_path / "r.json"
    code, _, err = _run(capsys, "strassen", str(other), "-n", "16", "--levels", "1", "--backend", "numpy", "--repeat", "1",
                        "--json", str(target))
    names = [row["name"] for row in json.loads(target.read_text())["results"]]
    assert code == 0 and len(set(names)) == 2, (names, err)


def test_bench_reads_archives_with_key(capsys, tmp_path):
    from conftest import scheme_file

    archive = scheme_file("alphatensor/factorizations_r.npz")
    code, out, err = _run(capsys, str(archive), "--key", "2,2,2", "-n", "8", "--levels", "1", "--backend", "numpy", "--repeat", "1")
    assert code == 0 and "ratio" in out, out + err


@pytest.mark.parametrize("columns", ["0", "30", "50", "80", "125", "140", "250"])
def test_the_table_never_splits_a_number(capsys, monkeypatch, columns):
    """At 80 columns 0.33 was printed as "0.3" over "3" and strassen as "str" / "ass" / "en"; at 50
    every second column was blank, and COLUMNS=0 printed nothing at all; from 118 to 140 rich cut
    cells ("stras…", "6.0e-…") below the table's natural width. The ratio cell is right-aligned under
    "ratio": a ratio as short as 0.01 is padded (CI's run of 55762a6), and one below 1e-4 reads 7.71e-05
    (a hunt measured it under load)."""
    import re

    monkeypatch.setenv("COLUMNS", columns)
    code, out, _ = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--repeat", "1")
    words = " ".join(out.split())  # each result's line, wrapped at spaces in a narrow terminal
    ratio = re.search(r"strassen n=16 float64 L1 cublas: ours [\d.e+-]+ ms, NumPy [\d.e+-]+ ms, ratio ([^,\s]+),", words)[1]
    rows = [row for row in out.splitlines() if row.startswith("│")]
    assert code == 0 and "…" not in out
    if columns in ("0", "250"):  # not a width (output to a pipe: wide lines), and wide enough
        assert len(rows) == 1 and "│ strassen │" in rows[0] and re.search(rf"│ +{re.escape(ratio)} │", rows[0]), out
    else:
        # the lines hold the times, ratio, bytes and error, not the library's error or the TFLOP/s (a review)
        assert not rows and re.search(rf"\(the table needs \d+ columns and the terminal has {columns}; the lines above "
                                      r"hold its times, ratio, extra bytes and error; --json writes every column\)",
                                      words), out


def test_json_to_standard_output(capsys, tmp_path, monkeypatch):
    """`--json -` wrote a file named "-"; now the JSON alone is standard output, the rest standard error."""
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--repeat", "1", "--json", "-")
    assert code == 0 and [row["N"] for row in json.loads(out)["results"]] == [16], out
    assert "ratio" in err and list(tmp_path.iterdir()) == []


def test_a_configuration_given_twice_is_timed_once(capsys, tmp_path):
    """`bench s.bl s.bl` gave two rows that could not be told apart."""
    scheme = tmp_path / "s.bl"
    scheme.write_text((ROOT / "algorithms" / "strassen.bl").read_text())
    code, out, err = _run(capsys, str(scheme), str(tmp_path / "." / "s.bl"), "-n", "16", "16", "8", "--levels", "1",
                          "--backend", "numpy", "--repeat", "1", "--json", str(tmp_path / "r.json"))
    rows = json.loads((tmp_path / "r.json").read_text())["results"]
    assert code == 0 and [row["N"] for row in rows] == [16, 8], out + err
    assert out.count("listed more than once, timed once:") == 1 and "s.bl n=16 float64 L1 cublas" in out, out


def test_a_list_option_given_twice_keeps_both(capsys):
    """`-n 16 -n 8` timed n=8 alone: the second replaced the first without a word."""
    code, out, _ = _run(capsys, "strassen", "-n", "16", "-n", "8", "--levels", "1", "--levels", "0",
                        "--backend", "numpy", "--repeat", "1")
    words = " ".join(out.split())
    assert code == 0 and all(f"strassen n={n} float64 L{levels} cublas:" in words for n in (16, 8) for levels in (1, 0)), out


@pytest.mark.parametrize("option, name, message", [
    ("--json", "", "argument --json: expected a file name, or - for standard output, not ''"),
    ("--plot", "", "argument --plot: expected a file or folder name, not ''"),
    ("--plot", "-", "argument --plot: '-' names no file here: --plot writes an image (FILE.png, .pdf, .svg)"),
])
def test_empty_or_dash_result_names_are_usage_errors(capsys, tmp_path, monkeypatch, option, name, message):
    """--json '' said ". exists and is not a regular file" (exit 1); --plot - wrote a file "-.png"."""
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, "strassen", "-n", "8", "--levels", "1", "--backend", "numpy", option, name)
    assert code == 2 and message in err, err
    assert list(tmp_path.iterdir()) == []


def test_configs_name_schemes_as_the_command_line_does(capsys, tmp_path, monkeypatch):
    """A shipped name and its file were timed twice under two labels; a missing file's error named no
    line; a folder was "not a .bl file"."""
    monkeypatch.chdir(tmp_path)
    configs = tmp_path / "cfg.txt"
    configs.write_text(f"strassen 8 float64 1 cublas\n{STRASSEN} 8 float64 1 cublas\n")
    code, out, _ = _run(capsys, "--configs", str(configs), "--backend", "numpy", "--repeat", "1")
    assert code == 0 and out.count("float64 L1 cublas: ours") == 1 and "listed more than once, timed once" in out, out
    configs.write_text("strassen 8 float64 1 cublas\nnowhere/missing.bl 8 float64 1 cublas\n")
    code, _, err = _run(capsys, "--configs", str(configs), "--backend", "numpy")
    assert code == 1 and f"{configs}:2: nowhere/missing.bl does not exist" in err, err
    code, _, err = _run(capsys, "--configs", str(tmp_path), "--backend", "numpy")
    # what the file system holds is no command-line mistake: exit 1, as a missing FILE (it had been 2, with the usage)
    assert code == 1 and f"--configs {tmp_path} is a folder; give the file that lists the configurations" in err, err
    assert "usage:" not in err
    # a file beside the configurations comes before a shipped scheme of that name
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "strassen.bl").write_text(Path(STRASSEN).read_text().replace("algorithm strassen", "algorithm mine"))
    (tmp_path / "sub" / "cfg.txt").write_text("strassen.bl 8 float64 1 cublas\n")
    code, out, _ = _run(capsys, "--configs", str(tmp_path / "sub" / "cfg.txt"), "--backend", "numpy", "--repeat", "1")
    assert code == 0 and "mine n=8 float64 L1 cublas: ours" in " ".join(out.split()), out


def test_an_automatic_row_says_it_was_chosen(capsys, tmp_path):
    """--levels auto 1 gave two rows "L1" and a JSON that said levels 1 had been asked for both."""
    out_json = tmp_path / "auto.json"
    code, out, _ = _run(capsys, "strassen", "-n", "64", "--levels", "auto", "1", "--backend", "numpy", "--repeat", "1",
                        "--json", str(out_json))
    assert code == 0, out
    rows = json.loads(out_json.read_text())["results"]
    assert sorted(str(row["levels_requested"]) for row in rows) == ["1", "auto"]
    assert " (auto requested) cublas: ours" in " ".join(out.split()), out


def test_the_width_with_json_to_standard_output_is_standard_errors(monkeypatch):
    """With --json - | jq the table goes to a wide stderr; stdout's (a pipe's) 80 columns had hidden it."""
    import os
    import sys

    from rich.console import Console

    from bilinear.bench_cli import _console

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(Console, "is_terminal", property(lambda self: True))
    monkeypatch.setattr(sys, "stderr", type("Err", (), {"fileno": lambda self: 2, "write": print})())
    monkeypatch.setattr(sys, "stdout", type("Out", (), {"fileno": lambda self: 1, "write": print})())
    monkeypatch.setattr(os, "get_terminal_size", lambda fd=1: os.terminal_size(({2: 190}.get(fd, 80), 24)))
    assert (_console(stderr=True).width, _console(stderr=False).width) == (190, 80)


@pytest.mark.parametrize("suffix", [".jpg", ".gif", ".tiff", ".webp"])
def test_plot_formats_without_a_mark_are_written(capsys, tmp_path, suffix):
    """matplotlib's Pillow writers refuse any metadata, {} too: these plots failed after every
    timing ("metadata not supported for format 'jpeg'", exit 1, no plot)."""
    pytest.importorskip("matplotlib")
    target = tmp_path / f"p{suffix}"
    code, out, err = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--repeat", "1",
                          "--plot", str(target))
    assert code == 0 and target.stat().st_size > 0, err


@pytest.mark.skipif(shutil.which("xelatex") is not None, reason="TeX is installed: pgf plots are written")
def test_a_plot_format_matplotlib_cannot_write_here_is_refused_before_measuring(capsys, tmp_path):
    """--plot x.pgf passed the check (matplotlib lists pgf) and ended in a RuntimeError traceback
    after every timing: pgf needs a TeX installation."""
    pytest.importorskip("matplotlib")
    code, out, err = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--repeat", "1",
                          "--plot", str(tmp_path / "p.pgf"))
    # the reason is matplotlib's for the plot (its text needs TeX), not a TypeError of a metadata=None it was passed
    assert code == 2 and "--plot: matplotlib cannot write .pgf files here ('xelatex' not found" in err, err
    assert "strassen n=16" not in out
    assert not (tmp_path / "p.pgf").exists()


def test_an_unmarked_plot_format_that_exists_is_refused_for_what_it_is(capsys, tmp_path):
    """A second `--plot p.jpg` said the first run's plot "is no plot bench wrote"."""
    pytest.importorskip("matplotlib")
    target = tmp_path / "p.jpg"
    bench = ("strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--repeat", "1", "--plot", str(target))
    assert _run(capsys, *bench)[0] == 0
    code, _, err = _run(capsys, *bench)
    assert code == 1 and f"--plot {target} exists, and .jpg files carry no mark to tell bench's plots by: " \
        "choose another name, remove it, or plot to .png, .pdf, .svg, .eps, .ps (bench replaces its own)" in err, err


def test_paths_with_brackets_are_printed_as_typed(capsys, tmp_path):
    """rich read `[/x]` in a --json path as markup: a traceback after the timing, and `r[red].json`
    was said as `wrote r.json` (a hunt)."""
    folder = tmp_path / "d[/x]"
    folder.mkdir(parents=True)
    shutil.copy(STRASSEN, folder / "strassen.bl")
    for target in (folder / "r.json", tmp_path / "r[red].json"):
        code, out, err = _run(capsys, str(folder / "strassen.bl"), "strassen", "-n", "8", "--levels", "1",
                              "--backend", "numpy", "--repeat", "1", "--json", str(target))
        assert code == 0 and f"wrote {target}" in out, out + err
        assert len(json.loads(target.read_text())["results"]) == 2


def test_a_fixed_level_row_has_the_same_model_time_whatever_else_is_timed(capsys):
    """On the CPU the ceilings were measured at the first `auto` row: a fixed-level row after it had a
    model time, one before it had none (a hunt)."""
    rows = []
    for levels in (("1", "auto"), ("auto", "1")):
        code, out, err = _run(capsys, "strassen", "-n", "32", "--levels", *levels, "--backend", "numpy", "--repeat", "1",
                              "--json", "-")
        assert code == 0, err
        (fixed,) = [row for row in json.loads(out)["results"] if row["levels_requested"] != "auto"]
        rows.append(fixed["predicted_ms"] is None)
    assert rows == [True, True]


def test_tflops_on_the_cpu_show_their_digits(capsys):
    """The TFLOP/s columns said 0.0 for every CPU row (a hunt)."""
    code, out, err = _run(capsys, "strassen", "-n", "64", "--levels", "1", "--backend", "numpy", "--repeat", "1")
    assert code == 0, err
    (row,) = [line for line in out.splitlines() if line.count("│") > 10 and "strassen" in line]
    cells = [cell.strip() for cell in row.split("│")]
    assert all(float(cells[index]) > 0 for index in (9, 10)), row


def test_bench_help_says_levels_auto_chooses_the_leaf_among_leafs_kinds(capsys):
    """It said "`--levels auto` lets the model choose levels and leaf", where the leaf is chosen among
    --leaf's kinds, cublas alone by default (a hunt)."""
    from bilinear.cli import main

    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "the leaf among --leaf's kinds (cublas alone by default)" in help_text
    assert "a leaf of auto, beside levels auto, is cublas" in help_text
    # `--levels auto --leaf fused` ran cuBLAS alone at 0 levels, which the help did not say (a CLI hunt)
    assert ("where it chooses 0 levels, the library's GEMM runs (the ozaki leaf, where that is the only kind given), "
            "whatever --leaf says") in help_text


def test_two_definitions_of_one_shipped_file_are_two_inputs(capsys, tmp_path):
    """msmes2.bl holds strassen_x_strassen and msmes2: named both, bench timed one and called the
    other a repeat of it (the paths compared equal, whatever definition each named)."""
    out_json = tmp_path / "b.json"
    code, out, err = _run(capsys, "msmes2", "strassen_x_strassen", "-n", "16", "--levels", "1", "--backend", "numpy",
                          "--repeat", "1", "--json", str(out_json))
    assert code == 0 and "listed more than once" not in out + err, out + err
    assert [row["name"] for row in json.loads(out_json.read_text())["results"]] == ["msmes2", "strassen_x_strassen"]


def test_cpu_times_and_ratios_keep_their_digits(capsys):
    """On the CPU NumPy's 16³ product printed "NumPy 0.00 ms, ratio 0.002" and the table 0.00: a
    time and its ratio that could not be checked against each other (a hunt)."""
    import re

    code, out, _ = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--repeat", "3")
    ours, numpy_ms, ratio = (float(x) for x in re.search(
        r"ours ([\d.e-]+) ms, NumPy ([\d.e-]+) ms, ratio ([\d.e-]+)", out).groups())
    assert code == 0 and numpy_ms > 0 and ratio > 0
    assert abs(ratio - numpy_ms / ours) <= 0.02 * ratio  # each printed to three significant figures at least


@pytest.mark.parametrize("backend", [["--backend", "numpy"], []])
def test_on_the_cpu_the_default_sizes_are_the_cpus(capsys, tmp_path, monkeypatch, backend):
    """Without a GPU, bench with no -n timed the GPU's defaults, 4096 and 8192, on NumPy: minutes a
    product, tens of minutes in all (a hunt).  On the CPU they are 512 and 1024."""
    from bilinear.runtime import cupy_backend

    monkeypatch.setattr(cupy_backend, "cupy_available", lambda: False)
    results = tmp_path / "r.json"
    code, _, err = _run(capsys, "strassen", "--levels", "1", "--repeat", "1", *backend, "--json", str(results))
    assert code == 0, err
    assert sorted({row["N"] for row in json.loads(results.read_text())["results"]}) == [512, 1024]


def test_a_run_cut_short_leaves_its_rows_marked_incomplete(capsys, tmp_path, monkeypatch):
    """An interrupted bench left --json results that read like a whole run (a hunt): they now say how many
    configurations the run had and whether all are there."""
    from bilinear import bench_cli

    timed = bench_cli.bench_one

    def stopped_at_the_second(*args, **options):
        if stopped_at_the_second.calls == 1:
            raise KeyboardInterrupt
        stopped_at_the_second.calls += 1
        return timed(*args, **options)

    stopped_at_the_second.calls = 0
    monkeypatch.setattr(bench_cli, "bench_one", stopped_at_the_second)
    results = tmp_path / "r.json"
    code, _, err = _run(capsys, "strassen", "-n", "16", "24", "--levels", "1", "--backend", "numpy", "--json", str(results))
    assert code == 130, err
    written = json.loads(results.read_text())
    assert (len(written["results"]), written["configurations"], written["complete"]) == (1, 2, False)
    monkeypatch.setattr(bench_cli, "bench_one", timed)
    code, _, err = _run(capsys, "strassen", "-n", "16", "24", "--levels", "1", "--backend", "numpy", "--json", str(results))
    written = json.loads(results.read_text())
    assert code == 0 and (len(written["results"]), written["configurations"], written["complete"]) == (2, 2, True), err


def test_a_row_is_written_before_it_is_printed(capsys, tmp_path, monkeypatch):
    """`bench ... --json r.json | head -1`: the closed pipe ended the run as it printed the first row,
    before that row was written, and the measured row was lost (a hunt)."""
    from bilinear import bench_cli

    def closed_pipe(result):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(bench_cli, "_line", closed_pipe)
    results = tmp_path / "r.json"
    code, _, err = _run(capsys, "strassen", "-n", "16", "--levels", "1", "--backend", "numpy", "--json", str(results))
    assert code == 1
    assert [row["N"] for row in json.loads(results.read_text())["results"]] == [16]


def test_each_input_is_read_once_not_once_per_configuration(capsys, monkeypatch):
    """Every size, dtype and level count read its file again, and said its notes again: four
    configurations of a PLinOpt scheme printed its "alternative basis" note four times (a hunt)."""
    from bilinear import bench_cli

    read = []
    loading = bench_cli.load_input_noting
    monkeypatch.setattr(bench_cli, "load_input_noting", lambda args, path: read.append(path) or loading(args, path))
    code, _, err = _run(capsys, STRASSEN, str(ROOT / "algorithms" / "winograd.bl"), "-n", "8", "12", "--levels", "0",
                        "1", "--repeat", "1", "--backend", "numpy")
    assert code == 0, err
    assert sorted(Path(path).name for path in read) == ["strassen.bl", "winograd.bl"]


def test_a_plot_takes_a_label_with_dollar_signs_as_text(tmp_path):
    """Two inputs naming one scheme are labelled by their paths, and matplotlib read `x$^$y` as
    mathematics: its parse error came after every timing, and a pair that parsed drew another
    name (a hunt)."""
    pytest.importorskip("matplotlib")
    from bilinear.bench import BenchResult, plot, series_label

    row = BenchResult("s (x$^$y/s.bl)", "x$^$y/s.bl", 1, "cublas", "float64", 64, 64, 64, 1.0, 1.0, 1.0, 0.5, 0.5, 0,
                      1e-16, 1e-16, 1.0)
    picture = tmp_path / "dollars.png"
    plot([row], picture)
    assert picture.stat().st_size > 1000
    assert series_label("s (x$^$y/s.bl)", 1, "cublas") == r"s (x\$^\$y/s.bl) L1 cublas"


def test_a_row_of_ozaki_leaves_has_no_model_time(capsys, tmp_path):
    """The model has no rate for the Ozaki leaves and priced them as the library's GEMM: a NumPy row
    that took 295 ms was "model 0.993 ms", as for cuBLAS leaves (a hunt).  It predicts none now."""
    rows = {}
    for leaf in ("ozaki", "cublas"):
        target = tmp_path / f"{leaf}.json"
        code, out, err = _run(capsys, STRASSEN, "-n", "32", "--levels", "auto", "--leaf", leaf, "--repeat", "1",
                              "--backend", "numpy", "--json", str(target))
        assert code == 0, err
        (rows[leaf],) = json.loads(target.read_text())["results"]
    assert rows["ozaki"]["predicted_ms"] is None and rows["cublas"]["predicted_ms"] > 0


def test_configs_name_files_with_spaces_and_hashes_as_a_shell_does(capsys, tmp_path, monkeypatch):
    """`v#2.bl` was cut at its # ("expected 'scheme.bl n …', got 'v#2.bl 16 …'"), and a quoted "a b.bl" split in
    two (a hunt); # begins a comment at a line's start or after a space, as in a shell."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(STRASSEN, tmp_path / "v#2.bl")
    shutil.copy(STRASSEN, tmp_path / "a b.bl")
    configs = tmp_path / "cfg.txt"
    configs.write_text("# schemes with odd names\nv#2.bl 8 float64 1 cublas  # a comment\n'a b.bl' 8 float32 1 cublas\n")
    code, out, err = _run(capsys, "--configs", str(configs), "--backend", "numpy", "--repeat", "1")
    assert code == 0, err
    assert "float64 L1 cublas: ours" in out and "float32 L1 cublas: ours" in out
    configs.write_text("'a b.bl 8 float64 1 cublas\n")
    code, _, err = _run(capsys, "--configs", str(configs), "--backend", "numpy")
    assert code == 1 and f"{configs}:1: no closing quotation, got \"'a b.bl 8 float64 1 cublas\"" in err, err


def test_a_reading_option_refused_by_one_of_several_files_names_it_and_says_to_import(capsys, tmp_path):
    """`bench factors.npz strassen --key 2,2,2`: "--key (key=) applies to catalogue schemes, not to .bl files",
    naming neither file, and no way on (a hunt): every FILE is read with the same options."""
    import numpy as np

    np.savez(tmp_path / "one.npz", **{"1,1,1": np.ones((3, 1, 1), dtype=np.int64)})
    code, _, err = _run(capsys, str(tmp_path / "one.npz"), STRASSEN, "--key", "1,1,1", "-n", "8", "--backend", "numpy")
    assert code == 1
    assert f"--key (key=) applies to catalogue schemes, not to .bl files ({STRASSEN} is one)" in err, err
    assert ("note: --from, --shape, --key, --mod and --allow-pickle read every FILE alike; to bench a catalogue "
            "scheme beside others, `bilinear import` it to a .bl file first") in err, err


def test_one_kernel_compiled_ahead_is_said_in_the_singular(monkeypatch):
    """On the GPU, a bench whose fixed-level configurations launch one kernel said "compiled 1 kernels"."""
    from types import SimpleNamespace

    from rich.console import Console

    import bilinear
    from bilinear import bench_cli
    from bilinear.runtime import prepare

    monkeypatch.setattr(prepare, "compile_ahead", lambda jobs, backend: len(jobs))
    console = Console(record=True, width=80)
    path = ROOT / "algorithms" / "strassen.bl"
    bench_cli._lower_ahead([(path, 64, "float64", "1", "cublas")], {path: bilinear.load(path)},
                           SimpleNamespace(name="cupy"), console, ["cublas"])
    assert console.export_text() == "compiled 1 kernel ahead of timing\n"
