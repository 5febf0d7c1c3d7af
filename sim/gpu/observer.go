package gpu

import akita "github.com/sarchlab/akita/v3/sim"

// Observer watches kernel simulations as they are built and run.
type Observer interface {
	// KernelBuilt is called before the engine runs: kernel names the
	// simulation, comps are its SMs and tensor cores.
	KernelBuilt(kernel string, engine akita.Engine, comps []akita.Component)
	// KernelDone is called after the engine has drained.
	KernelDone(kernel string)
}
