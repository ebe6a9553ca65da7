"""The command line where its streams, signals, file names and encodings are not the usual ones
(found by a hunt in session 62): a closed stderr, a hang-up, a file name that is not UTF-8, a
UTF-16 file, a very long bad token."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from conftest import ROOT
from helpers.cli import run_cli

import bilinear
from bilinear.frontend.encoding import lenient_text
from bilinear.diagnostics import BilinearError
from bilinear.frontend.importers import FORMATS

STRASSEN = ROOT / "algorithms" / "strassen.bl"


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file systems refuse names that are not UTF-8")
@pytest.mark.parametrize("command", [["import"], ["transform", "--to", "nkm"], ["optimize"]])
def test_a_file_name_that_is_not_utf8_is_written_about_not_refused(capsys, tmp_path, command):
    """`bilinear import $'\\xff.bl' -o out.bl` said "'utf-8' codec can't encode character '\\udcff'": the
    name, quoted in the header the command writes, could not be encoded (verify and run read it)."""
    source = tmp_path / os.fsdecode(b"\xff.bl")
    source.write_bytes(STRASSEN.read_bytes())
    out = tmp_path / "out.bl"
    code, _, err = run_cli(capsys, command[0], source, *command[1:], "-o", out)
    assert code == 0, err
    assert bilinear.load(out).algorithms  # what it wrote reads back


def test_with_stderr_closed_the_json_on_stdout_stays_json():
    """`bilinear verify nothere.bl --format json 2>&-` printed the JSON and then the error after it on
    stdout: Python sets a closed stderr to None, and print(file=None) writes to stdout."""
    done = subprocess.run(f"{sys.executable} -m bilinear.cli verify nothere.bl --format json 2>&-", shell=True,
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 1
    assert json.loads(done.stdout)["ok"] is False  # the whole of stdout is the JSON


@pytest.fixture
def hung_up_while_writing(monkeypatch):
    """SIGHUP to this process as the first file is written, with SIGHUP's disposition at the start set by the
    test (``start(disposition)``) and put back after it."""
    from bilinear import output

    real_fdopen = output.os.fdopen

    def hung_up(fd, mode):
        os.kill(os.getpid(), signal.SIGHUP)
        return real_fdopen(fd, mode)

    monkeypatch.setattr(output.os, "fdopen", hung_up)
    before = signal.getsignal(signal.SIGHUP)
    yield lambda disposition: signal.signal(signal.SIGHUP, disposition)
    signal.signal(signal.SIGHUP, before)


def test_a_hang_up_while_writing_leaves_nothing_behind(capsys, tmp_path, hung_up_while_writing):
    """SIGHUP (a terminal or an SSH session closed) had no handler: `compile -o` left an empty folder, where
    Ctrl-C and SIGTERM remove what was being written."""
    # as a terminal's session starts it (a test run under nohup, as CI's may be, starts with SIGHUP ignored)
    hung_up_while_writing(signal.SIG_DFL)
    out = tmp_path / "lib"
    code, _, err = run_cli(capsys, "compile", STRASSEN, "-o", out)
    assert (code, err.strip()) == (129, "bilinear: hung up")
    assert not out.exists() and not list(tmp_path.iterdir())
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL  # main puts the handler back


@pytest.mark.parametrize("bom, codec", [(b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")])
def test_a_utf16_file_with_its_byte_order_mark_reads(tmp_path, bom, codec):
    """PowerShell 5's `>` writes UTF-16 with a byte order mark: it was "a binary file, not .bl text"."""
    path = tmp_path / "u16.bl"
    path.write_bytes(bom + STRASSEN.read_text().encode(codec))
    read, shipped = (bilinear.load(p).algorithm("strassen") for p in (path, STRASSEN))
    assert [(p.name, p.left, p.right) for p in read.products] == [(p.name, p.left, p.right) for p in shipped.products]
    assert bilinear.verify(path).ok


@pytest.mark.parametrize("bom, codec", [(b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be")])
def test_a_utf32_file_with_its_byte_order_mark_reads(tmp_path, bom, codec):
    """It was "a binary file" that "begins with a UTF-16 byte order mark, but is not UTF-16 text" (a hunt):
    UTF-32 with its mark reads as UTF-16 does, for .bl files and the catalogue formats' sniffing and headers."""
    path = tmp_path / "u32.bl"
    path.write_bytes(bom + STRASSEN.read_text().encode(codec))
    read, shipped = (bilinear.load(p).algorithm("strassen") for p in (path, STRASSEN))
    assert [(p.name, p.left, p.right) for p in read.products] == [(p.name, p.left, p.right) for p in shipped.products]
    assert lenient_text(path.read_bytes()) == STRASSEN.read_text()


def test_a_file_with_a_utf32_mark_that_is_not_utf32_says_so(tmp_path):
    path = tmp_path / "odd32.bl"
    path.write_bytes(b"\xff\xfe\x00\x00" + "algorithm".encode("utf-32-le") + b"\n")
    with pytest.raises(BilinearError) as caught:
        bilinear.load(path)
    assert caught.value.diagnostics[0].notes == ("it begins with a UTF-32 byte order mark, but is not UTF-32 text",)


def test_a_file_with_a_utf16_mark_that_is_not_utf16_is_still_binary(tmp_path):
    path = tmp_path / "odd.bl"
    path.write_bytes(b"\xff\xfe\x00\xd8")  # a lone surrogate: not UTF-16 text
    with pytest.raises(BilinearError) as caught:
        bilinear.load(path)
    assert [d.message for d in caught.value.diagnostics] == [f"{path} is a binary file, not .bl text"]


def test_a_very_long_bad_token_is_quoted_cut_short(tmp_path):
    """A 5,000-character name was echoed whole in the message (a 60 MB one made a 60 MB message)."""
    path = tmp_path / "long.bl"
    name = "x" * 5000
    path.write_text(f"algorithm s <1,1,1;1>:\n  M1 = A11 * B11 {name}\n  C11 = M1\n")
    with pytest.raises(BilinearError) as caught:
        bilinear.load(path)
    (message,) = [d.message for d in caught.value.diagnostics]
    assert message.startswith("unexpected '" + "x" * 40 + "…' (a token of 5000 characters); expected ")
    assert len(message) < 200


@pytest.mark.parametrize("line", ["  C11 = M1 + {name}", "  {name} = A11 * B11"], ids=["used", "defined"])
def test_a_name_too_long_is_refused_with_its_beginning_quoted(tmp_path, line):
    """A 5000-character name was quoted whole by every check that met it ("... is not defined"): one
    message per use, each as long as the name."""
    path = tmp_path / "long.bl"
    name = "x" * 5000
    path.write_text("algorithm s <1,1,1;1>:\n  M1 = A11 * B11\n" + line.format(name=name) + "\n  C11 = M1\n")
    with pytest.raises(BilinearError) as caught:
        bilinear.load(path)
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.message == ("a name of 5000 characters, where a name has at most 255: '" + "x" * 40 + "…'")
    assert diagnostic.span.line == 3


def test_a_name_of_the_longest_length_is_read(tmp_path):
    path = tmp_path / "long.bl"
    name = "M" + "x" * 254
    path.write_text(f"algorithm s <1,1,1;1>:\n  {name} = A11 * B11\n  C11 = {name}\n")
    assert bilinear.load(path).main.products[0].name == name


def test_the_signal_handlers_are_the_callers_after_main(capsys):
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    run_cli(capsys, "list")
    assert {s: signal.getsignal(s) for s in before} == before



@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX's")
def test_under_nohup_a_hang_up_is_still_ignored(capsys, tmp_path, hung_up_while_writing):
    """`nohup bilinear ...` ignores SIGHUP, and the command line's new handler had taken it back: a hang-up
    ended the command it was meant to outlive (a review)."""
    hung_up_while_writing(signal.SIG_IGN)
    code, _, err = run_cli(capsys, "compile", STRASSEN, "-o", tmp_path / "lib")
    assert code == 0 and (tmp_path / "lib").is_dir(), err
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN


WORKERS_UNDER_NOHUP = """
import signal
from bilinear import processes

def handler(_):
    return int(signal.getsignal(signal.SIGHUP))

signal.signal(signal.SIGHUP, signal.SIG_IGN)
print(processes.mapped(handler, [1, 2], workers=2, context="{context}"))
"""


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX's")
@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_workers_under_nohup_keep_ignoring_a_hang_up(context, tmp_path):
    (tmp_path / "nohup_workers.py").write_text(WORKERS_UNDER_NOHUP.format(context=context))
    done = subprocess.run([sys.executable, "nohup_workers.py"], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout.strip() == f"[{int(signal.SIG_IGN)}, {int(signal.SIG_IGN)}]", done.stdout + done.stderr


def test_a_utf16_files_header_comments_are_kept_in_what_is_written_from_it(capsys, tmp_path):
    """transform of a UTF-16 file dropped its leading comments (provenance, licence): the header was read as
    UTF-8 apart from the reader (a review)."""
    path = tmp_path / "u16.bl"
    path.write_bytes(b"\xff\xfe" + STRASSEN.read_text().encode("utf-16-le"))
    out = tmp_path / "out.bl"
    code, _, err = run_cli(capsys, "transform", path, "--to", "nkm", "-o", out)
    assert code == 0, err
    comments = [line for line in STRASSEN.read_text().splitlines() if line.startswith("#")]
    written = out.read_text()
    assert comments and all(f"# {line[1:].strip()}" in written for line in comments), written


def test_a_utf16_bl_file_under_another_suffix_is_sniffed_as_bl(tmp_path):
    """A .bl file saved as .txt is told apart from Perminov's text by its first statement; in UTF-16 it was
    sniffed as UTF-8, read as Perminov's text, and refused for "'algorithm' is not a rational coefficient"
    (a review)."""
    from bilinear.frontend.importers import detect_format

    def said(path):
        with pytest.raises(BilinearError) as caught:
            detect_format(path)
        return [d.message.replace(path.name, "FILE") for d in caught.value.diagnostics]

    utf16, utf8 = tmp_path / "s16.txt", tmp_path / "s8.txt"
    utf16.write_bytes(b"\xff\xfe" + STRASSEN.read_text().encode("utf-16-le"))
    utf8.write_text(STRASSEN.read_text())
    assert said(utf16) == said(utf8)
    assert said(utf8)[0].startswith("FILE could be bl or perminov-text (its suffix says perminov-text, its text reads as .bl)")


def test_a_binary_file_of_no_known_suffix_is_not_called_bl_text(tmp_path, capsys):
    """A file that no suffix or --from names as .bl was refused as "a binary file, not .bl text" (a hunt)."""
    path = tmp_path / "garbage"
    path.write_bytes(b"\x13\x88\x00\x01" * 64)
    with pytest.raises(BilinearError) as caught:
        bilinear.load(path)
    (error,) = caught.value.diagnostics
    assert error.message == (f"{path} is a binary file, not a scheme in a format bilinear reads (bl, "
                             f"{', '.join(FORMATS)}: text, or a zip archive for alphatensor)")


def test_a_file_that_begins_as_utf16_but_is_not_says_so(tmp_path):
    path = tmp_path / "odd16.bl"
    path.write_bytes(b"\xff\xfe" + "algorithm".encode("utf-16-le") + b"\n")  # a stray byte after the text
    with pytest.raises(BilinearError) as caught:
        bilinear.load(path)
    (error,) = caught.value.diagnostics
    assert error.message == f"{path} is a binary file, not .bl text"
    assert error.notes == ("it begins with a UTF-16 byte order mark, but is not UTF-16 text",)


def test_importing_the_package_loads_nothing_a_ctrl_c_could_interrupt():
    """The command line's handlers exist once bilinear.__main__ runs; `import bilinear` before it had
    loaded the verify package eagerly (0.13 s, the IR and dataclasses), and a Ctrl-C then printed a
    traceback.  bilinear.verify stays the function after the subpackage loads, and BilinearError is there."""
    code = ("import sys, bilinear; loaded = sorted(m for m in sys.modules if m.startswith('bilinear.')); "
            "import bilinear.verify.algorithm, bilinear.verify.rings; from bilinear import BilinearError; "
            "print(loaded, callable(bilinear.verify) and bilinear.verify.__module__ == 'bilinear', "
            "BilinearError.__module__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[]", "True", "bilinear.diagnostics"], done.stdout
