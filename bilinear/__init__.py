"""bilinear: a compiler, exact verifier and GPU runtime for fast matrix multiplication.

``load``, ``compile``, ``inplace``, ``matmul`` and ``BilinearError`` are imported on first use (PEP
562), so ``import bilinear`` loads none of the package (2 ms): the parser's grammar loads only when
a scheme is read, and sympy only when an approximate scheme (a parameter in its coefficients) is.
"""

import sys
import types

__version__ = "0.1.0"

__all__ = ["BilinearError", "__version__", "compile", "inplace", "load", "matmul", "verify"]

# name -> the module that defines it
_LAZY = {"BilinearError": "diagnostics", "compile": "api", "inplace": "inplace_api", "load": "api", "matmul": "matmul_api"}


class _Package(types.ModuleType):
    """The package, whose ``verify`` stays the function below when the subpackage ``bilinear.verify`` loads
    (the import system sets a loaded subpackage as its parent's attribute).  So nothing need load with the
    package: a Ctrl-C in the 0.13 s the verify package took, before the command line's handlers existed,
    printed a traceback."""

    def __setattr__(self, name: str, value) -> None:
        if name == "verify" and isinstance(value, types.ModuleType):
            return  # (reachable as sys.modules["bilinear.verify"], and by from-imports of its modules)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def verify(*args, **options):
    """Verify every definition of a file or loaded program; see :func:`bilinear.api.verify`
    (this forwards every argument to it, unchanged)."""
    from .api import verify as verify_file

    return verify_file(*args, **options)


def __getattr__(name: str):
    import importlib

    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    # subpackages (bilinear.api, bilinear.lower, ...) as attributes, as an eager import gave them; a
    # name that is not one ("x.y") is no module of the package (it had been imported as a module path)
    if not name.isidentifier():
        raise AttributeError(f"module 'bilinear' has no attribute {name!r}")
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as missing:
        if missing.name != f"{__name__}.{name}":
            raise  # the submodule exists but needs something absent (e.g. cupy): say so
        raise AttributeError(f"module 'bilinear' has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
