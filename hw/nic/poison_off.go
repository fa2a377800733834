//go:build !nicpoison

package nic

// poisonBuild is true in a build with the nicpoison tag: every NIC then
// poisons what it retires instead of reusing it (NIC.poisonRetired), so
// that a whole simulation's goldens prove no recycled packet or message
// record is used after its release.
const poisonBuild = false
