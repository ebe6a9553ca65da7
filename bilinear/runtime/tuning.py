"""The fused product kernel's tile configuration for this GPU: the tuner's winner
(:mod:`bilinear.runtime.tune`) stored on disk per GPU model, dtype and operand kind
(single-view operands, or operand sums), else :data:`~bilinear.lower.product.DEFAULTS`
(measured on the lent H100, see ``benchmarks/PRODUCT_NOTES.md``).

The cache is ``tuning.json`` in :func:`bilinear.paths.cache_dir` (``$BILINEAR_CACHE`` moves it).
"""

from __future__ import annotations

from pathlib import Path

from ..lower.product import DEFAULTS, ProductStageSpec, TileConfig, config_problems, variant
from ..paths import cache_dir, read_cache_file, update_cache_file


def cache_path() -> Path:
    return cache_dir() / "tuning.json"


def gpu_model() -> str:
    from .cuda import device_info

    return device_info().name


def cache_key(gpu: str, dtype: str, kind: str) -> str:
    return f"{gpu}|{dtype}|{kind}"


def load_cache(path: Path | None = None) -> dict:
    """The cache's entries; a missing, truncated or edited file counts as empty (tune again)."""
    return read_cache_file(path or cache_path())


def store(gpu: str, dtype: str, kind: str, config: TileConfig, details: dict, path: Path | None = None) -> bool:
    """Record the winner; other entries in the file are kept.  False where it cannot be written."""
    return update_cache_file(path or cache_path(), cache_key(gpu, dtype, kind), {"config": config.to_json(), **details})


def lookup(gpu: str, dtype: str, kind: str, path: Path | None = None) -> TileConfig | None:
    """The cached winner, or None when there is none or the entry is not a valid configuration."""
    entry = load_cache(path).get(cache_key(gpu, dtype, kind))
    try:
        config = TileConfig.from_json(entry["config"])
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError):  # (a size of 1e400: int(inf))
        return None
    return None if config_problems(config, dtype) else config


def config_for(spec: ProductStageSpec) -> TileConfig:
    """The tuned configuration for this GPU, dtype and operand kind, else the default."""
    kind = variant(spec)
    try:
        cached = lookup(gpu_model(), spec.dtype, kind)
    except (ImportError, RuntimeError):  # no CuPy, or no device to name: use the default
        cached = None
    return cached or DEFAULTS[(spec.dtype, kind)]
