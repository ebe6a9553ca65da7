"""Writing files for the user: nothing overwritten unless asked, never through a link, atomically.

``compile -o DIR``, ``import -o FILE`` and ``bench --json/--plot`` (whose own
checks are in :mod:`bilinear.bench_outputs`) check every path they will write
*before* doing any work, so a mistake costs nothing:

- an existing file is replaced only with ``force`` (``--force``);
- a symbolic link is never written through: with ``force`` the link itself is
  replaced, so nothing outside the output folder changes;
- a path that exists but is not a regular file (a folder, ``/dev/null``, a
  FIFO) is refused, force or not;
- each file is written to a temporary name beside it and renamed into place,
  so a reader never sees half a file and a failed write leaves the old one;
  without ``force`` the rename takes only a path still free, so a file made
  there while the work ran is kept;
- a name longer than the file system takes is refused with the others, and a
  compile that fails while writing removes the files and folders it made.
"""

from __future__ import annotations

import errno
import math
import os
import stat
import tempfile
from collections.abc import Iterable
from contextlib import contextmanager, suppress
from pathlib import Path

from .diagnostics import BilinearError, Diagnostic, brief, listed
from .processes import stops_held


def _refuse(message: str, *notes: str) -> BilinearError:
    return BilinearError(Diagnostic(message, notes=notes))


def check_target(path: Path, force: bool, protect: tuple[Path, ...] = ()) -> None:
    """Raise a BilinearError unless ``path`` may be written (see the module docstring).

    ``protect`` lists inputs the command reads: replacing one needs ``force`` too,
    and the message says which input it is.
    """
    parent = path.parent
    if not parent.is_dir():
        what = "does not exist" if not parent.exists() else "is not a folder"
        raise _refuse(f"cannot write {path}: {parent} {what}")
    problem = _cannot_create_in(parent)
    if problem:
        raise _refuse(f"cannot write {path}: {problem}")
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as error:
        raise _refuse(f"cannot write {path}: {error.strerror or error}") from None
    if stat.S_ISLNK(info.st_mode):
        if not force:
            raise _refuse(
                f"{path} is a symbolic link; refusing to write through it",
                "--force replaces the link itself (never the file it points to)",
            )
        return
    if not stat.S_ISREG(info.st_mode):
        raise _refuse(f"{path} exists and is not a regular file; choose another output")
    if not force:
        inputs = [p for p in protect if _same_file(p, path)]
        what = f"is the input file {inputs[0]}" if inputs else "exists"
        raise _refuse(f"{path} {what}; refusing to overwrite it", "pass --force to replace it")


def _cannot_create_in(folder: Path) -> str | None:
    """Why no file can be created in ``folder`` (None when one can): found by creating and removing
    one, since permission bits do not tell for root, read-only mounts or /proc."""
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".bilinear-probe.")
    except OSError as error:
        # creating in a folder that is there fails with ENOENT where it takes no new files (/proc)
        why = "it takes no new files" if error.errno == errno.ENOENT and folder.is_dir() else error.strerror or error
        return f"{folder} cannot be written ({why})"
    os.close(fd)
    os.unlink(probe)
    return None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def same_place(a: Path, b: Path) -> bool:
    """Whether two paths name one file, whether or not it exists yet: ``sub/../r.png`` and ``r.png``,
    or a name through a link to its folder."""
    return _same_file(a, b) or a.resolve() == b.resolve()


def check_folder(folder: Path, names: list[str], force: bool, files: bool = True) -> list[Path]:
    """Check that ``folder`` is or can become a folder and every file to be written in it may be
    written (without ``files``, not whether files already there may be replaced); returns their paths.
    Creates nothing (:func:`make_folder` does, when writing)."""
    # os.path.exists, not Path.exists: a name too long for the file system is not there, not an error
    if os.path.exists(folder) and not folder.is_dir():
        raise _refuse(f"{folder} exists and is not a folder; -o names the output folder")
    ancestor = folder
    while not os.path.exists(ancestor) and ancestor != ancestor.parent:
        _refuse_dangling_link(ancestor, folder)
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise _refuse(f"cannot create the output folder {folder}: {ancestor} is not a folder")
    problem = _cannot_create_in(ancestor)
    if problem:
        raise _refuse(f"cannot write {folder}: {problem}")
    targets = [folder / name for name in names]
    missing = [folder, *folder.parents][:len(folder.relative_to(ancestor).parts)]  # the folders to make
    # the files first: compile's are named after the scheme (and so is its default folder)
    _check_name_lengths([*targets, *missing], _longest_name(ancestor))
    if not files or not folder.is_dir():
        return targets
    # An earlier run's files are said in one message (it had been one each); anything else, each as it is.
    earlier = [target for target in targets if not force and _regular_file(target)]
    said_together = earlier if len(earlier) > 1 else []
    problems = []
    for target in targets:
        if target not in said_together:
            try:
                check_target(target, force)
            except BilinearError as error:
                problems.extend(error.diagnostics)
    if said_together:
        problems.append(Diagnostic(f"{folder} already holds {listed(target.name for target in said_together)}; "
                                   "refusing to overwrite them", notes=("pass --force to replace them",)))
    if problems:
        raise BilinearError(*problems)
    return targets


def _regular_file(path: Path) -> bool:
    """A regular file at ``path`` itself (a link to one is not)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _refuse_dangling_link(path: Path, folder: Path) -> None:
    """Refuse ``folder`` where ``path`` (it or a folder above it, not there) is a link to nothing: mkdir
    said "File exists", and making the folder it points to would write through it."""
    if not os.path.islink(path):
        return
    note = "compile makes no folder through a link (--force neither)"
    try:
        os.path.realpath(path, strict=True)
    except FileNotFoundError:  # the end of the links (through a chain of them too) is missing: name it
        end = os.path.realpath(path)
        raise _refuse(f"cannot create the output folder {folder}: {path} is a symbolic link that leads to {end}, which "
                      "does not exist", f"{note}: create {end}, or choose another -o") from None
    except OSError:  # ELOOP
        raise _refuse(f"cannot create the output folder {folder}: {path} is a symbolic link in a loop of links, which "
                      "leads to no folder", f"{note}: choose another -o") from None


def _longest_name(folder: Path) -> int:
    """The most bytes a file name may have in ``folder``'s file system (255, Linux's, where it does not say)."""
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # AttributeError: no pathconf (Windows)
        return 255


def _check_name_lengths(paths: list[Path], most: int) -> None:
    """Refuse the first of ``paths`` whose name is longer than ``most`` bytes: writing it would fail
    ("File name too long") after the work, and the 300 characters of a valid .bl name did."""
    for path in paths:
        size = len(os.fsencode(path.name))
        if size > most:
            shown = Path(*(brief(part) for part in path.parts))  # a long folder name (build/NAME) is cut short too
            raise _refuse(f"cannot write {shown}: its name has {size} bytes, more than the {most} a file name may "
                          "have here")


@contextmanager
def removed_on_failure(folder: Path, names: list[str]):
    """Run the block that writes ``names`` into ``folder``; if it fails, remove those of them that
    were not there before and the folders made for them (a failed compile had left an empty folder).
    A file replaced with --force is not brought back: each is replaced atomically, by rename."""
    made = [f for f in (folder, *folder.parents) if not os.path.exists(f)]  # deepest first
    new = [folder / name for name in names if not os.path.lexists(folder / name)]
    try:
        yield
    except BaseException:  # Ctrl-C too: nothing half-written is left
        if all(os.path.lexists(folder / name) for name in names):
            # every file in place: the renames (:func:`write_together`) were done, and a Ctrl-C they held
            # back is raised after them; removing the new files then left the new manifest beside the old library
            raise
        for path in new:
            path.unlink(missing_ok=True)
        for each in made:
            try:
                each.rmdir()
            except OSError:  # not empty (something else was put there) or already gone: kept
                pass
        raise


@contextmanager
def writing_into(folder: Path, names: list[str], force: bool):
    """Run the block that writes ``names`` into ``folder`` as its one writer: a second process writing
    into it waits, then checks again (two compiles into one new folder had both said "wrote", and one's
    .cu sat beside the other's manifest).  On failure, what :func:`removed_on_failure` removes, and the
    folders made for it.

    Raises:
        BilinearError: where the folder now holds files that may not be replaced (without --force).
    """
    made = [f for f in (folder, *folder.parents) if not os.path.exists(f)]  # deepest first
    make_folder(folder)
    try:
        with held(folder):
            check_folder(folder, names, force)  # another writer may have finished since the first check
            with removed_on_failure(folder, names):
                yield
    except BaseException:
        for each in made:
            try:
                each.rmdir()
            except OSError:  # not empty, or already gone: kept
                pass
        raise


@contextmanager
def held(folder: Path):
    """An exclusive lock on an existing folder while the block runs (released at its end, or when the
    process ends): another bilinear writing into it waits.  None where the file system or the
    platform has none (NFS takes flock on files opened for writing only, Lustre may not take it at
    all), or where the folder may be written but not read (mode 333): the block runs unlocked."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except PermissionError:
        yield
        return
    try:
        with suppress(ImportError, OSError):
            import fcntl
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)


def make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise _refuse(f"cannot create the output folder {folder}: {error.strerror or error}") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: Path, data: str | bytes, replace: bool = True) -> None:
    """Write ``data`` to a temporary file beside ``path`` and rename it over ``path``; BilinearError
    where the file cannot be written (the disk is full, permissions).  ``replace=False`` (no --force):
    a file put at ``path`` since it was checked is kept, and refused."""
    write_together({path: data}, replace)


def encoded(text: str) -> bytes:
    """``text`` as this module writes it: UTF-8, a file name that is not UTF-8 (held as surrogates), quoted in a
    header, in backslash escapes (what a size check before writing must count)."""
    return text.encode("utf-8", "backslashreplace")


def _temporary_copy(path: Path, data: str | bytes) -> str:
    """A temporary file beside ``path`` holding ``data`` (with the permissions a new file gets)."""
    try:
        # the name cut short: a name near the file system's limit had no room for ".NAME.XXXXXXXX.tmp"
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:64]}.", suffix=".tmp")
    except OSError as error:  # the folder changed since it was checked
        raise _refuse(f"cannot write {path}: {error.strerror or error}") from None
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(encoded(data) if isinstance(data, str) else data)
        os.chmod(temporary, 0o666 & ~_umask())
    except BaseException as error:  # Ctrl-C or SIGTERM halfway through too: no temporary is left
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise _refuse(f"cannot write {path}: {error.strerror or error}") from None
        raise
    return temporary


def write_together(files: dict[Path, str | bytes], replace: bool = True, removing: Iterable[Path] = ()) -> None:
    """Write every file, each to a temporary file beside it first and then renamed over its path: where
    writing one fails (a disk filling up on the second of PLinOpt's three files had left the first), no
    path has changed, and Ctrl-C or SIGTERM waits for the renames (one between them had left a mix of old
    and new files).  ``replace=False``: each path must still be free, as it was when checked (a file
    made there during the run had been replaced without --force); a rename failing part way (rare: the
    temporaries are written by then) leaves the files renamed before it.  ``removing``: files the new ones
    replace under other names (an earlier library's .cu and .h), removed after the renames, as they are.

    Raises:
        BilinearError: when a file cannot be written or renamed into place.
    """
    temporaries: list[tuple[str, Path]] = []
    try:
        for path, data in files.items():
            temporaries.append((_temporary_copy(path, data), path))
        with stops_held():
            for temporary, path in temporaries:
                _place(temporary, path, replace)
            for path in removing:
                path.unlink(missing_ok=True)
    finally:
        for temporary, _ in temporaries:
            Path(temporary).unlink(missing_ok=True)


def _place(temporary: str, path: Path, replace: bool) -> None:
    """Rename ``temporary`` to ``path``: over what is there, or (``replace=False``) only where nothing is."""
    taken = _refuse(f"{path} was created while this ran; nothing written over it (--force replaces it)")
    try:
        if replace:
            os.replace(temporary, path)
            return
        try:
            os.link(temporary, path)  # fails where anything is at path, atomically
        except FileExistsError:
            raise taken from None
        except OSError:  # a file system without hard links: checked, then renamed
            if os.path.lexists(path):
                raise taken from None
            os.replace(temporary, path)
    except OSError as error:
        raise _refuse(f"cannot write {path}: {error.strerror or error}") from None


def input_among(path: Path, inputs) -> Path | None:
    """The input (one of ``inputs``) that ``path`` is, if any: an output there would destroy it."""
    return next((Path(given) for given in inputs if _same_file(Path(given), path)), None)


def json_ready(value):
    """``value`` with every non-finite float as None (JSON's null): NaN and Infinity are not JSON, and
    strict readers (JavaScript, serde, Python's ``parse_constant``) refuse them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    return value
