"""bilinear: a compiler, exact verifier and GPU runtime for fast matrix multiplication.

``load``, ``compile``, ``inplace`` and ``matmul`` are imported on first use (PEP 562), so
``import bilinear`` stays fast: the parser's grammar loads only when a scheme
is read, and sympy only when an approximate scheme (a parameter in its
coefficients) is.
"""

from . import verify as _verify_package  # noqa: F401 - loaded first, so the function below shadows it
from .diagnostics import BilinearError

__version__ = "0.1.0"

__all__ = ["BilinearError", "__version__", "compile", "inplace", "load", "matmul", "verify"]

_LAZY = {"compile": "api", "inplace": "inplace_api", "load": "api", "matmul": "matmul_api"}  # name -> the module that defines it


def verify(*args, **options):
    """Verify every definition of a file or loaded program; see :func:`bilinear.api.verify`
    (this forwards every argument to it, unchanged)."""
    from .api import verify as verify_file

    return verify_file(*args, **options)


def __getattr__(name: str):
    import importlib

    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    # subpackages (bilinear.api, bilinear.lower, ...) as attributes, as an eager import gave them
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as missing:
        if missing.name != f"{__name__}.{name}":
            raise  # the submodule exists but needs something absent (e.g. cupy): say so
        raise AttributeError(f"module 'bilinear' has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
