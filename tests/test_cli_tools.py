"""`bilinear import`, `list`, `compile` and `run` from the command line (CPU)."""

from __future__ import annotations

import re

import pytest

import bilinear
from bilinear.cli import main

from conftest import scheme_file
from helpers.cli import run_cli


def test_import_writes_a_bl_file_that_verifies(tmp_path, capsys):
    source = scheme_file("fast-matmul/hk323-15-94")
    out = tmp_path / "hk323.bl"
    assert main(["import", str(source), "--name", "hk323", "-o", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    report = bilinear.verify(out)
    assert report.ok and report.entries[0].algorithm.name == "hk323"
    assert report.entries[0].algorithm.rank == 15


def test_import_table_style_to_stdout(capsys):
    assert main(["import", str(scheme_file("fast-matmul/strassen")), "--style", "table"]) == 0
    assert "U:" in capsys.readouterr().out


def test_import_refuses_a_wrong_name(capsys):
    code, _, err = run_cli(capsys, "import", scheme_file("fast-matmul/strassen"), "--name", "not valid")
    assert code == 2 and "argument --name: must be an identifier" in err


def test_list_shows_every_shipped_definition(capsys):
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.split()[:2] == ["msmes.bl", "msmes"] and line.endswith("verified") for line in lines)
    assert all(line.endswith("verified") for line in lines)
    # msmes2's algorithm, strassen_x_strassen, ran past its 12-character column and pushed the rest along
    starts = {max(line.find(" algorithm <"), line.find(" schedule for ")) for line in lines}
    ends = {line.rfind(" verified") for line in lines}
    assert len(starts) == 1 and len(ends) == 1, lines
    # a schedule's shape and rank are its algorithm's: --help promised them, and schedules had none (a hunt)
    (msmes,) = [line for line in lines if line.split()[:2] == ["msmes.bl", "msmes"]]
    assert " schedule for strassen <2,2,2;7> [inplace, restore] " in msmes, msmes


def test_list_exits_1_where_a_shipped_definition_fails_and_says_an_empty_folder_is_empty(capsys, tmp_path,
                                                                                          monkeypatch):
    """It exited 0 beside a FAILS row, and said "max() arg is an empty sequence" of an empty folder (an audit)."""
    monkeypatch.setattr("bilinear.paths.algorithms_dir", lambda: tmp_path)
    code, out, err = run_cli(capsys, "list")
    assert (code, out, err) == (1, "", f"bilinear list: no .bl files in {tmp_path}\n")
    wrong = open("algorithms/strassen.bl").read().replace("M3 + M5", "M3 - M5")
    (tmp_path / "wrong.bl").write_text(wrong)
    code, out, _ = run_cli(capsys, "list")
    assert code == 1 and out.splitlines()[0].split() == ["wrong.bl", "strassen", "algorithm", "<2,2,2;7>", "FAILS"]


def test_list_shows_every_other_file_where_one_cannot_be_read(capsys, tmp_path, monkeypatch):
    """One unparsable file made list print its error and nothing else (a hunt)."""
    monkeypatch.setattr("bilinear.paths.algorithms_dir", lambda: tmp_path)
    (tmp_path / "aaa.bl").write_text("algorithm <2,2,2;7>:\n")
    (tmp_path / "strassen.bl").write_text(open("algorithms/strassen.bl").read())
    code, out, err = run_cli(capsys, "list")
    lines = out.splitlines()
    assert code == 1 and len(lines) == 2 and lines[0].startswith("aaa.bl") and lines[0].endswith("FAILS")
    assert "cannot be read: " in lines[0]
    assert lines[1].split() == ["strassen.bl", "strassen", "algorithm", "<2,2,2;7>", "verified"]


def test_run_on_the_cpu_reports_and_exits_zero(capsys):
    code = main(["run", "algorithms/msmes.bl", "-n", "33", "--levels", "2", "--backend", "numpy", "--repeat", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "relative error" in out and "restored" in out


@pytest.mark.parametrize("command", ["run", "bench"])
def test_an_overflowing_scheme_is_reported_without_numpys_warnings(capsys, tmp_path, command):
    """NumPy's "numpy_backend.py:36: RuntimeWarning: overflow encountered in matmul" came before the
    report, which says what overflowed (an audit)."""
    import warnings

    big, small = f"{6 * 10**18}*", f"1/{36 * 10**36}*"  # M1 by 6e18 on both sides, and its uses by 1/36e36
    scaled = open("algorithms/strassen.bl").read().replace(
        "M1 = (A11 + A22) * (B11 + B22)", f"M1 = ({big}A11 + {big}A22) * ({big}B11 + {big}B22)").replace(
        "C11 = M1", f"C11 = {small}M1").replace("C22 = M1", f"C22 = {small}M1")
    path = tmp_path / "overflow.bl"
    path.write_text(scaled)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code, out, err = run_cli(capsys, command, str(path), "-n", "64", "--dtype", "float32", "--backend", "numpy",
                               "--repeat", "1", *(["--levels", "1"] if command == "bench" else []))
    assert code == 1 and err == "", (out, err)
    # inf, or NaN where the BLAS's order of summing meets overflowed terms of both signs (inf - inf: NumPy
    # 2.4's OpenBLAS on an AMD EPYC), and either way past the bound
    said = r"relative error  (inf|nan) " if command == "run" else r"error (inf|nan) \(bound 7.1e-06\): EXCEEDS THE BOUND"
    assert re.search(said, out), out


def test_run_rejects_beta_for_an_overwriting_schedule(capsys):
    code = main(["run", "algorithms/rsmm.bl", "-n", "16", "--backend", "numpy", "--beta", "1", "--repeat", "1"])
    assert code == 1
    assert "beta must be 0" in capsys.readouterr().err


def test_compile_refuses_a_wrong_scheme(tmp_path, capsys):
    wrong = tmp_path / "wrong.bl"
    wrong.write_text(open("algorithms/strassen.bl").read().replace("M3 + M5", "M3 - M5"))
    assert main(["compile", str(wrong), "-o", str(tmp_path / "out")]) == 1
    assert not (tmp_path / "out").exists()
    assert "C12 is wrong" in capsys.readouterr().err


def test_cli_choices_and_options_come_from_the_lowering_tables():
    """`--leaf` and `--dtype` list exactly the tables lowering validates against, and a command
    line becomes Options in one place."""
    import argparse

    from bilinear.cli import build_parser
    from bilinear.lower.options import DTYPES, LEAVES, Options

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    for command in ("compile", "run"):
        actions = {a.dest: a for a in commands[command]._actions}
        assert tuple(actions["leaf"].choices) == LEAVES and tuple(actions["dtype"].choices) == DTYPES
    args = parser.parse_args(["compile", "x.bl", "--leaf", "fused", "--levels", "2", "--no-fuse", "--dtype", "float32"])
    assert Options.from_args(args) == Options(dtype="float32", levels=2, leaf="fused", fuse=False)
