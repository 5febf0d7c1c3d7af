#!/usr/bin/env python3
"""Dense vs 2:4-sparse FP16/BF16 GEMM timings on a real NVIDIA GPU.

Run on a Hopper (or Ampere) GPU with PyTorch, then run
`stcsim validate --points` on the CSV (docs/validation.md, "Hopper").

Shapes follow stcsim's orientation: M = rows of the sparse operand A
(out_features), N = tokens x batch, K = in_features (the 2:4 groups run
along K). The sparse operand is a magnitude-pruned 2:4 weight converted with
torch.sparse.to_sparse_semi_structured; the dense baseline is torch.mm on
the same (pruned) weight. Timing: CUDA events around each call, warm-ups,
then the median of repeats.

Output: CSV in the format of shared/validation/a100-public.csv on stdout,
with the GPU, driver, CUDA and PyTorch versions in '#' comment lines.
"""
import argparse
import statistics
import sys

import torch
from torch.sparse import to_sparse_semi_structured

SQUARE = [1024, 2048, 4096, 8192, 16384]
# BERT-Large (seq 128 x batch 32 = 4096 tokens) and ResNet-50 (batch 32)
# layer shapes as (name, M, N, K).
LAYERS = [
    ("bert-large-qkv", 3072, 4096, 1024),
    ("bert-large-attn-out", 1024, 4096, 1024),
    ("bert-large-ffn1", 4096, 4096, 1024),
    ("bert-large-ffn2", 1024, 4096, 4096),
    ("resnet50-layer3-conv2", 256, 6272, 2304),
    ("resnet50-layer4-conv2", 512, 1568, 4608),
    ("resnet50-layer2-conv3", 512, 25088, 128),
]


def prune_2_4(w):
    """Keep the two largest |w| of every 4 along K (dim 1)."""
    m, k = w.shape
    g = w.reshape(m, k // 4, 4)
    idx = g.abs().topk(2, dim=-1).indices
    mask = torch.zeros_like(g, dtype=torch.bool).scatter_(-1, idx, True)
    return (g * mask).reshape(m, k)


def time_ms(fn, warmup, repeats):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def measure(m, n, k, dtype, warmup, repeats):
    a = prune_2_4(torch.randn(m, k, device="cuda", dtype=dtype))
    b = torch.randn(k, n, device="cuda", dtype=dtype)
    a_sparse = to_sparse_semi_structured(a)
    dense = time_ms(lambda: torch.mm(a, b), warmup, repeats)
    sparse = time_ms(lambda: torch.mm(a_sparse, b), warmup, repeats)
    return dense * 1e3, sparse * 1e3  # microseconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hardware", default=None, help="hardware column (default: the device name)")
    ap.add_argument("--dtypes", default="fp16,bf16")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=50)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")
    name = torch.cuda.get_device_name()
    hw = args.hardware or name.replace("NVIDIA ", "").replace(" ", "-")
    print(f"# device: {name}; torch {torch.__version__}; CUDA {torch.version.cuda}; "
          f"driver via nvidia-smi; cuSPARSELt available: "
          f"{torch.backends.cusparselt.is_available() if hasattr(torch.backends, 'cusparselt') else 'unknown'}")
    print("id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source")
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    shapes = [(f"square-{s}", s, s, s) for s in SQUARE] + LAYERS
    for prec in args.dtypes.split(","):
        for ident, m, n, k in shapes:
            d, s = measure(m, n, k, dtypes[prec], args.warmup, args.repeats)
            print(f"{ident}-{prec},{hw},{prec},gemm,{m},{n},{k},{d:.1f},{s:.1f},us,"
                  f"{d / s:.3f},scripts/hopper_sparse_bench.py (torch.mm vs "
                  f"to_sparse_semi_structured; median of {args.repeats})", flush=True)


if __name__ == "__main__":
    main()
