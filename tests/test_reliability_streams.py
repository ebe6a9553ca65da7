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
from bilinear.diagnostics import BilinearError

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


def test_a_hang_up_while_writing_leaves_nothing_behind(capsys, tmp_path, monkeypatch):
    """SIGHUP (a terminal or an SSH session closed) had no handler: `compile -o` left an empty folder, where
    Ctrl-C and SIGTERM remove what was being written."""
    from bilinear import output

    real_fdopen = output.os.fdopen

    def hung_up(fd, mode):
        os.kill(os.getpid(), signal.SIGHUP)
        return real_fdopen(fd, mode)

    monkeypatch.setattr(output.os, "fdopen", hung_up)
    before = signal.getsignal(signal.SIGHUP)
    out = tmp_path / "lib"
    code, _, err = run_cli(capsys, "compile", STRASSEN, "-o", out)
    assert (code, err.strip()) == (129, "bilinear: hung up")
    assert not out.exists() and not list(tmp_path.iterdir())
    assert signal.getsignal(signal.SIGHUP) == before  # main puts the handler back


@pytest.mark.parametrize("bom, codec", [(b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")])
def test_a_utf16_file_with_its_byte_order_mark_reads(tmp_path, bom, codec):
    """PowerShell 5's `>` writes UTF-16 with a byte order mark: it was "a binary file, not .bl text"."""
    path = tmp_path / "u16.bl"
    path.write_bytes(bom + STRASSEN.read_text().encode(codec))
    read, shipped = (bilinear.load(p).algorithm("strassen") for p in (path, STRASSEN))
    assert [(p.name, p.left, p.right) for p in read.products] == [(p.name, p.left, p.right) for p in shipped.products]
    assert bilinear.verify(path).ok


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
    assert message.startswith("unexpected '" + "x" * 40 + "…' (a name of 5000 characters); expected ")
    assert len(message) < 200


def test_the_signal_handlers_are_the_callers_after_main(capsys):
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    run_cli(capsys, "list")
    assert {s: signal.getsignal(s) for s in before} == before

