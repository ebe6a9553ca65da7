"""The one kernel service: CUDA source compiled through CuPy (NVRTC) once per process.

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
