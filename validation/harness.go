package validation

import (
	"fmt"

	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/tensorcore"
)

// harness is what a harness's calls do that the model must run as they
// ran: the operand values it fills its matrices with, which set the
// tensor cores' bit activity and so, under a power limit, the clock
// (energy.ToggleRate); whether it times calls back to back, so that each
// finds the L2 as the previous one left it; and whether the library's
// kernel is handed a C matrix of the output's shape, which its epilogue
// reads.
type harness struct {
	ops    energy.Operands
	source string
	// loop: the harness times a loop of identical calls with nothing
	// between them that empties the L2 (kernel.l2_start=repeat).
	loop       bool
	loopSource string
	// readsC: the call passes the library a C of D's shape (beta 0 in
	// the source; the library's kernels are not public, so whether they
	// skip the read at beta 0 is not documented). The model reads it
	// (kernel.beta=1): one more stream of D's size from memory.
	readsC       bool
	readsCSource string
	// noLaunchGap: the time is the kernel's own duration on the device,
	// without the gap between its launch and its start that CUDA events
	// around the call include (sm.kernel_launch_latency=0).
	noLaunchGap       bool
	noLaunchGapSource string
}

// harnesses are the harnesses whose calls the model runs differently from
// its config's defaults. A harness not listed (or not stated) keeps the
// config's power.data_activity, kernel.l2_start and kernel.beta.
var harnesses = map[string]harness{
	// CUTLASS profiler, --initialization=random (its default): fp16 from
	// uniform(-3, 3) with int_scale 0, truncated to integers by an int64
	// cast (tools/profiler device_allocation / options.cu set_uniform(-3,
	// 3, 0); util/reference RandomUniformFunc), so 0 twice as likely.
	"cutlass_profiler": {ops: energy.Operands{Name: "CUTLASS profiler integers in [-2, 2]",
		Values: []float64{-2, -1, 0, 1, 2}, Probs: []float64{1.0 / 6, 1.0 / 6, 1.0 / 3, 1.0 / 6, 1.0 / 6}},
		source: "CUTLASS profiler: uniform(-3, 3) truncated to integers",
		loop:   true, loopSource: "CUTLASS profiler: warm-up then profiling iterations of the same operation, back to back"},
	// CUDALibrarySamples cuSPARSELt/matmul/matmul_example.cpp:
	// std::rand() % 5 - 2; it allocates and copies C (dC, m x n) and
	// calls cusparseLtMatmul with beta 0.
	"cusparselt_sample": {ops: energy.Operands{Name: "cuSPARSELt sample integers in [-2, 2]",
		Values: []float64{-2, -1, 0, 1, 2}, Probs: []float64{0.2, 0.2, 0.2, 0.2, 0.2}},
		source: "cuSPARSELt matmul example: rand() % 5 - 2",
		readsC: true, readsCSource: "cuSPARSELt matmul example: dC of the output's shape, beta 0"},
	// PyTorch benchmarks draw their operands with torch.randn and time a
	// loop of the statement (torch.utils.benchmark.Timer runs it `number`
	// times per measurement; a CUDA-event loop likewise); a per-call
	// synchronisation does not empty the L2.
	"torch": {ops: energy.Operands{Name: "torch.randn", Normal: true}, source: "torch.randn",
		loop: true, loopSource: "torch.utils.benchmark: the statement in a loop"},
	"torch_sync": {ops: energy.Operands{Name: "torch.randn", Normal: true}, source: "torch.randn",
		loop: true, loopSource: "PyTorch timing loop, synchronised per call"},
	// PyTorch's cuSPARSELt linear of 2023 (PR 97546,
	// aten/src/ATen/native/cuda/CusparseLtKernels.cpp: CusparseLtLinear::init
	// takes a zeros tensor of the output's shape as C, with beta 0 and the
	// bias through CUSPARSELT_MATMUL_BIAS_POINTER; PR 90119's benchmark of
	// 2023-04-07 timed it with torch.utils.benchmark).
	"torch_cusparselt": {ops: energy.Operands{Name: "torch.randn", Normal: true}, source: "torch.randn",
		loop: true, loopSource: "torch.utils.benchmark: the statement in a loop",
		readsC: true, readsCSource: "PyTorch CusparseLtLinear (PR 97546): a zeros C of the output's shape, beta 0"},
	// Nsight Compute (ncu) profiles one launch of the kernel, replayed
	// once per pass with every cache flushed before it (--cache-control
	// all, its default: a cold L2) and reports gpu__time_duration, the
	// kernel's own time. Its clocks are the row's (ncu's default
	// --clock-control base locks them to the base clock; the report
	// states the SM frequency). The operands are the program's, not ncu's.
	// VENOM's benchmark_spmm (UDC-GAC/venom, src/cuda_utils.h cuTime and
	// src/gemm/cublas_gemm.cpp): 10 warm-up and 100 timed calls back to
	// back between two CUDA events; cusparseLtMatmul gets dC of the
	// output's shape with beta 0 (src/spmm/cusparseLt_spmm.cpp), as the
	// cuSPARSELt sample does. Its operand values are not modelled.
	"venom_cublas": {loop: true, loopSource: "VENOM benchmark_spmm: 10 warm-up and 100 timed cublasGemmEx calls back to back"},
	"venom_cusparselt": {loop: true, loopSource: "VENOM benchmark_spmm: 10 warm-up and 100 timed cusparseLtMatmul calls back to back",
		readsC: true, readsCSource: "VENOM benchmark_spmm: dC of the output's shape, beta 0, as the cuSPARSELt sample"},
	// VENOM's Spatha (src/spmm/spatha_spmm.cpp): one warm-up call, then
	// cuTime's 10 warm-up and 100 timed calls back to back; the op is
	// initialised without C (SpmmBlockwiseOp::initialize(spmat, N, B, D):
	// C nullptr, beta 0), so its epilogue reads none.
	"venom_spatha": {loop: true, loopSource: "VENOM benchmark_spmm: 1 + 10 warm-up and 100 timed Spatha SpMM calls back to back"},
	"ncu":          {noLaunchGap: true, noLaunchGapSource: "Nsight Compute: gpu__time_duration of the kernel, no launch gap"},
}

// harnessRun is how the model runs mode m of a row as its harness ran
// it: the overrides (the operands' power.data_activity for the row's
// precision; kernel.l2_start=repeat where calls run back to back;
// kernel.beta=1 where the library reads a C) and a note of each for the
// report.
type harnessRun struct {
	sets     []string
	operands string // the operand values and their bit activity
	l2       string // why the L2 starts warm
	cRead    string // where the C the epilogue reads comes from
	timing   string // what the measured time leaves out
}

// harnessOf is mode m of row p's harnessRun (empty when the harness says
// nothing the model runs differently).
func harnessOf(p Point, m tensorcore.Mode) (harnessRun, error) {
	var r harnessRun
	h, ok := harnesses[p.HarnessOf(m)]
	if !ok {
		return r, nil
	}
	if h.ops.Name != "" && (!h.ops.Normal || p.Precision != tensorcore.INT8) {
		a, err := energy.ToggleRate(h.ops, p.Precision)
		if err != nil {
			return r, err
		}
		r.sets = append(r.sets, fmt.Sprintf("power.data_activity=%.4f", a))
		r.operands = fmt.Sprintf("%s: bit activity %.3f", h.source, a)
	}
	if h.loop {
		r.sets = append(r.sets, "kernel.l2_start=repeat")
		r.l2 = h.loopSource
	}
	if h.readsC {
		r.sets = append(r.sets, "kernel.beta=1")
		r.cRead = h.readsCSource
	}
	if h.noLaunchGap {
		r.sets = append(r.sets, "sm.kernel_launch_latency=0")
		r.timing = h.noLaunchGapSource
	}
	return r, nil
}
