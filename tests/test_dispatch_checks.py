"""A dispatch table is checked when it is read: every malformed value is named with its place."""

from __future__ import annotations

import copy
import json

import pytest

from bilinear.dispatch import TABLE, dispatch, parse_table
from bilinear.dispatch_checks import TableError, check_row_scheme

COMMITTED = json.loads(TABLE.read_text())


def _with(path: str, value):
    """The committed table with the value at ``path`` (dots and [i]) replaced, or deleted for ``...``."""
    data = copy.deepcopy(COMMITTED)
    *parents, last = path.replace("[", ".").replace("]", "").split(".")
    holder = data
    for key in parents:
        holder = holder[int(key)] if isinstance(holder, list) else holder[key]
    if value is ...:
        del holder[last]
    elif isinstance(holder, list):
        holder[int(last)] = value
    else:
        holder[last] = value
    return data


def test_the_committed_table_passes():
    assert parse_table(COMMITTED).recursive


def test_a_shape_holds_one_row_of_each_leaf_kind():
    data = copy.deepcopy(COMMITTED)
    first = data["recursive"]["rows"][0]
    data["recursive"]["rows"].append({**first, "scheme": "rsmm", "speedup": 2.0})
    last = len(data["recursive"]["rows"]) - 1
    with pytest.raises(TableError) as refused:
        parse_table(data)
    assert str(refused.value) == (f"recursive.rows[{last}] is a second row of float64 2048×2048×2048 with "
                                  f"{first.get('leaf', 'cublas')} leaves (recursive.rows[0]): a shape holds the fastest "
                                  "configuration of each leaf kind")
    data["recursive"]["rows"][-1]["leaf"] = "ozaki"
    data["recursive"]["rows"][-1].update(scheme="winograd", levels=0, breadth=0, launch="serial")
    assert parse_table(data).recursive[-1].leaf == "ozaki"  # another leaf kind at the same shape


@pytest.mark.parametrize("path, value, message", [
    ("recursive.min_speedup", float("nan"), "recursive.min_speedup must be a finite number above 0, not nan"),
    ("recursive.emulated_min_speedup", -1, "recursive.emulated_min_speedup must be a finite number above 0, not -1"),
    ("recursive.min_dim", -1, "recursive.min_dim is no longer read (the measured rows decide each shape): remove it or "
                              "set it to null"),
    ("recursive.rows[0].speedup", float("nan"), "recursive.rows[0].speedup must be a finite number above 0, not nan"),
    ("recursive.rows[0].speedup", "1.5", "recursive.rows[0].speedup must be a finite number above 0, not '1.5'"),
    ("recursive.rows[0].m", 0, "recursive.rows[0].m must be a whole number from 1 to 2147483647, not 0"),
    ("recursive.rows[0].m", "8192", "recursive.rows[0].m must be a whole number from 1 to 2147483647, not '8192'"),
    ("recursive.rows[0].scheme", ..., "recursive.rows[0].scheme must name a shipped scheme (a file algorithms/NAME.bl), "
                                      "not None"),
    ("recursive.rows[0].scheme", "../../x", "recursive.rows[0].scheme must name a shipped scheme (a file "
                                            "algorithms/NAME.bl), not '../../x'"),
    ("recursive.rows[0].levels", 1.5, "recursive.rows[0].levels must be a whole number from 0 to 32, not 1.5"),
    ("recursive.rows[0].levels", 40, "recursive.rows[0].levels must be a whole number from 0 to 32, not 40"),
    ("recursive.rows[0].breadth", 2, "recursive.rows[0].breadth must be a whole number from 0 to 1, not 2"),
    ("recursive.rows[0].leaf", "gpu", "recursive.rows[0].leaf must be one of cublas, fused, ozaki, not 'gpu'"),
    ("recursive", None, "recursive must be an object"),
    ("rows[0].family", ..., "rows[0].family must be one of tsm2r, tsm2l, not None"),
    ("rows[0].k", -2, "rows[0].k must be a whole number from 1 to 2147483647, not -2"),
    ("rows[0].speedup", None, "rows[0].speedup must be a finite number above 0, not None"),
    ("rows[0].params", {"kind": "tsm2l", "colour": 1}, "rows[0].params: "),
    # parameters the kernel or CuPy refused only at the call, for shapes near the row (a hunt)
    ("rows[0].params.kind", "tsm2r", "rows[0].params.kind must be the row's family tsm2l, not 'tsm2r'"),
    ("rows[0].params.threads", 100, "rows[0].params: threads must be a multiple of 32 from 32 to 1024, not 100"),
    ("rows[0].params.threads", 100.5, "rows[0].params: threads must be a whole number, not 100.5"),
    ("rows[0].params.rows_per_thread", 1.5, "rows[0].params: rows_per_thread must be a whole number, not 1.5"),
    ("rows[0].params.stages", True, "rows[0].params: stages must be a whole number, not True"),
    ("rows[0].params.persistent", "no", "rows[0].params: persistent must be true or false, not 'no'"),
    ("limits.tsm2l_max_k", 65, "limits.tsm2l_max_k must be a whole number from 1 to 64, not 65"),
    ("limits.tsm2r_max_n", float("nan"), "limits.tsm2r_max_n must be a whole number from 1 to 64, not nan"),
    ("inplace.rows[0].scheme", "nosuch", "inplace.rows[0].scheme must name a shipped scheme (a file algorithms/NAME.bl), "
                                         "not 'nosuch'"),
    ("inplace.rows[0].levels", 0, "inplace.rows[0].levels must be a whole number from 1 to 32, not 0"),
    ("inplace.rows[0].levels", 33, "inplace.rows[0].levels must be a whole number from 1 to 32, not 33"),
    # options that compile refuses together (each field alone is allowed; a hunt)
    ("recursive.rows[0].leaf", "fused", "recursive.rows[0]: breadth-first levels multiply single operands at their "
                                        "leaves, which the fused leaf does not; use cublas leaves (--leaf cublas, "
                                        "leaf='cublas'; or another single-view leaf such as ozaki) with breadth-first "
                                        "levels"),
    ("recursive.rows[0].breadth", 0, "recursive.rows[0]: batched launches (--launch batched, launch='batched') make "
                                     "breadth-first leaves one batched GEMM, and there are no breadth-first levels: "),
    ("recursive.rows[2].launch", "streams", "recursive.rows[2]: --launch streams (launch='streams') issues cuBLAS leaves "
                                            "on concurrent streams; the ozaki leaf runs its leaves one after another "
                                            "(they share one workspace): leave --launch out, or use cublas leaves"),
    ("rows", {}, "rows must be a list"),
])
def test_a_malformed_value_is_named_where_it_is(path, value, message):
    """A NaN threshold made every nearby row a fast choice ("nan× cuBLAS"), min_dim = -1 sent every shape
    to a recursive choice with no configuration (matmul then ran cuBLAS, saying otherwise), and the rest
    failed only at the call, for shapes near the row, with TypeError, KeyError or ZeroDivisionError."""
    with pytest.raises(TableError) as refused:
        parse_table(_with(path, value))
    assert str(refused.value).startswith(message) if message.endswith(": ") else str(refused.value) == message


def test_a_table_that_is_not_an_object_is_refused():
    with pytest.raises(TableError, match=r"^the table must be a JSON object$"):
        parse_table([])


def test_dispatch_by_a_checked_table_still_chooses_as_measured():
    table = parse_table(COMMITTED)
    assert dispatch(16384, 16384, 16384, "float64", table=table).kernel == "recursive"
    assert dispatch(10000, 2, 2, "float32", table=table).kernel == "tsm2l"


@pytest.mark.parametrize("text, reason", [("[" * 100_000 + "]" * 100_000, "nested too deeply"),
                                          ('{"rows": [' + "9" * 5000 + "]}", "Exceeds the limit")])
def test_a_table_file_json_cannot_read_is_refused_as_one(tmp_path, text, reason):
    """A table file of lists nested past the parser's depth, or with an integer past Python's digit limit,
    raised RecursionError or ValueError from $BILINEAR_DISPATCH_TABLE's reading (a review)."""
    from bilinear.dispatch import table_json

    path = tmp_path / "table.json"
    path.write_text(text)
    with pytest.raises(TableError, match=rf"^cannot read the dispatch table {path}: .*{reason}"):
        table_json(path)


@pytest.mark.parametrize("section, scheme, what", [
    ("recursive", "msmes", "overwrites A and B while it runs: recursive rows must name a scheme that leaves them as they "
                           "are (in-place schedules belong in inplace.rows)"),
    ("inplace", "winograd", "never writes A or B: inplace rows must name an in-place schedule that restores them, such "
                            "as msmes"),
    ("inplace", "rsmm", "never writes A or B: inplace rows must name an in-place schedule that restores them, such as "
                        "msmes"),
])
def test_a_row_naming_the_wrong_kind_of_scheme_is_refused_where_matmul_compiles_it(section, scheme, what):
    """A recursive row naming msmes made matmul overwrite A and B, which it promises never to do; an
    inplace row naming rsmm refused beta, and one naming winograd took workspace (a hunt).  Which kind a
    scheme is shows once it is compiled, so matmul checks it there rather than parse every scheme each
    time the table is read (msmes2's parse alone takes half a second)."""
    import bilinear

    product = bilinear.compile(scheme, levels=1, backend="numpy")
    with pytest.raises(TableError) as refused:
        check_row_scheme(section, scheme, product, TABLE)
    assert str(refused.value) == f"{TABLE}: a row of {section}.rows names {scheme}, which {what}"


@pytest.mark.parametrize("section, scheme", [("recursive", "winograd"), ("recursive", "rsmm"), ("inplace", "msmes"),
                                             ("inplace", "msmes2")])
def test_a_row_naming_its_kind_of_scheme_passes(section, scheme):
    import bilinear

    check_row_scheme(section, scheme, bilinear.compile(scheme, levels=1, backend="numpy"), TABLE)


def test_matmul_checks_an_in_place_rows_scheme_before_it_keeps_the_product():
    from bilinear import matmul_api

    with pytest.raises(TableError, match=r"a row of inplace\.rows names winograd, which never writes A or B"):
        matmul_api._in_place_product("float64", "numpy", 1, "winograd")
    assert not any(key[0] == "winograd" for key in matmul_api._RECURSIVE)  # refused again at the next call
