"""What ``bilinear compile`` writes: a standalone CUDA library source, its header, the manifest
and the report.

``<name>.cu`` holds every generated kernel (element-wise stages and fused product stages) for
the requested element type, and for the other one, which the host layer's second function
needs, then the C++ host layer (:mod:`bilinear.lower.host`): ``<name>_dgemm`` and
``<name>_sgemm``, declared in ``<name>.h``.  ``nvcc -shared`` builds a library from it that
C and C++ programs link against (with cuBLAS).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from ..ir import Program
from ..output import make_folder, write_atomic
from ..report import to_json, to_markdown, to_text
from .host import host_dtype, render_header, render_host
from .manifest import manifest
from .options import LEAF_KINDS
from .plan import Lowered, Options, Verified, lower


def build_commands(name: str) -> list[str]:
    """How to build and link the artifact (also in the header and the manifest)."""
    return [
        f"nvcc -O3 -std=c++17 -arch=sm_90 -Xcompiler -fPIC -shared {name}.cu -o lib{name}.so -lcublas",
        f"g++ driver.cpp -I. -I$CUDA_HOME/include -L. -l{name} -L$CUDA_HOME/lib64 -lcudart -lcublas -o driver",
    ]


def library_source(lowered: Lowered, others: list[Lowered]) -> tuple[str, str]:
    """(``<name>.cu``, ``<name>.h``): the kernels of every dtype, then the host layer."""
    name = lowered.name
    hosts = [host_dtype(each, name) for each in [lowered, *others]]
    kernels = lowered.cuda_source() + "".join("\n" + other.cuda_source() for other in others)
    return kernels + "\n" + render_host(name, hosts), render_header(name, hosts)


def artifact_names(name: str) -> list[str]:
    """The files :func:`write_artifacts` writes into its folder (checked before any work)."""
    return [f"{name}.cu", f"{name}.h", "manifest.json", "report.txt", "report.md", "report.json"]


def earlier_library(folder: Path, name: str) -> list[Path]:
    """The ``.cu`` and ``.h`` of another library that ``folder``'s manifest says a compile wrote
    there (writing ``name``'s replaces that manifest and would leave them stale)."""
    try:
        earlier = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["name"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    if not isinstance(earlier, str) or earlier == name or Path(earlier).name != earlier:
        return []
    return [path for path in (folder / f"{earlier}.cu", folder / f"{earlier}.h") if path.is_file()]


def write_artifacts(
    program: Program, report, options: Options, out: Path, source_file: str, n: int = 8192,
    per_level: tuple[str, ...] | None = None,
) -> dict:
    """Lower ``program`` (already verified: ``report``) and write every artifact into ``out``
    (a folder the caller checked: nothing is written through a link, each file atomically)."""
    proven = Verified(program, report)
    lowered = lower(proven, options, per_level)
    kind = LEAF_KINDS[options.leaf]
    others = [lower(proven, replace(options, dtype=d), per_level) for d in kind.dtypes if d != options.dtype]
    source, header = library_source(lowered, others)
    make_folder(out)
    paths = {"source": out / f"{lowered.name}.cu", "header": out / f"{lowered.name}.h", "manifest": out / "manifest.json"}
    host = {
        "header": paths["header"].name,
        "functions": {h.dtype: h.function for h in (host_dtype(each, lowered.name) for each in [lowered, *others])},
        "layout": "column-major, like cublasDgemm with CUBLAS_OP_N",
        "inputs_const": not any(_writes(each) for each in [lowered, *others]),
        "other_kernels": {each.options.dtype: each.kernel_names() for each in others},
        "build": build_commands(lowered.name),
    }
    if kind.gemm is not None:  # a leaf GEMM of the Python runtime: the C++ host layer calls cuBLAS there
        host["leaves"] = f"the C++ host layer runs cuBLAS GEMM leaves; {options.leaf} leaves ({kind.help}) run " \
                         "through the Python runtime (bilinear.compile, bilinear run)"
    if lowered.breadth is not None:  # the split and merge kernels are in the .cu; the recursion is not
        host["breadth_first"] = {
            "levels": options.breadth,
            "kernels": [k.name for k in lowered.breadth.kernels()],
            "note": "the C++ host layer runs the depth-first levels only, with cuBLAS GEMMs where the breadth-first "
                    "levels would start; the breadth-first levels run through the Python runtime",
        }
    if options.launch != "serial":
        host["launch"] = f"the C++ host layer issues leaf products one at a time; --launch {options.launch} runs " \
                         "through the Python runtime"
    if options.workspace_limit is not None:
        host["workspace_limit"] = "the C++ host layer allocates the workspace its depth-first levels need " \
                                  f"({host_dtype(lowered, lowered.name).function}_workspace_bytes says how much); " \
                                  "--workspace-limit applies to the Python runtime"
    write_atomic(paths["source"], source)
    write_atomic(paths["header"], header)
    write_atomic(paths["manifest"], json.dumps(manifest(lowered, source_file, host), indent=2) + "\n")
    write_atomic(out / "report.txt", to_text(report, n=n, dtype=options.dtype) + "\n")
    write_atomic(out / "report.md", to_markdown(report, n=n, dtype=options.dtype))
    write_atomic(out / "report.json", to_json(report, n=n, dtype=options.dtype) + "\n")
    return paths


def host_notes(host: dict) -> list[str]:
    """What the manifest's host section says the C++ library does not run, as notes for the user."""
    notes = [host.get("leaves"), host.get("breadth_first", {}).get("note"), host.get("launch"), host.get("workspace_limit")]
    return [note for note in notes if note]


def _writes(lowered: Lowered) -> bool:
    from .host import writes_inputs

    return writes_inputs(lowered)
