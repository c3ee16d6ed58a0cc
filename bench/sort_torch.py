#!/usr/bin/env python3
"""The peer of bench_sort: times torch.sort (CUB's radix sort on CUDA) and torch.cumsum on the
same sizes and key widths, with CUDA events, median of repeats, and prints a table in
bench_sort's format. Needs only PyTorch and a CUDA device.

    python3 bench/sort_torch.py [--sizes 1,10,50] [--bits 32,48] [--reps 20]

What torch.sort does differs from splatc's sort in ways that favour splatc; read the numbers
with that in mind:
  * it returns int64 indices as the values (splatc moves 32-bit values): 12 bytes per pair
    instead of 8 with 32-bit keys, 16 instead of 12 with 48-bit keys;
  * it sorts every bit of the key type: int32 for 32-bit keys (4 passes of 8 bits, as splatc)
    but int64 for 48-bit keys (CUB sorts 64 bits; splatc sorts the 48 it is told about), where
    CUB itself, called with end_bit = 48 as gsplat does, would skip two passes.
So this is the practical peer (what a PyTorch 3DGS trainer pays), not CUB at its best.
"""
import argparse
import statistics
import time

import torch


def time_op(fn, reps):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    # Warm-up as bench_sort does: at least 2 s of work and 3 runs, so the GPU is at its clocks.
    t0, runs = time.perf_counter(), 0
    while runs < 3 or time.perf_counter() - t0 < 2.0:
        fn()
        torch.cuda.synchronize()
        runs += 1
    times = []
    for _ in range(reps):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1,10,50", help="millions of elements, comma separated")
    ap.add_argument("--bits", default="32,48", help="key widths: 32 (int32 keys) or 33..62 (int64 keys)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--no-scan", action="store_true")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("sort_torch.py: no CUDA device")
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(42)
    print(f"device: {torch.cuda.get_device_name(dev)} (torch {torch.__version__}, CUDA {torch.version.cuda})")
    print(f"torch.sort(stable=True) -> int64 indices; timing by CUDA events, median of {args.reps}")
    print(f"{'op':<4}  {'bits':>4}  {'count':>9}  {'ms':>9}  {'G/s':>9}")
    for size in [float(s) for s in args.sizes.split(",")]:
        n = int(size * 1e6 + 0.5)
        for bits in [int(b) for b in args.bits.split(",")]:
            try:
                if bits <= 32:
                    keys = torch.randint(-(2**31), 2**31 - 1, (n,), dtype=torch.int32, device=dev, generator=gen)
                else:
                    keys = torch.randint(0, 2**bits, (n,), dtype=torch.int64, device=dev, generator=gen)
                ms = time_op(lambda: torch.sort(keys, stable=True), args.reps)
                # The same check bench_sort makes: sorted, and a permutation.
                v, i = torch.sort(keys, stable=True)
                ok = bool((v[1:] >= v[:-1]).all()) and bool((keys[i] == v).all())
                print(f"sort  {bits:>4}  {n:>9}  {ms:>9.3f}  {n / ms * 1e-6:>9.4g}  {'ok' if ok else 'WRONG'}")
                del keys, v, i
            except torch.cuda.OutOfMemoryError as e:
                print(f"sort  {bits:>4}  {n:>9}  skipped: {e}")
            torch.cuda.empty_cache()
        if not args.no_scan:
            x = torch.randint(0, 7, (n,), dtype=torch.int32, device=dev, generator=gen)
            ms = time_op(lambda: torch.cumsum(x, 0, dtype=torch.int32), args.reps)
            print(f"scan  {'-':>4}  {n:>9}  {ms:>9.3f}  {n / ms * 1e-6:>9.4g}  inclusive (torch.cumsum)")
            del x
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
