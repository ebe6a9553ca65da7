"""Several GPUs, one process each: global decompositions verified exactly, run over MPI and NCCL.

``mpiexec -n P python script.py`` where the script calls, on every rank::

    import bilinear.distributed as dist
    C = dist.matmul(A, B)                       # Strassen-Winograd over the ranks, local Winograd
    product = dist.compile("algorithms/msmes.bl", steps=1, levels=2)   # MSMES on each GPU
    C = product(A, B)

See :mod:`.plan` for what a plan is and :mod:`.check` for what its proof covers.
"""

from .api import DistributedProduct, compile, decomposition_for, matmul
from . import chain as chain_module  # noqa: F401 - the module, beside the function of the same name
from .chain import ChainModel, ChainPlan, chain, plan_chain
from .check import PlanCheck, verify_plan
from .comm import DistributedError
from ..lower.decompose import Decomposition, breadth_first, classical, tiles_2d
from .plan import Plan, make_plan

__all__ = [
    "ChainModel",
    "ChainPlan",
    "chain",
    "plan_chain",
    "Decomposition",
    "DistributedError",
    "DistributedProduct",
    "Plan",
    "PlanCheck",
    "breadth_first",
    "classical",
    "compile",
    "decomposition_for",
    "make_plan",
    "matmul",
    "tiles_2d",
    "verify_plan",
]
