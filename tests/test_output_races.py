"""Outputs written while something else changes the target, or while a signal arrives (a hunt).

Every command checks its targets before the work; these are the checks made again as the files are
written.  Before: a file made at `-o FILE.bl` while optimize ran was replaced without --force (two
transforms into one file both said "wrote"); six separate renames let a compile --force cut short leave
a manifest that named another library's files; a SIGTERM between PLinOpt's three renames left a mix of
old and new files; bench's plot was written by savefig into the target itself (through a link made
there meanwhile, and truncated when cut short), and its --json replaced a file made there meanwhile.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal

import pytest

from bilinear.bench_outputs import WRITTEN_BY, write_results
from bilinear.cli import main
from bilinear.diagnostics import BilinearError
from bilinear.output import write_together


def test_a_file_made_since_the_check_is_kept_without_force(tmp_path):
    target = tmp_path / "t.bl"
    target.write_text("the user's")
    with pytest.raises(BilinearError, match=f"^{target} was created while this ran; nothing written over it "
                                            r"\(--force replaces it\)$"):
        write_together({target: "new"}, replace=False)
    assert target.read_text() == "the user's" and os.listdir(tmp_path) == ["t.bl"]  # no temporary left
    write_together({target: "new"}, replace=True)
    assert target.read_text() == "new"


def test_a_command_keeps_a_file_made_at_its_output_while_it_ran(tmp_path, monkeypatch, capsys):
    """The check before the work is skipped here, as if the file had come after it."""
    target = tmp_path / "t.bl"
    target.write_text("the user's")
    monkeypatch.setattr("bilinear.compose_cli.check_bl_output", lambda args, *inputs: None)
    assert main(["transform", "strassen", "--to", "nmk", "-o", str(target)]) == 1
    assert "was created while this ran" in capsys.readouterr().err
    assert target.read_text() == "the user's"
    assert main(["transform", "strassen", "--to", "nmk", "-o", str(target), "--force"]) == 0
    assert target.read_text().startswith("#")


def test_a_signal_during_the_renames_waits_until_every_file_is_in_place(tmp_path, monkeypatch):
    class Stopped(Exception):
        pass

    def stop(number, frame):
        raise Stopped

    renamed = []
    real_replace = os.replace

    def replace_then_signal(source, target):
        real_replace(source, target)
        renamed.append(target)
        if len(renamed) == 1:
            os.kill(os.getpid(), signal.SIGTERM)  # held until the loop ends

    files = {tmp_path / f"{name}.sms": name for name in "LRP"}
    for path in files:
        path.write_text("old")
    monkeypatch.setattr(os, "replace", replace_then_signal)
    before = signal.signal(signal.SIGTERM, stop)
    try:
        with pytest.raises(Stopped):
            write_together(files)
    finally:
        signal.signal(signal.SIGTERM, before)
    assert [path.read_text() for path in files] == ["L", "R", "P"]


def _digests(folder):
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(folder.iterdir())}


def test_a_compile_force_that_fails_writing_leaves_the_earlier_library_whole(tmp_path, monkeypatch, capsys):
    out = tmp_path / "lib"
    assert main(["compile", "strassen", "-o", str(out)]) == 0
    before = _digests(out)
    import bilinear.output as output

    written = []
    real_copy = output._temporary_copy

    def fourth_fails(path, data):
        written.append(path)
        if len(written) == 4:
            raise BilinearError(output.Diagnostic(f"cannot write {path}: No space left on device"))
        return real_copy(path, data)

    monkeypatch.setattr(output, "_temporary_copy", fourth_fails)
    assert main(["compile", "strassen", "--levels", "3", "-o", str(out), "--force"]) == 1
    assert "No space left on device" in capsys.readouterr().err
    assert _digests(out) == before  # the manifest still describes the library beside it


@pytest.mark.parametrize("signal_at", ["rename", "removal"])
def test_ctrl_c_during_a_compile_force_over_another_library_leaves_the_new_one_whole(tmp_path, monkeypatch, capsys,
                                                                                    signal_at, ctrl_c_as_at_a_terminal):
    """The signal held through the renames was raised inside the block that removes what a failed compile
    made: the new .cu and .h went, the new manifest stayed beside the old library's (a hunt).  It also
    reached the removal of the earlier library, after the renames, with its files left stale."""
    out = tmp_path / "lib"
    assert main(["compile", "msmes", "-o", str(out)]) == 0
    capsys.readouterr()
    real_replace, real_unlink = os.replace, os.unlink

    def signalled(real, trigger):
        def call(path, *rest, **kwargs):
            real(path, *rest, **kwargs)
            if trigger(path):
                os.kill(os.getpid(), signal.SIGINT)
        return call

    if signal_at == "rename":
        monkeypatch.setattr(os, "replace", signalled(real_replace, lambda path: True))
    else:
        monkeypatch.setattr(os, "unlink", signalled(real_unlink, lambda path: str(path).endswith("msmes.cu")))
    assert main(["compile", "grey333", "-o", str(out), "--force"]) == 130
    assert "interrupted" in capsys.readouterr().err
    monkeypatch.undo()
    assert sorted(path.name for path in out.iterdir()) == ["grey333.cu", "grey333.h", "manifest.json", "report.json",
                                                           "report.md", "report.txt"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["name"] == "grey333" and all((out / name).is_file() for name in manifest["files"])


def test_bench_results_are_checked_again_as_they_are_written(tmp_path):
    target = tmp_path / "r.json"
    target.write_text('{"my": "precious data"}')
    with pytest.raises(BilinearError, match="holds no results bilinear bench wrote"):
        write_results(target, json.dumps({"written_by": WRITTEN_BY, "results": []}))
    assert target.read_text() == '{"my": "precious data"}'


def test_bench_plot_is_checked_again_and_never_written_through_a_link(tmp_path):
    pytest.importorskip("matplotlib")
    from bilinear.bench import BenchResult, plot

    row = BenchResult("s0", "s0.bl", 1, "cublas", "float64", 64, 64, 64, 1.0, 1.0, 1.0, 0.5, 0.5, 0, 1e-16, 1e-16, 1.0)
    victim = tmp_path / "victim.txt"
    victim.write_text("victim contents")
    picture = tmp_path / "p.png"
    picture.symlink_to(victim)
    with pytest.raises(BilinearError, match="is a symbolic link; refusing to write through it"):
        plot([row], picture)
    assert victim.read_text() == "victim contents"
    picture.unlink()
    plot([row], picture)
    assert WRITTEN_BY.encode() in picture.read_bytes() and sorted(os.listdir(tmp_path)) == ["p.png", "victim.txt"]
