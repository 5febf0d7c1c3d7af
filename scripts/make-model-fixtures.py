#!/usr/bin/python3
"""Build the model fixtures of stcsim's import tests (workloads/testdata/).

Needs Debian bookworm's python3-torch (1.13), python3-torchvision (0.14)
and python3-onnx (1.12), from apt and no other registry:

    apt-get update && apt-get install -y python3-torch python3-torchvision python3-onnx
    /usr/bin/python3 scripts/make-model-fixtures.py [OUTDIR]

OUTDIR defaults to workloads/testdata. It writes:

- resnet50.onnx: torchvision ResNet-50 (v1.5, random weights: the graph is
  what matters), exported with export_params=False (graph and shapes only;
  the parameters become graph inputs without data), dynamic batch.
- encoder.onnx: a BERT-base-sized torch.nn.TransformerEncoder (12 layers,
  hidden 768, 12 heads, FFN 3072, GELU, batch_first), export_params=False,
  dynamic batch and sequence.
- encoder-profile.json: the same encoder's forward pass at batch 2,
  sequence 128, profiled on the CPU with record_shapes=True, in the
  layout of torch.profiler's export_chrome_trace (see chrome_trace).
- tiny.onnx: a small CNN + MLP exported with its weights
  (export_params=True): conv (16 -> 32, 3x3) and fc1 (512 -> 64) pruned
  2:4 along K before the export, fc2 (64 -> 10) left dense; for the
  weights path.
- tiny-profile.json: tiny's forward pass profiled (a convolution without
  stride and padding in the trace: torch 1.13 does not record them).

The tests read these files only; they never need torch.
"""
import json
import os
import sys

import torch
import torchvision
from torch.profiler import ProfilerActivity, profile

OUT = sys.argv[1] if len(sys.argv) > 1 else "workloads/testdata"
OPSET = 13
torch.manual_seed(0)
torch.set_num_threads(2)


def export(model, x, name, params, dynamic):
    torch.onnx.export(model, x, os.path.join(OUT, name), export_params=params,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": dynamic, "output": dynamic},
                      opset_version=OPSET)


def encoder():
    layer = torch.nn.TransformerEncoderLayer(
        d_model=768, nhead=12, dim_feedforward=3072, dropout=0.0,
        activation="gelu", batch_first=True)
    return torch.nn.TransformerEncoder(layer, num_layers=12,
                                       enable_nested_tensor=False).eval()


def prune24(w):
    """Zero the 2 smallest |w| of every 4 consecutive weights along K, in
    the K order of the implicit GEMM (input channels fastest for a conv)."""
    with torch.no_grad():
        if w.dim() == 4:
            v = w.permute(0, 2, 3, 1).reshape(w.shape[0], -1)
        else:
            v = w.reshape(w.shape[0], -1)
        g = v.reshape(v.shape[0], -1, 4)
        idx = g.abs().argsort(dim=-1)[..., :2]
        g.scatter_(-1, idx, 0.0)
        v = g.reshape(v.shape)
        if w.dim() == 4:
            v = v.reshape(w.shape[0], w.shape[2], w.shape[3], w.shape[1]).permute(0, 3, 1, 2)
        w.copy_(v.reshape(w.shape))


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = torch.nn.Linear(32 * 4 * 4, 64)
        self.fc2 = torch.nn.Linear(64, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        return self.fc2(torch.relu(self.fc1(torch.flatten(x, 1))))


# Operators that only make views or allocate: left out of the written
# traces to keep them small (the 12-layer encoder records ~80,000 events,
# ~79,000 of them these).
VIEW_OPS = {"aten::as_strided", "aten::select", "aten::resolve_conj",
            "aten::resolve_neg", "aten::view", "aten::empty",
            "aten::empty_like", "aten::empty_strided"}


def chrome_trace(events, path):
    """Write the profiler's events as torch.profiler's Kineto-based
    export_chrome_trace does: {"traceEvents": [...]} with complete ("X")
    events of category cpu_op whose args hold "Input Dims".

    Debian's torch is built without Kineto, so torch.profiler falls back to
    the legacy autograd profiler, whose export_chrome_trace writes a bare
    list with empty args (no shapes). Its events carry the recorded shapes
    (input_shapes), which are written here in Kineto's layout."""
    out = []
    for e in events:
        if e.name in VIEW_OPS:
            continue
        out.append({"ph": "X", "cat": "cpu_op", "name": e.name,
                    "pid": 1, "tid": e.thread,
                    "ts": e.time_range.start, "dur": e.time_range.elapsed_us(),
                    "args": {"Input Dims": [list(s) for s in e.input_shapes]}})
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": out}, f)
        f.write("\n")


def profiled(model, x, name):
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        model(x)
    chrome_trace(prof.events(), os.path.join(OUT, name))


def main():
    os.makedirs(OUT, exist_ok=True)
    r50 = torchvision.models.resnet50(weights=None).eval()
    export(r50, torch.zeros(1, 3, 224, 224), "resnet50.onnx", False, {0: "batch"})

    enc = encoder()
    export(enc, torch.zeros(2, 128, 768), "encoder.onnx", False, {0: "batch", 1: "seq"})
    with torch.no_grad():  # a warm-up run, so the profile holds one clean pass
        enc(torch.zeros(1, 16, 768))
    profiled(enc, torch.randn(2, 128, 768), "encoder-profile.json")

    tiny = Tiny().eval()
    prune24(tiny.conv.weight)
    prune24(tiny.fc1.weight)
    export(tiny, torch.zeros(1, 16, 4, 4), "tiny.onnx", True, {0: "batch"})
    profiled(tiny, torch.randn(4, 16, 4, 4), "tiny-profile.json")


if __name__ == "__main__":
    main()
