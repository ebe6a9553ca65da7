"""Export to the catalogue formats and common-subexpression elimination.

Every export is read back by the matching reader and must give the same
expanded coefficients; every optimized scheme must verify, keep its
products' expanded factors, and cost no more additions than before.
"""

from __future__ import annotations

import random
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import ALGORITHMS, SCHEMES
from hypothesis import given, settings
from hypothesis import strategies as st

import bilinear
from bilinear.cli import main
from bilinear.compose import permute
from bilinear.frontend.writers import FORMATS, write
from bilinear.optimize import _transposed, additions, eliminate, optimize, sides
from bilinear.optimize_kernel import basis_and_combinations, kernel_split
from bilinear.optimize_reuse import operations_first, paired, shortcut
from bilinear.frontend.export import to_bl
from bilinear.optimize_sides import borrowed, written
from bilinear.verify.counts import count_algorithm
from bilinear.verify import report_algorithm
from bilinear.verify.expand import Expansion
from helpers.programs import defined_before_use, expand, fractions_of

SHIPPED = {a.name: a for path in ALGORITHMS for a in bilinear.load(path).algorithms}
SHARED = SCHEMES  # ../shared/schemes, or the folder BILINEAR_SCHEMES names


def _coefficients(algorithm):
    expansion = Expansion(algorithm)
    return expansion.factors, expansion.weights


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("name,order", [("strassen", "mkn"), ("winograd", "mkn"), ("grey234", "mkn"), ("grey234", "nmk")])
def test_exports_read_back_to_the_same_coefficients(tmp_path, format, name, order):
    algorithm = permute(SHIPPED[name], order)
    target = tmp_path / ("scheme.npz" if format == "alphatensor" else "scheme")
    files = write(algorithm, format, target, header=("a header line", "licence: BSD-2"))
    read = bilinear.load(files[0], format=format, allow_pickle=format == "alphatensor").algorithms[0]
    assert read.shape == algorithm.shape and report_algorithm(read).ok
    assert _coefficients(read) == _coefficients(algorithm)


def test_alphatensor_export_refuses_coefficients_a_float_cannot_hold(tmp_path):
    algorithm = SHIPPED["strassen"]
    first = algorithm.products[0]
    scaled = replace(
        algorithm,
        products=(replace(first, left=first.left.scale(3)), *algorithm.products[1:]),
        outputs=tuple(
            replace(o, form=o.form.with_coefficient("M1", o.form.coefficient("M1") / 3)) if o.form.coefficient("M1") else o
            for o in algorithm.outputs
        ),
    )
    assert report_algorithm(scaled).ok
    with pytest.raises(ValueError, match="cannot hold exactly"):
        write(scaled, "alphatensor", tmp_path / "x.npz")


def test_export_command_carries_the_source_header(tmp_path, capsys):
    assert main(["export", "grey333", "--to", "plinopt", "-o", str(tmp_path / "g")]) == 0
    left = (tmp_path / "3x3x3_23_g_L.sms").read_text()
    assert "BSD 2-Clause" in left and "Exported by bilinear from grey333.bl" in left
    assert main(["export", "grey333", "--to", "fast-matmul", "-o", str(tmp_path / "g.txt")]) == 0
    assert bilinear.verify(tmp_path / "g.txt", format="fast-matmul").ok


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_optimized_schemes_verify_keep_their_products_and_add_less(name):
    algorithm = SHIPPED[name]
    result, counts = optimize(algorithm, seeds=4)
    assert report_algorithm(result).ok
    assert Expansion(result).factors == Expansion(algorithm).factors
    for side in "ABC":
        assert counts[side]["after"][0] <= counts[side]["before"][0]


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_optimized_schemes_name_no_copy_of_another_vector(name):
    """A named sum that is ±1 times one other vector (``X3 = X2``) computes nothing: its users
    read that vector instead.  The local search left such copies behind (winograd: X3 = X2,
    X4 = X1, X5 = X4), and each would be a buffer and a pass over it when lowered."""
    result, _ = optimize(SHIPPED[name], seeds=4)
    copies = [s.name for s in result.sums if len(terms := s.form.as_dict()) == 1 and abs(next(iter(terms.values()))) == 1]
    assert copies == []


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_polished_schemes_verify_keep_their_products_and_cost_no_more(name):
    """The iterated local search (--polish) starts from the program optimize returns without it."""
    algorithm = SHIPPED[name]
    plain, plain_counts = optimize(algorithm, seeds=2)
    result, counts = optimize(algorithm, seeds=2, polish=3)
    assert report_algorithm(result).ok
    assert Expansion(result).factors == Expansion(algorithm).factors
    for side in "ABC":
        assert sum(counts[side]["after"]) <= sum(plain_counts[side]["after"])


def test_optimize_command_refuses_a_negative_count(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["optimize", "winograd", "--polish", "-1"])
    assert exit_info.value.code == 2
    assert "argument --polish: must be at least 0, not -1" in capsys.readouterr().err


def test_written_sides_are_the_schemes_own_program():
    """Winograd's sums go with the operand their values are over: S1..S4 (A), T1..T4 (B), U2..U4 (C)."""
    a_side, b_side, c_side = written(SHIPPED["winograd"])
    assert [[name for name, _ in side.sums] for side in (a_side, b_side, c_side)] == [
        ["S1", "S2", "S3", "S4"], ["T1", "T2", "T3", "T4"], ["U2", "U3", "U4"]]
    assert [(side.additions, side.scalings) for side in (a_side, b_side, c_side)] == [(4, 0), (4, 0), (7, 0)]
    assert c_side.forms[0] == {"P1": 1, "P2": 1}


def test_expansion_names_the_operand_a_sum_is_over():
    expansion = Expansion(SHIPPED["winograd"])
    assert [expansion.operand(name) for name in ("S2", "T4", "U3")] == ["A", "B", None]


@pytest.fixture(scope="module")
def grey333_runs():
    """grey333 optimized at 16 seeds (the program and its counts) and the counts at one seed."""
    optimized, counts = optimize(SHIPPED["grey333"], seeds=16)
    return optimized, counts, optimize(SHIPPED["grey333"], seeds=1)[1]


def test_optimizing_an_optimized_scheme_keeps_its_program(grey333_runs):
    """grey333 at 16 seeds has 16 additions on B, one seed finds 17 from the expanded scheme: from
    the optimized file, one seed keeps the file's 16."""
    optimized, counts, from_scratch = grey333_runs
    again_optimized, again = optimize(optimized, seeds=1)
    assert (optimized.name, again_optimized.name) == ("grey333_cse", "grey333_cse")
    assert counts["B"]["after"] == (16, 0) and from_scratch["B"]["after"] == (17, 0)
    assert [again[side]["after"] for side in "ABC"] == [counts[side]["after"] for side in "ABC"]


def test_optimize_command_refuses_no_chains(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["optimize", "winograd", "--polish", "2", "--chains", "0"])
    assert exit_info.value.code == 2
    assert "argument --chains: must be at least 1, not 0" in capsys.readouterr().err


def test_another_program_of_the_same_scheme_gives_the_sides_it_does_best(grey333_runs, tmp_path, capsys):
    """grey333 at one seed has 17 additions on B, the file optimized at 16 seeds 16: with that file
    --also, one seed keeps its 16 (and no side ends dearer than either start)."""
    optimized, counts, alone = grey333_runs
    _, together = optimize(SHIPPED["grey333"], seeds=1, also=[optimized])
    assert counts["B"]["after"] == (16, 0) and alone["B"]["after"] == (17, 0) and together["B"]["after"] == (16, 0)
    assert all(sum(together[side]["after"]) <= min(sum(alone[side]["after"]), sum(counts[side]["after"])) for side in "ABC")
    program = tmp_path / "grey333_cse.bl"
    program.write_text(to_bl(optimized))
    out = tmp_path / "out.bl"
    assert main(["optimize", "grey333", "--seeds", "1", "--also", str(program), "-o", str(out)]) == 0
    assert f"--also {program}: sides A, B, C of grey333_cse tried too" in capsys.readouterr().err
    assert count_algorithm(bilinear.load(out).main).additions_by_side[1] == 16
    assert "# Also tried (--also): grey333_cse from grey333_cse.bl." in out.read_text()


def test_more_starts_find_what_one_start_misses(grey333_runs, tmp_path, capsys):
    """grey333 at one seed: B 17 from start 0 alone, 16 from the best of starts 0..3 (seeds 0, 1, 2,
    3, each finished alone); A and C keep their one start, so they are as at one seed."""
    _, _, alone = grey333_runs
    _, started = optimize(SHIPPED["grey333"], seeds=1, starts={"B": 4})
    assert alone["B"]["after"] == (17, 0) and started["B"]["after"] == (16, 0)
    assert [started[side]["after"] for side in "AC"] == [alone[side]["after"] for side in "AC"]
    out = tmp_path / "out.bl"
    assert main(["optimize", "grey333", "--seeds", "1", "--starts", "b=4", "-o", str(out)]) == 0
    assert count_algorithm(bilinear.load(out).main).additions_by_side[1] == 16


@pytest.mark.parametrize("text, message", [
    ("0", "must be at least 1, not 0"),
    ("A=2,D=3", "expected N or SIDE=N,... with sides A, B, C each at most once, not 'A=2,D=3'"),
    ("A=2,a=3", "expected N or SIDE=N,... with sides A, B, C each at most once, not 'A=2,a=3'"),
    ("B=x", "expected a whole number, not 'x'"),
])
def test_optimize_command_refuses_bad_starts(capsys, text, message):
    with pytest.raises(SystemExit) as exit_info:
        main(["optimize", "winograd", "--starts", text])
    assert exit_info.value.code == 2
    assert f"argument --starts: {message}" in capsys.readouterr().err


def test_a_program_of_another_scheme_or_order_gives_no_side(tmp_path, capsys):
    winograd = SHIPPED["winograd"]
    reversed_products = replace(winograd, products=winograd.products[::-1])
    assert borrowed(winograd, SHIPPED["strassen"]) == (None, None, None)
    assert borrowed(winograd, reversed_products) == (None, None, None)  # every side reads the products in order
    strassen = tmp_path / "strassen.bl"
    strassen.write_text(to_bl(SHIPPED["strassen"]))
    out = tmp_path / "out.bl"
    assert main(["optimize", "winograd", "--also", str(strassen), "-o", str(out)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"bilinear optimize: --also {strassen}: strassen computes none of winograd's sides (left factors, right factors, "
        "outputs, its products taken in order); give a program of the same scheme"
    )
    assert not out.exists()


def test_a_program_whose_sums_are_named_as_the_products_still_gives_its_sides(tmp_path):
    """grey234 with its products renamed X1..X20 refused grey234's optimized program (sums X1.., products
    M1..) as computing none of its sides: a sum named as a product only clashed by name (a hunt)."""
    import re

    source = tmp_path / "gx.bl"
    source.write_text(re.sub(r"\bM(\d+)\b", r"X\1", (Path(bilinear.__file__).parents[1] / "algorithms" / "grey234.bl").read_text()))
    renamed = bilinear.load(source).algorithm("grey234")
    optimized, _ = optimize(SHIPPED["grey234"], seeds=0)
    assert {s.name for s in optimized.sums} & {p.name for p in renamed.products}  # the clash the test is about
    left, right, outputs = borrowed(renamed, optimized)
    assert left is not None and right is not None and outputs is not None
    result, _ = optimize(renamed, seeds=0, also=(optimized,))
    assert report_algorithm(result).ok


def test_grey333_beats_fast_matmul_eliminated_file():
    """fast-matmul's eliminated grey333 (file name: 125 nonzeros) writes 70 additions."""
    result, _ = optimize(SHIPPED["grey333"], seeds=8)
    eliminated = SHARED / "fast-matmul" / "eliminated-grey333-23-125"  # the file: a partial catalogue may lack it
    written = bilinear.verify(bilinear.load(eliminated)) if eliminated.exists() else None
    additions = report_algorithm(result).counts.additions
    assert additions < 70
    if written is not None:
        assert written.entries[0].counts.additions == 70


forms = st.lists(
    st.dictionaries(st.sampled_from("abcdef"), st.sampled_from([1, -1, 2, -2]).map(int), min_size=1, max_size=5),
    min_size=1, max_size=8,
)


@settings(max_examples=100, deadline=None)
@given(forms, st.integers(0, 3), st.integers(0, 1))
def test_elimination_preserves_every_form(targets, seed, slack):
    targets = [{k: Fraction(v) for k, v in t.items()} for t in targets]
    sums, rewritten = eliminate(targets, "S", random.Random(seed) if seed else None, slack)
    assert [expand(t, dict(sums)) for t in rewritten] == targets


@settings(max_examples=60, deadline=None)
@given(forms)
def test_transposed_program_computes_the_transpose(columns):
    """Backwards through an elimination over the columns w_r, the C blocks get exactly Σ_r w_r[c]·M_r."""
    columns = [{k: Fraction(v) for k, v in t.items()} for t in columns]
    products = [f"M{r + 1}" for r in range(len(columns))]
    blocks = tuple("abcdef")
    side = _transposed(columns, products, blocks, "Z", seeds=2)
    want = [{p: w[b] for p, w in zip(products, columns) if b in w} for b in blocks]
    assert [expand(form, dict(side.sums)) for form in side.forms] == want


def test_optimize_command_prints_counts_and_writes_a_verified_file(tmp_path, capsys):
    out = tmp_path / "w.bl"
    assert main(["optimize", "winograd", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "C side (outputs)" in err and "->" in err
    # Winograd's "before" (7 -> 4 on A) is each form on its own; its file already shares as much
    assert "(before: each form on its own; winograd as written: A 4+0, B 4+0, C 7+0, additions+scalings)" in err
    assert bilinear.verify(out).ok
    left, right, outputs = sides(SHIPPED["winograd"])
    assert len(left) == len(right) == 7 and len(outputs) == 4


def test_optimize_counts_the_file_as_written_as_verify_does_without_what_no_output_uses(tmp_path, capsys):
    """The "as written" line had counted named sums and a product's factor that no output uses (A 7, B 5, C 9
    where verify says 4, 4 and 7; an audit)."""
    dead = next(path for path in ALGORITHMS if path.name == "winograd.bl").read_text().replace("  P1 = A11 * B11", "  S9 = A11 + A12 + A21\n"
           "  T9 = B11 + B12\n  P8 = (A11 + A12) * T9\n  U9 = P1 + P2 + P3\n  P1 = A11 * B11")
    path = tmp_path / "dead.bl"
    path.write_text(dead.replace("<2,2,2;7>", "<2,2,2;8>"), encoding="utf-8")
    assert "15 as written (A side 4, B side 4, C side 7)" in " ".join(main(["verify", str(path)]) == 0 and
                                                                     capsys.readouterr().out.split())
    assert main(["optimize", str(path), "-o", str(tmp_path / "w.bl")]) == 0
    assert "winograd as written: A 4+0, B 4+0, C 7+0, additions+scalings)" in capsys.readouterr().err


PLINOPT_48 = [root / "4x4x4_48_rational_L.sms" for root in (SHARED / "plinopt", Path("/work/catalogues/jgdumas+plinopt/data"))]


@pytest.mark.skipif(not any(p.exists() for p in PLINOPT_48), reason="PLinOpt's rational <4,4,4;48> is absent")
def test_plinopt_rational_444_48_counts_are_pinned():
    """PLinOpt's published .slp programs: 104/75/110 additions, 4/1/21 scalings (L/R/P)."""
    source = bilinear.load(next(p for p in PLINOPT_48 if p.exists())).main
    result, counts = optimize(source, seeds=16)
    assert report_algorithm(result).ok
    assert [counts[side]["after"] for side in "ABC"] == [(91, 19), (76, 0), (114, 26)]


PLINOPT_48_PROGRAMS = [path.with_suffix(".slp") for path in PLINOPT_48]


@pytest.mark.skipif(not any(p.exists() for p in PLINOPT_48_PROGRAMS), reason="PLinOpt's rational <4,4,4;48> programs are absent")
def test_plinopt_programs_read_as_written_are_never_made_dearer():
    """Read from its .slp, the scheme's own programs are PLinOpt's: at one seed none of ours is cheaper,
    and optimize keeps theirs, 104+4 / 75+1 / 110+21 (315 operations)."""
    source = bilinear.load(next(p for p in PLINOPT_48_PROGRAMS if p.exists())).main
    result, counts = optimize(source, seeds=1)
    assert report_algorithm(result).ok
    assert [counts[side]["after"] for side in "ABC"] == [(104, 4), (75, 1), (110, 21)]


def test_shortcut_computes_a_target_from_two_others_in_one_addition():
    """a+b+c and a-b+d share no pair with 2a+c+d (pair elimination: 2+2+2 additions), but the
    third is the sum of the other two (or the first the third minus the second): one addition."""
    targets = [fractions_of(t) for t in ({"a": 1, "b": 1, "c": 1}, {"a": 1, "b": -1, "d": 1}, {"a": 2, "c": 1, "d": 1})]
    sums, forms = eliminate(targets, "S")
    assert additions(forms) + additions(t for _, t in sums) == 6
    sums, forms = shortcut(sums, forms, random.Random(0))
    assert additions(forms) + additions(t for _, t in sums) == 5
    assert [expand(f, dict(sums)) for f in forms] == targets
    written = [dict(sums).get(next(iter(f)), f) if len(f) == 1 else f for f in forms]
    assert sorted(len(w) for w in written) == [2, 3, 3]  # one of them, over the other two


def test_shortcut_drops_the_sums_only_the_rewritten_target_used():
    """x = a+b+c+d costs three additions through sums of its own; it is also y + z (y = a+b, z = c+d,
    themselves targets): one addition, and its own sums go."""
    targets = [fractions_of(t) for t in ({"a": 1, "b": 1}, {"c": 1, "d": 1}, {"a": 1, "b": 1, "c": 1, "d": 1})]
    sums = [("S1", fractions_of({"a": 1, "c": 1})), ("S2", fractions_of({"S1": 1, "b": 1}))]
    forms = [targets[0], targets[1], fractions_of({"S2": 1, "d": 1})]
    sums, forms = shortcut(sums, forms, random.Random(0))
    assert additions(forms) + additions(t for _, t in sums) == 3
    assert [expand(f, dict(sums)) for f in forms] == targets


def test_kernel_split_takes_dependent_targets_from_the_basis():
    """a+b+c+d+e+f is the sum of the basis targets a+b+c, d+e+f: one addition, not five."""
    targets = [fractions_of(t) for t in ({"a": 1, "b": 1, "c": 1}, {"d": 1, "e": 1, "f": 1},
                                       {"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1})]
    basis, combinations = basis_and_combinations(targets, [0, 1, 2])
    assert basis == [0, 1] and combinations == {2: {0: 1, 1: 1}}
    costs = set()
    for seed in range(8):
        sums, forms = kernel_split(targets, "K", random.Random(seed))
        assert [expand(f, dict(sums)) for f in forms] == targets
        costs.add(additions(forms) + additions(t for _, t in sums))
    assert min(costs) == 5  # 2 + 2 + 1


@settings(max_examples=60, deadline=None)
@given(forms, st.integers(0, 5))
def test_kernel_split_and_shortcut_preserve_every_form(targets, seed):
    targets = [{k: Fraction(v) for k, v in t.items()} for t in targets]
    sums, rewritten = kernel_split(targets, "K", random.Random(seed))
    assert [expand(t, dict(sums)) for t in rewritten] == targets
    sums, rewritten = shortcut(sums, rewritten, random.Random(seed))
    assert [expand(t, dict(sums)) for t in rewritten] == targets
    defined = set()
    for name, terms in sums:  # each sum defined before it is used
        assert all(term in defined or not term.startswith(("K", "_T")) for term in terms)
        defined.add(name)


def test_paired_targets_come_from_their_half_sum_and_half_difference():
    """F = X+Y+Z+W and G = X+Y-Z-W over four targets of two terms each: alone, each costs three
    operations (the deeper shortcut's G = F - 2(Z+W) too: two additions and a scaling); as a pair,
    H = X+Y and D = Z+W are one addition each and F = H+D, G = H-D: four for both, 8 operations in
    all against 10."""
    sums = [(name, fractions_of(terms)) for name, terms in (
        ("X", {"a": 1, "b": 1}), ("Y", {"c": 1, "d": 1}), ("Z", {"e": 1, "f": 1}), ("W", {"g": 1, "h": 1}))]
    forms = [fractions_of({name: 1}) for name in "XYZW"]
    forms += [fractions_of({"X": 1, "Y": 1, "Z": 1, "W": 1}), fractions_of({"X": 1, "Y": 1, "Z": -1, "W": -1})]
    targets = [expand(form, dict(sums)) for form in forms]

    def total(sums, forms):
        return operations_first([*(t for _, t in sums), *forms])[0]

    assert total(sums, forms) == total(*shortcut(sums, forms, random.Random(0), deeper=True)) == 10
    new_sums, new_forms = paired(sums, forms, random.Random(0))
    assert total(new_sums, new_forms) == 8
    assert [expand(f, dict(new_sums)) for f in new_forms] == targets
    assert defined_before_use(new_sums, "abcdefgh")


@settings(max_examples=60, deadline=None)
@given(forms, st.integers(0, 5))
def test_paired_preserves_every_form_and_never_costs_more(targets, seed):
    targets = [{k: Fraction(v) for k, v in t.items()} for t in targets]
    sums, rewritten = eliminate(targets, "S", random.Random(seed), 1)
    new_sums, new_forms = paired(sums, rewritten, random.Random(seed))
    assert [expand(t, dict(new_sums)) for t in new_forms] == targets
    assert defined_before_use(new_sums, "abcdef")
    assert operations_first([*(t for _, t in new_sums), *new_forms]) <= operations_first([*(t for _, t in sums), *rewritten])


def test_deeper_shortcut_computes_a_target_from_three_others_in_two_additions():
    """2a+c+d+3(e+f+g) shares only e+f+g with the others (three additions over them, 9 in all); it is
    (a+b+c) + (a-b+d) + 3·(e+f+g), three targets: two additions, and the first pass cannot see it."""
    targets = [fractions_of(t) for t in ({"a": 1, "b": 1, "c": 1}, {"a": 1, "b": -1, "d": 1}, {"e": 1, "f": 1, "g": 1},
                                       {"a": 2, "c": 1, "d": 1, "e": 3, "f": 3, "g": 3})]
    sums, forms = eliminate(targets, "S")

    def total(sums, forms):
        return additions(forms) + additions(t for _, t in sums)

    assert total(sums, forms) == 9
    assert total(*shortcut(sums, forms, random.Random(0))) == 9
    deeper_sums, deeper_forms = shortcut(sums, forms, random.Random(0), deeper=True)
    assert total(deeper_sums, deeper_forms) == 8
    assert [expand(f, dict(deeper_sums)) for f in deeper_forms] == targets


def test_scalings_count_one_multiplication_per_magnitude_other_than_one():
    """As PLinOpt's programs write them: (x+y)/2 - 3z two, (x+y)*2 - z one, x/2 + (y-z)/4 - w two."""
    from bilinear.optimize import scalings

    cases = [({"x": Fraction(1, 2), "y": Fraction(1, 2), "z": -3}, 2), ({"x": 2, "y": 2, "z": -1}, 1),
             ({"x": Fraction(1, 2), "y": Fraction(1, 4), "z": Fraction(-1, 4), "w": -1}, 2), ({"x": 1, "y": -1}, 0)]
    for form, count in cases:
        assert scalings([fractions_of(form)]) == count


def test_a_sum_that_cancels_is_on_its_terms_side_in_optimize():
    """T = S - A11 - A12 is zero: optimize put it on the C side beside the outputs, reading A-side sums."""
    from bilinear.frontend.loader import program_from_text

    text = ("algorithm z <1,2,1;2>:\n  S = A11 + A12\n  T = S - A11 - A12\n  U = T + A11\n"
            "  M1 = U * B11\n  M2 = A12 * B21\n  C11 = M1 + M2\n")
    sides = written(program_from_text(text, "z.bl").main)
    assert [name for name, _ in sides[0].sums] == ["S", "T", "U"] and sides[2].sums == []


def test_the_deeper_search_checks_every_term_exactly_even_one_the_prime_divides():
    """t − a = P·x1 + x2 + x3 with P the hashing prime: x1's residue is 0, and the exact check that
    was built over the nonzero residues alone took {a, x2, x3} for t (a review of the search)."""
    from bilinear.optimize_lookup import PRIME, indexed, options_of_three
    from bilinear.optimize_reuse import _dependents, users_of

    one = Fraction(1)
    definitions = {"a": {"x0": one, "x1": one}, "t": {"x0": one, "x1": Fraction(1 + PRIME), "x2": one, "x3": one}}
    forms = [{"t": one}, {"a": one}]
    vectors, names, index = indexed(definitions, forms, random.Random(0))
    forbidden = _dependents("t", users_of(definitions, forms))
    assert list(options_of_three("t", vectors, index, names, forbidden)) == []
