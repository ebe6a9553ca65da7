"""Reading files and saying syntax errors (frontend/loader.py, frontend/syntax_errors.py) pinned where the
rest of the suite let a changed line pass: a source-mutation audit of both modules.

The suite checks the loader through whole files, its commonest refusals and a MAX_SOURCE_BYTES always
patched small, so much went unseen when changed: the real limit and a file at it, a file that reads longer
than stat said, which missing names are looked for among the shipped schemes, the line quoted for UTF-16,
BOM-and-CRLF and lone-CR text, where `use` looks and how deep, cycles below the top file, a file used twice,
a RecursionError in the checks, and a shipped definition unequal to its file.  Of the syntax errors: the
header shapes a misspelt keyword is found in, words near keywords that are none, stage and temp one edit
off, the width and the expected set at an end of line, an end of file after the last code, a token of 40
characters, and an ASCII control character.  Each test checks the exact message, notes and line:column;
the audit found no bug in either module.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import bilinear
from bilinear.diagnostics import BilinearError, render
from bilinear.frontend import loader
from bilinear.paths import algorithms_dir

ONE = "algorithm one <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n"  # the smallest algorithm
UNFINISHED = "algorithm one <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1 +\n"  # a syntax error at the end of line 3
SCHEDULE = ONE + "schedule s for one:\n"  # a schedule's header on line 4: its stages from line 5
AT_ITS_END = (":3:13: error: unexpected end of line; expected '(', '+', '-', a name or a number\n"  # UNFINISHED's
              "    3 |   C11 = M1 +\n      |             ^")  # error as rendered, after its path


def _file(folder: Path, name: str, data: str | bytes) -> Path:
    """``folder / name`` holding ``data`` (text as UTF-8)."""
    path = folder / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _diagnostic(call, *args):
    """The one diagnostic ``call(*args)`` raises."""
    (diagnostic,) = pytest.raises(BilinearError, call, *args).value.diagnostics
    return diagnostic


def _located(call, *args) -> tuple[int | None, int | None, str, tuple[str, ...]]:
    """(line, column, message, notes) of the one diagnostic ``call(*args)`` raises."""
    diagnostic = _diagnostic(call, *args)
    span = diagnostic.span
    return (span and span.line, span and span.column, diagnostic.message, diagnostic.notes)


# ---- loader.py: reading a source ---------------------------------------------------------------------


def test_a_source_of_a_mebibyte_is_read(tmp_path):
    """Every test of the limit patches MAX_SOURCE_BYTES: the real limit, 64 MiB, cut to 64 KiB passed."""
    path = _file(tmp_path, "big.bl", "# " + "x" * (1 << 20) + "\n" + ONE)
    assert bilinear.load(path).algorithm("one")


def test_a_file_of_exactly_the_limit_is_read_and_one_byte_over_is_refused_by_its_size(tmp_path, monkeypatch):
    """`>=` for `>` (on stat's size or the bytes read) refused the first; a folder is no ``text_of`` either."""
    path = _file(tmp_path, "exact.bl", ONE)
    monkeypatch.setattr(loader, "MAX_SOURCE_BYTES", len(ONE))
    assert loader.read_source(path) == ONE
    monkeypatch.setattr(loader, "MAX_SOURCE_BYTES", len(ONE) - 1)  # not "grew past" (nor read)
    assert _located(loader.read_source, path)[2] == f"{path} is {len(ONE)} bytes; source files are limited to 0 MiB"
    assert _located(loader.read_source, tmp_path, None, "a list")[2] == f"{tmp_path} is a directory, not a list"


def test_a_file_that_reads_longer_than_stat_said_is_refused_as_grown(monkeypatch):
    """/proc files say 0 bytes: a byte past the limit is read to notice more (else read cut short, and used)."""
    monkeypatch.setattr(loader, "MAX_SOURCE_BYTES", 16)
    assert _located(loader.read_source, Path("/proc/self/status")) == (
        None, None, "/proc/self/status grew past 0 MiB while being read", ())


def test_a_file_that_cannot_be_opened_says_why_in_words(tmp_path, monkeypatch):
    """The error's strerror ("Permission denied"), not its repr ("[Errno 13] Permission denied")."""
    path = _file(tmp_path, "locked.bl", ONE)

    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(type(path), "open", refuse)
    assert _located(loader.read_source, path) == (None, None, f"cannot read {path}: Permission denied", ())


def test_a_zip_archive_is_refused_at_its_first_byte_and_only_a_zip_archive(tmp_path):
    """`PK\\3\\4` is a zip archive, located at 1:1; `PK\\3\\5` is (odd) text, read as such."""
    path = _file(tmp_path, "factors.bl", b"PK\x03\x04rest")
    assert _located(loader.read_source, path) == (1, 1, f"{path} is a zip archive (an AlphaTensor .npz?), not .bl "
                                                  "text", ("to read it as AlphaTensor factors, give --from alphatensor "
                                                           "(format='alphatensor')",))
    path.write_bytes(b"PK\x03\x05 x\n")
    assert loader.read_source(path) == "PK\x03\x05 x\n"


def test_a_byte_order_mark_and_crlf_endings_are_not_part_of_the_text(tmp_path):
    """Neither is in the text read, which an error quotes (read again from disk, the mark was quoted)."""
    path = _file(tmp_path, "bom.bl", b"\xef\xbb\xbfalgorithm one <1,1,1;1>\r\n  M1 = A11 * B11\r\n")
    assert loader.read_source(path) == "algorithm one <1,1,1;1>\n  M1 = A11 * B11\n"
    assert render(_diagnostic(bilinear.load, path)) == (
        f"{path}:1:24: error: unexpected end of line; expected ':'\n    1 | algorithm one <1,1,1;1>\n"
        "      |                        ^")


def test_an_error_in_a_utf16_file_quotes_its_line(tmp_path):
    """The decoded text is kept for the quote: looked up on disk, as UTF-8, the line was not quoted."""
    path = _file(tmp_path, "u16.bl", UNFINISHED.encode("utf-16"))
    assert render(_diagnostic(bilinear.load, path)) == f"{path}{AT_ITS_END}"


def test_a_truncated_utf8_sequence_is_named_by_its_first_byte_where_it_begins(tmp_path):
    """`\\xe2\\x82(`: the error's start, not its end, is the byte named and the column pointed at."""
    path = _file(tmp_path, "bad8.bl", b"algorithm one <1,1,1;1>:\n  M1 = A\xe2\x82(11 * B11\n")
    assert render(_diagnostic(bilinear.load, path)) == (
        f"{path}:2:9: error: {path} is not UTF-8 text (byte 0xe2)\n    2 |   M1 = A\ufffd(11 * B11\n      |         ^")


def test_a_binary_file_is_located_at_its_first_nul_counting_no_byte_order_mark(tmp_path):
    """`ab\\0c\\0` after a UTF-8 byte order mark: column 3 (the first NUL, the mark taking no column)."""
    path = _file(tmp_path, "bom0.bl", b"\xef\xbb\xbfab\x00c\x00\n")
    diagnostic = _diagnostic(bilinear.load, path)
    assert (diagnostic.span.line, diagnostic.span.column, diagnostic.span.end_column, diagnostic.message,
            diagnostic.notes) == (1, 3, 4, f"{path} is a binary file, not .bl text", ())


def test_lines_end_at_line_feeds_only():
    """A form feed ends no line: LFs only, not str.splitlines (a catalogue's errors had moved a line down)."""
    assert loader.source_lines("# a\x0cb\nc") == ["# a\x0cb", "c"]


# ---- missing files and the shipped schemes -----------------------------------------------------------


def test_a_missing_file_in_a_folder_named_algorithms_is_told_of_a_shipped_one_only_if_it_exists(tmp_path):
    """Without that check a missing algorithms/nosuch.bl was told "the shipped nosuch is read by its name alone"."""
    missing = tmp_path / "algorithms" / "nosuch.bl"
    assert _located(loader.check_regular, missing)[2:] == (f"cannot read {missing}: No such file or directory", ())
    shipped = tmp_path / "algorithms" / "strassen.bl"
    assert _located(loader.check_regular, shipped)[3] == (
        f"no file {shipped} here; the shipped strassen is read by its name alone, from any folder: strassen",)


@pytest.mark.parametrize(("name", "meant"), [
    ("msme", ": did you mean msmes or msmes2?"), ("STRASEN", ": did you mean strassen?"), ("laderman2", "")])
def test_a_missing_bare_name_is_told_the_shipped_schemes_close_to_it(name, meant):
    """Every close name (not only the closest), joined by `or`, compared in lower case."""
    assert _located(loader.check_regular, Path(name))[2:] == (f"cannot read {name}: No such file or directory", (
        f"no file {name} here, and no shipped scheme of that name{meant} (`bilinear list` shows the shipped ones)",))


@pytest.mark.parametrize(("name", "why"), [("strasen.bl", "No such file or directory"), ("nosuchfolder/strasen",
                         "No such file or directory"), ("strassen" + "n" * 300, "File name too long")])
def test_a_missing_file_name_or_path_is_not_taken_for_a_shipped_scheme(name, why):
    """Files, not schemes (without the suffix or folder check: "did you mean strassen?"); nor a name too long."""
    assert _located(loader.check_regular, Path(name)) == (None, None, f"cannot read {name}: {why}", ())


# ---- `use` -------------------------------------------------------------------------------------------


def _user(tmp_path: Path, target: str) -> Path:
    """main.bl, which uses ``target`` on line 1 and defines `one`."""
    return _file(tmp_path, "main.bl", f'use "{target}"\n' + ONE)


@pytest.mark.parametrize(("target", "message"), [
    ("   ", '`use` names no file: give it a .bl file\'s name, as in use "strassen.bl"'),  # stripped: no folder
    ("xbl", "`use` takes .bl files, not 'xbl'")])  # `bl`, not `.bl`
def test_use_of_blanks_or_of_a_name_without_a_bl_suffix_is_refused_at_the_use(tmp_path, target, message):
    assert _located(bilinear.load, _user(tmp_path, target)) == (1, 1, message, ())


def test_use_of_a_broken_link_says_it_cannot_be_read(tmp_path):
    """The link beside the file is that file (lexists): with exists, "cannot find" hid the broken link."""
    (tmp_path / "broken.bl").symlink_to(tmp_path / "nowhere.bl")
    assert _located(bilinear.load, _user(tmp_path, "broken.bl")) == (
        1, 1, f"cannot read {tmp_path / 'broken.bl'}: No such file or directory", ())


@pytest.mark.parametrize(("target", "where"), [
    ("/nonexistent/x.bl", ""), ("nosuch.bl", ": looked in {folder} and in the shipped algorithms"),
    # a file of the repository, from the shipped folder: not read (only its existence had been asked)
    (os.path.relpath(Path(__file__).parent / "fixtures" / "msmes_thesis_printed.bl", algorithms_dir()),
     ": looked in {folder}")])
def test_use_of_a_missing_file_says_where_it_was_looked_for(tmp_path, target, where):
    """An absolute path as it is; a name beside the file and shipped; a path out of the shipped folder beside it."""
    assert _located(bilinear.load, _user(tmp_path, target)) == (
        1, 1, f"cannot find {target!r}" + where.format(folder=tmp_path), ())


def test_a_file_used_by_two_files_is_read_once(tmp_path):
    """left.bl and right.bl use base.bl: taken once, not "defined twice"; `uses` names each file once."""
    _file(tmp_path, "base.bl", ONE.replace("one", "base"))
    for side in ("left", "right"):
        _file(tmp_path, f"{side}.bl", 'use "base.bl"\n' + ONE.replace("one", side))
    main = _file(tmp_path, "main.bl", 'use "left.bl"\nuse "right.bl"\n' + ONE)
    program = bilinear.load(main)
    assert [a.name for a in program.algorithms] == ["base", "left", "right", "one"]
    assert program.uses == tuple(str(tmp_path / f"{name}.bl") for name in ("base", "left", "right"))


def test_a_use_cycle_below_the_top_file_names_only_the_files_in_the_cycle(tmp_path):
    """main.bl uses a.bl, a b.bl, b a.bl: a -> b -> a at b's `use` (the whole chain named main.bl too)."""
    _file(tmp_path, "a.bl", 'use "b.bl"\n')
    _file(tmp_path, "b.bl", '\nuse "a.bl"\n')
    diagnostic = _diagnostic(bilinear.load, _user(tmp_path, "a.bl"))
    assert (diagnostic.span.path, diagnostic.span.line, diagnostic.message) == (
        str(tmp_path / "b.bl"), 2, "use cycle: a.bl -> b.bl -> a.bl")


def test_use_may_nest_two_hundred_files_deep_and_no_deeper(tmp_path):
    """A top file and 199 used files load; one more is refused at the 201st (`>` for `>=` let it through)."""
    _file(tmp_path, "f0.bl", ONE)
    for level in range(1, 200):
        _file(tmp_path, f"f{level}.bl", f'use "f{level - 1}.bl"\n')
    top = _file(tmp_path, "top.bl", 'use "f198.bl"\n' + ONE.replace("one", "top"))
    assert len(bilinear.load(top).uses) == 199
    top.write_text('use "f199.bl"\n' + ONE.replace("one", "top"), encoding="utf-8")
    diagnostic = _diagnostic(bilinear.load, top)
    assert (diagnostic.span.path, diagnostic.span.line, diagnostic.message) == (
        str(tmp_path / "f1.bl"), 1, "`use` nests more than 200 files deep, from top.bl")


def test_a_link_loop_that_appears_after_reading_is_an_error_not_a_traceback(tmp_path, monkeypatch):
    """Path.resolve raised RuntimeError for a loop before Python 3.13: it is caught as OSError is."""
    path = _file(tmp_path, "one.bl", ONE)

    def loop(self, strict=False):
        raise RuntimeError(f"Symlink loop from {str(self)!r}")

    monkeypatch.setattr(type(path), "resolve", loop)
    assert _located(bilinear.load, path) == (None, None, f"cannot read {path}: Symlink loop from {str(path)!r}", ())


@pytest.mark.parametrize(("text", "defined"), [("  " + ONE.replace("one", "two"), ["two", "one"]),
                                               ("# only a comment\n\n", ["one"]), ("", ["one"])])
def test_a_used_file_that_begins_indented_or_defines_nothing_is_bl_text(tmp_path, text, defined):
    """An indented header is stripped before it is matched; comments (or nothing) are .bl text."""
    _file(tmp_path, "two.bl", text)
    assert [a.name for a in bilinear.load(_user(tmp_path, "two.bl")).algorithms] == defined


# ---- program_from_text and the definitions' checks ---------------------------------------------------


@pytest.mark.parametrize("end", ["\r\n", "\r"])
def test_text_with_cr_line_endings_is_read_and_quoted_as_a_file_is(end):
    """Kept for the quote (no file to read it from), its CRs made LFs (or lone CRs made it one line)."""
    text = UNFINISHED.replace("\n", end)
    assert render(_diagnostic(loader.program_from_text, text, "inline.bl")) == f"inline.bl{AT_ITS_END}"


@pytest.mark.parametrize(("text", "error"), [
    (ONE + 'use "x.bl"\n', (4, 1, "`use` needs a file on disk; load the file instead", ())),
    (ONE + ONE, (4, 1, "one is defined twice", ("first defined at t.bl:1:1",))),  # the first, not the reported one
])
def test_text_that_uses_a_file_or_defines_a_name_twice_is_refused_where_it_does(text, error):
    assert _located(loader.program_from_text, text, "t.bl") == error


def test_an_algorithm_too_deep_to_check_is_reported_and_its_schedule_waits_for_it(monkeypatch):
    """A RecursionError in the checks is an error at the algorithm, whose schedule is then told it waits."""
    def too_deep(raw, *args):
        raise RecursionError

    monkeypatch.setattr(loader, "build", too_deep)
    errors = pytest.raises(BilinearError, loader.program_from_text, SCHEDULE + "  stage p: A11 * B11 -> +C11\n", "t.bl")
    assert [(d.span.line, d.message) for d in errors.value.diagnostics] == [
        (1, "algorithm one nests its named sums too deeply to check (a chain of hundreds of sums)"),
        (4, "schedule s is for one, which has errors of its own; the schedule is checked once they are fixed")]
    table = "table t <1,1,1;1>:\n  U:\n  1\n  V:\n  1\n  W:\n  1\n"  # not an algorithm: a definition
    assert _located(loader.program_from_text, table, "t.bl")[2] == (
        "definition t nests its named sums too deeply to check (a chain of hundreds of sums)")



# ---- syntax_errors.py --------------------------------------------------------------------------------

KEYWORDS_EXPECTED = "expected 'algorithm', 'schedule', 'table' or 'use'"
AT_THE_TOP = "expected 'algorithm', 'schedule', 'table', 'use', the end of the file or the end of the line"


def _syntax(text: str) -> tuple[int, int, int, str, tuple[str, ...]]:
    """(line, column, end column, message, notes) of the one syntax error in ``text``."""
    diagnostic = _diagnostic(loader.program_from_text, text, "t.bl")
    span = diagnostic.span
    return (span.line, span.column, span.end_column, diagnostic.message, diagnostic.notes)


@pytest.mark.parametrize(("text", "keyword"), [
    ("tab t <1,1,1;1>:\n", "table"),  # three letters, difflib's 0.75 against `table`
    ("algoritm one < 1, 1, 1 ; 1 >:\n", "algorithm"),  # blanks inside the shape
    ("algoritm one <1,1,1;1>:  # a comment\n", "algorithm"),
    ("schedul s for one: inplace, restore\n", "schedule"),  # properties after the colon
    ("ALGORITM one <1,1,1;1>:\n", "algorithm"),  # compared in lower case
    ("algoritm x <1,1,1;1>:", "algorithm"),  # the last line, with no line feed (`<` for `<=`: no line at all)
    ("  algoritm x <1,1,1;1>:\n", "algorithm"),  # indented: pointed at from its first letter
])
def test_a_misspelt_header_is_pointed_at_with_its_keyword(text, keyword):
    """Each header shape found after a misspelt keyword, each dropped by a mutant (the parser's words, or column 1)."""
    word, column = text.split()[0], 1 + len(text) - len(text.lstrip())
    assert _syntax(text) == (1, column, column + len(word), f"unexpected '{word}'; {KEYWORDS_EXPECTED}",
                             (f"did you mean {keyword}?",))


@pytest.mark.parametrize(("line", "keyword"), [
    ("stagex q: A11 * B11 -> +C11", "stage"),  # a letter added at the end
    ("tmep Y: C", "temp"),  # two neighbours swapped, a temporary in C
    ("tmp Y: B  # the B side", "temp"),  # a comment after the temporary's buffer
])
def test_a_misspelt_stage_or_temp_one_edit_off_is_pointed_at(line, keyword):
    word = line.split()[0]
    assert _syntax(SCHEDULE + f"  {line}\n") == (5, 3, 3 + len(word), f"unexpected '{word}'; expected '{keyword}'",
                                                 (f"did you mean {keyword}?",))


@pytest.mark.parametrize(("text", "error", "notes"), [
    # three edits from `stage`: glued to a name, not misspelt ("did you mean stage?")
    (SCHEDULE + "  stagexyz q: A11 * B11 -> +C11\n", (5, 3, 11, "unexpected 'stagexyz'; expected 'algorithm', "
     "'schedule', 'stage', 'table', 'temp', 'use' or the end of the file"), ("did you mean stage xyz?",)),
    # glued, with a blank before its colon
    (SCHEDULE + "  stage p: A11 * B11 -> +C11\n  stagesecond : A12 * B21 -> +C11\n",
     (6, 3, 14, "unexpected 'stagesecond'; expected 'stage'"), ("did you mean stage second?",)),
    # `stage` itself, with the error after it: not "unexpected 'stage'; expected 'stage'"
    (SCHEDULE + "  stage q: )\n", (5, 12, 13, "unexpected ')'; expected '(', '+', '-', 'algorithm', 'schedule', "
     "'stage', 'table', 'temp', 'use', a name, a number, the end of the file or the end of the line"), ()),
    # three letters one edit from `use` before a shape, not a file: difflib's words (0.67), not "did you mean use?"
    ("usa x <1,1,1;1>:\n", (1, 1, 4, f"unexpected 'usa'; {AT_THE_TOP}"), ()),
    # two letters off `table` (0.73): under a cutoff of 0.7 it was "did you mean table?"
    ("tablxx t <1,1,1;1>:\n", (1, 1, 7, f"unexpected 'tablxx'; {AT_THE_TOP}"), ()),
    # far from `use`: with `<= 1` for `== 1`, words of other lengths were one edit from it
    ('stuff "f.bl"\n', (1, 1, 6, f"unexpected 'stuff'; {AT_THE_TOP}"), ()),
    # a right keyword with an error after it on its line: not "did you mean schedule?"
    ("schedule s for one: inplace restore\n", (1, 29, 36, "unexpected 'restore'; expected ',', 'algorithm', "
                                                          "'schedule', 'stage', 'table', 'temp', 'use', the end of the "
                                                          "file or the end of the line"), ()),
    # a block, not a name, after a keyword's letters: no "did you mean use file[1,2]?"
    ("usefile[1,2] x\n", (1, 1, 13, f"unexpected 'usefile[1,2]'; {AT_THE_TOP}"), ()),
])
def test_words_glued_to_or_near_keywords_get_their_own_words(text, error, notes):
    """Glued to a stage's name; or near a keyword where none is meant: the parser's words, with no note."""
    assert _syntax(text) == (*error, notes)


@pytest.mark.parametrize(("text", "where", "expected"), [
    (ONE + "  C11 = M1 +\n\n\n", (4, 13, 14), "'(', '+', '-', a name or a number"),  # three line feeds, one token
    (ONE + "  C11 = M1 +  # more\n", (4, 15, 16), "'(', '+', '-', a name or a number"),  # the comment is in it too
    # no line feed at the end: the text is parsed again with the one parse_text adds, or lark's set after
    # reducing `M1` (no '*', '/' or '[') stood
    (ONE + "  C11 = (M1", (4, 12, 13), "')', '*', '+', '-', '/' or '['"),
])
def test_an_unexpected_end_of_line_is_one_column_wide_and_says_what_could_come_before_it(text, where, expected):
    assert _syntax(text) == (*where, f"unexpected end of line; expected {expected}", ())


@pytest.mark.parametrize("after_w", ["", "  # no rows\n\n# the end\n\n"])
def test_an_unexpected_end_of_file_stands_after_the_last_code(after_w):
    """After `W:`, not on the blank or comment lines after it, nor after the comment on its line."""
    text = "table t <1,1,1;1>:\n  U:\n  1\n  V:\n  1\n  W:" + after_w
    assert _syntax(text) == (6, 5, 6, "unexpected end of file; expected '+', '-' or a whole number", ())


@pytest.mark.parametrize(("after", "end", "found"), [
    ("x" * 40, 52, "'" + "x" * 40 + "'"),  # quoted whole: only a longer token is cut short (`>=` for `>` cut it)
    ("\x01", 13, "character U+0001"),  # not seen: by code point, not between quotes (as when only ASCII was asked)
])
def test_what_stands_after_an_equation_is_quoted_whole_or_named(after, end, found):
    assert _syntax(ONE + f"  C11 = M1 {after}\n") == (
        4, 12, end, f"unexpected {found}; expected '*', '+', '-', '/', ';', '[' or the end of the line", ())


@pytest.mark.parametrize("text", [ONE + "  C11 = M1 = M1\n", "schedule s for\n"])
def test_only_a_keyword_before_an_equals_sign_is_told_it_is_a_keyword(text):
    """`M1 =` (a name) and `for` at the end of a line (no `=`) get no note that a keyword was used as a name."""
    assert _syntax(text)[4] == ()



# ---- find_scheme -------------------------------------------------------------------------------------


def test_a_path_of_two_parts_is_taken_as_it_is():
    """`nosuchfolder/strassen` is a path, kept relative; only a one-part path (`./strassen`) is made absolute."""
    assert str(loader.find_scheme("nosuchfolder/strassen")) == "nosuchfolder/strassen"


def test_a_shipped_definition_is_another_input_than_its_file():
    """strassen_x_strassen and msmes2: one file, two inputs (without ``definition`` in ``__eq__``: equal)."""
    found, file = loader.find_scheme("strassen_x_strassen"), loader.find_scheme("msmes2")
    assert (found.definition, type(file) is type(Path()), Path(found) == file) == ("strassen_x_strassen", True, True)
    assert found != file and file != found and found == loader.find_scheme("strassen_x_strassen")
