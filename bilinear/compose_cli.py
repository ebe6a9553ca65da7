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
