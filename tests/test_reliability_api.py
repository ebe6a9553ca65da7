"""Issue 12, the Python API: matmul never changes its inputs; bad arguments raise ValueError."""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest
from conftest import ROOT, scheme_file

import bilinear
from bilinear.diagnostics import BilinearError
from bilinear.ir import Form, Product
from bilinear.measure import random_inputs

MSMES = ROOT / "algorithms" / "msmes.bl"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(64, 64, 64), (33, 17, 5), (1, 1, 1)])
def test_matmul_on_numpy_arrays_is_a_product_that_leaves_inputs_unchanged(shape, dtype):
    M, K, N = shape
    A, B, C = random_inputs(np, M, K, N, dtype, seed=M)
    A0, B0, C0 = A.copy(), B.copy(), C.copy()
    bilinear.matmul(A, B, out=C, alpha=2.0, beta=0.5)
    assert np.array_equal(A, A0) and np.array_equal(B, B0)  # bitwise
    expected = 2.0 * (A0.astype(np.float64) @ B0) + 0.5 * C0
    assert np.allclose(C, expected, rtol=1e-4 if dtype == "float32" else 1e-12, atol=1e-4 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("inplace", [False, True])
def test_matmul_with_alpha_zero_reads_neither_a_nor_b_on_numpy(inplace):
    """As BLAS and the README have it (out = beta·out): NumPy's path gave NaN from a NaN in A."""
    A, B, C = random_inputs(np, 64, 64, 64, "float64", seed=6)
    A[3, 5] = np.nan
    assert np.array_equal(bilinear.matmul(A, B, alpha=0.0, inplace=inplace), np.zeros((64, 64)))
    out = C.copy()
    bilinear.matmul(A, B, out=out, alpha=0.0, beta=0.5, inplace=inplace)
    assert np.array_equal(out, 0.5 * C)


@pytest.mark.parametrize("layout", [np.asfortranarray, lambda x: np.ascontiguousarray(x.T).T, lambda x: x[::-1]])
def test_matmul_inplace_allows_msmes_and_multiplies_other_layouts_as_without_it(layout):
    """A Fortran-ordered A was refused with inplace=True ("A must be row-major"); plain matmul takes it."""
    A, B, _ = random_inputs(np, 48, 40, 32, "float64", seed=8)
    A = layout(A)
    assert np.allclose(bilinear.matmul(A, B, inplace=True), A @ B, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("shaped", [lambda v: v[None, :], lambda v: v[:, None]], ids=["row", "column"])
def test_matmul_inplace_runs_msmes_on_a_vector_made_a_matrix(monkeypatch, shaped):
    """x[None, :] (row stride 0, C-contiguous) multiplied without MSMES, which its docstring promises
    "where A, B and out are row-major": the compiled product takes it (a hunt)."""
    from bilinear import matmul_api

    ran = []
    in_place = matmul_api._in_place_product
    monkeypatch.setattr(matmul_api, "_in_place_product", lambda *args: ran.append(args) or in_place(*args))
    vector = np.random.default_rng(4).standard_normal(6)
    A = shaped(vector)
    B = np.random.default_rng(5).standard_normal((A.shape[1], 4)) if A.shape[0] == 1 else np.ones((1, 4))
    assert np.allclose(bilinear.matmul(A, B, inplace=True), A @ B, rtol=1e-13, atol=1e-13)
    assert ran == [("float64", "numpy")]


def test_matmul_inplace_multiplies_read_only_inputs_as_without_it():
    """A read-only A was refused ("A is read-only; msmes is in place"), where inplace only allows MSMES."""
    A, B, _ = random_inputs(np, 48, 40, 32, "float64", seed=9)
    A.flags.writeable = False
    assert np.array_equal(bilinear.matmul(A, B, inplace=True), bilinear.matmul(A, B))


@pytest.mark.parametrize("inplace", ["False", 0, None, [True]])
def test_matmul_inplace_must_be_true_or_false(inplace):
    """inplace="False" ran MSMES: A and B came back changed in their last bits."""
    A, B, _ = random_inputs(np, 8, 8, 8, "float64", seed=3)
    with pytest.raises(ValueError, match=r"^inplace must be True or False, not "):
        bilinear.matmul(A, B, inplace=inplace)
    assert bilinear.matmul(A, B, inplace=np.bool_(False)) is not None


def test_matmul_on_numpy_refuses_a_read_only_out_first():
    """It computed A@B, then NumPy said "assignment destination is read-only"."""
    A, B, C = random_inputs(np, 8, 8, 8, "float64", seed=3)
    C.flags.writeable = False
    with pytest.raises(ValueError, match=r"^out is read-only; bilinear writes the product into it$"):
        bilinear.matmul(A, B, out=C)


def test_matmul_inplace_is_opt_in_and_restores_up_to_rounding():
    A, B, _ = random_inputs(np, 64, 64, 64, "float64", seed=5)
    A0, B0 = A.copy(), B.copy()
    C = bilinear.matmul(A, B, inplace=True)
    assert np.allclose(C, A0 @ B0, rtol=1e-12, atol=1e-12)
    # in place: A and B were overwritten and put back, up to a few ulps
    assert np.abs(A - A0).max() <= 16 * np.finfo(np.float64).eps * np.abs(A0).max()
    assert np.abs(B - B0).max() <= 16 * np.finfo(np.float64).eps * np.abs(B0).max()


@pytest.mark.parametrize("alpha", [1j, None, np.ones(2), "2", np.complex128(1)])
def test_bad_alpha_is_a_value_error(alpha):
    product = bilinear.compile(MSMES, backend="numpy")
    A, B, _ = random_inputs(np, 4, 4, 4, "float64", seed=1)
    with pytest.raises(ValueError, match="alpha"):
        product(A, B, alpha=alpha)
    with pytest.raises(ValueError, match="alpha"):
        bilinear.matmul(A, B, alpha=alpha)


@pytest.mark.parametrize("beta", [1j, None, [1.0]])
def test_bad_beta_is_a_value_error(beta):
    product = bilinear.compile(MSMES, backend="numpy")
    A, B, C = random_inputs(np, 4, 4, 4, "float64", seed=1)
    with pytest.raises(ValueError, match="beta"):
        product(A, B, out=C, beta=beta)


@pytest.mark.parametrize("bad", [None, 3, 2.5, b"\xff", ["a.bl"]])
def test_load_and_verify_of_a_non_path_is_a_value_error(bad):
    with pytest.raises(ValueError, match="path"):
        bilinear.load(bad)
    with pytest.raises(ValueError, match="path"):
        bilinear.verify(bad)


def test_compile_options_take_numpy_integers():
    """levels=np.int64(2) was taken and breadth=np.int64(1) refused as "not a whole number"."""
    product = bilinear.compile("winograd", backend="numpy", levels=np.int64(2), breadth=np.int64(1), cutoff=np.int64(4))
    assert product.lowered.options.breadth == 1 and type(product.lowered.options.breadth) is int
    assert type(product.lowered.options.cutoff) is int


@pytest.mark.parametrize("name", ["levels", "cutoff", "breadth", "workspace_limit", "moduli"])
def test_an_array_for_a_whole_number_option_is_a_value_error(name):
    """cutoff=np.array([1, 2]) raised NumPy's TypeError ("only integer scalar arrays can be converted")."""
    with pytest.raises(ValueError, match=f"^{name} must be "):
        bilinear.compile("strassen", backend="numpy", **{"leaf": "ozaki", "levels": 1, name: np.array([1, 2])})


@pytest.mark.parametrize("dtype", [np.zeros(3, "f4"), np.float64(2.0), [np.float32]])
def test_a_dtype_that_is_a_value_not_a_type_is_refused_as_such(dtype):
    """An array raised "The truth value of an array ... is ambiguous"; np.float64(2.0) was taken as float64."""
    with pytest.raises(ValueError, match="^dtype must be float32 or float64, not "):
        bilinear.compile("strassen", backend="numpy", dtype=dtype)


@pytest.mark.parametrize("format", [["bl"], {"fast-matmul": 1}])
def test_an_unhashable_format_is_refused_as_unknown(format):
    """format=["bl"] raised TypeError: unhashable type: 'list'."""
    with pytest.raises(bilinear.BilinearError, match="^unknown input format"):
        bilinear.load(ROOT / "algorithms" / "strassen.bl", format=format)


def test_a_file_whose_name_holds_a_newline_still_loads(tmp_path):
    """The refusal of .bl text given as a path took any name with a newline for text (a review)."""
    odd = tmp_path / "a\nb.bl"
    odd.write_text((ROOT / "algorithms" / "strassen.bl").read_text(encoding="utf-8"), encoding="utf-8")
    assert bilinear.load(str(odd)).main.name == "strassen"


def test_scheme_text_given_as_a_path_says_what_to_do():
    """The text was taken as a file name and echoed whole in "cannot read ...: No such file or directory"."""
    text = "algorithm x <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n"
    with pytest.raises(ValueError) as refused:
        bilinear.compile(text, backend="numpy")
    assert str(refused.value) == (
        "expected a path to a .bl or catalogue file, not text of several lines ('algorithm x <1,1,1;1>:\\n  M…11 = M1\\n'); "
        "for a scheme's text, bilinear.frontend.program_from_text(text) gives a program to pass instead")


@pytest.mark.parametrize("options, message", [
    ({"fuse": "no"}, "fuse must be True or False, not 'no'"),  # it had meant True
    ({"leaf": "auto", "levels": 1}, "leaf must be one of cublas, fused, ozaki, not 'auto'; leaf='auto' chooses with "
                                    "levels='auto'"),
    ({"launch": "batched", "levels": 2}, "batched launches (--launch batched, launch='batched') make breadth-first "
                                         "leaves one batched GEMM, and there are no breadth-first levels"),  # it had been ignored
])
def test_compile_options_that_would_mean_something_else_are_refused(options, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        bilinear.compile("winograd", backend="numpy", **options)


@pytest.mark.parametrize("options, message", [
    ({"fuse": "no"}, "fuse must be True or False, not 'no'"),  # refused at the first call only
    ({"cutoff": "x"}, "cutoff must be a whole number, not 'x'"),
    ({"launch": "batched"}, "levels='auto' runs no breadth-first levels, so launch='batched' has nothing to batch"),
])
def test_automatic_levels_check_the_options_they_keep_at_once(options, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        bilinear.compile("strassen", backend="numpy", levels="auto", **options)


def test_a_batched_product_under_a_workspace_limit_falls_back_to_depth_first():
    product = bilinear.compile("winograd", backend="numpy", levels=2, breadth=1, launch="batched",
                               workspace_limit=20480)  # what depth-first needs at 64, less than breadth-first
    A, B, _ = random_inputs(np, 64, 64, 64, "float64", seed=3)
    assert product.executors[-1].lowered.options.launch == "serial"
    assert product.breadth_levels(64, 64, 64) == 0
    assert np.allclose(product(A, B), A @ B, rtol=1e-13, atol=1e-13)


def test_reading_options_take_python_values():
    """shape=(2, 2, 2) and key=(3, 3, 3) failed with AttributeError ('tuple' has no 'split'), and
    modulus="7" with a TypeError from a comparison: a Python caller writes them so."""
    path = scheme_file("fast-matmul/strassen")
    assert bilinear.load(path, shape=(2, 2, 2)).algorithms == bilinear.load(path, shape=np.array([2, 2, 2])).algorithms
    with pytest.raises(ValueError, match=r"^shape must be 'm,k,n' or three whole numbers, not \(2, 2\)$"):
        bilinear.load(path, shape=(2, 2))
    with pytest.raises(ValueError, match=r"^key must be 'm,k,n' or three whole numbers, not 3$"):
        bilinear.verify(path, key=3)
    for bad in ("7", 7.0, True):
        with pytest.raises(ValueError, match=f"^modulus must be a whole number, not {bad!r}$"):
            bilinear.load(path, modulus=bad)


def test_an_archive_key_may_be_three_numbers():
    path = scheme_file("alphatensor/factorizations_r.npz")
    assert bilinear.load(path, key=(2, 2, 2)).algorithms == bilinear.load(path, key="2,2,2").algorithms


def test_verify_takes_one_algorithm_and_names_a_large_non_path_briefly():
    """load(...).main is an Algorithm: verify checks it; load refuses it with a message that names
    it rather than printing all of it (an algorithm's repr runs to thousands of characters)."""
    algorithm = bilinear.load(ROOT / "algorithms" / "strassen.bl").main
    report = bilinear.verify(algorithm)
    assert report.ok and [entry.algorithm.name for entry in report.entries] == ["strassen"]
    with pytest.raises(ValueError, match=r"^expected a path to a \.bl or catalogue file, not Algorithm ") as error:
        bilinear.load(algorithm)
    assert len(str(error.value)) < 120


@pytest.mark.parametrize(
    ("options", "message"),
    [({"levels": -1}, "levels must be between 0 and 32, not -1: each level of a scheme of more than one "
                     "block at least halves a dimension"),
     ({"levels": 10**5}, "levels must be between 0 and 32, not 100000: "),
     ({"levels": 2.5}, "levels must be a whole number or 'auto', not 2.5"),
     ({"levels": True}, "levels must be a whole number or 'auto', not True"),
     ({"dtype": "float16"}, "dtype must be float32 or float64, not 'float16'"),
     ({"leaf": "x"}, "leaf must be one of cublas, fused, ozaki or auto, not 'x'"),
     ({"cutoff": 0}, "cutoff must be between 1 and 2147483647 (2^31 - 1), not 0"),
     ({"cutoff": "8"}, "cutoff must be a whole number, not '8'"),
     ({"backend": "tpu"}, "backend must be one of cupy, numpy, not 'tpu'")],
)
def test_bad_compile_options_are_value_errors(options, message):
    with pytest.raises(ValueError) as refused:
        bilinear.compile(MSMES, **{"backend": "numpy", **options})
    assert str(refused.value).startswith(message)


def test_missing_file_is_a_bilinear_error():
    path = ROOT / "no-such-file.bl"
    with pytest.raises(BilinearError) as refused:
        bilinear.load(path)
    assert str(refused.value) == f"cannot read {path}: No such file or directory"


def _read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


@pytest.mark.parametrize("name", ["strassen", "winograd", "rsmm", "grey333", "grey234", "naive2x2"])
def test_read_only_inputs_multiply_where_the_schedule_only_reads_them(name):
    product = bilinear.compile(ROOT / "algorithms" / f"{name}.bl", backend="numpy", levels=2)
    A, B, _ = random_inputs(np, 37, 29, 41, "float64", seed=3)
    C = product(_read_only(A), _read_only(B))
    assert np.allclose(C, A @ B, rtol=1e-12, atol=1e-12)
    assert np.allclose(bilinear.matmul(_read_only(A), _read_only(B)), A @ B, rtol=1e-12, atol=1e-12)


def test_read_only_inputs_of_an_in_place_schedule_and_a_read_only_out_are_refused():
    product = bilinear.compile(MSMES, backend="numpy")
    A, B, C = random_inputs(np, 8, 8, 8, "float64", seed=3)
    with pytest.raises(ValueError, match=r"^A is read-only; msmes is in place \(it overwrites A and B while it runs\)"):
        product(_read_only(A), B)
    with pytest.raises(ValueError, match=r"^out is read-only; bilinear writes the product into it$"):
        bilinear.compile(ROOT / "algorithms" / "strassen.bl", backend="numpy")(A, B, out=_read_only(C))
    with pytest.raises(ValueError, match="read-only"):
        bilinear.matmul(A, B, out=_read_only(C), inplace=True)


@pytest.mark.parametrize("levels", [1, "auto"])
@pytest.mark.parametrize("shape", [(5, 0, 5), (0, 5, 5), (5, 5, 0)])
def test_compiled_products_of_empty_matrices(shape, levels):
    """NumPy gives empty arrays strides (0, 0): they were refused as not row-major, and levels="auto"
    divided by zero."""
    M, K, N = shape
    product = bilinear.compile(ROOT / "algorithms" / "strassen.bl", backend="numpy", levels=levels)
    C = product(np.zeros((M, K)), np.zeros((K, N)))
    assert C.shape == (M, N) and not C.any()
    out = np.full((M, N), 2.0)
    assert np.array_equal(product(np.zeros((M, K)), np.zeros((K, N)), out=out, beta=0.5), np.full((M, N), 1.0))
    assert bilinear.matmul(np.zeros((M, K)), np.zeros((K, N)), inplace=True).shape == (M, N)


def test_beta_without_out_is_refused_as_matmul_refuses_it():
    """The compiled product set beta to 0 without a word; bilinear.matmul refused the same call."""
    A, B, _ = random_inputs(np, 8, 8, 8, "float64", seed=1)
    with pytest.raises(ValueError, match=r"^beta ≠ 0 needs out= \(the C to accumulate into\)$"):
        bilinear.compile(MSMES, backend="numpy")(A, B, beta=0.5)
    with pytest.raises(ValueError, match=r"^beta ≠ 0 needs out="):
        bilinear.matmul(A, B, beta=0.5)


def test_bench_json_holds_no_bare_nan(tmp_path):
    """predicted_ms was NaN on the CPU, which JSON parsers other than Python's refuse."""
    import json

    from bilinear.cli import main

    assert main(["bench", str(MSMES), "-n", "8", "--levels", "1", "--backend", "numpy", "--json", str(tmp_path / "b.json")]) == 0
    json.loads((tmp_path / "b.json").read_text(), parse_constant=lambda name: pytest.fail(f"bare {name} in the JSON"))
    from bilinear.bench import read_json

    (result,) = read_json(tmp_path / "b.json")
    assert result.predicted_ms != result.predicted_ms  # NaN again, as measured


@pytest.mark.parametrize("name", ["strassen", "msmes", "rsmm.bl"])
def test_load_verify_and_compile_take_a_shipped_name_as_the_cli_does(name, tmp_path, monkeypatch):
    """`bilinear verify strassen` works; bilinear.load("strassen") said "No such file"."""
    monkeypatch.chdir(tmp_path)  # no file of that name here
    program = bilinear.load(name)
    assert program.path == str(ROOT / "algorithms" / (name if name.endswith(".bl") else f"{name}.bl"))
    assert bilinear.verify(name).ok
    A, B, _ = random_inputs(np, 8, 8, 8, "float64", seed=2)
    assert np.allclose(bilinear.compile(name, backend="numpy")(A, B), A @ B, rtol=1e-12, atol=1e-12)


def test_a_file_in_the_working_folder_wins_over_a_shipped_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "strassen").write_text((ROOT / "algorithms" / "naive2x2.bl").read_text())
    assert bilinear.load("strassen").main.name == "naive2x2"


@pytest.mark.parametrize("make", [lambda v: v[None, :], lambda v: np.atleast_2d(v), lambda v: v[:, None],
                                  lambda v: v[:, None].T, lambda v: np.ascontiguousarray(v[None, :])])
def test_single_row_and_column_views_multiply(make):
    """NumPy gives v[None, :] a row stride of 0 and v[:, None] a column stride of 0, and its
    ascontiguousarray keeps them: they were refused as not row-major, with advice that did nothing."""
    v = np.arange(1.0, 9.0)
    x = make(v)
    product = bilinear.compile(ROOT / "algorithms" / "strassen.bl", backend="numpy", levels=1)
    if x.shape[0] == 1:
        other = np.arange(64.0).reshape(8, 8)
        assert np.allclose(product(x, other), x @ other, rtol=1e-12, atol=1e-12)
        assert np.allclose(bilinear.matmul(x, other.copy(), inplace=True), x @ other, rtol=1e-12, atol=1e-12)
    else:
        other = np.arange(8.0).reshape(1, 8)
        out = np.zeros((8, 8))
        assert np.allclose(product(x, other, out=out), x @ other, rtol=1e-12, atol=1e-12)
        assert np.allclose(out, x @ other, rtol=1e-12, atol=1e-12)  # written in place, through the view


def test_a_single_row_out_is_returned_as_given():
    """out sliced from a wider array came back as an as_strided view of it (``r is out`` False)."""
    product = bilinear.compile("strassen", backend="numpy", levels=1)
    A, B, _ = random_inputs(np, 1, 5, 4, "float64", seed=2)
    out = np.zeros((1, 6))[:, :4]
    assert product(A, B, out=out) is out and np.allclose(out, A @ B, rtol=1e-14, atol=1e-14)
    assert product(A, B, out=out, alpha=0.0) is out


def test_a_view_with_a_stride_along_its_length_is_still_refused():
    product = bilinear.compile(ROOT / "algorithms" / "strassen.bl", backend="numpy")
    with pytest.raises(ValueError, match="row-major"):
        product(np.arange(16.0)[None, ::2], np.eye(8))


@pytest.mark.parametrize("options", [{"levels": 0}, {"levels": 1}, {"levels": 2, "breadth": 2}, {"leaf": "fused"},
                                     {"leaf": "ozaki", "levels": 0}])
def test_alpha_zero_reads_neither_a_nor_b_whatever_the_leaf(options):
    """As BLAS: with alpha = 0, out = beta·out.  A NaN in A reached 4, 6 or 9 entries of out with
    library leaves and none with fused ones."""
    A, B, C = random_inputs(np, 8, 8, 8, "float64", seed=6)
    A[0, 0] = np.nan
    product = bilinear.compile(ROOT / "algorithms" / "strassen.bl", backend="numpy", **options)
    out = C.copy()
    product(A, B, out=out, alpha=0.0, beta=0.5)
    assert np.array_equal(out, 0.5 * C)
    assert np.array_equal(product(A, B, alpha=0.0), np.zeros((8, 8)))


@pytest.mark.parametrize("dims", [(1, 1, 1), (1, 8, 8), (64, 64, 64)])
def test_an_overwriting_schedule_refuses_beta_at_every_size(dims):
    """rsmm took beta = 1 where the size ran no level (1x1) and refused it from 2x2 up: a small test
    passed and the same call failed at production sizes."""
    A, B, C = random_inputs(np, *dims, "float64", seed=7)
    product = bilinear.compile(ROOT / "algorithms" / "rsmm.bl", backend="numpy", levels=2)
    with pytest.raises(ValueError, match=r"^rsmm computes C = A\*B and overwrites C, so beta must be 0 \(got 1\.0\)"):
        product(A, B, out=C, beta=1.0)


@pytest.mark.parametrize("name, options", [("strassen", {"levels": 2}), ("rsmm", {"levels": 2}),
                                           ("winograd", {"levels": 2, "breadth": 1})])
def test_one_product_called_from_several_threads_gives_every_caller_its_product(name, options):
    """The executor keeps alpha and the workspace between calls: 15 of 32 threaded calls were wrong."""
    from concurrent.futures import ThreadPoolExecutor

    product = bilinear.compile(ROOT / "algorithms" / f"{name}.bl", backend="numpy", **options)
    jobs = [random_inputs(np, 96, 96, 96, "float64", seed=seed)[:2] + (1.0 + seed % 3,) for seed in range(24)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda job: product(job[0], job[1], alpha=job[2]), jobs))
    for (A, B, alpha), C in zip(jobs, results):
        assert np.allclose(C, alpha * (A @ B), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("options, message", [
    ({"breadth": 1}, "levels='auto' chooses the levels per shape, so breadth cannot be given"),
    ({"per_level": ("strassen",)}, "levels='auto' chooses the levels per shape, so per_level cannot be given"),
    ({"workspace_limit": 0}, "levels='auto' chooses the levels per shape, so workspace_limit cannot be given"),
    ({"launch": "bogus"}, "launch must be one of"),
    ({"leaf": "cublas", "moduli": 3}, "moduli"),
    ({"leaf": "auto", "moduli": 3}, "moduli"),  # auto chooses cublas or fused leaves
])
def test_automatic_levels_refuse_options_they_would_drop(options, message):
    """levels="auto" built its products with dtype, levels, leaf, fuse and cutoff alone: breadth,
    per_level, workspace_limit, launch, moduli and scaling were dropped, bad values accepted."""
    with pytest.raises(ValueError, match=message):
        bilinear.compile(ROOT / "algorithms" / "strassen.bl", backend="numpy", levels="auto", **options)


def test_automatic_levels_keep_the_ozaki_options():
    product = bilinear.compile(ROOT / "algorithms" / "strassen.bl", backend="numpy", levels="auto", leaf="ozaki",
                               moduli=7, scaling="norm")
    A, B, _ = random_inputs(np, 8, 8, 8, "float64", seed=8)
    product(A, B)
    built = product._products.values()  # the chosen one and the one-level product the checks use
    assert built and all((p.lowered.options.moduli, p.lowered.options.scaling) == (7, "norm") for p in built)


def test_a_report_is_true_only_when_everything_verified(tmp_path):
    """bool(report) was True for a failed verification: `if bilinear.verify(path):` passed."""
    wrong = tmp_path / "wrong.bl"
    wrong.write_text((ROOT / "algorithms" / "strassen.bl").read_text().replace("C12 = M3 + M5", "C12 = M3 - M5"))
    assert not bilinear.verify(wrong) and not bilinear.verify(wrong).ok
    assert bilinear.verify(ROOT / "algorithms" / "strassen.bl")


@pytest.mark.parametrize("levels", [0, 2, "auto"])
def test_a_scheme_that_does_not_verify_is_refused_at_compile_time(tmp_path, levels):
    """levels="auto" lowered nothing until the first call, so compile accepted a wrong scheme."""
    wrong = tmp_path / "wrong.bl"
    wrong.write_text((ROOT / "algorithms" / "strassen.bl").read_text().replace("C12 = M3 + M5", "C12 = M3 - M5"))
    with pytest.raises(bilinear.BilinearError, match="C12"):
        bilinear.compile(wrong, levels=levels, backend="numpy")


def test_automatic_levels_answer_sizes_past_floats_range_as_fixed_levels_do():
    """workspace_bytes(2**1100, 1, 1) is a number with fixed levels; levels="auto" priced the size as a
    float, and ended in OverflowError; choose(-4, 4, 4) in a TypeError of complex numbers (a hunt)."""
    auto = bilinear.compile(ROOT / "algorithms" / "strassen.bl", backend="numpy", levels="auto")
    fixed = bilinear.compile(ROOT / "algorithms" / "strassen.bl", backend="numpy", levels=0)
    assert auto.workspace_bytes(2**1100, 1, 1) == fixed.workspace_bytes(2**1100, 1, 1)
    assert auto.choose(2**1100, 1, 1)[:2] == (0, "cublas")
    with pytest.raises(ValueError, match="-4"):
        auto.choose(-4, 4, 4)


def test_numpy_and_fraction_arguments_are_taken_as_their_values():
    """dtype=np.float64 was "not <class 'numpy.float64'>", levels=np.int64(2) "not a whole number",
    alpha=Fraction(1, 2) "not a real number"."""
    from decimal import Decimal

    product = bilinear.compile(ROOT / "algorithms" / "strassen.bl", backend="numpy", dtype=np.float64, levels=np.int64(2))
    assert (product.dtype, product.lowered.options.levels) == ("float64", 2)
    assert bilinear.compile(ROOT / "algorithms" / "strassen.bl", backend="numpy", dtype=np.dtype("float32")).dtype == "float32"
    A, B, _ = random_inputs(np, 8, 8, 8, "float64", seed=9)
    for alpha in (Fraction(1, 2), Decimal("0.5")):
        assert np.allclose(product(A, B, alpha=alpha), 0.5 * (A @ B), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("scalar", [np.timedelta64(1, "D"), np.timedelta64(2, "s")], ids=["days", "seconds"])
def test_a_timedelta_scalar_is_not_a_number(scalar):
    """np.timedelta64 is registered as a numbers.Integral: alpha=np.timedelta64(1) ran as 1, where NumPy
    refuses a timedelta times a float64 array (a unit is given: NumPy deprecates the generic one)."""
    product = bilinear.compile(ROOT / "algorithms" / "strassen.bl", backend="numpy")
    A = np.ones((4, 4))
    message = rf"^alpha must be a real number, not timedelta64 {re.escape(repr(scalar))}$"
    with pytest.raises(ValueError, match=message):
        product(A, A, alpha=scalar)
    with pytest.raises(ValueError, match=message):
        bilinear.matmul(A, A, alpha=scalar)


def test_per_level_given_as_one_string_is_a_value_error():
    """per_level="strassen" was read letter by letter: "s is not defined"."""
    with pytest.raises(ValueError, match=r"^per_level takes one definition name per level, such as \('msmes', 'strassen'\)"):
        bilinear.compile(ROOT / "algorithms" / "msmes.bl", backend="numpy", levels=1, per_level="msmes")


def test_compile_takes_one_algorithm_as_verify_does():
    """optimize returns an Algorithm: verify took it and compile said "expected a path"."""
    algorithm = bilinear.load(ROOT / "algorithms" / "winograd.bl").main
    A, B, _ = random_inputs(np, 16, 16, 16, "float64", seed=10)
    assert np.allclose(bilinear.compile(algorithm, backend="numpy", levels=2)(A, B), A @ B, rtol=1e-12, atol=1e-12)


def _edited_strassen(edit):
    from dataclasses import replace as changed

    algorithm = bilinear.load(ROOT / "algorithms" / "strassen.bl").main
    return changed(algorithm, **edit(algorithm, changed))


@pytest.mark.parametrize("edit, message", [
    (lambda a, changed: {"outputs": (changed(a.outputs[0], form=a.outputs[0].form + Form.symbol("M99")), *a.outputs[1:])},
     "M99"),
    (lambda a, changed: {"products": (changed(a.products[0], left=a.products[0].right, right=a.products[0].left),
                                      *a.products[1:])}, "M1"),
    (lambda a, changed: {"products": (changed(a.products[0], left=Form.symbol("A33")), *a.products[1:])}, "A33"),
], ids=["undefined-product", "swapped-factors", "block-outside-the-shape"])
def test_a_hand_built_algorithm_is_checked_as_a_file_would_be(edit, message):
    """verify took an Algorithm as it came: C11 naming an undefined M99 verified, swapped factors and a
    block outside the shape ended in KeyError (a hunt)."""
    algorithm = _edited_strassen(edit)
    for call in (bilinear.verify, lambda a: bilinear.compile(a, backend="numpy")):
        with pytest.raises(bilinear.BilinearError, match=message):
            call(algorithm)


@pytest.mark.parametrize("edit, message", [
    (lambda a, changed: {"name": 5}, r"^algorithm name must be a \.bl name \(an ASCII letter or _, then letters, "
                                     r"digits or _; at most 255 characters\), not 5$"),
    (lambda a, changed: {"name": "a b"}, r"^algorithm name must be a \.bl name .*, not 'a b'$"),
    (lambda a, changed: {"name": None}, r"^algorithm name must be a \.bl name .*, not None$"),
    (lambda a, changed: {"declared_rank": "7"}, r"^algorithm strassen's declared rank must be a whole number or None, not '7'$"),
    (lambda a, changed: {"outputs": (changed(a.outputs[0], form="M1"), *a.outputs[1:])},
     r"^algorithm strassen: output C11's form must be a Form, not 'M1'$"),
    (lambda a, changed: {"products": (changed(a.products[0], left=Form((("A11", np.int64(1)), ("A22", np.int64(1))))),
                                      *a.products[1:])},
     r"^algorithm strassen: product M1's left factor has A11's coefficient 1 of type int64, not an int or Fraction "
     r"\(Form\.of converts NumPy's whole numbers\)$"),
    (lambda a, changed: {"outputs": (changed(a.outputs[0], form=Form((("M1", 1.0), ("M4", 1), ("M5", -1), ("M7", 1)))),
                                     *a.outputs[1:])},
     r"^algorithm strassen: output C11's form has M1's coefficient 1\.0 of type float, not an int or Fraction"),
], ids=["int-name", "spaced-name", "no-name", "rank-as-text", "text-output", "numpy-int", "float"])
def test_a_hand_built_algorithm_of_the_wrong_types_is_refused_by_name(edit, message):
    """name=5 verified, then compile raised "'int' object is not iterable" and optimize an AttributeError;
    name=None made a schedule 'None_inplace'; a rank "7" was said to differ from 7; a factor None ended
    in AttributeError; a NumPy int64 coefficient verified, then compile raised a TypeError from Fraction's hash,
    and a float one an AttributeError (hunts)."""
    from bilinear.optimize import optimize

    algorithm = _edited_strassen(edit)
    for call in (bilinear.verify, lambda a: bilinear.compile(a, backend="numpy"), optimize, bilinear.inplace):
        with pytest.raises((TypeError, ValueError), match=message):
            call(algorithm)


def test_a_product_whose_factor_is_not_a_form_is_refused_as_it_is_made():
    """Product(left=None) raised AttributeError ('NoneType' object has no attribute 'is_zero')."""
    with pytest.raises(TypeError, match=r"^product M1's left factor must be a Form, not None$"):
        Product("M1", None, Form.symbol("B11"))


def test_a_schedule_alone_is_refused_with_what_to_pass_instead():
    schedule = bilinear.load(ROOT / "algorithms" / "msmes.bl").main
    for call in (bilinear.verify, bilinear.compile):
        with pytest.raises(ValueError, match=r"^schedule msmes needs its algorithm: pass the program it came from"):
            call(schedule)


def test_reading_options_with_a_loaded_program_are_refused():
    """verify(program, format="garbage", shape="9,9,9") ignored both."""
    program = bilinear.load(ROOT / "algorithms" / "strassen.bl")
    with pytest.raises(ValueError, match=r"^format and shape apply to reading a file; a loaded Program is read already"):
        bilinear.verify(program, format="garbage", shape="9,9,9")
    with pytest.raises(ValueError, match=r"^format applies to reading a file"):  # "format apply"
        bilinear.verify(program, format="bl")


def test_fused_leaves_that_would_need_too_many_kernels_are_refused_at_once():
    """msmes with fused leaves doubles its kernels per level: 765 at eight levels (a 215 MB .cu),
    and at 32 the lowering ran out of memory.  Five levels (93 kernels) still lower."""
    import time

    from bilinear.lower.options import MAX_FUSED_KERNELS, MAX_PRODUCT_TARGETS

    assert len(bilinear.api.lower_program(ROOT / "algorithms" / "msmes.bl", levels=5, leaf="fused").product_specs()) == 93
    for levels, why in ((6, f"need more than {MAX_FUSED_KERNELS} distinct product kernels"),
                        (32, f"add one product into more than {MAX_PRODUCT_TARGETS} C views after 9 levels")):
        started = time.monotonic()
        with pytest.raises(ValueError, match=rf"^fused leaves at {levels} levels of msmes {why}"):
            bilinear.api.lower_program(ROOT / "algorithms" / "msmes.bl", levels=levels, leaf="fused")
        assert time.monotonic() - started < 20


@pytest.mark.parametrize("leaf, alone", [("fused", "cublas"), ("ozaki", "ozaki"), ("cublas", "cublas")])
def test_automatic_levels_run_the_library_or_the_ozaki_leaf_alone_at_level_0(leaf, alone):
    """Level 0 is predicted at the library's rate: it runs cuBLAS, except for the ozaki leaf, whose
    moduli and scaling a cuBLAS product would refuse."""
    from bilinear.model import Ceilings

    product = bilinear.compile(ROOT / "algorithms" / "strassen.bl", backend="numpy", levels="auto", leaf=leaf)
    # GEMMs below 64³ run a million times slower than at 64³, fused kernels slower still: no level pays
    product._ceilings = Ceilings("test", "float64", 1e30, ((32, 1e6), (64, 1e12)), ((32, 1e3), (64, 1e3)))
    assert product.choose(64, 64, 64)[:2] == (0, alone)


def test_automatic_levels_stop_below_a_lowering_that_would_be_too_large():
    """rsmm with fused leaves passes the fused-kernel cap at 4 levels: levels="auto" tried 1 to 4 and
    every call failed, even at 1x1x1."""
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((64, 64)), rng.standard_normal((64, 64))
    for leaf in ("fused", "auto"):
        product = bilinear.compile("rsmm", levels="auto", leaf=leaf, backend="numpy")
        assert np.allclose(product(A, B), A @ B, rtol=0, atol=1e-12)


@pytest.mark.parametrize("shape", [((0, 5), (5, 5)), ((4, 0), (0, 3)), ((4, 5), (5, 0))])
def test_automatic_levels_with_ozaki_options_take_empty_matrices(shape):
    """An empty product chose the cublas leaf alone, which refused the ozaki leaf's moduli."""
    product = bilinear.compile("strassen", levels="auto", leaf="ozaki", moduli=12, backend="numpy")
    A, B = np.ones(shape[0]), np.ones(shape[1])
    assert product(A, B).shape == (shape[0][0], shape[1][1])


@pytest.mark.parametrize("value", ["False", "no", 0.0, np.array([True])])
def test_allow_pickle_must_be_a_bool(value):
    """allow_pickle="False" is a true string: the gate on running code stored in a file opened."""
    with pytest.raises(ValueError, match=r"^allow_pickle must be True or False, not "):
        bilinear.load(ROOT / "algorithms" / "strassen.bl", allow_pickle=value)


FLOAT64_RANGE = "must be within float64's range (its largest is 1.7976931348623157e+308), not"


@pytest.mark.parametrize("alpha, refusal", [
    (float("inf"), "must be a finite number, not inf"), (float("nan"), "must be a finite number, not nan"),
    (-float("inf"), "must be a finite number, not -inf"),
    (__import__("decimal").Decimal("1e400"), f"{FLOAT64_RANGE} 1E+400"),
    (__import__("decimal").Decimal("-Infinity"), "must be a finite number, not -Infinity"),
    # a long double past float64's range where the platform has one (x86: 80 bits), else an integer
    (np.longdouble(10) ** 400 if np.isfinite(np.longdouble(10) ** 400) else 10**401, FLOAT64_RANGE),
    (10**400, f"{FLOAT64_RANGE} an integer of 1329 bits"), (10**5000, f"{FLOAT64_RANGE} an integer of 16610 bits"),
], ids=["inf", "nan", "-inf", "decimal", "decimal inf", "longdouble", "10**400", "10**5000"])
def test_alpha_and_beta_must_be_finite_in_float64(alpha, refusal):
    """inf and Decimal('1e400') made every element NaN without a word; 10**5000 raised Python's own
    "Exceeds the limit (4300 digits)", and 10**400 printed its 401 digits.  Numbers that are finite but
    past float64's range were called not finite."""
    product = bilinear.compile(ROOT / "algorithms" / "strassen.bl", backend="numpy")
    A, B, C = random_inputs(np, 4, 4, 4, "float64", seed=11)
    for name, scalars in (("alpha", {"alpha": alpha}), ("beta", {"beta": alpha, "out": C})):
        with pytest.raises(ValueError, match=rf"^{name} {re.escape(refusal)}"):
            product(A, B, **scalars)


def test_norm_scaling_with_too_few_moduli_is_refused():
    """One modulus at k = 300 with norm scaling kept one bit of each row's norm: every product was 0."""
    A, B, _ = random_inputs(np, 4, 300, 3, "float64", seed=12)
    product = bilinear.compile(ROOT / "algorithms" / "strassen.bl", levels=0, leaf="ozaki", moduli=1, scaling="norm",
                               backend="numpy")
    with pytest.raises(ValueError, match=r"^1 modulus is too few for an inner dimension of 300 with norm scaling"):
        product(A, B)


def test_automatic_levels_stop_above_a_level_that_cannot_be_lowered(tmp_path):
    """An in-place schedule that does not restore A and B runs at the top level only: levels="auto"
    lowered it at 2 levels too, and every call failed."""
    text = (ROOT / "algorithms" / "msmes.bl").read_text()
    body = text[text.index("schedule msmes"):text.index("  stage restore1")]
    path = tmp_path / "norestore.bl"
    path.write_text('use "strassen.bl"\n\n' + body.replace("schedule msmes", "schedule norestore").replace(
        "inplace, restore", "inplace"))
    (tmp_path / "strassen.bl").write_text((ROOT / "algorithms" / "strassen.bl").read_text())
    product = bilinear.compile(path, levels="auto", backend="numpy")
    rng = np.random.default_rng(0)
    for n in (2, 8, 64):
        A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        expected = A @ B
        assert np.allclose(product(A, B), expected, rtol=0, atol=1e-12)


def _refusal(call) -> str:
    try:
        call()
    except ValueError as error:
        return str(error)
    return "accepted"


def test_automatic_levels_refuse_at_every_size_what_a_level_would():
    """levels="auto" took beta with rsmm, and A is B with msmes, at sizes where it chose the library
    alone, and refused them where it chose a level."""
    from bilinear.model import Ceilings

    rng = np.random.default_rng(2)
    rsmm = bilinear.compile("rsmm", levels="auto", backend="numpy")
    msmes = bilinear.compile("msmes", levels="auto", backend="numpy")
    # Ceilings under which a level pays at 600 (element-wise passes free): the machine's own decided
    # whether one did, and on a 2-core CPU NumPy's product of 600³ won
    for product in (rsmm, msmes):
        product._ceilings = Ceilings("test", "float64", 1e30, ((32, 1e12), (64, 1e12)))
    for n in (8, 600):
        A, C = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        assert _refusal(lambda: rsmm(A, A.copy(), out=C, beta=1.0)).startswith("rsmm computes C = A*B and overwrites C")
        assert _refusal(lambda: msmes(A, A)).startswith("msmes is in place (it overwrites A and B while it runs)")
    assert msmes.writes_inputs and not rsmm.writes_inputs
    assert rsmm.workspace_bytes(600, 600, 600) == rsmm.product_for(600, 600, 600).workspace_bytes(600, 600, 600) > 0


def test_automatic_levels_take_what_a_level_takes_through_dlpack():
    from helpers.arrays import DLPackOnly as Exported

    A = np.random.default_rng(3).standard_normal((16, 16))
    product = bilinear.compile("strassen", levels="auto", backend="numpy")
    assert np.allclose(product(Exported(A), Exported(A)), A @ A, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match=r"^A must be a matrix \(2-D\), not 1-D$"):
        product(np.ones(3), A)


@pytest.mark.parametrize("arguments, error, message", [
    ({"starts": 0}, ValueError, "starts must be between 1 and 1000000, not 0"),
    ({"starts": {"A": -1}}, ValueError, "starts['A'] must be between 1 and 1000000, not -1"),
    ({"starts": {"Q": 3}}, ValueError, "starts names the sides A, B and C, not Q"),
    ({"seeds": -5}, ValueError, "seeds must be between 0 and 1000000, not -5"),
    ({"polish": -1}, ValueError, "polish must be between 0 and 1000000, not -1"),
    ({"chains": 0}, ValueError, "chains must be between 1 and 4096, not 0"),
    ({"seeds": 2.5}, TypeError, "seeds must be a whole number, not float 2.5"),
    # name=5 was kept: the result verified, and compiling it raised "'int' object is not iterable"
    ({"name": 5}, ValueError, "name must be an identifier in .bl (an ASCII letter or _, then letters, digits or _; "
                              "not a keyword or a block name like A11), not 5"),
    ({"name": "a b"}, ValueError, "name must be an identifier in .bl (an ASCII letter or _, then letters, digits or "
                                  "_; not a keyword or a block name like A11), not 'a b'"),
    ({"also": ["strassen"]}, TypeError, "also takes Algorithms (other programs of the scheme, loaded), not str"),
    # another scheme's program was dropped without a word (the CLI's --also refused it)
    ({"also": [bilinear.load(ROOT / "algorithms" / "winograd.bl").main]}, ValueError,
     "also: winograd computes none of strassen's sides (left factors, right factors, outputs, its products taken in "
     "order); give a program of the same scheme"),
])
def test_optimize_checks_its_arguments(arguments, error, message):
    """starts=0 was an IndexError deep inside, a Program an AttributeError; seeds=-5, polish=-1,
    chains=0 and an unknown side ran without a word."""
    from bilinear.optimize import optimize

    strassen = bilinear.load(ROOT / "algorithms" / "strassen.bl")
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        optimize(strassen.main, **arguments)
    with pytest.raises(TypeError, match=r"^optimize takes one Algorithm \(bilinear.load\(path\).main, or "):
        optimize(strassen)


def test_numpy_spellings_of_options_are_taken():
    """dtype="f8" and "double" were refused where np.float64 was taken; fuse=np.bool_(False) was
    "not True or False"."""
    for dtype in ("f8", "double", "float64"):
        assert bilinear.compile("strassen", backend="numpy", dtype=dtype).dtype == "float64"
    assert bilinear.compile("strassen", backend="numpy", dtype="f4").dtype == "float32"
    assert bilinear.compile("strassen", backend="numpy", fuse=np.bool_(False)).lowered.options.fuse is False
    for dtype in ("f2", "f8,(", "(99999999999,99999999999)f8"):  # NumPy's own errors had escaped (a SyntaxError)
        with pytest.raises(ValueError, match=rf"^dtype must be float32 or float64, not {re.escape(repr(dtype))}$"):
            bilinear.compile("strassen", backend="numpy", dtype=dtype)
    with pytest.raises(ValueError, match=r"^dtype must be float32 or float64, not 'float16'$"):
        bilinear.compile("strassen", backend="numpy", dtype=np.float16)


def test_per_level_may_be_an_iterator():
    """The check read an iterator to its end: the hybrid was then dropped without a word."""
    product = bilinear.compile(ROOT / "algorithms" / "msmes.bl", levels=2, per_level=iter(["msmes", "strassen"]),
                               backend="numpy")
    assert [level.schedule.name for level in product.lowered.levels][0] == "msmes"
    assert product.lowered.levels[1].schedule.name != "msmes"


@pytest.mark.parametrize("per_level", [5, {"msmes": 1, "strassen": 2}, ("msmes", 3), (), iter([])])
def test_per_level_must_be_a_sequence_of_names(per_level):
    """per_level=5 was "'int' object is not iterable"; a dict was taken as its keys; () was ignored."""
    with pytest.raises(ValueError, match=r"^per_level takes one definition name per level, such as \('msmes', 'strassen'\)"):
        bilinear.compile(ROOT / "algorithms" / "msmes.bl", backend="numpy", per_level=per_level)


@pytest.mark.parametrize("dims", [(-4, 8, 8), (8.5, 8, 8), (8, True, 8)])
def test_workspace_bytes_takes_sizes(dims):
    """workspace_bytes(-4, 8, 8) was 0 and (8.5, 8, 8) 928.0."""
    product = bilinear.compile("rsmm", backend="numpy")
    with pytest.raises(ValueError, match=r"^M, K and N must be whole numbers of at least 0, not "):
        product.workspace_bytes(*dims)


def _wide(tmp_path, n=257):
    """⟨1,1,n;n⟩ whose first product goes into every C block: past the fused leaf's cap on a
    product's targets (MAX_PRODUCT_TARGETS) at one level."""
    from bilinear.ir import block_name

    lines = [f"algorithm wide <1,1,{n};{n}>:", "  M1 = A11 * B11"]
    lines += [f"  M{j} = A11 * (B11 + {block_name('B', 1, j)})" for j in range(2, n + 1)]
    lines += ["  C11 = M1"] + [f"  {block_name('C', 1, j)} = M{j} - M1" for j in range(2, n + 1)]
    path = tmp_path / "wide.bl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_automatic_levels_run_the_library_where_no_leaf_lowers_one_level(tmp_path):
    """The refusals at every size lowered one level: past the fused leaf's cap every call failed,
    where the model had chosen the library alone."""
    product = bilinear.compile(_wide(tmp_path), levels="auto", leaf="fused", backend="numpy")
    A, B = np.random.default_rng(4).standard_normal((2, 3)), np.random.default_rng(5).standard_normal((3, 514))
    assert np.allclose(product(A, B), A @ B, rtol=0, atol=1e-12)


@pytest.mark.parametrize("dims", [(-4, 8, 8), (8.5, 8, 8), ("8", 8, 8)])
def test_automatic_levels_workspace_bytes_take_sizes(dims):
    product = bilinear.compile("strassen", levels="auto", backend="numpy")
    with pytest.raises(ValueError, match=r"^M, K and N must be whole numbers of at least 0, not "):
        product.workspace_bytes(*dims)


@pytest.mark.parametrize("value, refusal", [
    (Fraction(10**400), f"{FLOAT64_RANGE} 1000000000000000000000000000…0000000000"),
    (Fraction(10**5000), f"{FLOAT64_RANGE} a Fraction past the float range"),
    (__import__("decimal").Decimal("sNaN"), "must be a finite number, not sNaN"),
], ids=["fraction", "huge fraction", "snan"])
def test_scalars_past_the_floats_are_shown_short(value, refusal):
    product = bilinear.compile("strassen", backend="numpy")
    A = np.ones((2, 2))
    with pytest.raises(ValueError, match=rf"^alpha {re.escape(refusal)}$"):
        product(A, A, alpha=value)


def test_automatic_levels_lower_a_refused_level_once():
    """A one-level lowering that raised was lowered again on every call (a cached_property caches
    no exception); the refusal is now kept, and raised as it came."""
    from bilinear.diagnostics import Diagnostic
    from bilinear.runtime.auto import AutoProduct
    from bilinear.runtime.numpy_backend import NumpyBackend

    lowerings = []

    def refuse(levels, leaf):
        lowerings.append((levels, leaf))
        raise BilinearError(Diagnostic(f"cannot lower {leaf} at {levels}"))

    product = AutoProduct(refuse, NumpyBackend(), "float64", ("fused",))
    A = np.ones((4, 4))
    for _ in range(3):
        with pytest.raises(BilinearError, match=r"^cannot lower fused at 1$"):
            product(A, A)
    assert lowerings == [(1, "fused")]


def test_automatic_levels_answer_what_a_compiled_product_answers():
    """release_workspace, held_workspace_bytes, capture, restores_inputs and overwrites_c were
    missing (AttributeError): code written for a compiled product broke on levels="auto"."""
    product = bilinear.compile("rsmm", levels="auto", backend="numpy")
    one = bilinear.compile("rsmm", levels=1, backend="numpy")
    assert (product.overwrites_c, product.restores_inputs, product.writes_inputs) == (
        one.overwrites_c, one.restores_inputs, one.writes_inputs) == (True, True, False)
    assert bilinear.compile("msmes", levels="auto", backend="numpy").restores_inputs
    A, B, _ = random_inputs(np, 64, 64, 64, "float64", seed=2)
    product(A, B)
    assert product.held_workspace_bytes() == sum(p.held_workspace_bytes() for p in product._products.values())
    product.release_workspace()
    assert product.held_workspace_bytes() == 0
    with pytest.raises(ValueError, match="beta must be 0"):
        product.capture(A, B, np.zeros((64, 64)), beta=1.0)
    with pytest.raises(ValueError, match=r"^graphs capture CUDA launches; compile with backend='cupy' to capture$"):
        product.capture(A, B, np.zeros((64, 64)))


def test_masked_arrays_are_refused_not_multiplied_as_if_unmasked():
    """A masked array passed every check: matmul returned [1, 1, 1, 1] for a masked row of A @ I,
    and a Strassen level spread the error to rows without a mask (found by an audit)."""
    A = np.ma.masked_greater(np.arange(16.0).reshape(4, 4), 10)
    plain = np.eye(4)
    advice = r"pass A\.filled\(0\) \(masked entries as 0\) or np\.asarray\(A\) \(its data as stored\)$"
    with pytest.raises(ValueError, match=r"^A is a masked array, and bilinear multiplies plain matrices: " + advice):
        bilinear.matmul(A, plain)
    with pytest.raises(ValueError, match=r"^A is a masked array, and bilinear multiplies plain matrices: " + advice):
        bilinear.compile("strassen", backend="numpy")(A, plain)
    with pytest.raises(ValueError, match=r"^out is a masked array, .* pass np\.asarray\(out\) \(the product goes into its data\)$"):
        bilinear.matmul(plain, plain, out=np.ma.zeros((4, 4)))
    assert np.array_equal(bilinear.matmul(A.filled(0), plain), A.filled(0))


def test_matmul_inplace_of_a_matrix_with_itself_multiplies_without_msmes():
    """matmul(X, X, inplace=True) raised "A and B must not overlap", although inplace only allows the
    in-place schedule and read-only inputs already fall back (found by an audit)."""
    X = np.random.default_rng(5).standard_normal((64, 64))
    before = X.copy()
    assert np.allclose(bilinear.matmul(X, X, inplace=True), before @ before, rtol=1e-12, atol=1e-12)
    assert np.array_equal(X, before)  # not written: MSMES did not run
    halves = np.random.default_rng(6).standard_normal((64, 128))
    A, B = halves[:, :64], halves[:, 64:]  # apart, though in one buffer: MSMES may run
    assert np.allclose(bilinear.matmul(A, B, inplace=True), A @ B, rtol=1e-12, atol=1e-12)


def test_lower_program_takes_what_compile_takes():
    """lower_program ("see compile") refused a loaded Algorithm, which compile and verify take (found by an audit)."""
    algorithm = bilinear.load(ROOT / "algorithms" / "strassen.bl").main
    lowered = bilinear.api.lower_program(algorithm, levels=1)
    assert lowered.levels[0].algorithm.name == algorithm.name == "strassen"


@pytest.mark.parametrize("method", ["leaf_dims", "breadth_levels", "workspace_bytes"])
def test_size_questions_refuse_sizes_that_are_not_sizes(method):
    """leaf_dims(-4, 8, 8) answered (-4, 8, 8) and breadth_levels 0, where workspace_bytes refused
    (found by an audit)."""
    product = bilinear.compile("strassen", backend="numpy", levels=1, breadth=1)
    with pytest.raises(ValueError, match=r"^M, K and N must be whole numbers of at least 0, not -4, 8, 8$"):
        getattr(product, method)(-4, 8, 8)
    with pytest.raises(ValueError, match=r"^M, K and N must be whole numbers of at least 0, not 8\.5, 8, 8$"):
        getattr(product, method)(8.5, 8, 8)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")  # np.matrix is the point here
@pytest.mark.parametrize("leaf", ["cublas", "ozaki"])
def test_ndarray_subclasses_multiply_as_plain_arrays(leaf):
    """np.matrix passed every check as it came: the ozaki leaf then raised matrix.max()'s TypeError
    (no ``initial``) in the middle of msmes, leaving A and B overwritten by about 2."""
    rng = np.random.default_rng(0)
    A, B = np.asmatrix(rng.standard_normal((8, 8))), np.asmatrix(rng.standard_normal((8, 8)))
    A0, B0 = A.copy(), B.copy()
    out = np.asmatrix(np.zeros((8, 8)))
    product = bilinear.compile("msmes", levels=1, leaf=leaf, backend="numpy")
    returned = product(A, B, out=out)
    assert returned is out  # the caller's object back, the product in its memory
    assert np.allclose(np.asarray(out), np.asarray(A0) @ np.asarray(B0))
    assert np.allclose(A, A0, rtol=0, atol=1e-12) and np.allclose(B, B0, rtol=0, atol=1e-12)  # restored (to rounding)


@pytest.mark.parametrize(("call", "message"), [
    (lambda p: p.tile_budget(-40, 40, 40, 10**6), r"^M, K and N must be whole numbers of at least 0, not -40, 40, 40$"),
    (lambda p: p.tile_budget(40.5, 40, 40, 10**6), r"^M, K and N must be whole numbers of at least 0, not 40.5, 40, 40$"),
    (lambda p: p.tile_budget(40, 40, 40, None), r"^limit must be a number of bytes from 0 to 2\^63 - 1, not None$"),
    (lambda p: p.tile_budget(40, 40, 40, "x"), r"^limit must be a number of bytes from 0 to 2\^63 - 1, not 'x'$"),
    (lambda p: p.leaf_budget("x").__enter__(), r"^budget must be None or a number of bytes from 0 to 2\^63 - 1, not 'x'$"),
    (lambda p: p.leaf_budget(-5).__enter__(), r"^budget must be None or a number of bytes from 0 to 2\^63 - 1, not -5$"),
])
def test_tile_and_leaf_budgets_check_their_arguments(call, message):
    """tile_budget(-40, 40, 40, 10**6) gave 10**6 and kept it as the leaf's budget, 40.5 a float
    budget, a None limit a TypeError from inside; leaf_budget took any value."""
    product = bilinear.compile("strassen", levels=1, leaf="ozaki", backend="numpy")
    with pytest.raises(ValueError, match=message):
        call(product)
    assert product.executor.leaf.budget is None  # nothing kept


def test_a_product_without_ozaki_leaves_gets_a_tile_budget_of_0_where_it_fits():
    """Its leaves take no budget, and tile_budget said None, "does not fit", at any limit (10**9 bytes
    for strassen at 100³, which needs 40,000)."""
    product = bilinear.compile("strassen", levels=1, backend="numpy")
    needed = product.workspace_bytes(100, 100, 100)
    assert product.tile_budget(100, 100, 100, 10**9) == product.tile_budget(100, 100, 100, needed) == 0
    assert product.tile_budget(100, 100, 100, needed - 1) is None
    assert bilinear.compile("strassen", levels=0, backend="numpy").tile_budget(100, 100, 100, 0) == 0


@pytest.mark.parametrize("name", [5, "a b", "A11", "schedule"])
def test_transformed_and_kronecker_schemes_check_their_names(name):
    """permute and kronecker kept any name: 5 broke compiling the result, "a b" writing it as .bl."""
    from bilinear.compose import kronecker, permute

    strassen = bilinear.load(ROOT / "algorithms" / "strassen.bl").main
    message = f"^name must be an identifier in .bl .*, not {re.escape(repr(name))}$"
    with pytest.raises(ValueError, match=message):
        permute(strassen, "nkm", name=name)
    with pytest.raises(ValueError, match=message):
        kronecker(strassen, strassen, name=name)


def test_a_workspace_limit_past_what_the_library_holds_is_refused():
    """2^64 bytes was written into the C++ library as 18446744073709551616ULL, which the compiler
    truncates to 0 with a warning: every call needing workspace was refused there."""
    from bilinear.lower.options import MAX_BYTES

    assert MAX_BYTES == 2**63 - 1  # the library's long long
    bilinear.compile("strassen", levels=1, backend="numpy", workspace_limit=MAX_BYTES)
    with pytest.raises(ValueError, match=r"^workspace_limit must be a number of bytes from 0 to 2\^63 - 1, not 18446744073709551616$"):
        bilinear.compile("strassen", levels=1, backend="numpy", workspace_limit=2**64)


def test_budgets_and_limits_take_numpy_integers():
    """Sizes and free bytes computed in NumPy (np.int64) are whole numbers as Python's are."""
    product = bilinear.compile("strassen", levels=1, leaf="ozaki", backend="numpy", workspace_limit=np.int64(10**7))
    assert product.tile_budget(np.int64(40), 40, 40, np.int64(10**6)) == product.tile_budget(40, 40, 40, 10**6)
    with product.leaf_budget(np.int64(10**6)):
        A = np.random.default_rng(0).standard_normal((40, 40))
        assert np.allclose(product(A, A), A @ A, rtol=0, atol=1e-12)


@pytest.mark.parametrize("scalar", ["alpha", "beta"])
def test_float32_products_refuse_scalars_past_float32s_range(scalar):
    """alpha = 1e39 is finite as a Python float but inf in float32: every element came out NaN."""
    A, B, C = random_inputs(np, 8, 8, 8, "float32", seed=3)
    product = bilinear.compile("strassen", levels=1, dtype="float32", backend="numpy")
    message = rf"^{scalar} = 1e\+39 is past float32's range \(its largest is 3\.4028235e\+38\): the product would be inf or NaN$"
    for call in (product, bilinear.matmul):
        with pytest.raises(ValueError, match=message):
            call(A, B, out=C.copy(), **{scalar: 1e39})
    assert np.allclose(product(A * np.float32(1e-38), B, alpha=3e38), 3 * (A @ B), rtol=1e-4, atol=1e-4)  # within: taken
    assert np.isfinite(product(A * np.float32(1e-38), B, alpha=3.4028235e38)).all()  # rounds to float32's largest


@pytest.mark.parametrize("product", [
    lambda: bilinear.compile("strassen", levels=2, backend="numpy"),
    lambda: bilinear.compile("winograd", levels=2, breadth=2, backend="numpy"),
], ids=["depth-first", "breadth-first"])
def test_workspace_bytes_of_numpy_integer_sizes_do_not_wrap(product):
    """np.int64 sizes were multiplied in int64: 2**31 cubed gave 4.6e18 bytes, breadth-first 0."""
    compiled = product()
    for size in (2**31, 2**33):
        assert compiled.workspace_bytes(*[np.int64(size)] * 3) == compiled.workspace_bytes(size, size, size) > 0


def test_beta_c_mixes_across_blocks_only_through_a_change_of_basis():
    """What the README says of C's own entries with beta ≠ 0: msmes with cuBLAS leaves changes the
    basis of C's blocks, so C11 = 1e4 reaches C22's 1e-3 (a normwise error, ε·‖C‖); fused leaves add
    into each target in the kernel and keep the blocks apart, as the classical product does."""
    rng = np.random.default_rng(0)
    A, B = (rng.standard_normal((128, 128)).astype(np.float32) for _ in range(2))
    C = np.full((128, 128), 1e-3, np.float32)
    C[:64, :64] = 1e4
    exact = A.astype(np.float64) @ B + C

    def c22_error(**options) -> float:
        out = C.copy()
        bilinear.compile(MSMES, dtype="float32", backend="numpy", **options)(A.copy(), B.copy(), out=out, beta=1.0)
        return float(np.abs(out - exact)[64:, 64:].max())

    classical, mixed, fused = c22_error(levels=0), c22_error(levels=1), c22_error(levels=1, leaf="fused")
    eps = float(np.finfo(np.float32).eps)
    assert mixed > 10 * classical and mixed <= 4 * eps * 1e4  # mixed, within ε·‖C‖'s order
    assert fused <= 4 * classical


@pytest.mark.parametrize(("scheme", "corner", "nans"), [("msmes", np.inf, [[4, 0], [4, 4]]), ("msmes2", np.nan, 16),
                                                    ("strassen", np.inf, [])])
def test_an_inf_in_c_reaches_the_entries_it_is_mixed_with_as_nan(scheme, corner, nans):
    """The README's example (found by an audit): C[0,0] = ∞ with beta = 1, 8×8 on the NumPy backend.
    strassen's default schedule keeps C's blocks apart; fused leaves keep them apart in every scheme."""
    rng = np.random.default_rng(0)
    A, B = (rng.standard_normal((8, 8)) for _ in range(2))
    C = np.zeros((8, 8))
    C[0, 0] = np.inf
    with np.errstate(invalid="ignore"):
        out = bilinear.compile(scheme, backend="numpy")(A, B, out=C.copy(), beta=1.0)
        fused = bilinear.compile(scheme, backend="numpy", leaf="fused")(A, B, out=C.copy(), beta=1.0)
    np.testing.assert_equal(out[0, 0], corner)
    found = np.argwhere(np.isnan(out)).tolist()
    assert (len(found) if isinstance(nans, int) else found) == nans
    assert fused[0, 0] == np.inf and not np.isnan(fused).any()


def test_automatic_levels_choose_nothing_for_a_product_they_refuse():
    """A mismatch of inner dimensions ran the model and kept a choice for the shape before it raised."""
    product = bilinear.compile("strassen", levels="auto", backend="numpy")
    with pytest.raises(ValueError, match=r"^A is 8x6 and B is 5x8: inner dimensions differ$"):
        product(np.ones((8, 6)), np.ones((5, 8)))
    assert product.choices == {}


@pytest.mark.parametrize("levels", [1, "auto"])
def test_a_compiled_product_says_it_is_not_pickled_and_copies_as_itself(levels):
    """pickle said "cannot pickle '_thread.RLock' object" (or "Can't pickle local object
    'compile.<locals>.lowered_for'"), and deepcopy the same."""
    import copy
    import pickle

    product = bilinear.compile("strassen", levels=levels, backend="numpy")
    with pytest.raises(TypeError, match=r"is not pickled: call bilinear.compile\(\.\.\.\) in the process that multiplies"):
        pickle.dumps(product)
    assert copy.copy(product) is product and copy.deepcopy(product) is product


def test_a_dtype_refusal_says_what_to_pass(tmp_path):
    """A big-endian float64 was "A is >f8 but this product was compiled for float64"; int64 said
    what was wrong, not what to do."""
    product = bilinear.compile("strassen", backend="numpy")
    A = np.ones((4, 4))
    with pytest.raises(ValueError, match=re.escape("A is >f8 (float64 in the other byte order) but this product was "
                                                   "compiled for float64: pass A.astype(np.float64)")):
        product(A.astype(">f8"), A)
    with pytest.raises(ValueError, match=re.escape("B is int64 but this product was compiled for float64: pass "
                                                   "B.astype(np.float64)")):
        product(A, A.astype(np.int64))
    with pytest.raises(ValueError, match=re.escape("A must be a float32 or float64 matrix, not 2-D int64: pass "
                                                   "A.astype(np.float64)")):
        bilinear.matmul(A.astype(np.int64), A)
    with pytest.raises(ValueError, match=re.escape("not 2-D >f8 (float64 in the other byte order): pass A.astype(np.float64)")):
        bilinear.matmul(A.astype(">f8"), A)


def test_an_automatic_products_repr_names_its_scheme():
    """It was "<bilinear auto: 0 shape(s) chosen, numpy>"."""
    assert repr(bilinear.compile("msmes", levels="auto", backend="numpy")) == "<bilinear msmes: levels auto, 0 shape(s) chosen, numpy>"


def test_an_auto_products_calls_run_one_at_a_time_across_shapes(monkeypatch):
    """A compiled product's calls run one at a time, but levels="auto" kept a product (and its lock) per
    level count: msmes calls of two shapes on one matrix ran at once, and A came back wrong by 14.8."""
    import threading
    import time

    from bilinear.runtime.compiled import CompiledProduct

    product = bilinear.compile(ROOT / "algorithms" / "msmes.bl", backend="numpy", levels="auto")
    monkeypatch.setattr(type(product), "choose", lambda self, M, K, N: (2 if M > 64 else 1, "cublas", 0.0))
    running, most = [0], [0]
    call = CompiledProduct.__call__

    def counted(self, *args, **kwargs):
        running[0] += 1
        most[0] = max(most[0], running[0])
        time.sleep(0.05)
        try:
            return call(self, *args, **kwargs)
        finally:
            running[0] -= 1

    monkeypatch.setattr(CompiledProduct, "__call__", counted)
    X = np.random.default_rng(0).standard_normal((128, 128))
    threads = [threading.Thread(target=lambda n=n: [product(X[:n, :n].copy(), X[:n, :n].copy()) for _ in range(3)])
               for n in (128, 64)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(product._products) == 2 and most[0] == 1


@pytest.mark.parametrize("make, said", [
    (lambda X: X[::-1], "A steps back 8 elements a row (a negative row stride): pass np.ascontiguousarray(A)"),
    (lambda X: X.T, "A steps 1 element a row and 8 a column (transposed or Fortran-ordered): pass np.ascontiguousarray(A)"),
    (lambda X: X[:, ::2], "A steps 8 elements a row and 2 a column (a column slice with a step): "
                          "pass np.ascontiguousarray(A)"),
    (lambda X: np.asfortranarray(X)[1:2], "A steps 1 element a row and 8 a column (transposed or Fortran-ordered): "
                                          "pass np.ascontiguousarray(A)"),
])
def test_a_layout_refusal_names_what_is_wrong_with_the_strides(make, said):
    """X[::-1] is a row slice with unit column stride, but was refused as not one, and the advice
    named a literal `xp.ascontiguousarray` (a review of the API).  One row of a Fortran-ordered
    matrix was said to step 8 elements a row: the stride its single row had been given to check it."""
    X = np.random.default_rng(0).standard_normal((8, 8))
    product = bilinear.compile("strassen", backend="numpy", levels=1)
    with pytest.raises(ValueError) as refused:
        product(make(X), X)
    assert str(refused.value) == ("A must be row-major with unit column stride (a C-contiguous matrix or a row slice "
                                  f"of one); {said}")


def test_a_complex_input_is_not_told_to_drop_its_imaginary_part():
    """The refusal said "pass A.astype(np.float64)", which discards the imaginary part (a review)."""
    A = np.ones((4, 4), dtype=np.complex128)
    said = ": complex products are not supported; multiply the real and imaginary parts as real matrices"
    with pytest.raises(ValueError) as refused:
        bilinear.matmul(A, A)
    assert str(refused.value) == "A must be a float32 or float64 matrix, not 2-D complex128" + said
    with pytest.raises(ValueError) as refused:
        bilinear.compile("strassen", backend="numpy", levels=1)(A, A)
    assert str(refused.value) == "A is complex128 but this product was compiled for float64" + said


def test_matmul_multiplies_host_dlpack_objects_on_the_cpu_as_compiled_products_do():
    """matmul refused a DLPack object in host memory (a torch CPU tensor) as "takes CuPy matrices or
    NumPy matrices", though a compiled product multiplies it (found by an audit)."""
    from helpers.arrays import DLPackOnly as Wrapped

    A, B, C = random_inputs(np, 6, 5, 4, "float64", seed=3)
    assert np.allclose(bilinear.matmul(Wrapped(A), Wrapped(B)), A @ B, rtol=1e-13, atol=1e-13)
    expected = 2.0 * (A @ B) + C
    given = C.copy()
    result = bilinear.matmul(Wrapped(A), B, out=Wrapped(given), alpha=2.0, beta=1.0)
    assert np.allclose(given, expected, rtol=1e-13, atol=1e-13) and np.shares_memory(result, given)
    with pytest.raises(ValueError, match=r"^A must be a float32 or float64 matrix, not 2-D int64"):
        bilinear.matmul(Wrapped(np.ones((2, 2), dtype=np.int64)), B[:2])


@pytest.mark.parametrize("call", ["compiled", "matmul"])
def test_a_beta_that_is_zero_in_the_dtype_does_not_read_c(call):
    """beta = 1e-46 is 0 in float32, yet C was read: NaN in C came through (BLAS takes beta in the
    product's type, where it is 0, and then does not read C)."""
    A = np.ones((4, 4), np.float32)
    C = np.full((4, 4), np.nan, np.float32)
    if call == "compiled":
        result = bilinear.compile("strassen", backend="numpy", dtype="float32")(A, A, out=C, beta=1e-46)
    else:
        result = bilinear.matmul(A, A, out=C, beta=1e-46)
    assert np.array_equal(result, np.full((4, 4), 4, np.float32))


@pytest.mark.parametrize("out, said", [
    (np.zeros((4, 4), np.float32), "out is float32 but this product was compiled for float64: the product is written "
                                   "into out, so give a float64 array (a converted copy would receive it instead)"),
    (np.zeros((4, 4), order="F"), "the product is written into out, so give a row-major one (a contiguous copy would "
                                  "receive it instead)"),
])
def test_a_refused_out_is_not_told_to_pass_a_copy(out, said):
    """The refusal of a float32 or Fortran-ordered out advised out.astype(np.float64) or
    np.ascontiguousarray(out): the product then went into the copy, and out stayed as it was."""
    product = bilinear.compile("strassen", backend="numpy")
    with pytest.raises(ValueError) as refused:
        product(np.ones((4, 4)), np.ones((4, 4)), out=out)
    assert said in str(refused.value) and "astype" not in str(refused.value) and "ascontiguous" not in str(refused.value)


def test_a_view_whose_strides_are_not_whole_elements_is_said_so():
    """A field of a structured array steps 12 bytes a row: the refusal said "steps 6 elements a row,
    less than its 4 columns" (the strides floor-divided by the element size)."""
    record = np.zeros((4, 4), dtype=[("x", "f8"), ("y", "f4")])
    with pytest.raises(ValueError) as refused:
        bilinear.compile("strassen", backend="numpy")(record["x"], np.eye(4))
    assert ("A steps 48 bytes a row and 12 a column, not whole 8-byte elements (a field of a structured array, or a "
            "view as another dtype)") in str(refused.value), refused.value


def test_the_imports_the_docs_give_for_the_verify_package_work():
    """verify's docstring named bilinear.verify.rings.ApproximateReport and the README "the module
    bilinear.verify.algorithm", which the bilinear.verify function hides as attribute paths."""
    from bilinear import api

    doc = " ".join(api.verify.__doc__.split())
    statement = re.search(r"``(from bilinear\.verify\.rings import [A-Za-z, ]+)``", doc).group(1)
    namespace: dict = {}
    exec(statement, namespace)  # noqa: S102 - the documented line itself
    assert {"ApproximateReport", "ModularReport"} <= set(namespace)
    readme = (ROOT / "README.md").read_text()
    exec(re.search(r"`(from bilinear\.verify\.algorithm import wrong_blocks)`", readme).group(1), namespace)  # noqa: S102
    assert callable(namespace["wrong_blocks"])


@pytest.mark.parametrize("options, said", [
    ({"shape": "2,2,2"}, "--shape (shape=) applies to catalogue schemes, not to .bl files"),
    ({"allow_pickle": True}, "--allow-pickle (allow_pickle=) applies to catalogue schemes, not to .bl files"),
])
def test_the_apis_refusals_name_its_keyword_beside_the_flag(options, said):
    """bilinear.load(..., shape=...) was told "--shape applies ...", an option it has no way to give."""
    with pytest.raises(BilinearError, match=re.escape(said)):
        bilinear.load("strassen", **options)


def test_a_bl_file_saved_as_txt_is_told_the_format_keyword(tmp_path):
    text = tmp_path / "s.txt"
    text.write_text((ROOT / "algorithms" / "strassen.bl").read_text())
    with pytest.raises(BilinearError, match=re.escape("give the format with --from (format=): bl, ")):
        bilinear.load(text)


@pytest.mark.parametrize("leaf, launch, breadth, why", [
    ("ozaki", "streams", 0, "the ozaki leaf runs its leaves one after another (they share one workspace)"),
    ("ozaki", "batched", 1, "the ozaki leaf runs its leaves one after another (they share one workspace)"),
    ("fused", "streams", 0, "the fused leaf runs each stage's products as one kernel"),
])
def test_a_launch_mode_the_leaf_kind_would_ignore_is_refused(leaf, launch, breadth, why):
    """--launch streams or batched with ozaki leaves ran them one after another without a word in `run`
    (and compile's note said streams ran in the Python runtime); fused leaves ignored streams alike."""
    with pytest.raises(ValueError, match=re.escape(why)):
        bilinear.compile("winograd", backend="numpy", levels=1, leaf=leaf, launch=launch, breadth=breadth)


@pytest.mark.parametrize("name, said", [
    ("A", "A is a NumPy array (host memory), but this product runs on cupy: pass cupy.asarray(A), or compile "
          "with backend='numpy'"),
    ("out", "out is a NumPy array (host memory), but this product runs on cupy: the product is written into out, so "
            "give a cupy array"),
])
def test_a_host_array_given_to_a_gpu_product_is_said_so(name, said):
    """A NumPy array given to a CuPy product (dist.compile's default too) failed in CuPy's DLPack import,
    "TypeError: CPU arrays cannot be directly imported to CuPy" (seen on 2 H100s).  A stand-in for
    CuPy's module here: only its array type and name are read before the refusal."""
    import types

    from bilinear.runtime.views import check_on_device

    class DeviceArray:
        pass

    cupy = types.SimpleNamespace(__name__="cupy", ndarray=DeviceArray)
    with pytest.raises(ValueError, match=re.escape(said)):
        check_on_device(np.ones((2, 2)), name, cupy)
    check_on_device(DeviceArray(), name, cupy)  # the backend's own arrays pass
    check_on_device(np.ones((2, 2)), name, np)  # and NumPy's on the CPU


def test_norm_scaled_ozaki_leaves_raise_no_floating_point_trap_numpy_does_not():
    """Under np.errstate(under="raise"), the norm statistic's discarded branch (x·2^(e-1024) for rows
    within range) underflowed and raised on ordinary data that A @ B multiplies cleanly (a hunt)."""
    product = bilinear.compile("strassen", levels=0, leaf="ozaki", scaling="norm", backend="numpy")
    A = np.random.default_rng(0).standard_normal((4, 4))
    with np.errstate(all="raise"):
        expected = A @ A
        assert np.allclose(product(A, A), expected, rtol=1e-14, atol=1e-14)


def test_automatic_levels_refuse_at_compile_a_scheme_no_level_of_which_lowers(tmp_path):
    """levels=1 refused a schedule that multiplies sums with cublas leaves at compile, levels="auto"
    at every call, even at n=1 (a hunt)."""
    (tmp_path / "winograd.bl").write_text((ROOT / "algorithms/winograd.bl").read_text(), encoding="utf-8")
    sums = tmp_path / "sums.bl"
    sums.write_text('use "winograd.bl"\nschedule s for winograd: overwrite\n  temp X: A\n  stage s1:  X = A21 + A22\n'
                    "  stage p1:  C22 = X * (B12 - B11)\n  stage s2:  X = X - A11\n"
                    "  stage p2:  C21 = X * (B22 - B12 + B11);  C11 = A11 * B11\n  stage s3:  C21 += C11;  X = A12 - X\n"
                    "  stage s4:  C12 = C21 + C22\n  stage p3:  C12 += X * B22\n  stage s5:  X = B22 - B12\n"
                    "  stage p4:  C21 += (A11 - A21) * X\n  stage s6:  C22 += C21\n"
                    "  stage p5:  C21 -= A22 * (X + B11 - B21);  C11 += A12 * B21\n", encoding="utf-8")
    with pytest.raises(BilinearError) as fixed:
        bilinear.compile(sums, levels=1, leaf="cublas", backend="numpy")
    with pytest.raises(BilinearError) as automatic:
        bilinear.compile(sums, levels="auto", leaf="cublas", backend="numpy")
    assert str(automatic.value) == str(fixed.value)
    product = bilinear.compile(sums, levels="auto", leaf="auto", backend="numpy")  # fused leaves take the sums
    A = np.random.default_rng(1).standard_normal((8, 8))
    assert np.allclose(product(A, A), A @ A, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize(("array", "said"), [
    (np.broadcast_to(np.float64(2.0), (6, 6)), "A steps 0 elements a row and 0 a column (a broadcast view)"),
    (np.broadcast_to(np.arange(6.0)[:, None], (6, 6)), "A steps 1 element a row and 0 a column (a broadcast view)"),
    (np.broadcast_to(np.arange(6.0), (6, 6)), "A steps 0 elements a row and 1 a column (a broadcast view)"),
])
def test_a_broadcast_view_is_called_one(array, said):
    """A stride of 0 was told as "a column slice with a step" or "transposed or Fortran-ordered" (a hunt)."""
    product = bilinear.compile("strassen", backend="numpy")
    with pytest.raises(ValueError) as refused:
        product(array, np.ones((6, 6)))
    assert f"; {said}: pass np.ascontiguousarray(A)" in str(refused.value)


def test_one_strided_row_is_not_called_a_broadcast_view():
    """x[::2][None, :] was refused as "a broadcast view" for its one row's stride of 0 (a hunt): a stride of 0
    broadcasts only along a dimension longer than 1."""
    product = bilinear.compile("strassen", backend="numpy")
    with pytest.raises(ValueError) as refused:
        product(np.arange(12.0)[::2][None, :], np.ones((6, 6)))
    assert "; A steps 0 elements a row and 2 a column (a column slice with a step): pass np.ascontiguousarray(A)" \
        in str(refused.value)


def test_dlpack_objects_numpy_cannot_read_are_value_errors():
    """NumPy raises RuntimeError ("Unsupported dtype in DLTensor", "Unsupported device in DLTensor"), which
    matmul's host check and a compiled product let through as they came."""
    from helpers.arrays import DLPackAltered

    B = np.ones((4, 4))
    bfloat16 = DLPackAltered(np.ones((4, 4), np.float16), dtype_code=4)
    with pytest.raises(ValueError, match=r"^A is in host memory but NumPy cannot read it through DLPack: "):
        bilinear.matmul(bfloat16, B)
    product = bilinear.compile("strassen", backend="numpy")
    with pytest.raises(ValueError, match=r"^A cannot be read through DLPack by numpy: "):
        product(bfloat16, B)
    with pytest.raises(ValueError) as refused:
        product(B, DLPackAltered(np.ones((4, 4)), device_type=2))
    assert str(refused.value) == ("B is in device memory (DLPack device type 2), but this product runs on numpy: "
                                  "compile with backend='cupy', or copy B to the host")


@pytest.mark.parametrize("beta, refusal", [
    (1e-46, None),  # 0 in float32: taken, as one level takes it
    (1e39, "beta = 1e+39 is past float32's range"),
])
def test_automatic_levels_take_beta_in_the_products_dtype(beta, refusal):
    """levels='auto' read beta as a float64: 1e-46 was "beta must be 0 (got 1e-46)" for rsmm, which one
    level takes (it is 0 in float32), and 1e39 got the same wrong reason."""
    A = np.ones((64, 64), np.float32)
    for levels in (1, "auto"):
        product = bilinear.compile("rsmm", backend="numpy", dtype="float32", levels=levels)
        if refusal is None:
            assert np.allclose(product(A, A, out=A.copy(), beta=beta), 64.0)
        else:
            with pytest.raises(ValueError, match=rf"^{re.escape(refusal)}"):
                product(A, A, out=A.copy(), beta=beta)


def test_automatic_leaf_refusing_moduli_names_the_leaf_asked_for():
    """It said "the cublas leaf has none" of leaf='auto'."""
    with pytest.raises(ValueError) as refused:
        bilinear.compile("strassen", levels="auto", leaf="auto", moduli=3, backend="numpy")
    assert str(refused.value).startswith("moduli set the ozaki leaf's emulation, and the auto leaf has none: ")


def test_an_empty_in_place_schedule_name_is_refused():
    """name='' was taken for no name: the schedule came back as strassen_inplace."""
    with pytest.raises(ValueError, match=r"^name '': must be an identifier in \.bl"):
        bilinear.inplace("strassen", name="")


def test_a_cuda_error_from_dlpack_is_not_called_the_arguments_fault():
    """RuntimeError was caught for NumPy's "Unsupported dtype"; CuPy's CUDARuntimeError is one too, and
    a fault of the device read as "A cannot be read through DLPack"."""
    from bilinear.runtime.views import from_dlpack

    failure = type("CUDARuntimeError", (RuntimeError,), {"__module__": "cupy_backends.cuda.api.runtime"})

    class Device:
        __name__ = "cupy"

        @staticmethod
        def from_dlpack(array):
            raise failure("cudaErrorIllegalAddress")

    with pytest.raises(failure):
        from_dlpack(object(), "A", Device())


WEIGHED = """\
algorithm weighed <1,1,1;2>:
  M1 = A11 * B11
  M2 = A11 * B11
  C11 = 3*M1 - 2*M2
"""


@pytest.mark.parametrize("leaf", ["cublas", "fused"])
@pytest.mark.parametrize("levels", [1, 2])
def test_an_alpha_the_leaves_scale_past_the_dtypes_range_is_refused_before_c_is_written(tmp_path, leaf, levels):
    """The leaves multiply alpha by the scheme's coefficients (3 here, 9 at two levels) in the dtype:
    alpha = 1.5e38 in float32 came back inf in every element, with no error, where the product is
    finite (a hunt).  Now it is refused, out untouched; an alpha the leaves keep in range runs."""
    path = tmp_path / "weighed.bl"
    path.write_text(WEIGHED)
    product = bilinear.compile(path, backend="numpy", dtype="float32", levels=levels, leaf=leaf)
    A, B, C = (x * np.float32(1e-3) for x in random_inputs(np, 8, 8, 8, "float32", seed=4))
    largest = 3**levels
    out = C.copy()
    with pytest.raises(ValueError, match=rf"^alpha = 1\.5e\+38 times {largest}, the largest coefficient the leaves of "
                                         rf"this product may multiply it by, is past float32's range \(its largest is "):
        product(A, B, out=out, alpha=1.5e38, beta=1.0)
    assert bool((out == C).all())
    fits = float(np.finfo(np.float32).max) / largest / 2
    result = product(A, B, alpha=fits)
    assert np.isfinite(result).all()
    assert np.allclose(result, fits * (A.astype(np.float64) @ B), rtol=1e-5, atol=0)


@pytest.mark.parametrize("leaf", ["cublas", "fused"])
@pytest.mark.parametrize("levels", [1, 2])
@pytest.mark.parametrize("name", ["strassen", "winograd", "msmes", "msmes2", "rsmm", "grey234", "grey333", "weighed"])
def test_the_largest_leaf_scale_bounds_every_scalar_the_leaves_get(tmp_path, monkeypatch, name, levels, leaf):
    """alpha_refusal's bound is the product of each level's largest factor; every scalar a leaf GEMM or
    fused launch is called with (alpha = 1) is within it, and the weighed scheme reaches it."""
    from bilinear.lower.scales import largest_leaf_scale

    path = tmp_path / "weighed.bl"
    path.write_text(WEIGHED)
    source = path if name == "weighed" else ROOT / "algorithms" / f"{name}.bl"
    product = bilinear.compile(source, backend="numpy", levels=levels, leaf=leaf)
    executor = product.executor
    seen = []
    gemm, fused = executor.gemm, executor.backend.fused
    monkeypatch.setattr(executor, "gemm", lambda a, b, c, alpha, beta: (seen.append(alpha), gemm(a, b, c, alpha, beta)))
    monkeypatch.setattr(executor.backend, "fused", lambda launch, views, dims, scale: (
        seen.append(scale), fused(launch, views, dims, scale)))
    shape = product.lowered.levels[0].algorithm.shape
    m, k, n = (side**levels * 3 for side in (shape.m, shape.k, shape.n))
    A, B, C = random_inputs(np, m, k, n, "float64", seed=levels)
    for beta in (0.0, 1.0):
        if beta and product.overwrites_c:
            continue
        product(A, B, out=C, beta=beta)
    bound = largest_leaf_scale(executor.lowered)
    assert seen and max(abs(scale) for scale in seen) <= bound
    assert name != "weighed" or max(abs(scale) for scale in seen) == bound == 3**levels


@pytest.mark.parametrize("name", ["x.y", "runtime.numpy_backend", "", "1x", "api "])
def test_a_name_that_is_no_attribute_of_the_package_is_an_attribute_error(name):
    """hasattr(bilinear, "x.y") raised ModuleNotFoundError, and getattr(bilinear, "runtime.numpy_backend")
    returned the submodule: a dotted "attribute" was imported as a module path (a hunt)."""
    assert not hasattr(bilinear, name)
    with pytest.raises(AttributeError, match=f"^module 'bilinear' has no attribute {re.escape(repr(name))}$"):
        getattr(bilinear, name)
    assert hasattr(bilinear, "runtime") and hasattr(bilinear, "matmul")


def test_automatic_levels_hold_only_the_workspace_of_the_shape_they_ran():
    """A levels="auto" product kept every chosen level count's workspace: at n = 3 (one level, 16 bytes) it held
    the 87,040 bytes its four-level product kept from n = 128, where a fixed-level product lets them go (a hunt)."""
    from bilinear.model import Ceilings

    auto = bilinear.compile(ROOT / "algorithms" / "strassen.bl", backend="numpy", levels="auto")
    # a CPU whose GEMM runs 1000 times slower from 1024 up: four levels at 128, one at 3
    auto._ceilings = Ceilings("cpu", "float64", 1e15, ((1, 1e12), (64, 1e12), (1024, 1e9)), concurrent=False,
                              sums_in_passes=True)
    for n in (128, 3):
        A, B, _ = random_inputs(np, n, n, n, "float64", seed=n)
        np.testing.assert_allclose(auto(A, B), A @ B, rtol=1e-12, atol=1e-12)
    assert auto.choose(128, 128, 128)[0] > auto.choose(3, 3, 3)[0] == 1
    assert auto.held_workspace_bytes() == auto.workspace_bytes(3, 3, 3) == 16


NAIVE_BY_STAGES = """schedule {name} for naive2x2:
  stage p1: A11 * B11 -> +C11;  A12 * B21 -> {sign}C11;  A11 * B12 -> +C12;  A12 * B22 -> +C12
  stage p2: A21 * B11 -> +C21;  A22 * B21 -> +C21;  A21 * B12 -> +C22;  A22 * B22 -> +C22
"""


@pytest.mark.parametrize("options", [{"leaf": "fused", "fuse": False}, {}])
def test_a_used_file_s_definition_named_per_level_is_verified_before_it_runs(tmp_path, options):
    """per_level=("bad",) of a schedule in a used file that does not verify compiled: verify_program proves a file's
    own definitions, so it was never checked, and ran, 4.29 off A·B with fused leaves, or ended in an "internal error"
    of a pass (a hunt)."""
    (tmp_path / "naive2x2.bl").write_text((ROOT / "algorithms" / "naive2x2.bl").read_text())
    (tmp_path / "bad.bl").write_text('use "naive2x2.bl"\n' + NAIVE_BY_STAGES.format(name="bad", sign="-"))
    main = tmp_path / "main.bl"
    main.write_text('use "bad.bl"\n' + NAIVE_BY_STAGES.format(name="good", sign="+"))
    with pytest.raises(bilinear.BilinearError) as refused:
        bilinear.compile(main, levels=1, backend="numpy", per_level=("bad",), **options)
    error = refused.value.diagnostics[0]
    assert error.span.path.endswith("bad.bl") and error.message.startswith("C11 ends holding A11*B11 - A12*B21 + C11⁰")
    product = bilinear.compile(main, levels=1, backend="numpy", per_level=("good",), **options)
    A, B, _ = random_inputs(np, 8, 8, 8, "float64", seed=3)
    np.testing.assert_allclose(product(A, B), A @ B, rtol=1e-12, atol=1e-12)
