"""bilinear: a compiler, exact verifier and GPU runtime for fast matrix multiplication."""

from .api import compile, load, matmul, verify
from .diagnostics import BilinearError

__version__ = "0.1.0"

__all__ = ["BilinearError", "compile", "load", "matmul", "verify", "__version__"]
