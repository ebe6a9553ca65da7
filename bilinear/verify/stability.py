"""Numerical-stability quantities of a bilinear algorithm, computed from U, V, W.

- growth factor γ = Σ_r ‖u_r‖₂ ‖v_r‖₂ ‖w_r‖₂ (Dumas, Pernet and Sedoglavic,
  "Strassen's algorithm is not optimally accurate", 2024): the factor by which
  one level can amplify the normwise error bound; 8 for the classical 2x2
  product, 12 + 2√2 ≈ 14.83 for Strassen.  L levels multiply it L times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..ir import Algorithm
from .expand import Expansion


@dataclass(frozen=True)
class Stability:
    growth_factor: float

    def growth_after(self, levels: int) -> float:
        return self.growth_factor**levels


def _norm(values) -> float:
    return math.sqrt(sum(float(v) ** 2 for v in values))


def stability(algorithm: Algorithm) -> Stability:
    U, V, W = Expansion(algorithm).tables()
    columns = range(algorithm.rank)
    growth = sum(_norm(row[r] for row in U) * _norm(row[r] for row in V) * _norm(row[r] for row in W) for r in columns)
    return Stability(growth_factor=growth)
