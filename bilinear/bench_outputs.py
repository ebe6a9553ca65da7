"""What ``bench`` writes (``--json``, ``--plot``): results and plots marked as bench's, which replace only
bench's own, checked before the timings and again as they are written (a file put there while the
timings ran had been replaced), and a plot rendered whole before it is renamed into place (savefig
had written the target itself: cut short, the earlier plot was lost)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from .diagnostics import BilinearError, Diagnostic
from .output import check_target, write_atomic


def _refuse(message: str) -> BilinearError:
    return BilinearError(Diagnostic(message))


#: ``--json -``: the results go to standard output (and what else a command prints, to standard error).
STDOUT = Path("-")


def write_results(path: Path, text: str) -> None:
    """A results document to ``path``, or to standard output where ``path`` is :data:`STDOUT`."""
    if path == STDOUT:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    else:
        check_results_target(path, "--json")  # again: a file may have been put there while the timings ran
        write_atomic(path, text)


#: What bench writes into its results and plots, so that it replaces its own and nothing else: an
#: object with "results" (hyperfine's --export-json is one too) or a matplotlib plot (a paper's
#: figure may be one) is not enough.
WRITTEN_BY = "bilinear bench"


def check_results_target(path: Path, option: str) -> None:
    """Refuse a results file (``bench --json``) that may not be written: through a link, or over a
    file that is neither empty nor results bench wrote (an object, or the distributed bench's list of
    rows, marked ``"written_by": WRITTEN_BY``): bench replaces its own results, nothing else."""
    if path == STDOUT:
        return
    check_target(path, force=True)
    if path.is_symlink():  # the rename would replace the link (as root, --json /dev/stdout replaced the system's)
        raise _refuse(f"{option} {path} is a symbolic link; refusing to write through it (--json - writes to standard "
                      "output)")
    if path.is_file() and path.stat().st_size:
        try:
            earlier = json.loads(path.read_bytes())
        except (ValueError, OSError, RecursionError):  # nested past the parser's depth: not bench's
            earlier = None
        rows = earlier if isinstance(earlier, list) and earlier else [earlier]
        if not all(isinstance(row, dict) and (row.get("written_by") == WRITTEN_BY or _unmarked_bench(row)) for row in rows):
            raise _refuse(f"{option} {path} exists and holds no results bilinear bench wrote (they say \"written_by\": "
                          f"\"{WRITTEN_BY}\"); choose another name or remove it")


def _unmarked_bench(row: dict) -> bool:
    """Results bench wrote before it marked them: its document's two keys exactly, or a row of the
    distributed bench with its own fields (another tool's ``{"results": ...}`` has neither)."""
    return set(row) == {"ceilings", "results"} or {"dims", "ranks", "plan", "one_gpu_seconds", "speedup"} <= set(row)


#: The metadata key that carries WRITTEN_BY, as plain text, in each format matplotlib writes with
#: metadata (a JPEG, TIFF, WebP or GIF carries no mark, so one of the same name is never replaced).
PLOT_MARKS = {".png": "Software", ".pdf": "Creator", ".svg": "Creator", ".eps": "Creator", ".ps": "Creator"}


def plot_metadata(path: Path) -> dict[str, dict[str, str]]:
    """``savefig``'s metadata argument that marks ``path``'s plot as bench's, or none for unmarked
    formats: Pillow's writers refuse any metadata, and pgf's refuses even ``metadata=None``."""
    key = PLOT_MARKS.get(path.suffix.lower())
    return {"metadata": {key: WRITTEN_BY}} if key else {}


def check_plot_target(path: Path, option: str) -> None:
    """Refuse a plot file (``bench --plot``) that may not be written: a link (matplotlib would write
    through it), or a file that is neither empty nor a plot bench wrote (its PNG, PDF, SVG, EPS and PS
    carry WRITTEN_BY in their metadata)."""
    check_target(path, force=True)
    if path.is_symlink():
        raise _refuse(f"{option} {path} is a symbolic link; refusing to write through it")
    if path.is_file() and path.stat().st_size:
        marked = ", ".join(PLOT_MARKS)
        if not plot_metadata(path):  # bench's own plot, maybe: nothing to tell it by
            raise _refuse(f"{option} {path} exists, and {path.suffix.lower() or 'such'} files carry no mark to tell "
                          f"bench's plots by: choose another name, remove it, or plot to {marked} (bench replaces its own)")
        with path.open("rb") as stream:
            if WRITTEN_BY.encode() not in stream.read(1 << 24):
                raise _refuse(f"{option} {path} exists and is no plot bench wrote (its {marked} plots say "
                              f"\"{WRITTEN_BY}\"); choose another name or remove it")


def write_plot(figure, path: Path, option: str = "--plot", **savefig) -> None:
    """``figure`` (a matplotlib Figure) saved to ``path`` in its suffix's format, marked as bench's,
    once the target is checked again."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format=path.suffix[1:].lower(), **savefig, **plot_metadata(path))
    check_plot_target(path, option)
    write_atomic(path, buffer.getvalue())
