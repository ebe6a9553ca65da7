"""What ``bilinear compile`` writes: a standalone CUDA library source, its header, the manifest
and the report.

``<name>.cu`` holds every generated kernel (element-wise stages and fused product stages) for
the requested element type, and for the other one, which the host layer's second function
needs, then the C++ host layer (:mod:`bilinear.lower.host`): ``<name>_dgemm`` and
``<name>_sgemm``, declared in ``<name>.h``.  ``nvcc -shared`` builds a library from it that
C and C++ programs link against (with cuBLAS).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import fields, replace
from pathlib import Path

from ..collector import cycles_uncollected
from ..diagnostics import Diagnostic, counted, markdown_text
from ..ir import Program, Schedule
from ..output import make_folder, write_together
from ..report import to_json, to_markdown, to_text
from ..report_sizes import bytes_text
from .host import CONDITION_DIMS, host_dtype, render_header, render_host
from .host_code import HostDtype
from .ozaki_host import OzakiCode, accuracy_note, compile_refusal
from .levels import CoefficientOutOfRange
from .manifest import (kernel_count, library_call_bytes, library_plan, library_workspace_bytes, limit_plan, manifest,
                       refused_from)
from .options import LEAF_KINDS, OptionError
from .plan import Lowered, Options, Verified, lower
from .notes import build_notes, unused_options
from .render import comment_line


def build_commands(name: str) -> list[str]:
    """How to build and link the artifact (also in the header and the manifest)."""
    return [
        # nvcc's -O is the host code's (the kernels are optimized whatever it is): the host layer only issues
        # launches, and at -O1 its calls measured as fast as at -O3 while the host compiler took 13.4 s of a
        # catalogue scheme's build where it took 30.0 (README, "Using a compiled scheme from C or C++")
        f"nvcc -O1 -std=c++17 -arch=sm_90 -Xcompiler -fPIC -shared {name}.cu -o lib{name}.so -lcublas",
        # the caller's own program (compile writes none) linked against the library; -rpath: it finds
        # the library at run time where it was built (without it, only through LD_LIBRARY_PATH)
        f"g++ your_program.cpp -I. -I$CUDA_HOME/include -L. -l{name} -Wl,-rpath,$PWD -L$CUDA_HOME/lib64 -lcudart "
        "-lcublas -o your_program",
    ]


def library_source(lowered: Lowered, others: list[Lowered], hosts: list[HostDtype],
                   provenance: tuple[str, ...] = (), left_out: tuple[str, ...] = ()) -> tuple[str, str]:
    """(``<name>.cu``, ``<name>.h``): the kernels of every dtype, then the host layer (``hosts``:
    :func:`host_dtype` of each); both carry ``provenance``, the sources' header comments, and the
    header ``left_out``, why a function it might declare is not there."""
    name = lowered.name
    parts, written, bodies = [], frozenset(), {}
    for plan in (plan for each in [lowered, *others] for plan in each.with_fallbacks()):
        for kernel in plan.kernels():  # each plan names its kernels apart: one name, one body across them too
            if bodies.setdefault(kernel.name, kernel) != kernel:
                raise AssertionError(f"two plans of {name} name different kernels {kernel.name}")
        parts.append(plan.cuda_source(skip=written, linkage="static"))  # a fallback's schedule kernels are already there
        written |= set(plan.kernel_names())
    for host in hosts:  # the ozaki leaf's passes, once per dtype: every plan of it runs the same
        if host.ozaki is not None:
            parts.extend(host.ozaki.sources())
    comments = tuple(comment_line(line) for line in provenance)
    first, rest = ("\n".join(parts) + "\n" + render_host(name, hosts)).split("\n", 1)
    kept = "".join(f"{line}\n" for line in comments)  # after the first line, which says who generated it
    notes = tuple(comment_line(f"Left out: {note}") for note in left_out)
    return f"{first}\n{kept}{rest}", render_header(name, hosts, comments + notes)


def artifact_names(name: str) -> list[str]:
    """The files :func:`write_artifacts` writes into its folder (checked before any work)."""
    return [f"{name}.cu", f"{name}.h", "manifest.json", "report.txt", "report.md", "report.json"]


def earlier_library(folder: Path, name: str) -> list[Path]:
    """The ``.cu`` and ``.h`` of another library that ``folder``'s manifest says a compile wrote
    there (writing ``name``'s replaces that manifest and would leave them stale)."""
    try:
        earlier = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["name"]
    except (OSError, ValueError, KeyError, TypeError, RecursionError):  # (JSON nested past the parser's depth)
        return []
    if not isinstance(earlier, str) or earlier == name or Path(earlier).name != earlier:
        return []
    # only files that say bilinear wrote them: another tool's manifest.json can have a "name" too
    return [path for path in (folder / f"{earlier}.cu", folder / f"{earlier}.h") if _generated(path)]


def _generated(path: Path) -> bool:
    """Whether ``path`` is a file whose first line says bilinear generated it."""
    try:
        with path.open(encoding="utf-8", errors="replace") as file:
            return path.is_file() and "generated by bilinear" in file.readline(200).lower()
    except OSError:
        return False


@cycles_uncollected()
def write_artifacts(
    program: Program, report, options: Options, out: Path, sources: list[str], n: int = 8192,
    per_level: tuple[str, ...] | None = None, provenance: tuple[str, ...] = (), name: str | None = None,
    replacing: tuple[Path, ...] = (),
) -> dict:
    """Lower ``program`` (already verified: ``report``) and write every artifact into ``out``
    (a folder the caller checked: nothing is written through a link, each file atomically).
    ``sources``: the files it was built from, for the manifest.
    ``provenance``: the sources' header comments (a reference, a licence that asks to be kept), for
    the top of the ``.cu`` and the ``.h``; ``name``: the library's (default the scheme's); ``replacing``: an
    earlier library's files (:func:`earlier_library`), removed as the new files are renamed into place."""
    proven = Verified(program, report)
    # every dtype the leaf computes, the one asked for (--dtype, which the report counts in) first: a
    # coefficient past float32's range leaves that function out, whichever dtype was asked for
    kind = LEAF_KINDS[options.leaf]
    dtypes = [options.dtype, *(d for d in kind.dtypes if d != options.dtype)]
    built, refusals = [], {}
    for dtype in dtypes:
        try:
            built.append(lower(proven, replace(options, dtype=dtype), per_level, name))
        except CoefficientOutOfRange as error:
            refusals[dtype] = error
    if not built:
        raise next(iter(refusals.values()))
    lowered, others = built[0], built[1:]
    left_out = [f"no {dtype} function: {error.diagnostics[0].message}" for dtype, error in refusals.items()]
    if options.dtype in refusals:  # the report and the manifest count in the main function's dtype
        left_out.append(f"the library's main function is {lowered.options.dtype}, and report.txt counts in it")
    _check_limit_reachable(lowered)
    if why := compile_refusal(lowered):  # every call that runs its levels would return 5000
        raise OptionError(why)
    hosts = [host_dtype(each, lowered.name) for each in [lowered, *others]]  # the first is lowered's
    source, header = library_source(lowered, others, hosts, provenance, tuple(left_out))
    make_folder(out)
    paths = {"source": out / f"{lowered.name}.cu", "header": out / f"{lowered.name}.h", "manifest": out / "manifest.json"}
    host = {
        "header": paths["header"].name,
        "functions": {h.dtype: h.function for h in hosts},
        # the same product in a workspace the caller allocated (no cudaMallocAsync per call)
        "functions_with_workspace": {h.dtype: f"{h.function}_with_workspace" for h in hosts},
        "layout": "column-major, like cublasDgemm with CUBLAS_OP_N",
        # over every plan a call may run (a workspace limit's fallbacks too)
        "inputs_const": all(h.const_inputs for h in hosts),
        # written and put back (up to rounding), or left changed by a schedule without `restore`
        "inputs_restored": all(h.restores_inputs for h in hosts),
        # a call whose blocks break one returns 3000 + level and runs nothing (the header says so too)
        "shape_conditions": [{"level": c.level + 1, "requires": c.text}
                             for c in hosts[0].any_conditions],
        "shape_conditions_dims": CONDITION_DIMS,
        "other_kernels": {each.options.dtype: each.library_kernel_names() for each in others},
        "build": build_commands(lowered.name),
    }
    if hosts[0].ozaki is not None:  # the library runs the ozaki leaf itself, as every other leaf kind
        host["ozaki"] = {dtype_host.dtype: _ozaki_entry(dtype_host.ozaki) for dtype_host in hosts}
    if lowered.breadth is not None:  # every leaf GEMM that splits: split, the products, merge
        host["breadth_first"] = {
            "levels": options.breadth,
            "algorithms": [{"algorithm": name, "shape": list(shape)} for name, shape in lowered.breadth.schemes],
            "kernels": [k.name for k in lowered.breadth.kernels()],
            "products": "one strided-batched GEMM" if hosts[0].breadth.batched else "one GEMM after another",
        }
    if options.launch == "streams":  # (cuBLAS leaves only: Options refuses streams for the others)
        host["launch"] = "the C++ host layer issues leaf products one at a time on the caller's stream; --launch " \
                         "streams runs through the Python runtime"
    if left_out:
        host["left_out"] = "; ".join(left_out)
    if options.workspace_limit is not None:  # the library runs the plans a limit falls back to itself
        host["workspace_limit"] = {
            "bytes": options.workspace_limit,
            # tried in this order; a call runs the first whose workspace fits, and returns 4000 where none does
            "plans": [limit_plan(plan, member.namespace) for member, plan in zip(hosts[0].members, lowered.with_fallbacks())],
        }
        if (first := refused_from(lowered)) is not None:  # a limit some sizes pass: say from where
            host["workspace_limit"]["refused_from_n"] = first
            host["workspace_limit"]["note"] = (f"--workspace-limit {options.workspace_limit}: from n = {first}, an n×n×n "
                                               "call can need more workspace than that and return 4000 (nothing run)")
    if unused := unused_options(lowered):
        host["unused"] = unused
    if note := _inplace_workspace_note(program, lowered, n, per_level):
        host["workspace_note"] = note
    if note := _sums_note(lowered):
        host["sums_note"] = note
    if hosts[0].ozaki is not None and (note := accuracy_note(options.moduli, {h.dtype: h.function for h in hosts})):
        host["accuracy_note"] = note
    if hosts[0].oz_limit_text is not None:
        host["moduli_note"] = (f"--moduli {options.moduli} keeps enough bits only for a leaf GEMM whose inner dimension (a "
                               f"chunk of k) is at most {hosts[0].oz_limit_text}: a call with a longer one returns 5000 and "
                               "runs nothing; leave --moduli out to have each call choose enough")
    # absolute, as the loader resolved them; a hybrid's level file another level uses is a source already
    uses = tuple(file for file in program.uses if file not in sources)
    data = manifest(lowered, sources, host, n, uses)
    # what it came with, so that a build can check the files it was given
    data["files"] = {path.name: {"bytes": len(text.encode()), "sha256": hashlib.sha256(text.encode()).hexdigest()}
                     for path, text in ((paths["source"], source), (paths["header"], header))}
    facts = library_facts(data, n)
    summary = library_summary(facts)
    dtype = lowered.options.dtype
    report = named_as_the_manifest(report, sources)
    verified = json.loads(to_json(report, n=n, dtype=dtype))
    # all six renamed at once, after each is written: one by one, a compile --force cut short (or a full
    # disk) had left the new manifest beside the old library, or the old one beside the new
    write_together({paths["source"]: source, paths["header"]: header, paths["manifest"]: json.dumps(data, indent=2) + "\n",
                    out / "report.txt": to_text(report, n=n, dtype=dtype) + "\n\n" + "\n".join(summary) + "\n",
                    out / "report.md": to_markdown(report, n=n, dtype=dtype).rstrip("\n") + "\n\n## Library\n\n"
                    + "\n".join(f"- {markdown_text(line.strip())}" for line in summary) + "\n",
                    out / "report.json": json.dumps({**verified, "library": facts}, indent=2, ensure_ascii=False) + "\n"},
                   removing=replacing)
    return paths


def named_as_the_manifest(report, sources: list[str]):
    """``report`` as the reports beside the manifest give it: its file the manifest's ``source`` (a
    hybrid's comma-joined) and each diagnostic's file absolute, as there: they are read from their
    folder, where a path as typed, relative to where compile ran, names nothing."""
    def located(diagnostic: Diagnostic) -> Diagnostic:
        span = diagnostic.span
        if span is None or not Path(span.path).exists():  # a program from text has no file
            return diagnostic
        return replace(diagnostic, span=replace(span, path=str(Path(span.path).resolve())))

    entries = tuple(replace(entry, **{each.name: tuple(map(located, getattr(entry, each.name))) for each in fields(entry)
                                      if each.name.endswith(("errors", "warnings"))})  # a modular entry's rational_errors
                    for entry in report.entries)
    return replace(report, path=", ".join(sources), entries=entries)


def library_facts(data: dict, n: int) -> dict:
    """What compile built from the verified scheme, from its manifest ``data``: report.json's
    ``library``, and the reports' last lines (:func:`library_summary`)."""
    options, host = data["options"], data["host"]
    function = host["functions"][options["dtype"]]
    return {"name": data["name"], "options": options, "functions": list(host["functions"].values()),
            "kernels": kernel_count(data), "n": n, "workspace_bytes": data["workspace_bytes"][str(n)],
            "workspace_function": f"{function}_workspace_bytes", "notes": host_notes(host) + build_notes(data)}


def library_summary(facts: dict) -> list[str]:
    """The reports' last lines: the library, after the verification above them, whose figures are the
    scheme's as written (an in-place schedule's 0 bytes, where --breadth runs its algorithm in a
    workspace)."""
    options = facts["options"]
    levels = options["levels"]
    asked = [counted(levels, "level"), f"{options['leaf']} leaves"]
    asked += [flag if value is False else f"{flag} {value}" for name, flag, default in _SHOWN_OPTIONS
              if (value := options[name]) != default]
    held, limit = facts["workspace_bytes"], options["workspace_limit"]
    call = f"an n×n×n call at n={facts['n']} {options['dtype']}"
    # (past the limit, the call returns 4000: the bytes alone had read as what it runs in)
    workspace = (f"  workspace of {call}: {bytes_text(held)}" if limit is None or held <= limit else
                 f"  {call} returns 4000 under --workspace-limit {limit}: it needs {bytes_text(held)}")
    return [f"library {facts['name']}: {', '.join(asked)}; {', '.join(facts['functions'])}; {facts['kernels']} kernels",
            f"{workspace} ({facts['workspace_function']})", *(f"  note: {note}" for note in facts["notes"])]


#: Options the summary names where they differ from their default: (manifest name, flag, default).
_SHOWN_OPTIONS = (("breadth", "--breadth", 0), ("launch", "--launch", "serial"), ("moduli", "--moduli", None),
                  ("scaling", "--scaling", "max"), ("workspace_limit", "--workspace-limit", None), ("cutoff", "--cutoff", 1),
                  ("fuse", "--no-fuse", True))


def _inplace_workspace_note(program: Program, lowered: Lowered, n: int, per_level: tuple[str, ...] | None) -> str | None:
    """Why a library whose depth-first levels run in-place schedules (0 bytes, as verified) holds a
    workspace, or not, at ``n``: breadth-first levels run products from operand sums in one (as many as
    a workspace limit leaves at n), and ozaki leaves need their own.  None where a level that runs holds
    temporaries, which the report's workspace per level counts."""
    running = library_plan(lowered, n)
    named = [program.definition(name) for name in per_level] if per_level else [program.main]
    every_one_in_place = all(isinstance(d, Schedule) and d.inplace for d in named)
    depth_first = [level.schedule for level in running.levels]
    if not all(schedule.inplace for schedule in depth_first):
        return None
    in_place = depth_first or [d for d in named if isinstance(d, Schedule) and d.inplace]
    if not in_place:
        return None
    whose = _possessive(dict.fromkeys(schedule.name for schedule in in_place))
    held = bytes_text(library_workspace_bytes(lowered, n))
    options, ozaki = lowered.options, lowered.options.leaf == "ozaki"
    nothing = every_one_in_place and not ozaki  # what the library holds without breadth-first levels
    if running.options.breadth:
        return _breadth_note(whose, lowered, running, n, held, nothing, hybrid=per_level is not None)
    their = "their" if " and " in whose else "its"
    leaves = (f"ozaki leaves need a workspace of their own ({held} at n={n}): {whose} in-place stages "
              f"allocate nothing, {their} leaves do") if ozaki else None
    if not options.breadth:
        return leaves
    left = (f"--breadth {options.breadth} --workspace-limit {options.workspace_limit}: at n={n} no breadth-first level "
            f"fits the limit: {whose} in-place stages run at every level")
    return f"{left}; {leaves}" if leaves else f"{left}, and the library allocates nothing"


def _possessive(names) -> str:
    """``msmes's``, ``msmes's and msmes2's``."""
    said = [f"{name}'s" for name in names]
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]


def _breadth_note(whose: str, lowered: Lowered, running: Lowered, n: int, held: str, nothing: bool, hybrid: bool) -> str:
    """What ``running`` (``lowered`` or a plan its workspace limit falls back to, with breadth-first
    levels) runs where at compile's ``n``, with ``held`` bytes of workspace; ``nothing``: whether the
    library would hold none without them."""
    asked, breadth, outer = lowered.options.breadth, running.options.breadth, len(running.levels)
    if outer:
        where = "at the outer level only" if outer == 1 else f"at the outer {outer} levels only"
    else:
        keeps = ("every level of --levels-schemes runs breadth-first" if hybrid else
                 f"--levels {running.options.levels + 1} --breadth {breadth} keeps one")
        where = f"at no level: {keeps}" + (", and without --breadth the library allocates nothing" if nothing else "")
    inner = "innermost level runs" if breadth == 1 else f"innermost {breadth} levels run"
    fell = breadth < asked  # the limit left fewer breadth-first levels than asked at compile's n
    said = (f"--breadth {asked} --workspace-limit {lowered.options.workspace_limit}: at n={n} the "
            f"{asked} breadth-first levels asked for need more workspace than the limit, and a call runs {breadth}"
            if fell else f"--breadth {breadth}")
    workspace = f"{held} at n={n}" + (", the ozaki leaves' own included" if lowered.options.leaf == "ozaki" else "")
    if running.fewer_breadth is not None:  # a larger call may not fit the limit this plan's workspace fits
        limit = "the limit" if fell else f"--workspace-limit {lowered.options.workspace_limit}"
        workspace += f"; a call whose workspace would pass {limit} runs fewer breadth-first levels"
    products = _possessive(dict.fromkeys(name for name, _shape in running.breadth.schemes))
    return (f"{said}: the {inner} {products} products breadth-first, from operand sums in a workspace "
            f"({workspace}); {whose} in-place stages run {where}")


def _sums_note(lowered: Lowered) -> str | None:
    """Where the library does more additions than the report's "as written": named sums are counted, not
    yet shared, by the schedule derived from an algorithm and by breadth-first levels (a schedule's own
    statements run as written)."""
    from ..schedule.default import is_default_name
    from ..verify.counts import count_algorithm

    notes = {}
    # breadth-first levels form every operand sum from the blocks, whatever schedule was given for them
    derived = [level.algorithm for level in lowered.levels if is_default_name(level.schedule)]
    for algorithm in derived + list(lowered.breadth.algorithms if lowered.breadth is not None else ()):
        counts = count_algorithm(algorithm)
        if algorithm.sums and counts.additions < counts.additions_unshared:
            notes[algorithm.name] = (f"{algorithm.name}'s {len(algorithm.sums)} named sums are not shared by the library: "
                                     "it forms each product's operand sums and each output from the blocks, "
                                     f"{counts.additions_unshared} block additions a level where the scheme as written "
                                     f"has {counts.additions}")
    return "; ".join(notes.values()) or None


def _check_limit_reachable(lowered: Lowered) -> None:
    """Refuse a workspace limit below what even a 1×1×1 call needs (the ozaki leaf's workspace): the
    library would return 4000 at every call.

    Raises:
        OptionError: naming the bytes the smallest call needs.
    """
    limit = lowered.options.workspace_limit
    if limit is None:
        return
    least = library_call_bytes(lowered.with_fallbacks()[-1], 1, 1, 1)
    if least > limit:
        raise OptionError(f"--workspace-limit {limit} is below the {least} bytes even a 1x1x1 call needs (the "
                          f"{lowered.options.leaf} leaf's workspace): every call would return 4000; raise it")


def _ozaki_entry(code: OzakiCode) -> dict:
    """What the manifest says of one dtype's ozaki leaf in the library."""
    return {
        "moduli": {str(c.count): {"up_to_k": c.k_last, "kernels": [f"{c.prefix}{p}" for p in code.passes]}
                   for c in code.counts},
        "chosen": f"--moduli {code.counts[0].count}" if code.fixed else f"the fewest that keep {code.bits} bits",
        "scaling": code.scaling,
        "k_chunk": code.k_chunk,
        "int8_gemms": f"cublasGemmStridedBatchedEx with a batch of one (as the runtime calls it), one call per modulus in "
                      f"tiles of at most about {code.tile} rows and columns, k whole",
        "tiles_of_c": "all of C at once, unless a --workspace-limit leaves no plan room for that: then the last plan's "
                      "leaves run in tiles of C that fit, each a product of its own (as the runtime does under the limit)",
        "not_run": "no Strassen level on the residues",
    }


def host_notes(host: dict) -> list[str]:
    """What the manifest's host section says the C++ library does not run, as notes for the user."""
    notes = [host.get("launch"), host.get("left_out"), host.get("workspace_limit", {}).get("note"),
             host.get("workspace_note"), host.get("sums_note"), host.get("moduli_note"), host.get("accuracy_note"),
             *host.get("unused", ())]
    return [note for note in notes if note]
