"""The Brent equations over rings other than Q: approximate, modular and complex schemes.

Catalogues hold three kinds of schemes that are not exact algorithms over Q:

- **approximate** (APA, border-rank) schemes, whose coefficients are Laurent
  polynomials in a parameter (``x`` in fast-matmul's ``*-approx`` files, where
  ``xi`` is 1/x).  For every triple (A block, B block, C block) the
  coefficient Σ_r u·v·w is a Laurent polynomial in x; the scheme holds *in
  the limit x → 0* when none has a negative power and every constant term is
  the classical one.  It is then exact for no fixed x: the error is O(x^σ),
  while single products carry up to x^-φ, so rounding errors grow like
  u·x^-φ (Bini, Lotti and Romani 1980).  Checked with sympy.
- **modular** schemes, valid only modulo p (Kauers's ``*.mod2.exp``,
  AlphaTensor's ``factorizations_f2.npz``, p = 2; PLinOpt's schemes over
  Q(√3) written with 1013 standing for √3, p = 1013² − 3): checked modulo p,
  rationals a/b as a·b⁻¹, and over Q.
- **complex** schemes over Q(i) (AlphaEvolve's ⟨4,4,4;48⟩): checked exactly,
  real and imaginary parts as integer tensors.

The exact check :func:`~bilinear.verify.ring_tensor.brent_tensor` computes
Σ_r u·v·w on integer tables.

One module per ring: :mod:`~bilinear.verify.ring_approximate` (Laurent
polynomials in x), :mod:`~bilinear.verify.ring_modular` (GF(p)) and
:mod:`~bilinear.verify.ring_complex` (Q(i)); this module names them together.

None becomes an exact :class:`~bilinear.ir.Algorithm` that code
generation could take: an :class:`ApproximateScheme` holds sympy
coefficients, a :class:`ModularScheme` only wraps the algorithm its
coefficients would give over Q, to say that it is claimed modulo p, and a
:class:`ComplexScheme` holds complex rationals.  ``bilinear.api.load``
refuses all three, saying why; ``bilinear.api.verify`` reports them with
:class:`ApproximateReport`, :class:`ModularReport` and :class:`ComplexReport`,
whose ``ok`` means "an exact algorithm over Q" and is therefore never true of
an approximate or complex scheme, while ``holds`` says whether the scheme is
what it claims to be.
"""

from .ring_approximate import ApproximateReport, ApproximateScheme, check_approximate, laurent_terms
from .ring_complex import ComplexReport, ComplexScheme, Gaussian, check_complex
from .ring_modular import ModularReport, ModularScheme, check_modular

__all__ = [
    "ApproximateReport",
    "ApproximateScheme",
    "ComplexReport",
    "ComplexScheme",
    "Gaussian",
    "InexactReport",
    "InexactScheme",
    "ModularReport",
    "ModularScheme",
    "check_approximate",
    "check_complex",
    "check_inexact",
    "check_modular",
    "laurent_terms",
]

InexactScheme = ApproximateScheme | ModularScheme | ComplexScheme
InexactReport = ApproximateReport | ModularReport | ComplexReport


def check_inexact(scheme: InexactScheme) -> InexactReport:
    """The report for either kind of scheme that is not an exact algorithm over Q."""
    if isinstance(scheme, ApproximateScheme):
        return check_approximate(scheme)
    if isinstance(scheme, ComplexScheme):
        return check_complex(scheme)
    return check_modular(scheme)
