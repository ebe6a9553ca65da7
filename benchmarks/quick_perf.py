import cupy as cp, bilinear, statistics, time
from bilinear.measure import random_inputs
def t(call, reps=5):
    call(); cp.cuda.Device().synchronize()
    out=[]
    for _ in range(reps):
        s,e=cp.cuda.Event(),cp.cuda.Event(); s.record(); call(); e.record(); e.synchronize(); out.append(cp.cuda.get_elapsed_time(s,e))
    return statistics.median(out)
for n in (8192, 16384):
    A,B,C = random_inputs(cp, n,n,n,"float64")
    ref = lambda: cp.matmul(A,B,out=C)
    for path, L in [("msmes",1),("msmes",2),("rsmm",1),("rsmm",2),("strassen",2)]:
        f = bilinear.compile(f"algorithms/{path}.bl", levels=L, backend="cupy")
        ours = t(lambda: f(A,B,out=C)); theirs = t(ref)
        print(f"n={n} {path} L{L}: ours {ours:.2f} ms cublas {theirs:.2f} ms ratio {theirs/ours:.3f}  eff {2*n**3/ours/1e9:.1f} TF", flush=True)
