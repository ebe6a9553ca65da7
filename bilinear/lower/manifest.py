"""The JSON manifest ``bilinear compile`` writes: kernels, stages, launch plan, workspace."""

from __future__ import annotations

from dataclasses import asdict

from ..ir import Stage
from .elementwise import ElementwiseKernel
from .leaves import ProductLaunch
from .host_code import TEMP_ALIGN
from .ozaki_host import library_bytes, ozaki_code
from .plan import LevelPlan, Lowered, call_workspace_bytes
from .options import MAX_BYTES, OptionError
from .product import default_config, describe

#: Bumped whenever a key of the manifest changes meaning or goes away.
MANIFEST_SCHEMA_VERSION = 6  # 2: host.breadth_first.note went (the library runs them); 3: host.workspace_limit is
# an object (the plans the library falls back to), and kernels lists theirs too; 4: host.leaves went (the library
# runs ozaki leaves: host.ozaki), and workspace_bytes counts their workspace; 5: files (the .cu and .h, their bytes
# and SHA-256), host.workspace_note and host.moduli_note (added since, with no bump: host.sums_note); 6: source is a
# list of the files it was built from by absolute path, each once (a string, one file or a hybrid's comma-joined);
# added since, with no bump: uses, host.breadth_first.algorithms, host.workspace_limit.plans[i].levels and .breadth_first,
# host.accuracy_note
_SIZES = (1024, 2048, 4096, 8192, 16384)


def _step(step) -> dict:
    if isinstance(step, ElementwiseKernel):
        return {
            "kind": "elementwise",
            "kernel": step.name,
            "buffers": list(step.buffers),
            "groups": [
                {"like": g.like, "reads": [step.buffers[s] for s in g.reads], "writes": [step.buffers[s] for s in g.writes]}
                for g in step.groups
            ],
        }
    return {"kind": "products", "stage": step.name, "statements": [str(s) for s in step.statements]}


def _level(plan: LevelPlan) -> dict:
    data = {
        "algorithm": plan.algorithm.name,
        "shape": [plan.algorithm.shape.m, plan.algorithm.shape.k, plan.algorithm.shape.n],
        "schedule": plan.schedule.name,
        "computes": "C = A*B" if plan.schedule.overwrites_c else "C += A*B",
        "temporaries": [{"name": t.name, "like": t.like} for t in plan.schedule.temporaries],
        "launches": [_step(s) for s in plan.steps],
        "stages": [
            {"name": s.name, "ordered": s.ordered, "statements": [str(x) for x in s.statements]}
            for s in plan.schedule.stages
            if isinstance(s, Stage)
        ],
    }
    if plan.accumulate_fallback is not None:
        data["accumulate_fallback"] = _level(plan.accumulate_fallback)
    if plan.from_zero is not None:  # what runs where C starts at zero (beta = 0, or a product set above)
        data["from_zero"] = _level(plan.from_zero)
    return data


def limit_plan(plan: Lowered, namespace: str) -> dict:
    """One of the plans a workspace limit falls back to (``Lowered.with_fallbacks``), described as the
    manifest describes the first: its depth-first levels' launch plans and its breadth-first kernels."""
    entry = {"breadth_first_levels": plan.options.breadth, "namespace": namespace,
             "levels": [_level(level) for level in plan.levels]}
    if plan.breadth is not None:
        entry["breadth_first"] = {"levels": plan.options.breadth, "kernels": [k.name for k in plan.breadth.kernels()]}
    return entry


def _product_kernel(launch: ProductLaunch) -> dict:
    spec = launch.spec
    return {
        "kernel": spec.name,
        "depth": launch.depth,
        "views": {"A": spec.n_a, "B": spec.n_b, "C": spec.n_c},
        "products": [describe(product) for product in spec.products],
        "tile": default_config(spec).to_json(),
    }


def manifest(lowered: Lowered, sources: list[str], host: dict | None = None, n: int | None = None,
             uses: tuple[str, ...] = ()) -> dict:
    """What ``bilinear compile`` wrote: every kernel of the ``.cu`` (element-wise, then fused
    product stages with the depth their products run at), the launch plan per level, workspace
    (at fixed sizes, and at ``n``: compile's -n); ``sources``: the files it was built from, ``uses``:
    the other files they read through ``use`` (a schedule's algorithm is built too)."""
    sizes = sorted({*_SIZES, *([n] if n else [])})
    if n and (held := library_workspace_bytes(lowered, n)) > MAX_BYTES:  # the C side counts bytes in a long long
        raise OptionError(f"-n {n}: an n×n×n call needs {held} bytes of workspace, more than the library's functions "
                          f"count ({MAX_BYTES}); give a smaller -n")
    launches = lowered.product_launches()
    data = {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "name": lowered.name,
        "source": sources,
        "uses": list(uses),
        "options": asdict(lowered.options),
        "kernels": lowered.library_kernel_names(),
        "product_kernels": [_product_kernel(launch) for launch in launches],
        "levels": [_level(plan) for plan in lowered.levels],
        # what the library's <name>_dgemm_workspace_bytes(n, n, n) returns (_sgemm's for float32)
        "workspace_bytes": {str(size): library_workspace_bytes(lowered, size) for size in sizes},
        "workspace_bytes_dtype": lowered.options.dtype,
    }
    if host is not None:
        data["host"] = host
    return data


def library_workspace_bytes(lowered: Lowered, n: int) -> int:
    """What the library allocates for an n×n×n call: the temporaries and the breadth-first
    buffers, each rounded up to :data:`TEMP_ALIGN` elements as the host layer rounds them, of the
    plan it runs (under a workspace limit, the first that fits; where none does, the last with its
    ozaki leaves in tiles of C that fit, or as it is where even that does not)."""
    plan = library_plan(lowered, n)
    held = library_call_bytes(plan, n, n, n)
    limit = lowered.options.workspace_limit
    if limit is None or held <= limit:
        return held
    tiled = library_call_bytes(plan, n, n, n, limit)
    return held if tiled is None else tiled


def library_plan(lowered: Lowered, n: int) -> Lowered:
    """The plan the library runs an n×n×n call with: under a workspace limit, the first of
    ``lowered``'s plans whose workspace fits it, else the last (fewest breadth-first levels)."""
    limit = lowered.options.workspace_limit
    plans = lowered.with_fallbacks()
    return next((plan for plan in plans if limit is None or library_call_bytes(plan, n, n, n) <= limit), plans[-1])


#: The C API's sizes are ints: no call is larger.
LARGEST_SIDE = 2**31 - 1


def refused_from(lowered: Lowered) -> int | None:
    """An n from which n×n×n library calls return 4000 under the workspace limit (no plan fits them,
    nor the last one's ozaki leaves in tiles), found by bisection: the least such n where what a
    call needs grows with n; with ozaki leaves, whose tiles round, a few sizes past it may fit again
    and one below it might not.  None without a limit or where every call up to LARGEST_SIDE runs."""
    limit = lowered.options.workspace_limit
    if limit is None:
        return None
    plans = lowered.with_fallbacks()

    def runs(n: int) -> bool:
        return any(library_call_bytes(plan, n, n, n, limit) is not None for plan in plans)

    if runs(LARGEST_SIDE):
        return None
    low, high = 0, LARGEST_SIDE  # runs(low) (a 0×0×0 call needs nothing), not runs(high)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if runs(middle) else (low, middle)
    return high


def library_call_bytes(lowered: Lowered, M: int, K: int, N: int, limit: int | None = None) -> int | None:
    """What one plan's M×K×N library call allocates (the C++ ``call_bytes``): the temporaries and
    breadth-first buffers, each rounded up to :data:`TEMP_ALIGN` elements, then the ozaki leaf's
    workspace from the next 256-byte boundary; with ``limit``, in tiles of C that keep the
    whole within it (None where even one element of C at a time does not)."""
    held = call_workspace_bytes(lowered, M, K, N, TEMP_ALIGN)
    code = ozaki_code(lowered.options, lowered.name)
    if code is None:
        return held if limit is None or held <= limit else None
    offset = -(-held // 256) * 256
    ozaki = library_bytes(lowered, code, M, K, N, None if limit is None else max(0, limit - offset))
    if ozaki is None:
        return None
    return offset + ozaki if ozaki else held


def kernel_count(data: dict) -> int:
    """Every kernel of the ``.cu`` a manifest describes: the main element type's, the other's, and
    the ozaki leaf's passes."""
    host = data["host"]
    ozaki = host.get("ozaki", {}).values()
    return (len(data["kernels"]) + sum(len(names) for names in host["other_kernels"].values())
            + sum(len(count["kernels"]) for entry in ozaki for count in entry["moduli"].values()))
