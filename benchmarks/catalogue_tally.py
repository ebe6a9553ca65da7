"""Tally every file of the public scheme catalogues: loaded, verified, correctly refused, failed.

    python benchmarks/catalogue_tally.py ROOT [--only kauers flips ...] [--files LIST] [--jobs 2] [--timeout 120] [--json F]

ROOT holds the fetched repositories, one folder per repository named
``owner+name`` (mkauers+matrix-multiplication, jakobmoosbauer+flips,
arbenson+fast-matmul, jgdumas+plinopt, google-deepmind+alphatensor,
dronperminov+FastMatrixMultiplication) and ``alphaevolve/`` with the
AlphaEvolve decompositions saved as ``.npz`` (``--alphaevolve NOTEBOOK``
writes it from google-deepmind/alphaevolve_results' notebook).  A folder named
by the catalogue's short name (kauers, flips, fast-matmul, plinopt,
alphatensor: ``../shared/schemes``' layout) is read where the repository's is
absent.

Every file goes through :func:`bilinear.frontend.importers.read_catalogue`
with its format detected, as ``bilinear verify FILE`` would read it, and then:

- an exact scheme (or one in an alternative basis) is checked with the
  Brent check behind ``bilinear verify``
  (:func:`bilinear.verify.algorithm.wrong_blocks`: exact, term by term or one
  A block at a time as the scheme's term count decides);
- a modular, approximate or complex scheme is checked in its ring and counted
  as *refused* (never compiled) when it holds there, with the reason;
- a reader's refusal of a file that is not a matrix-multiplication scheme
  (PLinOpt's polynomial products, a JSON index) is *refused* with its message;
- anything else — a reader error on a real file, a wrong scheme, a
  traceback, a timeout — is *failed*, and listed.

AlphaTensor's pickled (rectangular) entries are read with ``allow_pickle``:
the tally trusts the published archives, which ``bilinear`` never does unasked.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import signal
import sys
import time
import traceback
import zipfile
from collections import Counter, defaultdict
from pathlib import Path

CATALOGUES = {
    "kauers": ("mkauers+matrix-multiplication", ("**/*.exp", "**/*.m")),
    "flips": ("jakobmoosbauer+flips", ("**/*.exp", "**/*.m")),
    "fast-matmul": ("arbenson+fast-matmul/codegen/algorithms", ("**/*",)),
    "plinopt": ("jgdumas+plinopt/data", ("*_L.sms", "*_L.slp")),
    "alphatensor": ("google-deepmind+alphatensor/algorithms", ("*.npz",)),
    "alphaevolve": ("alphaevolve", ("*.npz",)),
    "perminov": ("dronperminov+FastMatrixMultiplication/schemes", ("**/*.json", "**/*.m", "**/*.exp", "**/*.txt", "**/*.npz")),
}
# Folders whose schemes are claimed modulo p without saying so in their names: read as `--mod p` would.
MODULI = {"jakobmoosbauer+flips/222flipgraph_rank8": 2}  # flip-graph vertices of the GF(2) search (arXiv 2212.01175)
# Reader messages that rightly refuse a file that is not a matrix-multiplication scheme over Q, Q(ε), GF(p), Q(i).
REFUSALS = {
    "is a polynomial multiplication scheme": "not a matrix product: polynomial multiplication",
    "is a scheme for a product by a transpose": "not a matrix product: A·Aᵀ",
    "is not named as a matrix-multiplication scheme": "not a matrix product: another linear map",
    "holds a symbol": "coefficients in Q(√3), written with a symbol",
    "is not a scheme:": "not a scheme: an index of schemes",
}
_NOT_SCHEMES = {"README.md", "LICENSE", ".gitignore"}


def _files(root: Path, name: str) -> list[Path]:
    folder, patterns = CATALOGUES[name]
    base = root / folder
    if not base.is_dir() and (root / name).is_dir():  # ../shared/schemes' layout: a folder per catalogue's short name
        base = root / name
    found = {p for pattern in patterns for p in base.glob(pattern) if p.is_file()}
    if name == "fast-matmul":  # the folder also holds a README and madan's parser script
        found = {p for p in found if p.name not in _NOT_SCHEMES and p.suffix not in (".py", ".md")}
    if name == "plinopt":
        found = _one_file_per_plinopt_scheme(found)
    return sorted(found)


def _one_file_per_plinopt_scheme(paths: set[Path]) -> set[Path]:
    """A PLinOpt scheme is several `_L` files: its matrices (.sms) and its program (.slp), and for an
    alternative basis its ALT and CoB files.  Read once, from the file that reaches all of them: the
    program (read, it is checked against the matrices beside it) of the ALT scheme (a CoB file is read
    as the ALT scheme it changes the basis of)."""
    chosen: dict[str, Path] = {}
    for path in sorted(paths, key=lambda p: ("-CoB_" in p.name, p.suffix != ".slp")):
        chosen.setdefault(path.with_suffix("").name.replace("-CoB_", "-ALT_"), path)
    return set(chosen.values())


def _units(root: Path, names: list[str]) -> list[tuple[str, str, str | None]]:
    """(catalogue, path, key) for every scheme: one per file, one per key of an .npz archive."""
    units = []
    for name in names:
        for path in _files(root, name):
            if path.suffix == ".npz":
                with zipfile.ZipFile(path) as archive:
                    keys = [n.removesuffix(".npy") for n in archive.namelist()]
                units += [(name, str(path), key) for key in keys]
            else:
                units.append((name, str(path), None))
    return units


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def _check(scheme) -> tuple[str, str]:
    """(outcome, detail) for a scheme that was read."""
    from bilinear.frontend.importers import AlternativeBasis
    from bilinear.ir import Algorithm
    from bilinear.verify.algorithm import wrong_blocks
    from bilinear.verify.rings import (
        ApproximateScheme,
        ComplexScheme,
        check_approximate,
        check_complex,
        check_modular,
    )

    if isinstance(scheme, (Algorithm, AlternativeBasis)):
        algorithm = scheme.algorithm if isinstance(scheme, AlternativeBasis) else scheme
        wrong = wrong_blocks(algorithm)
        if wrong:
            return "failed", f"wrong over Q: {', '.join(wrong[:4])}"
        return "verified", "alternative basis" if isinstance(scheme, AlternativeBasis) else "exact over Q"
    if isinstance(scheme, ApproximateScheme):
        report = check_approximate(scheme)
        return ("refused", "approximate: holds in the limit ε → 0") if report.holds else ("failed", "approximate: wrong in the limit")
    if isinstance(scheme, ComplexScheme):
        report = check_complex(scheme)
        return ("refused", "complex: holds over Q(i)") if report.holds else ("failed", "complex: wrong over Q(i)")
    report = check_modular(scheme)
    p = scheme.modulus
    if report.ok:
        return "verified", f"exact over Q (and modulo {p})"
    if report.holds:
        why = f" ({scheme.reason.split(';')[0]})" if scheme.reason else ""
        return "refused", f"modular: holds modulo {p} only{why}"
    return "failed", f"wrong modulo {p}"


def _modulus(path: str) -> int | None:
    return next((p for folder, p in MODULI.items() if f"/{folder}/" in path), None)


def tally_one(unit: tuple[str, str, str | None], timeout: int) -> dict:
    from bilinear.diagnostics import BilinearError
    from bilinear.frontend.importers import read_catalogue

    catalogue, path, key = unit
    started = time.perf_counter()
    # CPU seconds, not wall-clock ones: the tally must not call a scheme slow because the machine is busy.
    signal.signal(signal.SIGVTALRM, _alarm)
    signal.setitimer(signal.ITIMER_VIRTUAL, timeout)
    loaded = False
    try:
        scheme = read_catalogue(Path(path), key=key, allow_pickle=Path(path).suffix == ".npz", modulus=_modulus(path))
        loaded = True
        outcome, detail = _check(scheme)
    except BilinearError as error:
        message = error.diagnostics[0].message
        reason = next((label for phrase, label in REFUSALS.items() if phrase in message), None)
        outcome, detail = ("refused", reason) if reason else ("failed", f"reader: {message[:200]}")
    except _Timeout:
        outcome, detail = "timeout", f"over {timeout} s of CPU time"
    except Exception as error:  # noqa: BLE001 - a traceback is a failure to report, not to hide
        frame = traceback.extract_tb(error.__traceback__)[-1]
        outcome, detail = "failed", f"traceback: {type(error).__name__}: {error} ({frame.filename}:{frame.lineno})"
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
    seconds = time.perf_counter() - started
    return {"catalogue": catalogue, "path": path, "key": key, "loaded": loaded, "outcome": outcome, "detail": detail, "seconds": seconds}


def _tally_star(arguments: tuple) -> dict:
    return tally_one(*arguments)


def _run(units, jobs: int, timeout: int, log: Path | None) -> list[dict]:
    """Every unit's result; with ``log``, each is also appended there as a JSON line as soon as it is known."""
    results = []
    arguments = [(unit, timeout) for unit in units]
    with multiprocessing.Pool(jobs, maxtasksperchild=200) as pool:
        for result in pool.imap_unordered(_tally_star, arguments, chunksize=2):
            results.append(result)
            if log is not None:
                with log.open("a") as stream:
                    stream.write(json.dumps(result) + "\n")
    return results


def _where(result: dict) -> str:
    key = result["key"]
    return result["path"] + (f" [{key}]" if key else "")


def summary(results: list[dict], names: list[str]) -> str:
    """The table the issue asks for, the refusal reasons, and every failure."""
    lines = [
        "| catalogue | schemes | loaded | verified | refused | failed | timed out |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    by_catalogue = defaultdict(list)
    for result in results:
        by_catalogue[result["catalogue"]].append(result)
    for name in names:
        rows = by_catalogue.get(name, [])
        count = Counter(r["outcome"] for r in rows)
        lines.append(
            f"| {name} | {len(rows)} | {sum(r['loaded'] for r in rows)} | {count['verified']} | {count['refused']} | "
            f"{count['failed']} | {count['timeout']} |"
        )
    lines += ["", "Why schemes were refused (never compiled) or verified in another ring:", ""]
    reasons = Counter((r["catalogue"], r["outcome"], r["detail"]) for r in results if r["outcome"] != "failed")
    for (catalogue, outcome, detail), count in sorted(reasons.items()):
        lines.append(f"- {catalogue}: {count} {outcome} — {detail}")
    failures = [r for r in results if r["outcome"] in ("failed", "timeout")]
    lines += ["", f"Failures and timeouts: {len(failures)}", ""]
    lines += [f"- {r['catalogue']}: {_where(r)}: {r['detail']}" for r in failures]
    slowest = sorted(results, key=lambda r: -r["seconds"])[:3]
    lines += ["", "Slowest: " + "; ".join(f"{_where(r)} {r['seconds']:.1f} s" for r in slowest)]
    return "\n".join(lines)


def write_alphaevolve(notebook: Path, out: Path) -> None:
    """AlphaEvolve's decompositions (read as literals from its results notebook) as one .npz."""
    import numpy as np

    from bilinear.frontend.formats.alphatensor import decompositions_from_notebook

    cells = json.loads(notebook.read_text())["cells"]
    found = {}
    for cell in cells:
        if cell["cell_type"] == "code":
            found.update(decompositions_from_notebook("".join(cell["source"])))
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, **{key: np.stack(arrays) for key, arrays in found.items()})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="folder holding the fetched repositories")
    parser.add_argument("--only", nargs="*", choices=sorted(CATALOGUES), default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=120, help="CPU seconds per scheme (default 120)")
    parser.add_argument("--json", type=Path, default=None, help="write every scheme's outcome here")
    parser.add_argument("--log", type=Path, default=None, help="append each outcome here (JSON lines) as it is known")
    parser.add_argument(
        "--summarize", type=Path, nargs="*", default=None, metavar="LOG",
        help="only print the summary of --log files (a later line for the same scheme replaces an earlier one)",
    )
    parser.add_argument("--suffixes", nargs="*", default=None, help="only files with these suffixes (e.g. .json .txt)")
    parser.add_argument(
        "--files", type=Path, default=None, metavar="LIST",
        help="only the catalogue files named in LIST (one a line, absolute or relative to ROOT)",
    )
    parser.add_argument("--alphaevolve", type=Path, default=None, metavar="NOTEBOOK", help="first write ROOT/alphaevolve/ from it")
    args = parser.parse_args(argv)
    if args.alphaevolve:
        write_alphaevolve(args.alphaevolve, args.root / "alphaevolve" / "alphaevolve_results.npz")
    names = args.only or list(CATALOGUES)
    if args.summarize:
        latest = {}
        for log in args.summarize:
            for line in log.read_text().splitlines():
                if line.strip():
                    result = json.loads(line)
                    latest[(result["path"], result["key"])] = result
        results = list(latest.values())
        print(summary(results, [n for n in names if any(r["catalogue"] == n for r in results)]))
        return 0
    units = _units(args.root, names)
    if args.suffixes:
        units = [u for u in units if Path(u[1]).suffix in args.suffixes]
    if args.files:
        wanted = {str((args.root / line.strip()).resolve()) for line in args.files.read_text().splitlines() if line.strip()}
        units = [u for u in units if str(Path(u[1]).resolve()) in wanted]
    units.sort(key=lambda u: Path(u[1]).stat().st_size)  # smallest first: a cut-short run covers the most schemes
    started = time.perf_counter()
    results = _run(units, args.jobs, args.timeout, args.log)
    print(summary(results, names))
    print(f"\n{len(results)} schemes in {time.perf_counter() - started:.0f} s with {args.jobs} processes")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0 if all(r["outcome"] in ("verified", "refused") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
