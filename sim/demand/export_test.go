package demand

// SetPerturb makes every demand Of returns pass through f (nil: none)
// and returns the function it replaced.
func SetPerturb(f func(Demand) Demand) func(Demand) Demand {
	old := perturb
	perturb = f
	return old
}
