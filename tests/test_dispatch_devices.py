"""A dispatch table holds for the GPU it was measured on and those its checks held on; elsewhere
``matmul`` keeps cuBLAS.  Before, the H100's table chose for any GPU (a fast choice is a measurement of
one GPU's cuBLAS, and a GPU with other FP64 or int8 rates can lose with it)."""

from __future__ import annotations

import json
import os

import pytest

from bilinear.dispatch import (GRID_CHECK, IN_PLACE_CHECK, TABLE, TABLE_ENV, dispatch, forget_decisions, in_place_choice,
                               load_table, parse_table)
from bilinear.dispatch_checks import TableError
from bilinear.dispatch_writes import measuring_on, merge_tsm2_rows, misses, record_check, with_check

from conftest import GPU_UNDER_TEST, gpu_benchmark

FAST = {"dtype": "float64", "m": 8192, "k": 8192, "n": 8192, "scheme": "winograd", "levels": 2, "breadth": 2,
        "launch": "streams", "speedup": 1.3}
IN_PLACE = {"dtype": "float64", "m": 16384, "k": 16384, "n": 16384, "scheme": "msmes2", "levels": 1, "speedup": 1.17}
TSM2L = {"family": "tsm2l", "dtype": "float64", "m": 10**6, "k": 8, "n": 8, "winner": "tsm2l", "speedup": 2.4}


def _data(**header):
    return {**header, "rows": [TSM2L], "recursive": {"min_speedup": 1.1, "rows": [FAST]}, "inplace": {"rows": [IN_PLACE]}}


def _choices(table, device):
    return (dispatch(8192, 8192, 8192, "float64", table=table, device=device).kernel,
            dispatch(10**6, 8, 8, "float64", table=table, device=device).kernel,
            in_place_choice(16384, 16384, 16384, "float64", table, device=device))


def test_a_table_chooses_on_its_own_gpu_and_keeps_cublas_on_another():
    table = parse_table(_data(device="GPU A"))
    assert _choices(table, "GPU A") == ("recursive", "tsm2l", ("msmes2", 1))
    assert _choices(table, None) == ("recursive", "tsm2l", ("msmes2", 1))  # no GPU named: as measured
    assert _choices(table, "GPU B") == ("cublas", "cublas", None)
    assert dispatch(8192, 8192, 8192, "float64", table=table, device="GPU B").reason == (
        "the dispatch table holds for GPU A, not this GPU B: check it here (benchmarks/dispatch_grid.py and "
        "inplace_table.py --check --record), or measure one here (benchmarks/tsm2.py, dispatch_grid.py and "
        "inplace_table.py --table FILE) and set BILINEAR_DISPATCH_TABLE=FILE")


def test_a_table_that_names_no_gpu_holds_on_any():
    assert _choices(parse_table(_data()), "GPU B") == ("recursive", "tsm2l", ("msmes2", 1))


def test_a_check_on_another_gpu_vouches_for_what_it_checked():
    grid = parse_table(_data(device="GPU A", checked_on=[{"device": "GPU B", "checks": GRID_CHECK}]))
    assert _choices(grid, "GPU B") == ("recursive", "tsm2l", None)  # the in-place rows were not checked there
    both = parse_table(_data(device="GPU A", checked_on=[{"device": "GPU B", "checks": GRID_CHECK},
                                                         {"device": "GPU B", "checks": IN_PLACE_CHECK}]))
    assert _choices(both, "GPU B") == ("recursive", "tsm2l", ("msmes2", 1))
    assert both.devices(GRID_CHECK) == ("GPU A", "GPU B") and _choices(both, "GPU C") == ("cublas", "cublas", None)


def test_the_committed_table_holds_for_the_h100_it_was_measured_on_and_the_h200_it_was_checked_on():
    table = load_table(TABLE)
    assert table.measured_on == "NVIDIA H100 80GB HBM3"
    assert table.devices(GRID_CHECK) == table.devices(IN_PLACE_CHECK) == ("NVIDIA H100 80GB HBM3", "NVIDIA H200")
    assert dispatch(8192, 8192, 8192, "float64", table=table, device="NVIDIA H100 80GB HBM3").kernel == "recursive"
    assert dispatch(8192, 8192, 8192, "float64", table=table, device="NVIDIA A2").kernel == "cublas"


@pytest.mark.parametrize("change, message", [
    ({"device": ""}, "device must name a GPU (as CUDA does), not ''"),
    ({"device": 7}, "device must name a GPU (as CUDA does), not 7"),
    ({"device": "A", "checked_on": {}}, "checked_on must be a list"),
    ({"device": "A", "checked_on": ["B"]}, "checked_on[0] must be an object"),
    ({"device": "A", "checked_on": [{"checks": "grid"}]}, "checked_on[0].device must name a GPU (as CUDA does), not None"),
    ({"device": "A", "checked_on": [{"device": "B", "checks": "all"}]},
     "checked_on[0].checks must be one of grid, inplace, not 'all'"),
    ({"checked_on": [{"device": "B", "checks": "grid"}]},
     "checked_on needs the table's own device (the GPU its rows were measured on)"),
])
def test_a_malformed_device_or_check_is_named(change, message):
    with pytest.raises(TableError) as error:
        parse_table({**_data(), **change})
    assert str(error.value) == message


@pytest.fixture
def environment(monkeypatch):
    """$BILINEAR_DISPATCH_TABLE as a test sets it (it is read once per process: forget_decisions reads it
    again), and as it was afterwards."""
    yield monkeypatch
    monkeypatch.undo()
    forget_decisions()


def test_the_environment_names_the_table_matmul_decides_by(tmp_path, environment):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(_data(device="GPU B")))
    environment.setenv(TABLE_ENV, str(path))
    forget_decisions()
    assert dispatch(8192, 8192, 8192, "float64", device="GPU B").kernel == "recursive"
    assert in_place_choice(16384, 16384, 16384, "float64", device="GPU B") == ("msmes2", 1)
    environment.delenv(TABLE_ENV)  # the committed table again, measured on another GPU
    assert dispatch(8192, 8192, 8192, "float64", device="GPU B").kernel == "recursive"  # read once, until ...
    forget_decisions()
    assert dispatch(8192, 8192, 8192, "float64", device="GPU B").kernel == "cublas"


def test_an_environment_naming_no_table_is_refused_with_its_name(tmp_path, environment):
    environment.setenv(TABLE_ENV, str(tmp_path / "missing.json"))
    forget_decisions()
    with pytest.raises(TableError) as error:
        dispatch(8192, 8192, 8192, "float64", device="GPU B")
    assert str(error.value).startswith(f"cannot read the dispatch table {tmp_path / 'missing.json'} "
                                       f"($BILINEAR_DISPATCH_TABLE): [Errno 2] No such file or directory")


def test_a_malformed_table_is_named_with_its_file(tmp_path, environment):
    """Its value alone had been named: recursive.min_speedup ..., of no file a matmul user could find."""
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"device": "GPU B", "recursive": {"min_speedup": "1.1"}}))
    environment.setenv(TABLE_ENV, str(path))
    forget_decisions()
    with pytest.raises(TableError) as error:
        dispatch(8192, 8192, 8192, "float64", device="GPU B")
    assert str(error.value) == (f"the dispatch table {path} ($BILINEAR_DISPATCH_TABLE): recursive.min_speedup must be "
                                "a finite number above 0, not '1.1'")


def test_tsm2_rows_are_not_merged_into_another_gpus_table():
    """They had replaced it whole: tsm2.py --table bilinear/data/dispatch.json on an H200 wiped the H100's rows."""
    old = _data(device="GPU A", checked_on=[{"device": "GPU B", "checks": GRID_CHECK}])
    with pytest.raises(TableError, match="the table's rows were measured on GPU A, not this GPU C"):
        merge_tsm2_rows(old, {"device": "GPU C"}, [])
    same = merge_tsm2_rows(old, {"device": "GPU A"}, [])  # the rows stay, the checks of the rows before go
    assert same["recursive"] == old["recursive"] and same["inplace"] == old["inplace"] and "checked_on" not in same


def test_rows_are_measured_only_into_a_table_of_the_gpu_at_hand():
    old = _data(device="GPU A", checked_on=[{"device": "GPU B", "checks": GRID_CHECK}])
    with pytest.raises(TableError) as error:
        measuring_on(old, "GPU B")
    assert str(error.value) == ("the table's rows were measured on GPU A, not this GPU B: measure a table of this "
                                "GPU into a new file (benchmarks/tsm2.py --table FILE first)")
    assert measuring_on(old, "GPU A") == {**_data(device="GPU A")}
    assert measuring_on(_data(), "GPU B")["device"] == "GPU B"


@pytest.mark.parametrize("script", ["dispatch_grid", "inplace_table"])
def test_a_benchmark_refuses_to_measure_into_another_gpus_table(tmp_path, monkeypatch, script):
    module = gpu_benchmark(monkeypatch, script)
    path = tmp_path / "dispatch.json"
    path.write_text(json.dumps(_data(device="GPU A")))
    with pytest.raises(TableError, match=f"measured on GPU A, not this {GPU_UNDER_TEST}"):
        if script == "dispatch_grid":
            module.measure_table(path, 5, 1.1, ["float64"], [(8192, 8192, 8192)])
        else:
            module.measure_table(path, 5, ["float64"], [(16384, 16384, 16384)])
    assert json.loads(path.read_text()) == _data(device="GPU A")


def test_a_check_entry_replaces_the_same_gpus_and_never_names_the_tables_own():
    data = with_check(_data(device="GPU A"), "GPU B", GRID_CHECK, {"least_ratio_there": 1.2})
    again = with_check(data, "GPU B", GRID_CHECK, {"least_ratio_there": 1.3})
    assert again["checked_on"] == [{"device": "GPU B", "checks": GRID_CHECK, "least_ratio_there": 1.3}]
    with pytest.raises(TableError, match="^the table's own GPU is GPU A: a check records another GPU$"):
        with_check(data, "GPU A", GRID_CHECK, {})
    with pytest.raises(TableError, match="^the table names no GPU, so it holds on every one: a check has nothing"):
        with_check(_data(), "GPU A", GRID_CHECK, {})
    with pytest.raises(ValueError):
        with_check(data, "GPU B", "everything", {})


def _result(chosen, ratio):
    return {"dtype": "float64", "m": 8192, "k": 8192, "n": 8192, "chosen": chosen, "ratio": ratio}


def test_a_check_holds_where_every_faster_kernel_chosen_cleared_the_tables_bar():
    assert misses([_result(True, 1.3), _result(False, 0.93)], 1.1) == []  # cuBLAS against itself says nothing
    assert misses([_result(True, 1.3), _result(True, 1.05)], 1.1) == [_result(True, 1.05)]


def test_a_check_runs_on_trial_and_records_where_it_held(tmp_path, monkeypatch):
    grid = gpu_benchmark(monkeypatch, "dispatch_grid")
    forgotten = []
    monkeypatch.setattr(grid.prepared_calls, "forget", lambda: forgotten.append(True))
    monkeypatch.setenv(TABLE_ENV, "before.json")
    path = tmp_path / "dispatch.json"
    path.write_text(json.dumps(_data(device="GPU A")))
    seen = []

    def run():
        forget_decisions()
        seen.append(load_table().devices(GRID_CHECK))
        return [_result(True, 1.25), _result(True, 1.4), _result(False, 0.99)]

    results = grid.check_on_trial(path, "GPU B", GRID_CHECK, run)
    assert seen == [("GPU A", "GPU B")]  # a copy that holds there
    assert os.environ[TABLE_ENV] == "before.json" and forgotten  # matmul decides as before, remembering nothing
    assert json.loads(path.read_text()) == _data(device="GPU A")  # the trial wrote nothing
    grid.check_on_trial(path, "GPU A", GRID_CHECK, run)  # the table's own GPU: the table itself
    assert seen[-1] == ("GPU A",)
    monkeypatch.undo()
    forget_decisions()
    assert record_check(path, "GPU B", GRID_CHECK, [_result(True, 1.05)], "by") == (
        "the table did not hold on this GPU B; nothing recorded")
    assert record_check(path, "GPU B", GRID_CHECK, [_result(False, 1.0)], "by") == (
        "the check chose no faster kernel on this GPU B: nothing to record")
    assert record_check(path, "GPU B", GRID_CHECK, results, "by") == f"{path} now holds for this GPU B too"
    entry = json.loads(path.read_text())["checked_on"][0]
    assert {key: entry[key] for key in ("device", "checks", "by", "shapes", "faster_kernel_at", "least_ratio_there")} == {
        "device": "GPU B", "checks": GRID_CHECK, "by": "by", "shapes": 3, "faster_kernel_at": 2,
        "least_ratio_there": 1.25}
    assert record_check(path, "GPU B", GRID_CHECK, results, "by") == f"{path} already holds for this GPU B; nothing recorded"
    assert load_table(path).devices(IN_PLACE_CHECK) == ("GPU A",)
    assert record_check(path, "GPU B", IN_PLACE_CHECK, [_result(True, 1.144)], "by") == f"{path} now holds for this GPU B too"
    assert parse_table(json.loads(path.read_text())).devices(IN_PLACE_CHECK) == ("GPU A", "GPU B")


def test_matmul_in_place_of_host_dlpack_objects_needs_no_gpu():
    """With inplace=True a torch CPU tensor asked for the GPU's name, and without CuPy that failed."""
    import numpy as np

    import bilinear

    class HostTensor:  # a torch CPU tensor as matmul sees it: a shape, a dtype NumPy does not name, DLPack
        def __init__(self, array):
            self.array, self.shape, self.dtype = array, array.shape, "torch.float64"

        def __dlpack__(self, **kwargs):
            return self.array.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    A = np.random.default_rng(0).standard_normal((8, 8))
    assert np.allclose(bilinear.matmul(HostTensor(A), HostTensor(A.copy()), inplace=True), A @ A)


@pytest.mark.parametrize("sizes, message", [
    ((-1, 8, 8), "m must be a whole number of at least 0, not -1"),
    ((8.5, 8, 8), "m must be a whole number of at least 0, not 8.5"),
    ((8, True, 8), "k must be a whole number of at least 0, not True"),
    ((8, 8, "8"), "n must be a whole number of at least 0, not '8'"),
])
def test_a_size_that_is_no_matrix_side_is_refused(sizes, message):
    """-1 was an "empty product" and 8.5 a shape with "no fast-scheme measurement near" it (a hunt)."""
    with pytest.raises(ValueError) as caught:
        dispatch(*sizes, "float64", device="NVIDIA H100 80GB HBM3")
    assert str(caught.value) == message


def test_a_zero_size_is_an_empty_product():
    assert dispatch(0, 8, 8, "float64").reason == "empty product"


@pytest.mark.parametrize("table", [None, parse_table(_data())])
def test_the_in_place_choice_refuses_a_size_that_is_no_matrix_side(table):
    with pytest.raises(ValueError, match=r"^n must be a whole number of at least 0, not -4$"):
        in_place_choice(16384, 16384, -4, "float64", table)


def _timing(ratio, itself):
    return {"cublas_ms": 0.02, "matmul_ms": 0.02 / ratio, "ratio": ratio, "round_ratios": [ratio - 0.01, ratio + 0.01],
            "cublas_vs_itself": itself}


def test_a_check_whose_cublas_against_itself_is_off_by_more_than_the_margin_is_timed_again(monkeypatch):
    """FP64 100000x16x16 read 0.980 in a run where cuBLAS against itself read 0.687, and 1.26-1.39 in four
    runs after (session 84): a timing whose control is off by more than 0.1 is taken again, at most three
    times in all, the first undisturbed one counting and the disturbed ones kept beside it."""
    grid = gpu_benchmark(monkeypatch, "dispatch_grid")
    runs = iter([_timing(0.980, 0.687), _timing(1.05, 1.12), _timing(1.283, 1.012), _timing(2.0, 1.0)])
    timing = grid.settled(lambda: next(runs))
    assert timing == {**_timing(1.283, 1.012), "disturbed": False,
                      "disturbed_before": [{"ratio": 0.980, "cublas_vs_itself": 0.687},
                                           {"ratio": 1.05, "cublas_vs_itself": 1.12}]}
    assert grid.timing_text(timing) == (
        "ratio  1.283 (rounds 1.273-1.293; cuBLAS/cuBLAS 1.012)  (cuBLAS    0.020 ms, matmul    0.016 ms)  "
        "[timed again after a disturbed run: ratio 0.980, cuBLAS/cuBLAS 0.687; ratio 1.050, cuBLAS/cuBLAS 1.120]")
    assert next(runs)["ratio"] == 2.0  # no fourth timing was taken


def test_a_check_disturbed_every_time_keeps_its_last_timing_and_says_so(monkeypatch):
    """The last of three disturbed timings counts (a miss stays a miss), and the line says all were disturbed;
    an undisturbed first timing is the only one."""
    grid = gpu_benchmark(monkeypatch, "dispatch_grid")
    runs = iter([_timing(0.9, 0.8), _timing(0.95, 1.2), _timing(0.97, 0.85)])
    timing = grid.settled(lambda: next(runs))
    assert (timing["ratio"], timing["disturbed"], len(timing["disturbed_before"])) == (0.97, True, 2)
    assert grid.timing_text(timing).endswith("ratio 0.950, cuBLAS/cuBLAS 1.200]  [disturbed in all 3 runs]")
    calm = grid.settled(lambda: _timing(1.2, 0.92))
    assert (calm["disturbed"], calm["disturbed_before"]) == (False, [])
    assert grid.timing_text(calm) == ("ratio  1.200 (rounds 1.190-1.210; cuBLAS/cuBLAS 0.920)  "
                                      "(cuBLAS    0.020 ms, matmul    0.017 ms)")
