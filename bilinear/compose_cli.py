"""``bilinear transform`` and ``bilinear product``: derive a scheme, verify it, write it as .bl."""

from __future__ import annotations

import sys
from pathlib import Path

from .diagnostics import render


def _write(algorithm, header: tuple[str, ...], output: Path | None, style: str) -> int:
    from .frontend.export import to_bl
    from .verify import report_algorithm

    report = report_algorithm(algorithm)
    if not report.ok:  # a bug here, or an input that was not an exact algorithm
        for diagnostic in report.errors:
            print(render(diagnostic), file=sys.stderr)
        print(f"bilinear: the derived {algorithm.name} does not verify; nothing written", file=sys.stderr)
        return 1
    text = to_bl(algorithm, style=style, header=header)
    shape = algorithm.shape
    summary = f"{algorithm.name} <{shape.m},{shape.k},{shape.n};{algorithm.rank}>, verified"
    if output is None:
        sys.stdout.write(text)
        print(summary, file=sys.stderr)
    else:
        output.write_text(text, encoding="utf-8")
        print(f"wrote {output} ({summary})")
    return 0


def _algorithm(program, name: str | None):
    from .ir import Algorithm

    if name is None:
        main = program.main
        return main if isinstance(main, Algorithm) else program.algorithm(main.algorithm)
    found = program.algorithm(name)
    if found is None:
        raise ValueError(f"no algorithm named {name!r}; the file defines {', '.join(a.name for a in program.algorithms)}")
    return found


def _load(args, path: Path):
    from .api import load

    return load(path, format=args.input_format, shape=args.shape, key=args.key, allow_pickle=args.allow_pickle)


def transform(args) -> int:
    from .compose import permute

    source = _algorithm(_load(args, args.file), args.algorithm)
    result = permute(source, args.to, name=args.name)
    shape = source.shape
    header = (f"{result.name}: {source.name} <{shape.m},{shape.k},{shape.n}> permuted to order {args.to}, from {args.file}.",)
    return _write(result, header, args.output, args.style)


def product(args) -> int:
    from .api import load
    from .compose import kronecker

    first = _algorithm(_load(args, args.file), None)
    second = _algorithm(load(args.second), None)
    result = kronecker(first, second, name=args.name)
    header = (f"{result.name}: the Kronecker product of {first.name} ({args.file}) and {second.name} ({args.second}).",)
    return _write(result, header, args.output, args.style)


def source_header(path: Path) -> tuple[str, ...]:
    """What a header should keep of a scheme's source: its leading ``#`` comment lines (a
    catalogue file's reference, a .bl file's provenance and licence text), and, for a file
    inside a fetched repository, that repository's licence file and its first line."""
    lines: list[str] = []
    if path.suffix != ".npz" and path.is_file():
        with path.open(encoding="utf-8", errors="replace") as stream:
            for line in stream:
                if not line.startswith("#") or len(lines) >= 40:
                    break
                lines.append(line[1:].strip())
    if path.suffix != ".bl":
        lines += _licence(path)
    return tuple(line for line in lines if line) or (f"from {path.name}",)


def _licence(path: Path) -> list[str]:
    for folder in list(path.resolve().parents)[:4]:
        for candidate in sorted(folder.iterdir()) if folder.is_dir() else ():
            if candidate.is_file() and any(word in candidate.name.lower() for word in ("licen", "copying")):
                first = next((line.strip() for line in candidate.read_text(errors="replace").splitlines() if line.strip()), "")
                return [f"Licence of the source: {candidate} ({first})"]
    return []


def export(args) -> int:
    from .frontend.writers import write
    from .verify import report_algorithm

    algorithm = _algorithm(_load(args, args.file), args.algorithm)
    if not report_algorithm(algorithm).ok:
        print(f"bilinear export: {algorithm.name} does not verify; nothing written", file=sys.stderr)
        return 1
    header = (*source_header(args.file), f"Exported by bilinear from {args.file.name}.")
    for path in write(algorithm, args.to, args.output, header):
        print(f"wrote {path}")
    return 0


def optimize(args) -> int:
    from .optimize import optimize as eliminate_common_sums

    source = _algorithm(_load(args, args.file), args.algorithm)
    result, counts = eliminate_common_sums(source, seeds=args.seeds, name=args.name)
    for side, label in zip("ABC", ("A side (left factors)", "B side (right factors)", "C side (outputs)")):
        (adds_before, scal_before), (adds_after, scal_after) = counts[side]["before"], counts[side]["after"]
        print(f"{label:24s} additions {adds_before:5d} -> {adds_after:5d}   scalings {scal_before:4d} -> {scal_after:4d}", file=sys.stderr)
    header = (*source_header(args.file), f"{result.name}: {source.name} with common sums eliminated by `bilinear optimize`.")
    return _write(result, header, args.output, "equations")
