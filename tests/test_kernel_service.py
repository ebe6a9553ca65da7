"""The one kernel service's key, the one cache folder and atomic writes (CPU; compiling needs a GPU)."""

from __future__ import annotations

from bilinear.paths import cache_dir, write_atomic
from bilinear.runtime.cuda import OPTIONS, kernel_key


def test_the_key_covers_the_rendered_source_the_options_and_the_arch():
    key = kernel_key("__global__ void k() {}", OPTIONS, "90")
    assert key == kernel_key("__global__ void k() {}", OPTIONS, "90")
    assert key != kernel_key("__global__ void k() { }", OPTIONS, "90")  # any change to the source
    assert key != kernel_key("__global__ void k() {}", (*OPTIONS, "-lineinfo"), "90")
    assert key != kernel_key("__global__ void k() {}", OPTIONS, "100")


def test_one_variable_moves_every_cache(tmp_path, monkeypatch):
    from bilinear.runtime import tuning

    monkeypatch.setenv("BILINEAR_CACHE", str(tmp_path))
    assert cache_dir() == tmp_path and tuning.cache_path().parent == tmp_path


def test_atomic_writes_leave_no_temporary_behind(tmp_path):
    target = tmp_path / "deep" / "file.json"
    write_atomic(target, "one")
    write_atomic(target, "two")
    assert target.read_text() == "two" and sorted(p.name for p in target.parent.iterdir()) == ["file.json"]
