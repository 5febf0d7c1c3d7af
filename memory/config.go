package memory

import "github.com/stcsim/stcsim/memory/memcfg"

// The hierarchy's configuration lives in package memcfg, which carries no
// simulation engine (the config loader imports it); these are its names
// as the models of this package use them.
type (
	Config             = memcfg.Config
	SharedMemoryConfig = memcfg.SharedMemoryConfig
	L1Config           = memcfg.L1Config
	L2Config           = memcfg.L2Config
	CrossbarConfig     = memcfg.CrossbarConfig
	DRAMConfig         = memcfg.DRAMConfig
)

// Fill arbitration policies, granularities and bandwidth floors: see
// package memcfg.
const (
	FillsFirst       = memcfg.FillsFirst
	LoadsFirst       = memcfg.LoadsFirst
	Fast             = memcfg.Fast
	Detailed         = memcfg.Detailed
	MinDRAMGBps      = memcfg.MinDRAMGBps
	MinL2BytesPerClk = memcfg.MinL2BytesPerClk
)

// Granularities lists the granularities, Fast first.
func Granularities() []string { return memcfg.Granularities() }
