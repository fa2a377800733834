package shmem

import (
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// progress is IKN's MPI progress thread (ROC_SHMEM's reverse offload: the
// service thread polls the work-groups' queues and hands each operation
// over; the progress thread issues it on the network). The hand-off is a
// FIFO in host memory: the service thread appends and bumps a tail word,
// the progress thread spins on that word through its coherent cache (a
// miss when it changed) and issues what it finds, in order.
type progress struct {
	svc            *service
	fifo           []handoff
	tail           mem.Addr
	count          uint64
	handed, issued map[int]int // per context (queue index)
}

type handoff struct {
	q *queue
	e entry
}

// handoffInstr is the service thread's work to append an operation to the
// progress thread's FIFO (copy the entry, bump the tail).
const handoffInstr = 20

// startProgress spawns the progress thread on the core after the threads
// service threads' (a core of its own when the node has one free,
// otherwise time-sliced) and points every service thread at it.
func (b *queueBackend) startProgress(threads int) {
	n := b.dev.rt.node
	p := &progress{handed: map[int]int{}, issued: map[int]int{}}
	p.tail = n.Mem.AllocData(mem.Host, mem.LineSize, "shmem.progress-tail")
	p.svc = &service{b: b}
	for _, s := range b.svcs {
		s.progress = p
	}
	b.svcs = append(b.svcs, p.svc)
	core := (1 + threads) % n.CPU.Cores()
	if _, err := n.CPU.SpawnOn(core, "mpi-progress", func(th *cpu.Thread) {
		p.svc.port = &hostPort{t: th, spec: n.CPU.Spec(), link: n.GPULink, m: n.Mem}
		p.run()
	}); err != nil {
		panic(err) // core is in range by construction
	}
}

// hand appends e of queue q to the FIFO from service thread s.
func (p *progress) hand(s *service, q *queue, e entry) {
	s.port.instr(handoffInstr)
	p.fifo = append(p.fifo, handoff{q, e})
	p.handed[q.idx]++
	p.count++
	s.port.local(p.tail, p.count)
	if p.svc.port != nil {
		p.svc.port.nudge().Notify()
	}
}

// run is the progress thread: wait for hand-offs, issue them in order.
func (p *progress) run() {
	s := p.svc
	defer s.port.exit()
	s.start = s.now()
	for {
		s.port.idleWait("an operation from the service thread", func() bool { return s.stop || len(p.fifo) > 0 })
		if len(p.fifo) == 0 {
			return // stopped with nothing left
		}
		s.port.poll(p.tail) // the tail line changed: a miss
		s.polls++
		for len(p.fifo) > 0 {
			h := p.fifo[0]
			p.fifo = p.fifo[1:]
			s.b.lib.issue(s, h.q, h.e)
			p.issued[h.q.idx]++
			s.served++
		}
	}
}
