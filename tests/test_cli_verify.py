"""`bilinear verify`: exit codes, the three report formats, --help, bad paths, speed."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import time

import pytest
from conftest import ALGORITHMS, FIXTURES, ROOT, scheme_file
from helpers.schedules import STRASSEN_SUMS_STAGE

from bilinear.cli import build_parser, main

PRINTED = FIXTURES / "msmes_thesis_printed.bl"
WRONG_STRASSEN = (ROOT / "algorithms" / "strassen.bl").read_text().replace("C12 = M3 + M5", "C12 = M3 - M5")


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def wrong_strassen(tmp_path):
    path = tmp_path / "strassen_wrong.bl"
    path.write_text(WRONG_STRASSEN)
    return path


def test_every_shipped_file_exits_0(capsys, shipped):
    code, out, err = _run(capsys, "verify", shipped)
    assert code == 0, out + err
    assert out.rstrip().endswith("0 failed")


def test_a_wrong_algorithm_exits_1_and_names_the_block_and_the_fix(capsys, wrong_strassen):
    code, out, _ = _run(capsys, "verify", wrong_strassen)
    assert code == 1
    assert (
        f"{wrong_strassen}:14:3: error: C12 is wrong: it computes A11*B12 - 2*A11*B22 - A12*B22 but must be "
        "A11*B12 + A12*B22; has -2*A11*B22 that should not be there; has -A12*B22 where it needs +A12*B22\n"
        "   14 |   C12 = M3 - M5\n"
        "      |   ^~~~~~~~~~~~~\n"
    ) in out
    assert "note: changing the coefficient of M5 in C12 from -1 to 1 (line 14) would make every equation hold" in out
    assert out.rstrip().endswith("0 verified, 1 failed")


def test_the_printed_thesis_schedule_exits_1(capsys):
    code, out, _ = _run(capsys, "verify", PRINTED)
    assert code == 1
    assert "schedule msmes_printed for strassen [inplace, restore]: FAILED" in out
    # a statement that matches no product says so (it printed "= ? x 0")
    assert "    stage5: A21 * B12 -> +C22  = no product of strassen" in out and "? x 0" not in out


def test_json_report_is_well_formed(capsys, wrong_strassen):
    code, out, _ = _run(capsys, "verify", wrong_strassen, "--format", "json")
    assert code == 1
    data = json.loads(out)
    assert data["file"] == str(wrong_strassen) and data["ok"] is False
    (entry,) = data["entries"]
    assert (entry["kind"], entry["name"], entry["ok"], entry["products"]) == ("algorithm", "strassen", False, 7)
    (error,) = entry["errors"]
    assert (error["severity"], error["file"], error["line"], error["column"]) == ("error", str(wrong_strassen), 14, 3)
    assert error["message"].startswith("C12 is wrong") and error["notes"]


def test_json_report_of_a_schedule_lists_its_products(capsys):
    code, out, _ = _run(capsys, "verify", ROOT / "algorithms" / "msmes.bl", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["ok"] is True and [e["kind"] for e in data["entries"]] == ["algorithm", "schedule"]
    schedule = data["entries"][1]
    assert [p["product"] for p in schedule["products"]] == ["M2", "M3", "M4", "M5", "M1", "M6", "M7"]
    assert schedule["workspace_bytes_one_level"] == 0


def _tables(markdown: str) -> list[list[list[str]]]:
    """Each pipe table of a Markdown text, as rows of cells."""
    tables, current = [], []
    for line in [*markdown.splitlines(), ""]:
        if line.startswith("|"):
            current.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif current:
            tables.append(current)
            current = []
    return tables


@pytest.mark.parametrize("target", ["msmes", "wrong"])
def test_markdown_report_is_well_formed(capsys, wrong_strassen, target):
    path = ROOT / "algorithms" / "msmes.bl" if target == "msmes" else wrong_strassen
    code, out, _ = _run(capsys, "verify", path, "--format", "md")
    assert code == (0 if target == "msmes" else 1)
    assert out.startswith(f"# Verification report: `{path}`\n")
    tables = _tables(out)
    assert tables
    for header, separator, *rows in tables:
        assert set(separator) == {"---"} and len(separator) == len(header)
        assert rows and all(len(row) == len(header) for row in rows), (header, rows)
    if target == "wrong":
        assert "## Findings" in out and f"- `{path}:14:3` error: C12 is wrong" in out
        # the suggested fix, which text and JSON give, was left out
        assert "  - note: changing the coefficient of M5 in C12 from -1 to 1 (line 14) would make every equation hold" in out


def _subcommands() -> list[str]:
    (action,) = [a for a in build_parser()._actions if a.dest == "command"]
    return sorted(action.choices)


def test_the_verify_subcommand_exists():
    assert "verify" in _subcommands()


@pytest.mark.parametrize("command", [None, *_subcommands()])
def test_help_works_for_every_subcommand(capsys, command):
    argv = ["--help"] if command is None else [command, "--help"]
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: bilinear") and "-h, --help" in out


def test_run_help_states_the_error_the_code_computes(capsys):
    """It said ‖C−C_ref‖/(‖A‖‖B‖): wrong wherever α ≠ 1 or β ≠ 0 (measure.error_scale)."""
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "‖C−C_ref‖/(|α|‖A‖‖B‖ + |β|‖C‖)" in " ".join(capsys.readouterr().out.split())


def test_compile_help_gives_the_build_command_that_works(capsys):
    """It said `nvcc -shared <name>.cu -lcublas`, which fails for fused leaves (cp.async, FP64 MMA need sm_90)."""
    with pytest.raises(SystemExit):
        main(["compile", "--help"])
    assert "nvcc -O1 -std=c++17 -arch=sm_90 -Xcompiler -fPIC -shared <name>.cu -o lib<name>.so -lcublas" in " ".join(
        capsys.readouterr().out.split())


@pytest.mark.parametrize("command, said", [
    ("verify", "element type the report counts bytes in (default float64)"),
    ("compile", "element type of the library's main function and the manifest's kernels, and that the report counts "
                "bytes in (default float64)"),
])
def test_dtype_help_says_what_it_does_for_each_command(capsys, command, said):
    """verify --help said "; compile: also the library's main function and the manifest's kernels" (one text for both)."""
    (commands,) = [a for a in build_parser()._actions if a.dest == "command"]
    (dtype,) = [a for a in commands.choices[command]._actions if a.dest == "dtype"]
    assert dtype.help == said
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert f"--dtype {{float32,float64}} {said}" in " ".join(capsys.readouterr().out.split())


def test_no_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        main([])
    assert exit_.value.code == 2
    assert "usage: bilinear" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["no_such_file.bl", "no_such_scheme"])
def test_a_missing_file_exits_1_without_a_traceback(capsys, tmp_path, name):
    path = tmp_path / name
    code, out, err = _run(capsys, "verify", path)
    assert code == 1 and out == ""
    assert err.startswith(f"error: cannot read {path}: No such file or directory")
    assert "Traceback" not in err


def test_a_directory_exits_1_without_a_traceback(capsys, tmp_path):
    code, _, err = _run(capsys, "verify", tmp_path / ".")
    assert code == 1 and "is a directory" in err and "Traceback" not in err


def test_a_malformed_file_prints_the_located_message_on_stderr(capsys):
    code, out, err = _run(capsys, "verify", FIXTURES / "bad" / "block_outside_shape.bl")
    assert code == 1 and out == ""
    assert err.splitlines()[1:] == ["    3 |   M1 = A31 * B11", "      |        ^~~"]


def test_the_real_command_reports_json_and_exits_1_on_the_printed_thesis():
    environment = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-m", "bilinear.cli", "verify", str(PRINTED), "--format", "json"],
        capture_output=True, text=True, cwd=ROOT, env=environment, timeout=120, check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    data = json.loads(done.stdout)
    assert data["ok"] is False
    schedule = next(e for e in data["entries"] if e["kind"] == "schedule")
    assert schedule["errors"] and all(e["line"] >= 1 and e["column"] >= 1 for e in schedule["errors"])


def _largest_shipped():
    return max(ALGORITHMS, key=lambda p: p.stat().st_size)


@pytest.mark.parametrize("which", ["largest shipped", "smirnov336-40-960"])
def test_verify_of_the_largest_scheme_takes_under_ten_seconds(capsys, which):
    path = _largest_shipped() if which == "largest shipped" else scheme_file("fast-matmul/smirnov336-40-960")
    start = time.perf_counter()
    code, out, _ = _run(capsys, "verify", path)
    seconds = time.perf_counter() - start
    assert code == 0, out
    with capsys.disabled():
        print(f"\n[timing] bilinear verify {path.name}: {seconds:.2f} s")
    assert seconds < 10


def test_no_fix_note_leaves_a_factor_empty(capsys, tmp_path):
    """An extra product M8 = A11 * B11 in C11: dropping it from C11 is the fix; setting A11's or
    B11's coefficient in M8 to 0 would leave a zero factor, which the reader refuses."""
    text = (ROOT / "algorithms" / "strassen.bl").read_text()
    text = text.replace("<2,2,2;7>", "<2,2,2;8>").replace("  C11 = M1 + M4 - M5 + M7", "  M8 = A11 * B11\n  C11 = M1 + M4 - M5 + M7 + M8")
    path = tmp_path / "extra.bl"
    path.write_text(text)
    code, out, _ = _run(capsys, "verify", str(path))
    assert code == 1 and "note: changing the coefficient of M8 in C11 from 1 to 0" in out, out
    assert "in the left factor of M8" not in out and "in the right factor of M8" not in out, out


def test_an_in_place_schedule_without_restore_is_told_whether_it_restores(capsys, tmp_path):
    """msmes declared `inplace` only gives A and B back: the warning said it "leaves A and B modified"."""
    text = (ROOT / "algorithms" / "msmes.bl").read_text().replace("inplace, restore", "inplace")
    path = tmp_path / "m2.bl"
    path.write_text(text)
    code, out, _ = _run(capsys, "verify", str(path))
    assert code == 0 and "modified" not in out, out
    assert "warning: schedule msmes gives A and B back as they were but does not declare `restore`" in out, out
    wrong = tmp_path / "m3.bl"
    wrong.write_text(_without_last_restoring_update(text))
    code, out, _ = _run(capsys, "verify", str(wrong))
    assert "warning: schedule msmes leaves A and B modified (no `restore`)" in out, out


def _without_last_restoring_update(text: str) -> str:
    """msmes with its last stage gone: whatever that stage gave back stays changed."""
    lines = text.rstrip("\n").split("\n")
    last = max(i for i, line in enumerate(lines) if line.strip().startswith("stage "))
    return "\n".join(lines[:last]) + "\n"


def test_json_stays_strict_json_when_a_quantity_overflows(capsys, tmp_path):
    """A 400-digit coefficient's growth factor is past a float's range: it was printed as Infinity."""

    big = "1" * 400
    path = tmp_path / "big.bl"
    path.write_text(f"algorithm big <1,1,1;2>:\n  M1 = ({big}*A11) * B11\n  M2 = ({big}*A11 + A11) * B11\n  C11 = M2 - M1\n")
    code, out, err = _run(capsys, "verify", str(path), "--format", "json")

    def refuse(constant):
        raise AssertionError(f"{constant} is not JSON")

    document = json.loads(out, parse_constant=refuse)
    assert code == 0 and document["ok"], err
    assert document["entries"][0]["growth_factor"] is None


def test_markdown_findings_keep_their_asterisks(capsys, tmp_path):
    """`computes 2*A11*B11 but must be A11*B11` rendered as "computes 2<em>A11</em>B11 ...": the
    findings went into Markdown as plain text; code spans in a message stay code spans."""
    path = tmp_path / "twice.bl"
    path.write_text("algorithm twice <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = 2*M1\n")
    code, out, _ = _run(capsys, "verify", path, "--format", "md")
    assert code == 1
    finding = next(line for line in out.splitlines() if " error: " in line)
    assert finding == (f"- `{path}:3:3` error: C11 is wrong: it computes 2\\*A11\\*B11 but must be A11\\*B11; "
                       "has +2\\*A11\\*B11 where it needs +A11\\*B11")
    path.write_text("algorithm s <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n\nschedule al for s:\n  temp X: A\n"
                    "  stage s1: X = A11\n  stage p: X = X * B11\n  stage s2: C11 += X\n")
    code, out, _ = _run(capsys, "verify", path, "--format", "md")
    assert "error: `X = X * B11` writes X, one of its own factors: a product kernel" in out


# Strassen's stage with its first product's factors scaled by 2 and 3, and its weights by 1/6
SCALED = ('use "strassen.bl"\n\nschedule scaled for strassen: accumulate\n'
          + STRASSEN_SUMS_STAGE.replace("(A11 + A22) * (B11 + B22) -> +C11 +C22",
                                        "(2*A11 + 2*A22) * (3*B11 + 3*B22) -> +1/6*C11 +1/6*C22", 1))


def test_markdown_escapes_a_refused_leafs_product_and_a_shape_conditions_names(capsys, tmp_path):
    """The traffic cell quoted `(2*A11 + 2*A22) * ...` raw, which rendered as emphasis, and a condition
    on a temporary _Y_ rendered it in italics; the text report is unchanged (a hunt)."""
    path = tmp_path / "scaled.bl"
    path.write_text(SCALED)
    code, out, _ = _run(capsys, "verify", path, "--format", "md")
    assert code == 0 and "refused, the product (2\\*A11 + 2\\*A22) \\* (3\\*B11 + 3\\*B22) multiplies" in out, out
    rsmm = (ROOT / "algorithms" / "rsmm.bl").read_text().replace("temp Y: B", "temp _Y_: A")
    path = tmp_path / "ycond.bl"
    path.write_text(re.sub(r"\bY\b", "_Y_", rsmm))
    code, out, _ = _run(capsys, "verify", path, "--format", "md")
    assert code == 0 and "- rsmm requires K/k = N/n (temporary \\_Y\\_, shaped like A, holds a B-side value)" in out
    code, out, _ = _run(capsys, "verify", path)
    assert "requires K/k = N/n (temporary _Y_, shaped like A, holds a B-side value)" in out


def _code_spans(markdown: str) -> list[str]:
    markdown_it = pytest.importorskip("markdown_it")
    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse(markdown)
    return [child.content for token in tokens if token.type == "inline" for child in token.children
            if child.type == "code_inline"]


def test_markdown_quotes_any_path_and_name_as_written(capsys, tmp_path):
    """A path holding a backtick closed its code span early (heading and findings), and a name such as
    __strassen__ rendered bold in the tables while the findings escaped it (a hunt)."""
    folder = tmp_path / "we|ird`na*me_x"
    folder.mkdir()
    path = folder / "`s`.bl"
    path.write_text(WRONG_STRASSEN.replace("algorithm strassen ", "algorithm __strassen__ "))
    code, out, _ = _run(capsys, "verify", path, "--format", "md")
    assert code == 1
    spans = _code_spans(out)
    assert spans[0] == str(path) and f"{path}:14:3" in spans, spans
    assert "| \\_\\_strassen\\_\\_ | <2,2,2;7> | FAILED |" in out


def test_markdown_counts_an_algorithms_level_at_the_n_asked_for(capsys):
    """`verify --format md -n 16` printed what it printed at 8192: its algorithm table had no per-level
    figure, which text and JSON give (a hunt)."""
    text = _run(capsys, "verify", "strassen", "-n", "4096")[1]
    markdown = _run(capsys, "verify", "strassen", "--format", "md", "-n", "4096")[1]
    assert "  one level at n=4096: 120.3 GFLOP in products, 0.075 GFLOP in additions as written" in text  # 7·2·2048³, 18·2048²
    assert "GFLOP of one level at n=4096: products / additions as written |" in markdown
    assert "| 8 | 120.3 / 0.075 |" in markdown


def test_markdown_leaves_out_a_location_it_does_not_have():
    """A finding without a file was located at "`:`" (a hunt)."""
    import bilinear
    from bilinear.frontend.loader import program_from_text
    from bilinear.report import to_markdown

    algorithm = program_from_text(WRONG_STRASSEN, "w.bl").main
    findings = [line for line in to_markdown(bilinear.verify(dataclasses.replace(algorithm, span=None, outputs=tuple(
        dataclasses.replace(o, span=None) for o in algorithm.outputs)))).splitlines() if line.startswith("- ")]
    assert findings and all(line.startswith("- error: ") for line in findings), findings


def test_the_tally_prints_no_control_character_from_a_file_name(capsys, tmp_path):
    """The diagnostics showed an escape in the file name as U+FFFD; the last line printed it raw (a hunt)."""
    path = tmp_path / "esc\x1b[31mred.bl"
    path.write_text(WRONG_STRASSEN)
    code, out, _ = _run(capsys, "verify", path)
    assert code == 1 and "\x1b" not in out
    assert out.rstrip().endswith(f"{tmp_path}/esc\ufffd[31mred.bl: 0 verified, 1 failed")


def test_the_additions_of_a_sum_that_cancels_count_on_its_own_side():
    """T = S - 2*A11 is zero; its addition was counted on the C side (A side 1, C side 1)."""
    from bilinear.frontend.loader import program_from_text
    from bilinear.verify.counts import count_algorithm

    text = "algorithm s <1,1,1;1>:\n  S = A11 + A11\n  T = S - 2*A11\n  M1 = (A11 + T) * B11\n  C11 = M1\n"
    assert count_algorithm(program_from_text(text, "cancels.bl").main).additions_by_side == (2, 0, 0)


def test_additions_count_only_what_an_output_uses():
    """Strassen with an unused product M8 and an unused sum S9 said "24 as written; 21 without sharing":
    the written count held both, the unshared one M8 only, and neither is computed (an audit)."""
    from bilinear.frontend.loader import program_from_text
    from bilinear.verify.counts import count_algorithm

    strassen = (ROOT / "algorithms" / "strassen.bl").read_text()
    dead = strassen.replace("<2,2,2;7>", "<2,2,2;8>").replace(
        "  M7 = (A12 - A22) * (B21 + B22)\n",
        "  M7 = (A12 - A22) * (B21 + B22)\n  M8 = (A11 + A12 + A21) * (B11 + B12)\n  S9 = A11 + A12 + A21 + A22\n")
    with_dead, alone = (count_algorithm(program_from_text(text, "s.bl").main) for text in (dead, strassen))
    assert (with_dead.additions, with_dead.additions_unshared, with_dead.additions_by_side) == (
        alone.additions, alone.additions_unshared, alone.additions_by_side) == (18, 18, (5, 5, 8))
    assert with_dead.unused_products == 1


def test_python_dash_m_bilinear_runs_the_command_line():
    """`python -m bilinear` failed: the package had no __main__ (only `python -m bilinear.cli` ran)."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-m", "bilinear", "verify", str(ROOT / "algorithms" / "strassen.bl")],
                          capture_output=True, text=True, cwd=ROOT, env=environment, timeout=120, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    assert "strassen" in done.stdout
    usage = subprocess.run([sys.executable, "-m", "bilinear", "--help"], capture_output=True, text=True, cwd=ROOT,
                           env=environment, timeout=120, check=False)
    assert usage.returncode == 0 and usage.stdout.startswith("usage: bilinear ")


def test_figures_at_n_say_which_part_of_n_a_level_splits(capsys):
    """grey333 at n = 8192 splits 8190×8190×8190 and peels the rest; "one level at n=8192: 935.9 GFLOP"
    read as the whole product (classical333 printed 1098.7 GFLOP where 2n³ is 1099.5)."""
    code, out, _ = _run(capsys, "verify", str(ROOT / "algorithms" / "grey333.bl"))
    assert code == 0
    assert "  one level at n=8192 (its 8190×8190×8190 part; the rest is peeled): 935.9 GFLOP in products" in out
    code, out, _ = _run(capsys, "verify", str(ROOT / "algorithms" / "grey333.bl"), "--format", "json")
    (entry,) = [e for e in json.loads(out)["entries"] if e["kind"] == "algorithm"]
    assert entry["one_level"]["part"] == [8190, 8190, 8190]
    code, out, _ = _run(capsys, "verify", str(ROOT / "algorithms" / "strassen.bl"))
    assert "  one level at n=8192: 962.1 GFLOP in products" in out


def test_the_markdown_schedule_table_says_the_part_of_n_too(capsys, tmp_path):
    """The text report said "(its 8192×8190×8192 part ...)" of a grey234 schedule; the markdown table not."""
    out = tmp_path / "g.bl"
    assert main(["inplace", "grey234", "--tries", "2", "--steps", "0", "-o", str(out)]) == 0
    capsys.readouterr()
    code, markdown, _ = _run(capsys, "verify", str(out), "--format", "md")
    (row,) = [line for line in markdown.splitlines() if line.startswith("| grey234\\_inplace ")]
    assert code == 0 and row.count("(on 8192×8190×8192)") == 2


def test_a_file_that_does_not_load_gives_a_markdown_report_that_says_so(capsys, tmp_path):
    """--format md wrote nothing to standard output for a file that did not load (JSON gives a document
    with "ok": false): a CI job that kept the Markdown report kept an empty file (a hunt)."""
    bad = tmp_path / "bad.bl"
    bad.write_text("algorithm x <2,2,2;7>:\n  M1 = (A11 + ) * B11\n")
    code, out, err = _run(capsys, "verify", bad, "--format", "md")
    rendered = err.strip()
    assert code == 1 and rendered.startswith(f"{bad}:2:")
    assert out == (f"# Verification report: `{bad}`\n\n**not loaded**: nothing in it was verified.\n\n"
                   f"```text\n{rendered}\n```\n")


def test_the_markdown_report_of_an_approximate_scheme_carries_what_the_text_one_says(capsys):
    """Its table had the status alone: the error order and the cancellation the text and JSON reports give
    were dropped (a hunt)."""
    code, out, _ = _run(capsys, "verify", scheme_file("fast-matmul/bini322-10-52-approx"), "--format", "md")
    row = next(line for line in out.splitlines() if line.startswith("| bini322"))
    assert code == 1 and row.endswith("| holds in the limit x → 0 only | Brent equations: every C block equals its "
                                      "classical sum plus O(x^1): an approximate (border-rank) scheme, exact only in the "
                                      "limit, for no fixed x; single products carry up to x^-1, so rounding errors grow "
                                      "like u·x^-1 as x shrinks; not an exact algorithm over Q, so it is never compiled |")
