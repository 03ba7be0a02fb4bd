// Package guest simulates what a booted VM would answer: the content a
// simulated packer build records on an OS disk (GuestContent), and the
// evaluation of a run command's simulated checks and scans
// (cloud.GuestCheck, cloud.GuestScan) against it. Only simulations (the
// local target, the fake ARM, the packer simulator) import it; the real
// provider runs the script instead.
package guest
