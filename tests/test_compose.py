"""Composition: the six ⟨m,k,n⟩ permutations, Kronecker products, hybrids, shipped names, a fast import.

The derived schemes are checked by the verifier and, independently, against
the NumPy transforms of tests/helpers/schemes.py (which share no code with
bilinear.compose).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ALGORITHMS, ROOT
from helpers import schemes as S

import bilinear
from bilinear.cli import main
from bilinear.compose import PERMUTATIONS, kronecker, permute
from bilinear.diagnostics import BilinearError
from bilinear.frontend.loader import find_scheme
from bilinear.paths import algorithms_dir
from bilinear.verify import report_algorithm

SHIPPED = {a.name: a for path in ALGORITHMS for a in bilinear.load(path).algorithms}


def _same(first: S.Scheme, second: S.Scheme) -> bool:
    tables = zip((first.U, first.V, first.W), (second.U, second.V, second.W))
    return first.shape == second.shape and all(
        all(np.array_equal(x, y) for x, y in zip(a, b)) for a, b in tables
    )


def _helper_permutation(scheme: S.Scheme, order: str) -> S.Scheme:
    for step in PERMUTATIONS[order]:
        scheme = S.transpose(scheme) if step == "T" else S.cyclic(scheme)
    return scheme


@pytest.mark.parametrize("order", sorted(PERMUTATIONS))
@pytest.mark.parametrize("name", ["strassen", "winograd", "grey234", "grey333"])
def test_every_permutation_verifies_and_matches_the_independent_transform(name, order):
    algorithm = SHIPPED[name]
    result = permute(algorithm, order)
    dims = dict(zip("mkn", (algorithm.shape.m, algorithm.shape.k, algorithm.shape.n)))
    assert (result.shape.m, result.shape.k, result.shape.n) == tuple(dims[letter] for letter in order)
    assert result.rank == algorithm.rank and report_algorithm(result).ok
    assert _same(S.from_algorithm(result), _helper_permutation(S.from_algorithm(algorithm), order))


def test_kronecker_product_verifies_and_matches_the_independent_product():
    first, second = SHIPPED["strassen"], SHIPPED["grey234"]
    result = kronecker(first, second)
    assert (result.shape.m, result.shape.k, result.shape.n, result.rank) == (4, 6, 8, 140)
    assert report_algorithm(result).ok
    assert _same(S.from_algorithm(result), S.kron(S.from_algorithm(first), S.from_algorithm(second)))


def test_a_wrong_input_is_refused_and_nothing_is_written(tmp_path, capsys):
    wrong = tmp_path / "wrong.bl"
    wrong.write_text((ROOT / "algorithms" / "strassen.bl").read_text().replace("C22 = M1 - M2", "C22 = M1 + M2"))
    out = tmp_path / "out.bl"
    assert main(["product", str(wrong), "strassen", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"{wrong}:16:3: error: C22 is wrong" in err and not out.exists()
    assert err.rstrip().endswith(f"strassen in {wrong} does not verify; nothing was derived from it")


def test_transform_and_product_commands_write_verified_files(tmp_path, capsys):
    transposed, product = tmp_path / "t.bl", tmp_path / "p.bl"
    assert main(["transform", "grey234", "--to", "nkm", "-o", str(transposed)]) == 0
    assert main(["product", "strassen", str(transposed), "--style", "table", "-o", str(product)]) == 0
    for path, rank in ((transposed, 20), (product, 140)):
        report = bilinear.verify(path)
        assert report.ok and report.entries[0].algorithm.rank == rank
    assert "grey234 <2,3,4> permuted to order nkm" in transposed.read_text()


def test_transform_and_product_say_when_named_sums_are_multiplied_out(tmp_path, capsys):
    """Named sums (winograd's, or optimize's) went into products of block sums without a word."""
    shared = ROOT / "algorithms" / "winograd.bl"
    sums = len(bilinear.load(shared).main.sums)
    note = (f"note: winograd's {sums} named sums are multiplied out in the result (its block additions: 15 as "
            "written, 24 multiplied out); `bilinear optimize` it to share sums again\n")
    assert main(["transform", str(shared), "--to", "nkm", "-o", str(tmp_path / "t.bl")]) == 0
    assert capsys.readouterr().err == note.replace("24 multiplied out", "24 in the result")
    assert not bilinear.load(tmp_path / "t.bl").main.sums
    assert main(["product", "strassen", str(shared), "-o", str(tmp_path / "p.bl")]) == 0
    assert capsys.readouterr().err == note
    for second in (str(shared), "winograd"):  # one definition twice: the note once (it was printed twice)
        assert main(["product", str(shared), second, "-o", str(tmp_path / "ww.bl"), "--force"]) == 0
        assert capsys.readouterr().err == note
    assert main(["transform", "strassen", "--to", "nkm", "-o", str(tmp_path / "plain.bl")]) == 0
    assert "note" not in capsys.readouterr().err


@pytest.mark.parametrize(("order", "additions"), [("nkm", 96), ("knm", 98), ("nmk", 92)])
def test_transform_says_the_additions_of_the_result_it_writes(tmp_path, capsys, order, additions):
    """A cyclic permutation moves C's side onto A or B, whose sums multiply out otherwise: optimized grey234
    to knm was said to multiply out to 96 block additions, and the result has 98 (an audit)."""
    optimized = tmp_path / "g.bl"
    assert main(["optimize", "grey234", "--seeds", "1", "-o", str(optimized)]) == 0
    capsys.readouterr()
    assert main(["transform", str(optimized), "--to", order, "-o", str(tmp_path / "t.bl")]) == 0
    assert capsys.readouterr().err == ("note: grey234_cse's 15 named sums are multiplied out in the result (its block "
                                       f"additions: 62 as written, {additions} in the result); `bilinear optimize` it to "
                                       "share sums again\n")
    assert main(["verify", str(tmp_path / "t.bl")]) == 0
    assert f"  additions: {additions} as written" in capsys.readouterr().out


def test_product_drops_the_products_of_unused_ones_as_transform_does(tmp_path, capsys):
    """strassen with an unused M8, times itself, was written as <4,4,4;64> with 15 products no output uses,
    where transform drops such a product with a note (an audit)."""
    s8 = tmp_path / "s8.bl"
    s8.write_text((ROOT / "algorithms/strassen.bl").read_text().replace("<2,2,2;7>", "<2,2,2;8>").replace(
        "  M7 = (A12 - A22) * (B21 + B22)\n", "  M7 = (A12 - A22) * (B21 + B22)\n  M8 = A11 * B11\n"))
    assert main(["product", str(s8), str(s8), "-o", str(tmp_path / "p.bl")]) == 0
    err = capsys.readouterr().err
    assert err.startswith("note: dropped the products that multiply FILE's M8 or SECOND's M8: no output uses "
                          "them\n"), err
    assert "never used" not in err
    assert bilinear.verify(tmp_path / "p.bl").entries[0].algorithm.rank == 49
    # with its msmes schedule: the schedule product's algorithm drops them too, and says so (a review)
    m8 = tmp_path / "m8.bl"
    m8.write_text('use "s8.bl"\n' + (ROOT / "algorithms/msmes.bl").read_text().split('use "strassen.bl"', 1)[1])
    assert main(["product", str(m8), str(m8), "-o", str(tmp_path / "q.bl")]) == 0
    assert "note: dropped the products that multiply FILE's M8 or SECOND's M8: no output uses them\n" in \
        capsys.readouterr().err
    assert bilinear.verify(tmp_path / "q.bl").ok


def test_inplace_as_a_table_says_that_named_sums_are_multiplied_out(tmp_path, capsys):
    """import said it, inplace --style table nothing: winograd's 15 additions became 24 without a word (a hunt)."""
    assert main(["inplace", "winograd", "--tries", "2", "--steps", "2", "--style", "table", "-o", str(tmp_path / "t.bl")]) == 0
    assert ("note: winograd's 11 named sums are multiplied out in the table (its block additions: 15 as written, 24 "
            "multiplied out); --style equations keeps them\n") in capsys.readouterr().err
    assert main(["inplace", "winograd", "--tries", "2", "--steps", "2", "-o", str(tmp_path / "e.bl")]) == 0
    assert "multiplied out" not in capsys.readouterr().err


def test_import_as_a_table_says_that_named_sums_are_multiplied_out(tmp_path, capsys):
    """The table's comment said so, the command nothing: an optimized winograd's 15 additions became 24."""
    optimized = tmp_path / "w.bl"
    assert main(["optimize", "winograd", "--seeds", "0", "-o", str(optimized)]) == 0
    capsys.readouterr()
    assert main(["import", str(optimized), "--style", "table", "-o", str(tmp_path / "t.bl")]) == 0
    sums = len(bilinear.load(optimized).main.sums)
    assert capsys.readouterr().err == (f"note: winograd_cse's {sums} named sums are multiplied out in the table (its "
                                       "block additions: 15 as written, 24 multiplied out); --style equations keeps "
                                       "them\n")
    assert main(["import", str(optimized), "-o", str(tmp_path / "e.bl")]) == 0  # equations keep the sums
    assert main(["import", "strassen", "--style", "table", "-o", str(tmp_path / "s.bl")]) == 0  # it has none
    assert "note" not in capsys.readouterr().err


def test_export_says_that_a_schedule_is_not_carried(tmp_path, capsys):
    """`export msmes --to fast-matmul` wrote strassen and dropped the schedule without a word (a hunt)."""
    assert main(["export", "msmes", "--to", "fast-matmul", "-o", str(tmp_path / "m")]) == 0
    assert ("note: msmes is a schedule; export writes its algorithm strassen and writes no schedule (a catalogue "
            "format holds a scheme's coefficients alone)\n") in capsys.readouterr().err
    assert main(["export", "msmes", "--to", "fast-matmul", "--algorithm", "strassen", "-o", str(tmp_path / "s"),
                 ]) == 0
    assert "note" not in capsys.readouterr().err


def test_transform_and_product_say_that_a_schedule_is_not_carried(tmp_path, capsys):
    """`transform msmes` wrote strassen permuted and dropped the in-place schedule without a word."""
    assert main(["transform", "msmes", "--to", "nkm", "-o", str(tmp_path / "t.bl")]) == 0
    assert ("note: msmes is a schedule; transform permutes its algorithm strassen and writes no schedule (transform "
            "derives algorithms only: a schedule's statements name blocks of A, B and C, which a permutation moves); "
            "compile and run derive one for the result\n") in capsys.readouterr().err
    assert main(["product", "strassen", "msmes", "-o", str(tmp_path / "p.bl")]) == 0
    assert ("note: msmes is a schedule; product multiplies its algorithm strassen and writes no schedule (it writes "
            "one schedule of both levels only where FILE's and SECOND's main definitions are both schedules)\n"
            ) in capsys.readouterr().err
    # --algorithm chooses FILE's definition only: SECOND's schedule is still not written, and it said nothing
    assert main(["product", "strassen", "msmes", "--algorithm", "strassen", "-o", str(tmp_path / "a.bl")]) == 0
    assert ("note: msmes is a schedule; product multiplies its algorithm strassen and writes no schedule (it writes "
            "one schedule of both levels only where FILE's and SECOND's main definitions are both schedules)\n"
            ) in capsys.readouterr().err
    # both schedules, and --algorithm chose FILE's algorithm: that is why (it had said the rule above; an audit)
    assert main(["product", "msmes", "msmes", "--algorithm", "strassen", "-o", str(tmp_path / "b.bl")]) == 0
    assert ("note: msmes is a schedule; product multiplies its algorithm strassen and writes no schedule (--algorithm "
            "strassen chose FILE's algorithm; without it, product writes one schedule of both levels)\n"
            ) in capsys.readouterr().err
    # two schedules that make no schedule product either way: that, not --algorithm, is why (a review)
    assert main(["product", "msmes", "rsmm", "--algorithm", "strassen", "-o", str(tmp_path / "c.bl")]) == 0
    assert ("note: rsmm is a schedule; product multiplies its algorithm winograd and writes no schedule (schedule "
            "rsmm has temporaries; a product of schedules is written for schedules over the operands' blocks alone "
            "(in-place ones such as msmes))\n") in capsys.readouterr().err
    # asked for the algorithm, no schedule, or both schedules written
    for command in (["transform", "msmes", "--to", "nkm", "--algorithm", "strassen"],
                    ["transform", "strassen", "--to", "nkm"], ["product", "msmes", "msmes"]):
        assert main([*command, "-o", str(tmp_path / "again.bl"), "--force"]) == 0
        assert "writes no schedule" not in capsys.readouterr().err


def test_shipped_schemes_are_found_by_name(capsys):
    assert find_scheme("strassen").name == "strassen.bl"
    assert find_scheme("rsmm").name == "rsmm.bl" and find_scheme("msmes.bl").name == "msmes.bl"
    assert find_scheme("no_such_scheme").name == "no_such_scheme"
    assert main(["verify", "msmes"]) == 0
    assert "msmes" in capsys.readouterr().out


@pytest.mark.parametrize("text", ["./strassen", "./strassen.bl", "sub/../strassen"])
def test_a_path_with_a_folder_in_it_is_taken_as_it_is(tmp_path, monkeypatch, capsys, text):
    """`compile ./strassen` where no such file is compiled the shipped strassen: pathlib drops the ./, so
    the path looked like a bare name (a hunt)."""
    monkeypatch.chdir(tmp_path)
    assert find_scheme(text).absolute() == Path(text).absolute()
    assert main(["verify", text]) == 1
    said = capsys.readouterr().err
    assert said.startswith(f"error: cannot read {find_scheme(text)}: No such file or directory"), said
    with pytest.raises(BilinearError, match="No such file or directory"):
        bilinear.load(text)


def test_levels_schemes_makes_a_hybrid(tmp_path, capsys):
    out = tmp_path / "hybrid"
    assert main(["compile", "msmes", "--levels-schemes", "msmes,grey333.bl", "-o", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert [level["algorithm"] for level in manifest["levels"]] == ["strassen", "grey333"]
    # named after the hybrid, not after its innermost level's scheme alone (grey333.cu, grey333_dgemm)
    assert sorted(path.name for path in out.glob("*.[ch]*")) == ["msmes_grey333.cu", "msmes_grey333.h"]
    assert manifest["host"]["functions"] == {"float64": "msmes_grey333_dgemm", "float32": "msmes_grey333_sgemm"}
    printed = capsys.readouterr()
    assert "note" not in printed.err
    # it had credited grey333 to msmes.bl ("msmes.bl: 3 verified")
    files = f"{ROOT / 'algorithms/msmes.bl'}, {ROOT / 'algorithms/grey333.bl'}"
    assert f"\n{files}: 3 verified, 0 failed\n" in printed.out
    report = (out / "report.txt").read_text()
    assert f"\n{files}: 3 verified, 0 failed\n\nlibrary msmes_grey333: 2 levels, cublas leaves; " in report
    # msmes is a schedule for strassen: level 1 multiplies with FILE's strassen (it had been called unused)
    assert main(["compile", "strassen", "--levels-schemes", "msmes,grey333.bl", "-o", str(tmp_path / "other")]) == 0
    assert "not used" not in capsys.readouterr().err
    assert main(["compile", "winograd", "--levels-schemes", "msmes,grey333.bl", "-o", str(tmp_path / "third")]) == 0
    assert capsys.readouterr().err.endswith(
        f"bilinear compile: note: --levels-schemes names every level's scheme; {find_scheme('winograd')}'s winograd "
        "is not one of them and is not used\n")
    code = main(["run", "strassen", "--levels-schemes", "grey234,strassen", "-n", "29", "-m", "35", "-k", "22",
                 "--backend", "numpy", "--repeat", "1"])
    assert code == 0, capsys.readouterr()


def test_levels_schemes_merge_a_copy_of_a_definition_and_refuse_a_different_one(tmp_path, capsys):
    """A byte-identical copy of strassen.bl was "defined differently": its products' own spans differed."""
    copy = tmp_path / "strassen2.bl"
    copy.write_text((ROOT / "algorithms" / "strassen.bl").read_text())
    assert main(["compile", "msmes", "--levels-schemes", f"msmes,{copy}", "-o", str(tmp_path / "out")]) == 0, capsys.readouterr()
    different = tmp_path / "strassen3.bl"  # Winograd's algorithm under strassen's name
    different.write_text((ROOT / "algorithms" / "winograd.bl").read_text().replace("algorithm winograd", "algorithm strassen"))
    capsys.readouterr()
    assert main(["compile", "msmes", "--levels-schemes", f"msmes,{different}", "-o", str(tmp_path / "out3")]) == 1
    shipped = algorithms_dir() / "strassen.bl"
    assert f"strassen is defined differently in {shipped} and in {different}" in capsys.readouterr().err
    # Named the other way round, the message had named msmes.bl, which only uses strassen.bl (a hunt).
    assert main(["compile", "msmes", "--levels-schemes", f"{different},msmes", "-o", str(tmp_path / "out4")]) == 1
    assert f"strassen is defined differently in {different} and in {shipped}" in capsys.readouterr().err


def test_import_bilinear_is_fast_and_lazy():
    # CPU seconds, not wall-clock ones: a busy 2-core machine stretches the latter
    code = "import sys, time; t = time.process_time(); import bilinear; print(time.process_time() - t); " \
           "print(all(m not in sys.modules for m in ('sympy', 'lark')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[1] == "True"
    assert float(out[0]) < 0.3
    assert callable(bilinear.load) and "verify" in dir(bilinear)


def test_a_large_product_says_that_it_takes_minutes(capsys, tmp_path, monkeypatch):
    """⟨54,54,54;97336⟩ ran 20 minutes without a word before it was stopped (verifying it takes time
    quadratic in the products: 12,167 took 9.6 s, 25,921 took 40 s)."""
    import bilinear.compose_cli

    monkeypatch.setattr(bilinear.compose_cli, "LARGE_PRODUCT", 49)
    assert main(["product", "strassen", "strassen", "-o", str(tmp_path / "s2.bl")]) == 0
    assert ("note: the product of strassen and strassen has 49 products; building and verifying it before it is "
            "written takes about 0 s (time quadratic in the products: 40 s at 25,921)") in capsys.readouterr().err


@pytest.mark.parametrize("rank, said", [(12_167, "9 s"), (16_807, "17 s"), (97_336, "9 min")])
def test_a_large_products_note_estimates_its_time_from_the_measured_quadratic(rank, said):
    """"minutes from about 10,000 products" was said of 12,167, built and verified in 18 s (a hunt); the estimate
    follows the measurements (with the collector paused, bilinear.collector: 12,167: 9.6 s; 16,807: 23 s; 25,921: 40 s;
    before it, 97,336 was stopped after 20 minutes)."""
    from bilinear.compose_cli import large_product_time

    assert large_product_time(rank) == said


def test_a_large_product_says_so_before_it_is_built(capsys, tmp_path, monkeypatch):
    """The note came after kronecker() had built the product: half a minute of silence at 5929 products (a hunt)."""
    import bilinear.compose
    import bilinear.compose_cli

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(bilinear.compose_cli, "LARGE_PRODUCT", 49)
    monkeypatch.setattr(bilinear.compose, "kronecker", stop)
    assert main(["product", "strassen", "strassen", "-o", str(tmp_path / "s2.bl")]) == 130
    assert "has 49 products; building and verifying it" in capsys.readouterr().err


def test_a_second_scheme_valid_only_modulo_p_is_not_sent_to_import(tmp_path, capsys):
    """The note said to `bilinear import` SECOND first, which refuses a modular scheme too."""
    second = tmp_path / "111-3-mod2.exp"
    second.write_text("(a11)*(b11)*(c11)\n(a11)*(b11)*(c11)\n(a11)*(b11)*(c11)\n")  # 3·A11·B11 = A11·B11 mod 2
    assert main(["product", "strassen", str(second), "-o", str(tmp_path / "p.bl")]) == 1
    err = capsys.readouterr().err
    assert "valid only modulo 2" in err and "bilinear import" not in err, err


def test_a_reading_option_for_a_second_scheme_valid_only_modulo_p_is_not_sent_to_import(tmp_path, capsys):
    """`product strassen SECOND.mod2.exp --mod 2`: FILE (a .bl file) refused --mod, and the note said to
    `bilinear import` SECOND first, which refuses a scheme valid only modulo 2 (a hunt)."""
    second = tmp_path / "111-3-mod2.exp"
    second.write_text("(a11)*(b11)*(c11)\n(a11)*(b11)*(c11)\n(a11)*(b11)*(c11)\n")
    assert main(["product", "strassen", str(second), "--mod", "2", "-o", str(tmp_path / "p.bl")]) == 1
    err = capsys.readouterr().err
    assert "--mod (modulus=) applies to catalogue schemes, not to .bl files" in err and "bilinear import" not in err, err


def test_a_fused_hybrid_refusal_names_the_default_schedule_and_the_way_out(capsys, tmp_path):
    """It named winograd_cublas, a schedule the user never wrote, and advice about "this schedule"
    (a review of compile)."""
    code = main(["compile", "msmes", "--levels-schemes", "msmes,winograd,winograd", "--leaf", "fused",
                 "-o", str(tmp_path / "h")])
    assert code == 1 and not (tmp_path / "h").exists()
    assert capsys.readouterr().err == (
        "bilinear compile: an element-wise statement of winograd's default schedule (level 2) touches C11, which "
        "here is a sum of 2 views; fused leaves take such sums only in their products: use --leaf cublas, or "
        "winograd at the innermost level alone\n")


@pytest.mark.parametrize("per_level", [("rsmm", "msmes"), ("rsmm", "strassen", "grey333"), ("strassen", "rsmm", "msmes")])
def test_an_overwriting_level_above_others_runs_with_fused_leaves(per_level, capsys):
    """rsmm's fallback (where its products are called to add into C) was the fused default schedule, whose
    products pass operand sums down: rsmm,msmes --leaf fused was refused ("touches A11, which here is a
    sum of 4 views"), while winograd,msmes --leaf fused and rsmm,msmes with cuBLAS leaves ran (a hunt)."""
    code = main(["run", "strassen", "--levels-schemes", ",".join(per_level), "--leaf", "fused", "-n", "72",
                 "--backend", "numpy", "--repeat", "1"])
    out = capsys.readouterr().out
    assert code == 0 and f"levels run      {len(per_level)}" in out, out  # exit 0: within the error bound


def test_compile_name_sets_the_librarys_files_functions_and_kernels(capsys, tmp_path):
    """Two builds of one scheme could not share a program: both wrote strassen_dgemm and the same
    kernel names (a static link failed with multiple definitions; a review of compile)."""
    out = tmp_path / "one"
    assert main(["compile", "strassen", "--levels", "1", "--name", "strassen_l1", "-o", str(out)]) == 0
    assert sorted(p.name for p in out.glob("*.[ch]*")) == ["strassen_l1.cu", "strassen_l1.h"]
    source = (out / "strassen_l1.cu").read_text()
    kernels = re.findall(r'(?:extern "C"|static) __global__ void (\w+)\(', source)  # element-wise ones static
    assert kernels and all(kernel.startswith("strassen_l1_") for kernel in kernels)
    assert "int strassen_l1_dgemm(" in (out / "strassen_l1.h").read_text()
    assert json.loads((out / "manifest.json").read_text())["name"] == "strassen_l1"
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["compile", "strassen", "--name", "2x", "-o", str(tmp_path / "bad")])
    assert capsys.readouterr().err.splitlines()[-1] == (
        "bilinear compile: error: argument --name: '2x': a library's name starts its C functions (2x_dgemm): a letter, "
        "then letters, digits or _, at most 64 characters")


@pytest.mark.parametrize("name, library, bl", [("A11", True, False), ("algorithm", True, False), ("_x", False, True),
                                               ("x" * 64, True, True), ("x" * 65, False, True)])
def test_compiles_name_is_a_c_librarys_and_the_bl_writers_a_bl_name(name, library, bl):
    """What the README says each --name takes: compile's names C functions (A11_dgemm is fine), the .bl
    writers' an algorithm (A11 is a block, algorithm a keyword); the README had said .bl names for both."""
    import argparse

    from bilinear.cli_args import bl_name
    from bilinear.cli_outputs import library_identifier

    for check, accepted in ((library_identifier, library), (bl_name, bl)):
        if accepted:
            assert check(name) == name
        else:
            pytest.raises(argparse.ArgumentTypeError, check, name)


@pytest.mark.parametrize("levels, named", [("msmes,strassen,strassen", "msmes_strassen_x2"),
                                           ("winograd,grey333,winograd", "winograd_grey333_winograd"),
                                           ("winograd,grey333", "winograd_grey333")])
def test_a_hybrids_name_tells_its_levels_apart(tmp_path, levels, named):
    """winograd,grey333,winograd and winograd,grey333 were both winograd_grey333 (files and functions)."""
    assert main(["compile", "winograd", "--levels-schemes", levels, "-o", str(tmp_path / "h")]) == 0
    assert json.loads((tmp_path / "h" / "manifest.json").read_text())["name"] == named


def test_transforming_again_from_a_transformed_file_keeps_one_description(tmp_path):
    """transform --name X from a file it wrote as X kept that file's "X: ..." line above the new one."""
    first, again = tmp_path / "first.bl", tmp_path / "again.bl"
    assert main(["transform", "grey234", "--to", "knm", "--name", "g", "-o", str(first)]) == 0
    assert main(["transform", str(first), "--to", "knm", "--name", "g", "-o", str(again)]) == 0
    described = [line for line in again.read_text(encoding="utf-8").splitlines() if line.startswith("# g:")]
    assert len(described) == 1 and "from first.bl" in described[0]


@pytest.mark.parametrize("name", ["cuda_runtime", "cublas_v2", "stddef", "math"])
def test_a_library_named_like_a_header_it_includes_is_refused(tmp_path, capsys, name):
    """--name cuda_runtime wrote cuda_runtime.h beside the .cu, where the header's own nvcc line found it
    for <cuda_runtime.h> ("fabsf is undefined"); --name cublas_v2 broke the caller's build (a hunt).  A
    definition so named is refused as the library's default name too."""
    with pytest.raises(SystemExit):
        main(["compile", "strassen", "--name", name, "-o", str(tmp_path / "named")])
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"bilinear compile: error: argument --name: '{name}': its header {name}.h would hide the system header "
        f"<{name}.h> the library and its callers include; choose another")
    source = tmp_path / f"{name}.bl"
    source.write_text((ROOT / "algorithms" / "strassen.bl").read_text().replace("algorithm strassen", f"algorithm {name}"))
    assert main(["compile", str(source), "-o", str(tmp_path / "default")]) == 1
    assert (f"the library would be named {name} after the file's main definition, but its header {name}.h would hide "
            f"the system header <{name}.h>") in capsys.readouterr().err
    assert not (tmp_path / "default").exists()
    assert main(["compile", str(source), "--name", f"{name}_mm", "-o", str(tmp_path / "renamed")]) == 0


def test_a_default_library_name_whose_shared_library_name_is_too_long_is_refused(tmp_path, capsys):
    """A 250-character algorithm's library built its .cu (253 bytes), but the header's
    `-o lib<name>.so` (256 bytes) could not be made (a hunt)."""
    name = "a" * 250
    source = tmp_path / "long.bl"
    source.write_text((ROOT / "algorithms" / "strassen.bl").read_text().replace("algorithm strassen", f"algorithm {name}"))
    assert main(["compile", str(source), "-o", str(tmp_path / "out")]) == 1
    assert "would be longer than a file name may be (255 bytes): give --name" in capsys.readouterr().err
    assert main(["compile", str(source), "-o", str(tmp_path / "out"), "--name", "short"]) == 0


@pytest.mark.parametrize("command", [["product", "strassen", "strassen"], ["import", "grey333"]])
def test_a_bl_text_larger_than_bilinear_reads_is_refused_with_the_other_style(tmp_path, capsys, monkeypatch, command):
    """product --style table of grey333 ⊗ grey333 ⊗ grey333 wrote 76 MiB, which load refuses past 64 MiB (a hunt):
    written, never read again.  Here the limit is made small enough for the same refusal at a test's size."""
    from bilinear.frontend import loader

    assert main([*command, "-o", str(tmp_path / "e.bl")]) == 0
    assert main([*command, "--style", "table", "-o", str(tmp_path / "t.bl")]) == 0
    equations, table = ((tmp_path / name).stat().st_size for name in ("e.bl", "t.bl"))
    assert table > equations
    algorithm = bilinear.load(tmp_path / "e.bl").main
    (tmp_path / "t.bl").unlink()
    monkeypatch.setattr(loader, "MAX_SOURCE_BYTES", (equations + table) // 2)
    capsys.readouterr()
    assert main([*command, "--style", "table", "-o", str(tmp_path / "t.bl")]) == 1
    err = capsys.readouterr().err
    assert re.fullmatch(rf"bilinear {command[0]}: the table text of {algorithm.name} would be [\d.]+ KiB, "
                        rf"more than the [\d.]+ KiB bilinear reads from a \.bl file; written as "
                        rf"equations it is [\d.]+ KiB\n", err), err
    assert not (tmp_path / "t.bl").exists()


def test_an_algorithm_and_its_schedule_larger_together_than_bilinear_reads_are_refused(tmp_path, capsys, monkeypatch):
    """inplace checked the algorithm's text alone against the 64 MiB limit: a schedule that took the two past it
    would have been written, and never read again.  The limit is set between the sizes here."""
    from bilinear.frontend import loader

    command = ["inplace", "strassen", "--tries", "1", "--steps", "0"]
    assert main([*command, "-o", str(tmp_path / "e.bl")]) == 0
    assert main([*command, "--style", "table", "-o", str(tmp_path / "t.bl")]) == 0
    equations, table = ((tmp_path / name).stat().st_size for name in ("e.bl", "t.bl"))
    header = tuple(line[2:] for line in (tmp_path / "e.bl").read_text().splitlines() if line.startswith("# "))
    alone = len(bilinear.frontend.export.to_bl(bilinear.load(tmp_path / "e.bl").algorithms[0], header=header).encode())
    assert alone + 200 < equations < table  # the algorithm alone is well within the limit set below
    for style, limit, instead in (("equations", equations - 1, "no style of \\.bl holds it within that"),
                                  ("table", (equations + table) // 2, "written as equations it is [\\d.]+ KiB")):
        monkeypatch.setattr(loader, "MAX_SOURCE_BYTES", limit)
        capsys.readouterr()
        assert main([*command, "--style", style, "-o", str(tmp_path / "again.bl")]) == 1
        last = capsys.readouterr().err.splitlines()[-1]
        assert re.fullmatch(rf"bilinear inplace: the {style} text of strassen with its schedule strassen_inplace would "
                            rf"be [\d.]+ KiB, more than the [\d.]+ KiB bilinear reads from a \.bl file; {instead}",
                            last), last
        assert not (tmp_path / "again.bl").exists()
