"""The adversarial suite of issue 12: generated hostile .bl text, command lines and API calls.

Each category must end with 0 tracebacks, 0 hangs over 20 s and 0 wrong accepts (a product
that ran and was wrong, inputs changed against the promise, a file outside the output folder
changed, a secret file quoted).  The counts per category are printed by

    python tests/test_adversarial.py

(and by ``python -m pytest tests/test_adversarial.py -s``).  Cases are seeded: a finding names
its category and number, which reproduces it.
"""

from __future__ import annotations

import contextlib
import io
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers import adversarial as adv

CASES = {"bl": 130, "cli": 130, "api": 200}
SECRET = "do-not-print-me"


# --- .bl text -------------------------------------------------------------------------------------


def _bl_case(seed: int, folder: Path):
    import bilinear
    from bilinear.diagnostics import BilinearError, render
    from bilinear.report import RENDERERS

    rng = random.Random(f"bl:{seed}")
    kind = seed % 5
    if kind == 0:
        name, text = "a.bl", adv.random_algorithm(rng)
    elif kind == 1:
        name, text = adv.edited_schedule(rng)
    elif kind == 2:
        name, text = "use.bl", adv.hostile_use(rng, folder)
    elif kind == 3:
        size = rng.choice([(2, 2, 2), (3, 2, 4), (1, 1, 9), (4, 4, 4)])
        name, text = "naive.bl", adv.naive_algorithm(*size, scale=rng.choice(["1", "3", "1" + "0" * 400, "1/7"]))
    else:
        count = rng.choice([100, 300, 1000])
        name = "long.bl"
        text = f"algorithm long <1,1,1;{count}>:\n" + "".join(f"  M{r} = A11 * B11\n" for r in range(1, count + 1))
        text += "  C11 = M1" + "".join(f" {'+-'[r % 2]} M{r}" for r in range(2, count + 1)) + "\n"
    path = folder / name
    path.write_text(text, encoding="utf-8")

    def case() -> bool:
        try:
            report = bilinear.verify(path)
            shown = [renderer(report) for renderer in RENDERERS.values()]
        except BilinearError as error:
            shown = [render(d) for d in error.diagnostics]
            if SECRET in "\n".join(shown):
                raise adv.WrongAccept("quoted a file that is not .bl") from None
            raise
        if SECRET in "\n".join(shown):
            raise adv.WrongAccept("quoted a file that is not .bl")
        if not report.ok:
            return False
        levels = 1 if kind == 4 else rng.choice([1, 2])  # a <1,1,1;1000> level never shrinks the problem
        product = bilinear.compile(path, levels=levels, leaf=rng.choice(["cublas", "fused"]),
                                   dtype=rng.choice(["float32", "float64"]), backend="numpy")
        adv.check_product(product, rng)
        return True

    return case


def run_bl(folder: Path) -> adv.Tally:
    adv.prepare_folder(folder)
    (folder / "strassen.bl").write_text((adv.ALGORITHMS / "strassen.bl").read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "winograd.bl").write_text((adv.ALGORITHMS / "winograd.bl").read_text(encoding="utf-8"), encoding="utf-8")
    tally = adv.Tally(".bl text")
    for seed in range(CASES["bl"]):
        tally.run(f"bl:{seed}", _bl_case(seed, folder))
    return tally


# --- command lines ----------------------------------------------------------------------------------


def _cli_argv(rng: random.Random, folder: Path) -> list[str]:
    shipped = [str(adv.ALGORITHMS / f"{name}.bl") for name in ("strassen", "msmes", "rsmm")]
    scheme = rng.choice([*shipped, str(folder / "missing.bl"),
                         str(folder / "loop.bl"), str(folder), "/dev/null", str(folder / "secret")])
    out = rng.choice([str(folder / "out"), str(folder / "file"), "/dev/null", str(folder / "no" / "such" / "x"),
                      str(folder / "linked"), str(folder / "out" / "x.bl"), str(folder / "secret")])
    numbers = ["-1", "0", "1", "3", "8", "33", "1000000", "x", "1e3", "99999999999999999999"]
    command = rng.choice(["verify", "compile", "run", "import", "bench"])
    argv = [command] + ([scheme] if command != "bench" else [scheme, "-n", rng.choice(["8", "0", "16"]), "--repeat", "1"])
    options = {
        "verify": [["--format", rng.choice(["text", "md", "json", "fast-matmul", ""])], ["--from", rng.choice(["bl", "kauers", "x"])],
                   ["--shape", rng.choice(["2,2,2", "1000,1000,1000", "0,1,1", "a", "1,2"])], ["-n", rng.choice(numbers)]],
        "compile": [["-o", out], ["--force"], ["--levels", rng.choice(numbers + ["100000"])], ["--leaf", "fused"],
                    ["--no-fuse"], ["--cutoff", rng.choice(numbers)], ["--dtype", "float32"]],
        "run": [["-n", rng.choice(numbers[:5] + ["1000000"])], ["-m", rng.choice(numbers[:6])], ["--levels", rng.choice(numbers[:6] + ["60"])],
                ["--alpha", rng.choice(["2", "nan", "1e308", "x"])], ["--beta", rng.choice(["0", "1", "inf"])],
                ["--repeat", rng.choice(["1", "0"])], ["--backend", "numpy"], ["--leaf", "fused"]],
        "import": [["-o", out], ["--force"], ["--from", "bl"], ["--name", rng.choice(["ok_name", "straßen", "A11", "for", "9x"])],
                   ["--style", "table"]],
        "bench": [["--backend", "numpy"], ["--levels", rng.choice(["1", "auto", "100000", "-1"])], ["--json", out],
                  ["--plot", str(folder / "no" / "plot.png")], ["--dtype", "float32"]],
    }[command]
    for option in rng.sample(options, rng.randint(0, len(options))):
        argv += option
    if command in ("run", "bench") and "--backend" not in argv:
        argv += ["--backend", "numpy"]
    if command == "run" and "-n" not in argv:
        argv += ["-n", "8"]
    return argv


def run_cli(folder: Path) -> adv.Tally:
    from bilinear.cli import main

    adv.prepare_folder(folder)
    outside = folder.parent / f"{folder.name}-precious.txt"
    outside.write_text("precious", encoding="utf-8")
    (folder / "file").write_text("a file", encoding="utf-8")
    if not (folder / "linked").exists():
        (folder / "linked").symlink_to(outside)
    tally = adv.Tally("CLI flags")
    for seed in range(CASES["cli"]):
        rng = random.Random(f"cli:{seed}")
        argv = _cli_argv(rng, folder)

        def case(argv=argv) -> bool:
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(argv)
                except SystemExit as exit_:  # argparse's usage message
                    code = exit_.code
            if "Traceback" in err.getvalue():
                raise RuntimeError(f"a traceback printed by {argv}")
            if outside.read_text(encoding="utf-8") != "precious" or (folder / "secret").read_text(encoding="utf-8") != \
                    "root:x:0:0:do-not-print-me\n":
                raise adv.WrongAccept(f"{argv} changed a file outside its output")
            # The user may print a file by naming it (`bilinear verify secret`); never through a `use`.
            if SECRET in out.getvalue() + err.getvalue() and "secret" not in argv[1]:
                raise adv.WrongAccept(f"{argv} printed a file that is not .bl")
            return code == 0

        tally.run(f"cli:{seed} {' '.join(argv)}", case)
    return tally


# --- API arguments ------------------------------------------------------------------------------------


def _array(rng: random.Random, rows: int, cols: int, dtype: str):
    kind = rng.choice(["plain"] * 24 + ["fortran", "3d", "int", "readonly", "list", "none", "nan", "view", "empty"])
    data = np.random.default_rng(rng.randrange(100)).standard_normal((rows, cols)).astype(dtype)
    if kind == "fortran":
        return np.asfortranarray(data)
    if kind == "3d":
        return data[None]
    if kind == "int":
        return data.astype(np.int64)
    if kind == "readonly":
        data.flags.writeable = False
        return data
    if kind == "list":
        return data.tolist()
    if kind == "none":
        return None
    if kind == "nan":
        data[0, 0] = np.nan
        return data
    if kind == "view":
        return np.random.default_rng(1).standard_normal((rows, cols + 3)).astype(dtype)[:, 1:cols + 1]
    return np.zeros((0, cols), dtype=dtype) if kind == "empty" else data


def _api_case(seed: int, products: dict):
    import bilinear
    from bilinear.measure import float64_reference, relative_error

    rng = random.Random(f"api:{seed}")

    def case() -> bool:
        source = rng.choice(["msmes", "strassen", "rsmm", "winograd"])
        hostile = rng.random() < 0.3  # otherwise only the call's arguments may be wrong
        options = {"levels": rng.choice([0, 1, 2, -1, 40, 2.5, "auto", None] if hostile else [0, 1, 2, 2]),
                   "dtype": rng.choice(["float64", "float32", "float16", 64] if hostile else ["float64", "float32"]),
                   "leaf": rng.choice(["cublas", "fused", "gpu"] if hostile else ["cublas", "fused"]),
                   "cutoff": rng.choice([1, 2, 0, "4"] if hostile else [1, 1, 2])}
        key = (source, *options.values())
        if key not in products:
            products[key] = bilinear.compile(adv.ALGORITHMS / f"{source}.bl", backend="numpy", **options)
        product = products[key]
        dtype = product.dtype if hasattr(product, "dtype") else "float64"
        M, K, N = (rng.choice([1, 4, 7, 8, 16]) for _ in range(3))
        A = _array(rng, M, K, dtype)
        B = _array(rng, K, N, dtype)
        if rng.random() < 0.15:  # the same matrix twice, or overlapping views of one
            K = N = M = rng.choice([4, 8, 16])
            shift = rng.choice([0, 1, 3])
            X = np.random.default_rng(seed).standard_normal((M, M + shift)).astype(dtype)
            A, B = X[:, :M], X[:, shift:shift + M]
        out = rng.choice([None, np.zeros((M, N), dtype=dtype)] * 3 + [A, np.zeros((N, M), dtype=dtype)])
        alpha = rng.choice([1.0, 2, -0.5, np.float32(3)] * 3 + [1j, None, np.ones(2)])
        beta = rng.choice([0.0, 0.0, 1.0, 0.5] * 2 + ["1", np.nan])
        before = [x.copy() if isinstance(x, np.ndarray) else None for x in (A, B)]
        C0 = out.copy() if isinstance(out, np.ndarray) else None
        in_place = rng.random() < 0.2
        if rng.random() < 0.3:
            result = bilinear.matmul(A, B, out=out, alpha=alpha, beta=beta, inplace=in_place)
        else:
            in_place = source == "msmes"  # the only in-place scheme here: it restores A and B up to rounding
            result = product(A, B, out=out, alpha=alpha, beta=beta)
        A0, B0 = before
        expected = float64_reference(A0, B0, C0 if C0 is not None else np.zeros_like(result, dtype=np.float64),
                                     float(alpha), float(beta) if C0 is not None else 0.0)
        finite = np.isfinite(A0).all() and np.isfinite(B0).all() and np.isfinite(float(beta))
        if finite and relative_error(result, expected, A0, B0) > 1e-4:
            raise adv.WrongAccept(f"{source} {options}: wrong product")
        if not in_place and not (np.array_equal(A, A0, equal_nan=True) and np.array_equal(B, B0, equal_nan=True)):
            raise adv.WrongAccept(f"{source} {options}: changed its inputs")
        tolerance = 64 * np.finfo(A0.dtype).eps * max(np.abs(A0).max(initial=1.0), np.abs(B0).max(initial=1.0), 1.0)
        if finite and not (np.allclose(A, A0, atol=tolerance, rtol=0) and np.allclose(B, B0, atol=tolerance, rtol=0)):
            raise adv.WrongAccept(f"{source} {options}: inputs not restored")
        return True

    return case


def run_api() -> adv.Tally:
    tally = adv.Tally("API args")
    products: dict = {}
    for seed in range(CASES["api"]):
        tally.run(f"api:{seed}", _api_case(seed, products))
    return tally


# --- pytest and the summary -------------------------------------------------------------------------


def _assert_clean(tally: adv.Tally) -> None:
    print("\n" + tally.line())
    assert tally.cases >= 100 and tally.accepted and tally.refused
    assert not tally.tracebacks, "\n".join(tally.tracebacks)
    assert not tally.hangs, "\n".join(tally.hangs)
    assert not tally.wrong, "\n".join(tally.wrong)


def test_adversarial_bl_text(tmp_path):
    _assert_clean(run_bl(tmp_path))


def test_adversarial_command_lines(tmp_path, monkeypatch):
    # a scratch working folder: `compile` without -o writes build/NAME there (in the repository it had
    # left build/msmes, which the README's quickstart then refused to overwrite)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BILINEAR_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cli").mkdir()
    _assert_clean(run_cli(tmp_path / "cli"))


def test_adversarial_api_arguments():
    _assert_clean(run_api())


if __name__ == "__main__":
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        os.chdir(base)
        (base / "bl").mkdir()
        (base / "cli").mkdir()
        import os

        os.environ["BILINEAR_CACHE"] = str(base / "cache")
        tallies = [run_bl(base / "bl"), run_cli(base / "cli"), run_api()]
    print("\n".join(t.line() for t in tallies))
    for tally in tallies:
        for finding in tally.tracebacks + tally.hangs + tally.wrong:
            print("  ", finding)
    sys.exit(1 if any(t.tracebacks or t.hangs or t.wrong for t in tallies) else 0)
