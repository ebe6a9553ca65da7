"""The one kernel service: CUDA source compiled through CuPy (NVRTC) once per process, and the
one description of the device (:class:`DeviceInfo`).

Every generated kernel (element-wise stages, fused product stages, TSM2) comes here.  The key
is a hash of the *rendered* source, the compiler options and the device's architecture, so a
change to any template (or any macro it imports) can never return a stale kernel, and two
programs whose kernels share a name but not a body never get each other's code.  Compiles run
outside the lock (NVRTC releases the GIL, so a thread pool compiles in parallel); one lock
guards the table.  CuPy keeps the compiled binaries on disk as well.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

OPTIONS = ("-std=c++17",)
DEFAULT_SHARED = 48 * 1024  # above this a kernel must opt in to dynamic shared memory

LOCK = threading.Lock()
_functions: dict[str, Any] = {}


def kernel_key(source: str, options: tuple[str, ...], arch: str) -> str:
    return hashlib.sha256(repr((source, tuple(options), arch)).encode()).hexdigest()


def compiled_function(source: str, name: str, options: tuple[str, ...] = OPTIONS, shared_bytes: int = 0,
                      device_id: int | None = None) -> Any:
    """The ``cupy.RawKernel`` ``name`` of ``source`` on a device, compiled on first use; with
    ``shared_bytes`` beyond the default limit it may use that much dynamic shared memory."""
    import cupy

    device = cupy.cuda.Device() if device_id is None else cupy.cuda.Device(device_id)
    key = f"{kernel_key(source, options, device.compute_capability)}:{name}:{device.id}"
    with LOCK:
        hit = _functions.get(key)
    if hit is not None:
        return hit
    with device:
        function = cupy.RawModule(code=source, options=tuple(options)).get_function(name)
        if shared_bytes > DEFAULT_SHARED:
            function.max_dynamic_shared_size_bytes = shared_bytes
    with LOCK:
        return _functions.setdefault(key, function)


def current_device() -> int:
    """The current GPU: 0, not asked, where the process sees one GPU.  Asking costs microseconds of
    host time, which a graph replay (one launch, < 20 µs in all) and a prepared call pay each time."""
    import cupy

    return 0 if _device_count() == 1 else cupy.cuda.runtime.getDevice()


@lru_cache(maxsize=None)
def _device_count() -> int:
    import cupy

    return cupy.cuda.runtime.getDeviceCount()


@dataclass(frozen=True)
class DeviceInfo:
    """The one description of a GPU every part of the runtime reads (``None``: not reported)."""

    id: int
    name: str
    arch: str  # compute capability, e.g. "90"
    sms: int
    clock_hz: float | None
    max_threads_per_sm: int | None
    max_blocks_per_sm: int | None
    registers_per_sm: int | None
    shared_per_sm: int | None
    shared_per_block: int | None  # opt-in maximum
    shared_reserved: int | None  # the runtime's own per block


def device_info(device_id: int | None = None) -> DeviceInfo:
    """The current (or given) device, queried once per process and device."""
    import cupy

    return _device_info(cupy.cuda.Device().id if device_id is None else device_id)


@lru_cache(maxsize=None)
def _device_info(device_id: int) -> DeviceInfo:
    import cupy

    device = cupy.cuda.Device(device_id)
    attributes = device.attributes
    name = cupy.cuda.runtime.getDeviceProperties(device.id)["name"]
    clock_khz = attributes.get("ClockRate", 0)
    return DeviceInfo(
        id=device.id,
        name=name.decode() if isinstance(name, bytes) else str(name),
        arch=device.compute_capability,
        sms=attributes["MultiProcessorCount"],
        clock_hz=clock_khz * 1e3 if clock_khz > 0 else None,
        max_threads_per_sm=attributes.get("MaxThreadsPerMultiProcessor"),
        max_blocks_per_sm=attributes.get("MaxBlocksPerMultiprocessor"),
        registers_per_sm=attributes.get("MaxRegistersPerMultiprocessor"),
        shared_per_sm=attributes.get("MaxSharedMemoryPerMultiprocessor"),
        shared_per_block=attributes.get("MaxSharedMemoryPerBlockOptin"),
        shared_reserved=attributes.get("ReservedSharedMemoryPerBlock"),
    )
