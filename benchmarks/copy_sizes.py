"""The device-to-device copy rate against the size copied: the ceiling a memory-bound kernel
of that many bytes can reach, beside the 2 GiB copy the TSM2 table is measured against (4 GiB moved).

Each size is timed as a batch of back-to-back copies between two CUDA events (median of
--repeat batches), so the host's launch cost is hidden as it is in `benchmarks/tsm2.py`, and
the copies rotate through enough buffers (≥ 512 MB) that the 50 MB L2 cannot serve them.

    python benchmarks/copy_sizes.py
"""

from __future__ import annotations

import argparse

import cupy as cp

from bilinear.measure import median, time_device

MOVED_MB = (16, 32, 64, 128, 256, 512, 4096)  # bytes read + written, as the TSM2 table counts them


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    rates = {}
    for mb in MOVED_MB:
        elements = mb * 2**20 // 16  # half the bytes read, half written
        pairs = [(cp.ones(elements), cp.empty(elements)) for _ in range(max(1, 512 // mb))]
        copies = max(len(pairs), 2048 // mb)  # about 2 GiB moved per batch

        def batch(pairs=pairs, copies=copies) -> None:
            stream = cp.cuda.get_current_stream().ptr
            for i in range(copies):
                source, target = pairs[i % len(pairs)]
                cp.cuda.runtime.memcpyAsync(target.data.ptr, source.data.ptr, source.nbytes,
                                            cp.cuda.runtime.memcpyDeviceToDevice, stream)

        seconds = median(time_device(batch, cp, repeat=args.repeat)) / copies
        rates[mb] = mb * 2**20 / seconds
        del pairs, batch  # free this size's buffers before the next
    for mb, rate in rates.items():
        print(f"{mb:5d} MB moved: {rate / 1e9:7.1f} GB/s, {rate / rates[MOVED_MB[-1]]:.3f} of the rate moving "
              f"{MOVED_MB[-1]} MB ({mb * 2**20 / rate * 1e6:.1f} µs a copy)", flush=True)


if __name__ == "__main__":
    main()
