# A/B: winograd L2 with 2 breadth-first levels (serial, no graph), interleaved with cuBLAS, median of 21
import sys, cupy as cp, numpy as np, bilinear
label = sys.argv[1]
for n in (4096, 4100, 8192):
    p = bilinear.compile("winograd", levels=2, breadth=2, backend="cupy")
    rng = cp.random.default_rng(1)
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    out = cp.empty((n, n))
    for _ in range(3):
        p(A, B, out=out); cp.matmul(A, B)
    s, e = cp.cuda.Event(), cp.cuda.Event()
    ours, theirs = [], []
    for _ in range(21):
        s.record(); p(A, B, out=out); e.record(); e.synchronize(); ours.append(cp.cuda.get_elapsed_time(s, e))
        s.record(); cp.matmul(A, B); e.record(); e.synchronize(); theirs.append(cp.cuda.get_elapsed_time(s, e))
    o, t = np.median(ours), np.median(theirs)
    print(f"{label} n={n}: ours {o:.3f} ms, cuBLAS {t:.3f} ms, ratio {t/o:.3f}", flush=True)
