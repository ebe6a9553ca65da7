"""In-place schedules derived from any algorithm (bilinear.schedule.inplace, `bilinear inplace`):
each verifies, restores A and B, needs no workspace, and runs."""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest
from conftest import ALGORITHMS, ROOT, check_golden, scheme_file
from helpers.schedules import STRASSEN_SUMS_STAGE
from hypothesis import given, settings
from hypothesis import strategies as st

import bilinear
from bilinear.cli import main
from bilinear.frontend.export import schedule_to_bl
from bilinear.frontend.loader import program_from_text
from bilinear.lower.levels import compiled_counts
from bilinear.lower.options import Options
from bilinear.schedule.inplace import _Blocks, _restore, derive_inplace, inplace_schedule, product_count
from bilinear.verify import report_schedule

SHIPPED = [(path.stem, algorithm) for path in ALGORITHMS for algorithm in bilinear.load(path).algorithms]


def _moved(schedule, algorithm) -> int:
    return sum(compiled_counts(schedule, algorithm, Options()).counts.elementwise_blocks_moved.values())


def _assert_in_place(schedule, algorithm) -> None:
    report = report_schedule(schedule, algorithm)
    assert report.ok, [str(error) for error in report.errors]
    assert schedule.properties == {"inplace", "restore"} and schedule.temporaries == ()
    assert schedule.restores and not schedule.overwrites_c


@pytest.mark.parametrize("algorithm", [a for _, a in SHIPPED], ids=[f"{stem}-{a.name}" for stem, a in SHIPPED])
def test_every_shipped_algorithm_gets_an_in_place_schedule_that_verifies(algorithm):
    _assert_in_place(derive_inplace(algorithm), algorithm)
    searched = inplace_schedule(algorithm, lambda schedule: _moved(schedule, algorithm), tries=8, steps=16)
    _assert_in_place(searched, algorithm)
    assert _moved(searched, algorithm) <= _moved(derive_inplace(algorithm), algorithm)  # the written order is tried


@pytest.mark.parametrize("relative", ["fast-matmul/grey333-23-152", "fast-matmul/hk323-15-94",
                                      "fast-matmul/smirnov336-40-960", "flips/444-49-mod0.exp",
                                      "kauers/446-k0a44a47e90f9bce.exp"])
def test_catalogue_schemes_get_in_place_schedules_that_verify(relative):
    algorithm = bilinear.load(scheme_file(relative)).algorithms[-1]
    _assert_in_place(derive_inplace(algorithm), algorithm)


@pytest.mark.parametrize("name", ["strassen", "winograd", "grey234"])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_any_order_of_the_products_gives_a_schedule_that_verifies(name, data):
    algorithm = bilinear.load(name).algorithms[-1]
    order = data.draw(st.permutations(range(product_count(algorithm))))
    _assert_in_place(derive_inplace(algorithm, list(order)), algorithm)


def test_an_order_must_list_every_product_once():
    strassen = bilinear.load("strassen").algorithms[-1]
    with pytest.raises(ValueError, match="order must list each of the 7 products once"):
        derive_inplace(strassen, [0, 1, 2, 3, 4, 5, 5])


def test_the_derived_strassen_schedule_matches_golden():
    check_golden("strassen-inplace.bl", schedule_to_bl(derive_inplace(bilinear.load("strassen").algorithms[-1])))


def test_swapped_blocks_are_restored_through_a_third_statement():
    """No block of a swap can take its original back in one statement (each needs only the other's
    content): one subtraction first, then two restoring statements."""
    contents = _Blocks(("A11", "A12"))
    for target, combination in ((0, {0: 1, 1: 1}), (1, {0: 1, 1: -1}), (0, {0: 1, 1: -1})):  # the swap
        contents.replace(target, {j: Fraction(c) for j, c in combination.items()})
    assert contents.rows == [{"A12": 1}, {"A11": 1}]
    statements = _restore(contents)
    assert [str(s) for s in statements] == ["A12 -= A11", "A11 += A12", "A12 = A11 - A12"]
    assert contents.rows == [{"A11": 1}, {"A12": 1}] and contents.changed() == []


@pytest.mark.parametrize("name", ["strassen", "winograd"])
def test_the_search_moves_less_than_msmes(name):
    """What the search is for: derived from Strassen's own algorithm, or Winograd's, fewer bytes than
    the hand-written MSMES (62 quarter blocks at one level, compiled, C += A·B)."""
    algorithm = bilinear.load(name).algorithms[-1]
    msmes = bilinear.load("msmes")
    derived = inplace_schedule(algorithm, lambda schedule: _moved(schedule, algorithm))
    assert _moved(derived, algorithm) < _moved(msmes.main, msmes.algorithm("strassen")) == 62


def test_the_local_search_saves_on_grey333():
    """Shuffled orders alone do no better than grey333's default schedule's traffic (with workspace; as
    the compiled kernels count it, both move 244 blocks, and the shuffled orders had seemed above it);
    the local search takes it below."""
    from bilinear.schedule.default import default_schedule

    grey333 = bilinear.load("grey333").algorithms[-1]
    def rank(schedule):
        return _moved(schedule, grey333)
    shuffled = inplace_schedule(grey333, rank, tries=64, steps=0)
    searched = inplace_schedule(grey333, rank, tries=64, steps=256)
    assert rank(searched) < rank(default_schedule(grey333)) <= rank(shuffled)


RECT = "algorithm rect <1,2,1;2>:\n  M1 = A11 * B11\n  M2 = A12 * B21\n  C11 = M1 + M2\n"
THREE = "algorithm three <1,3,1;3>:\n  M1 = A11 * B11\n  M2 = A12 * B21\n  M3 = A13 * B31\n  C11 = M1 + M2 + M3\n"


def test_a_scheme_with_fewer_orders_than_tries_derives_each_order_once_and_searches_no_further():
    """A 3-product scheme derived 64 orders (six distinct, again and again) and 256 search steps."""
    three = program_from_text(THREE).main
    seen = []
    schedule = inplace_schedule(three, lambda candidate: seen.append(candidate) or len(seen) % 4, tries=64, steps=256)
    assert len(seen) == 6 and len({tuple(s.stages) for s in seen}) == 6
    assert schedule == seen[3]  # cost 0: the first order found at the least cost


def test_the_search_prices_each_order_once(monkeypatch):
    """A search on a plateau comes back to orders: Strassen's default search priced 320 orders, 177 of them
    distinct, each again where it came back."""
    import bilinear.schedule.inplace as inplace_module

    strassen = next(a for _, a in SHIPPED if a.name == "strassen")
    tried, real = [], inplace_module._tried
    monkeypatch.setattr(inplace_module, "_tried", lambda a, order, cost, name: tried.append(tuple(order)) or real(
        a, order, cost, name))
    inplace_schedule(strassen, lambda schedule: _moved(schedule, strassen), tries=64, steps=256)
    assert len(tried) == len(set(tried)) < 320


def test_cli_says_every_order_where_there_are_fewer_than_tries(tmp_path, capsys):
    """⟨1,2,1;2⟩ was said to be "the cheapest of 64 product orders" where it has two."""
    source, out = tmp_path / "rect.bl", tmp_path / "rect_inplace.bl"
    source.write_text(RECT, encoding="utf-8")
    assert main(["inplace", str(source), "-o", str(out)]) == 0
    assert "deriving an in-place schedule of rect: 2 products, each of their 2 orders\n" in capsys.readouterr().err
    assert "the cheapest of all 2 product orders." in out.read_text(encoding="utf-8")  # (no seed plays a part)


@pytest.mark.parametrize("options, note, seed_in_header", [
    (("--steps", "500", "--seed", "3"), "note: --steps 500 and --seed 3 change nothing: each of rect's 2 product orders "
     "is derived, so none is drawn or searched\n", False),
    (("--seed", "3",), "note: --seed 3 changes nothing: each of rect's 2 product orders is derived, so none is drawn or "
     "searched\n", False),
])
def test_cli_says_search_options_change_nothing_where_every_order_is_derived(tmp_path, capsys, options, note,
                                                                            seed_in_header):
    """--steps and --seed were taken without a word where every order is derived (a hunt)."""
    source, out = tmp_path / "rect.bl", tmp_path / "rect_inplace.bl"
    source.write_text(RECT, encoding="utf-8")
    assert main(["inplace", str(source), "-o", str(out), *options]) == 0
    assert note in capsys.readouterr().err
    assert ("(seed" in out.read_text(encoding="utf-8")) == seed_in_header


def test_cli_says_a_seed_draws_nothing_with_one_order_and_no_search(tmp_path, capsys):
    out = tmp_path / "s.bl"
    assert main(["inplace", "strassen", "--tries", "1", "--steps", "0", "--seed", "7", "-o", str(out)]) == 0
    assert ("note: --seed 7 changes nothing: with --tries 1 and --steps 0 no order is drawn or searched\n"
            in capsys.readouterr().err)
    assert "(seed" not in out.read_text(encoding="utf-8")  # the header had said "(seed 7)"
    assert main(["inplace", "strassen", "--tries", "2", "--steps", "0", "--seed", "7", "-o", str(out), "--force"]) == 0
    assert "changes nothing" not in capsys.readouterr().err and "(seed 7)" in out.read_text(encoding="utf-8")


def test_cli_writes_a_verified_file_that_runs(tmp_path, capsys):
    out = tmp_path / "grey234_inplace.bl"
    assert main(["inplace", "grey234", "-o", str(out), "--tries", "4", "--steps", "4"]) == 0
    captured = capsys.readouterr()
    assert captured.out == (f"wrote {out} (grey234 <2,3,4;20> and schedule grey234_inplace [inplace, restore], "
                            "verified)\n")
    assert "deriving an in-place schedule of grey234: 20 products, 4 orders, then 4 steps of a local search" in captured.err
    assert "compiled (cublas leaves, fused passes): " in captured.err and ", no workspace; the default schedule: " in captured.err
    # grey234's 3 does not divide 8192: the figures are of the part a level splits, as compile says
    assert "element-wise traffic per level at n=8192 (its 8192×8190×8192 part; the rest is peeled) float64" in captured.err
    assert main(["verify", str(out)]) == 0
    assert main(["run", str(out), "-m", "52", "-k", "75", "-n", "96", "--levels", "2", "--backend", "numpy"]) == 0
    assert "restored" in capsys.readouterr().out


def test_cli_refuses_no_tries_and_the_algorithms_own_name(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["inplace", "strassen", "--tries", "0"])
    assert stopped.value.code == 2
    assert "argument --tries: must be at least 1, not 0" in capsys.readouterr().err
    # the algorithm's name is the file's: a refusal of what a file holds is status 1 (README), not a usage error (a hunt)
    assert main(["inplace", "strassen", "--name", "strassen"]) == 1
    assert "error: --name strassen is the algorithm's name; give the schedule another" in capsys.readouterr().err


def test_cli_says_the_files_schedule_is_not_the_one_written(capsys):
    assert main(["inplace", "msmes", "--tries", "2"]) == 0
    err = capsys.readouterr().err
    assert "note: msmes is a schedule; inplace derives a schedule of its algorithm strassen" in err


def test_cli_says_how_long_a_long_search_will_take(monkeypatch, capsys):
    """⟨11,11,11;896⟩ takes 13 s a candidate: 320 of them would run for hours without a word.  The
    estimate times the second candidate (the first pays for imports: Strassen's had read 30 s for a
    search of 2.5 s), and it is said only where it is long."""

    from bilinear import inplace_cli
    from bilinear.report_sizes import duration_text

    assert main(["inplace", "strassen", "--tries", "3", "--steps", "5"]) == 0
    assert "note: a candidate order takes" not in capsys.readouterr().err
    monkeypatch.setattr(inplace_cli._Ranked, "SAY_AFTER", 0.0)
    assert main(["inplace", "strassen", "--tries", "3", "--steps", "5"]) == 0
    assert re.search(r"note: a candidate order takes \d+\.\d s; the other 6 will take about \d+ s "
                     r"\(--tries and --steps set how many\)", capsys.readouterr().err)
    assert [duration_text(s) for s in (45, 840, 11520, 10**6)] == ["45 s", "14 min", "3.2 h", "12 days"]


def test_cli_says_which_products_no_output_uses(tmp_path, capsys):
    scheme = tmp_path / "dead.bl"
    scheme.write_text('use "strassen.bl"\nalgorithm dead <2,2,2;8>:\n' + "\n".join(
        f"  {line}" for line in ["M1 = (A11 + A22) * (B11 + B22)", "M2 = (A21 + A22) * B11", "M3 = A11 * (B12 - B22)",
                                 "M4 = A22 * (B21 - B11)", "M5 = (A11 + A12) * B22", "M6 = (A21 - A11) * (B11 + B12)",
                                 "M7 = (A12 - A22) * (B21 + B22)", "M8 = A12 * B21", "C11 = M1 + M4 - M5 + M7",
                                 "C12 = M3 + M5", "C21 = M2 + M4", "C22 = M1 - M2 + M3 + M6"]) + "\n")
    assert main(["inplace", str(scheme), "--tries", "2", "--steps", "0"]) == 0
    err = capsys.readouterr().err
    assert "note: M8, which no output uses, is not computed" in err
    assert "deriving an in-place schedule of dead: 7 products, 2 orders, then 0 steps of a local search" in err


def test_the_python_api_gives_a_program_that_compiles_and_runs_with_no_workspace():
    program = bilinear.inplace("winograd", tries=4)
    assert [d.name for d in program.own_definitions()] == ["winograd", "winograd_inplace"]
    assert program.main.properties == {"inplace", "restore"}
    product = bilinear.compile(program, levels=2, backend="numpy")
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((68, 36)), rng.standard_normal((36, 52))
    A0, B0 = A.copy(), B.copy()
    C = product(A, B)
    assert np.allclose(C, A0 @ B0, rtol=0, atol=1e-12) and np.allclose(A, A0, atol=1e-13) and np.allclose(B, B0, atol=1e-13)
    assert product.executor.workspace_bytes(68, 36, 52) == 0


def test_the_python_api_refuses_what_cannot_be_derived():
    strassen = bilinear.load("strassen").algorithms[-1]
    for tries in (0, 2.5, True):
        with pytest.raises(ValueError, match=f"tries must be a whole number of at least 1, not {tries!r}"):
            bilinear.inplace(strassen, tries=tries)
    with pytest.raises(ValueError, match="steps must be a whole number of at least 0, not -1"):
        bilinear.inplace(strassen, steps=-1)
    with pytest.raises(ValueError, match="name 'strassen' is the algorithm's; give the schedule another"):
        bilinear.inplace(strassen, name="strassen")
    with pytest.raises(ValueError, match="name 'A11'"):
        bilinear.inplace(strassen, name="A11")
    assert bilinear.inplace(bilinear.load("msmes")).main.name == "strassen_inplace"  # a schedule's file: its algorithm


@pytest.mark.parametrize("nan", [float("nan"), np.float64("nan"), (1, float("nan"))], ids=["float", "numpy", "tuple"])
def test_a_cost_of_nan_is_refused(nan):
    """NaN compares false with everything, so the search kept whichever order came first (a hunt)."""
    with pytest.raises(ValueError, match=re.escape(f"cost returned {nan!r}, which orders with nothing (NaN)")):
        bilinear.inplace(bilinear.load("strassen"), cost=lambda _: nan)


def test_the_python_api_says_which_costs_cannot_be_compared():
    """A cost of None, or of an int for some orders and a str for others, raised Python's own
    "'<' not supported between instances of 'str' and 'int'" from inside the search."""
    strassen = bilinear.load("strassen")
    with pytest.raises(TypeError, match=re.escape(
            "cost must return values that compare with <, as numbers or tuples of numbers do; it returned None")):
        bilinear.inplace(strassen, cost=lambda schedule: None)
    with pytest.raises(TypeError, match=re.escape(
            "cost must return values that compare with <, as numbers or tuples of numbers do; it returned 1, then 'x'")):
        bilinear.inplace(strassen, cost=lambda _, values=iter([1] + ["x"] * 400): next(values))
    for cost in (5, 0, False, ""):  # a falsy one had been taken for no cost at all
        with pytest.raises(TypeError, match=re.escape(f"cost must be a function of a Schedule, not {cost!r}")):
            bilinear.inplace(strassen, cost=cost)
    # an array's comparison is no truth value: NumPy's ValueError had come from inside the search (a review)
    with pytest.raises(TypeError, match=re.escape("it returned array([1, 2])")):
        bilinear.inplace(strassen, cost=lambda _: np.array([1, 2]))
    three = program_from_text(THREE).main  # each order once: compared by min() rather than by the search
    with pytest.raises(TypeError, match=re.escape("it returned 1, then 'x'")):
        bilinear.inplace(three, cost=lambda _, values=iter([1, "x", 2, 3, 4, 5]): next(values))


def test_the_default_cost_passed_by_name_is_the_default():
    """README names the default cost, ``moved``, which takes the algorithm as well; passed as
    ``cost=moved`` it raised Python's "missing 1 required positional argument" (session 72 left it)."""
    from bilinear.inplace_api import moved

    strassen = bilinear.load("strassen")
    named = bilinear.inplace(strassen, cost=moved, tries=4, steps=8)
    assert named.main == bilinear.inplace(strassen, tries=4, steps=8).main


def test_the_python_api_takes_numpy_integers_for_tries_steps_and_seed():
    """tries=np.int64(4) was refused as "not a whole number", where compile takes levels=np.int64(2)."""
    strassen = bilinear.load("strassen")
    assert (bilinear.inplace(strassen, tries=np.int64(4), steps=np.int32(3), seed=np.uint8(1)).main
            == bilinear.inplace(strassen, tries=4, steps=3, seed=1).main)


def test_a_scaled_factor_is_formed_up_to_its_scale_and_the_scale_goes_into_the_targets(tmp_path):
    """Strassen with M2's left factor doubled (and its uses halved): the block that forms 2·(A21 + A22)
    had been scaled by 2 as well (`A21 = 2*A21 + 2*A22`), and put back by 1/2, roundings in A
    that the product's targets take instead (they are doubled)."""
    scheme = tmp_path / "scaled.bl"
    scheme.write_text("algorithm scaled <2,2,2;7>:\n" + "\n".join(f"  {line}" for line in [
        "M1 = (A11 + A22) * (B11 + B22)", "M2 = (2*A21 + 2*A22) * B11", "M3 = A11 * (B12 - B22)",
        "M4 = A22 * (B21 - B11)", "M5 = (A11 + A12) * B22", "M6 = (A21 - A11) * (B11 + B12)",
        "M7 = (A12 - A22) * (B21 + B22)", "C11 = M1 + M4 - M5 + M7", "C12 = M3 + M5", "C21 = 1/2*M2 + M4",
        "C22 = M1 - 1/2*M2 + M3 + M6"]) + "\n")
    algorithm = bilinear.load(scheme).algorithms[-1]
    for order in ([1, 0, 2, 3, 4, 5, 6], list(range(7))):
        schedule = derive_inplace(algorithm, order)
        _assert_in_place(schedule, algorithm)
        statements = [statement for stage in schedule.stages for statement in stage.statements]
        last_product = max(i for i, statement in enumerate(statements) if not hasattr(statement, "target"))
        forming = [statement for statement in statements[:last_product] if hasattr(statement, "target")]
        assert forming and all(statement.is_accumulation() for statement in forming), [str(s) for s in forming]
    first = derive_inplace(algorithm, [1, 0, 2, 3, 4, 5, 6])
    assert [str(s) for s in first.stages[0].statements[:1] + first.stages[1].statements[:1]] == [
        "A21 += A22", "A21 * B11 -> +C21 -C22"]  # A21 + A22 is half the factor: the targets' halves doubled


def test_deriving_again_from_a_derived_file_keeps_one_description(tmp_path, capsys):
    """The copied header kept the first derivation's "strassen_inplace: ... (seed 0)" line above the new
    one's "(seed 3)": two descriptions of one schedule, contradicting each other."""
    first, again = tmp_path / "first.bl", tmp_path / "again.bl"
    assert main(["inplace", "strassen", "-o", str(first), "--tries", "2", "--steps", "1"]) == 0
    assert main(["inplace", str(first), "-o", str(again), "--tries", "2", "--steps", "1", "--seed", "3"]) == 0
    described = [line for line in again.read_text(encoding="utf-8").splitlines() if line.startswith("# strassen_inplace:")]
    assert len(described) == 1 and described[0].endswith("(seed 3).")


@pytest.mark.parametrize("call, error, message", [
    (lambda a: derive_inplace(a, [0.0, 1, 2, 3, 4, 5, 6]), TypeError,
     r"^order must list the products' positions as whole numbers, not \[0\.0, 1, 2, 3, 4, 5, \.\.\.\]$"),
    (lambda a: derive_inplace(bilinear.load("strassen")), TypeError,
     r"^derive_inplace takes one Algorithm \(bilinear\.load\(path\)\.main\), not Program$"),
    (lambda a: derive_inplace(a, name="a b"), ValueError, r"^name must be an identifier in \.bl .*, not 'a b'$"),
    # compile then ran the algorithm of that name, not the schedule (a hunt)
    (lambda a: derive_inplace(a, name="strassen"), ValueError, r"^name 'strassen' is the algorithm's; give the schedule another$"),
], ids=["float-order", "program", "spaced-name", "algorithms-name"])
def test_derive_inplace_refuses_what_it_cannot_take_by_name(call, error, message):
    """derive_inplace (the README names it) raised "list indices must be integers", AttributeError
    ('Program' object has no attribute 'sums'), and took a name no .bl file can hold (a hunt)."""
    with pytest.raises(error, match=message):
        call(bilinear.load("strassen").main)


def test_derive_inplace_takes_numpy_positions():
    algorithm = bilinear.load("strassen").main
    assert derive_inplace(algorithm, list(np.arange(7))[::-1]) == derive_inplace(algorithm, list(range(7))[::-1])


def test_a_program_refuses_a_name_defined_twice():
    """A Program built in Python with a schedule named as its algorithm verified, and compile ran the
    algorithm (the name found it first); a .bl file is refused for it ("defined twice")."""
    from dataclasses import replace

    from bilinear.ir import Program

    algorithm = bilinear.load("strassen").main
    twice = replace(derive_inplace(algorithm), name=algorithm.name)
    with pytest.raises(ValueError, match=r"^strassen is defined twice in the program x$"):
        Program("x", (algorithm,), (twice,), ("strassen", "strassen"))


def test_moved_names_a_schedule_cublas_leaves_cannot_run(tmp_path):
    """A verified schedule of products of sums raised AttributeError ('NoneType' ... 'elementwise_blocks_moved'),
    README names moved (a hunt)."""
    from bilinear.inplace_api import moved

    path = tmp_path / "ss.bl"
    path.write_text(f'use "{ROOT / "algorithms" / "strassen.bl"}"\nschedule ss for strassen: accumulate\n{STRASSEN_SUMS_STAGE}')
    program = bilinear.load(path)
    assert bilinear.verify(path).ok
    with pytest.raises(ValueError, match=r"^schedule ss: .*multipl"):
        moved(program.main, program.algorithm("strassen"))


def test_a_large_scheme_is_said_to_take_minutes_before_its_first_order(monkeypatch, capsys):
    """⟨12,18,24;3220⟩ derived for 15 minutes with no word past its first line: the estimate waited for a
    second candidate, which --tries 1 --steps 0 never has (a hunt)."""
    import bilinear.inplace_cli

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(bilinear.inplace_cli, "LARGE_SCHEME", 7)
    monkeypatch.setattr(bilinear.inplace_cli, "inplace", stop)
    assert main(["inplace", "strassen", "--tries", "1", "--steps", "0"]) == 130
    assert ("note: deriving one order of 7 products takes minutes (3220 took 15 min on 2 cores), and 1 is asked for "
            "(--tries and --steps set how many)") in capsys.readouterr().err
