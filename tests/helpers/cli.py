"""Running the ``bilinear`` command in-process, as a test sees it."""

from __future__ import annotations

from bilinear.cli import main


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of one command (argparse's usage errors included); an
    escaping exception, or a traceback printed, fails the test."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exit_:  # argparse's usage errors
        code = exit_.code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err
