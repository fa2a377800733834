package spin

import (
	"fmt"
	"strings"
)

// Method is a receive-side datatype processing strategy.
type Method uint8

// The methods: the two baselines and the four offload strategies of the
// SC'19 paper (specialized handlers, and the three general ones built on
// MPITypes).
const (
	HostUnpack  Method = iota // contiguous RDMA, then the CPU unpacks
	Iovec                     // Portals-4 iovec list on the NIC
	Specialized               // type-specific handlers
	HPULocal                  // a segment per HPU with catch-up
	ROCP                      // read-only checkpoints
	RWCP                      // progressing checkpoints
)

var methodNames = [...]string{"host", "iovec", "specialized", "hpu-local", "ro-cp", "rw-cp"}

// Methods lists every method in order.
func Methods() []Method { return []Method{HostUnpack, Iovec, Specialized, HPULocal, ROCP, RWCP} }

// String is the method's name.
func (m Method) String() string { return methodNames[m] }

// Handlers reports whether the method runs sPIN handlers.
func (m Method) Handlers() bool { return m >= Specialized }

// ParseMethod reads a method name (as String prints it).
func ParseMethod(s string) (Method, error) {
	for i, n := range methodNames {
		if strings.EqualFold(s, n) {
			return Method(i), nil
		}
	}
	return 0, fmt.Errorf("unknown datatype method %q: must be one of %s", s, strings.Join(methodNames[:], ", "))
}
