// Package clock converts between integer cycle counts, which every stcsim
// component keeps internally, and Akita's float seconds, which exist only
// at the engine boundary. It also provides the one event type our
// components schedule for themselves: a callback at a given cycle.
//
// It knows nothing about GPUs; it must not import other stcsim packages.
package clock
