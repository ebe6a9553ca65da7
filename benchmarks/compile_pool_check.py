"""Check on a GPU that tune.compile_all's spawned compile pool (processes.mapped) compiles the
candidates and that the resources read here match those compiled one at a time."""
import time
import warnings

from bilinear.lower.product import candidate_configs
from bilinear.runtime import tune



def main() -> None:
    warnings.filterwarnings("error", message="parallel work failed")  # the pool must run, not fall back
    for dtype in ("float64", "float32"):
        spec = tune.representative_spec(dtype, "single")
        configs = list(candidate_configs(dtype))[:6]
        start = time.perf_counter()
        pooled = tune.compile_all(spec, configs, jobs=6)
        pooled_s = time.perf_counter() - start
        alone = [tune.resources_of(tune.compiled_kernel(spec, config)) for config in configs]
        same = [resources for _, resources in pooled] == alone
        print(f"{dtype}: {len(configs)} candidates through the pool in {pooled_s:.1f} s; resources as compiled alone: {same}")
        assert same


if __name__ == "__main__":  # spawned workers import this file: they must not run it
    main()
