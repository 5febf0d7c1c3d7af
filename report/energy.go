package report

import (
	"strconv"

	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/results"
)

// energyColumns are the CSV columns of a record's clock, energy and power,
// the energy breakdown flattened as energy_<class>.
var energyColumns = func() []string {
	cols := []string{"clock_mhz", "energy_uj", "avg_power_w", "energy_saving"}
	for _, c := range (energy.Breakdown{}).Classes() {
		cols = append(cols, "energy_"+c.Name)
	}
	return cols
}()

// energyRow renders a record's energy fields in energyColumns order.
func energyRow(r results.LayerResult) []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	saving := ""
	if r.EnergySaving != 0 {
		saving = f(r.EnergySaving)
	}
	row := []string{strconv.Itoa(r.ClockMHz), f(r.EnergyUJ), f(r.AvgPowerW), saving}
	for _, c := range r.Energy.Classes() {
		row = append(row, f(c.UJ))
	}
	return row
}
