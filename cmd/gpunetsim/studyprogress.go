package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/gpunetsim/gpunetsim/exp/study"
)

// workScale is the length of the terminal bar: thousandths of the work
// left to simulate.
const workScale = 1000

// plainInterval is how often a study prints a progress line when stderr
// is not a terminal.
const plainInterval = 10 * time.Second

// studyProgress shows a study's progress on stderr: a bar with points
// done, points cached, rate and ETA on a terminal; otherwise one plain
// line every plainInterval, whether or not a point finished meanwhile
// (large points take minutes), and a last one when all are done.
type studyProgress struct {
	out      io.Writer
	terminal bool
	// quiet (-q) prints nothing; the counts are still kept.
	quiet   bool
	start   time.Time
	stop    chan struct{}
	stopped sync.WaitGroup
	// closeOnce stops the ticker once: close runs on success and, from
	// the signal handler, on interrupt.
	closeOnce sync.Once

	mu  sync.Mutex
	bar *progressbar.ProgressBar
	// baseWork is the work cached before the first simulation: not on
	// the bar.
	baseWork float64
	state    study.Progress
}

// newStudyProgress returns the progress display for w; quiet gives one
// that prints nothing but keeps the counts, for the interrupt note.
func newStudyProgress(w io.Writer, quiet bool) *studyProgress {
	if quiet {
		return &studyProgress{out: w, quiet: true, start: time.Now()}
	}
	f, ok := w.(*os.File)
	if ok && term.IsTerminal(int(f.Fd())) {
		return &studyProgress{out: w, terminal: true, start: time.Now()}
	}
	return newPlainProgress(w, plainInterval)
}

// newPlainProgress prints a line on w every interval until close.
func newPlainProgress(w io.Writer, every time.Duration) *studyProgress {
	p := &studyProgress{out: w, start: time.Now(), stop: make(chan struct{})}
	p.stopped.Add(1)
	go func() {
		defer p.stopped.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case now := <-t.C:
				p.mu.Lock()
				if p.state.Total > 0 && p.state.Done < p.state.Total {
					fmt.Fprintln(p.out, p.line(p.state, now))
				}
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// report is study.Options.Progress.
func (p *studyProgress) report(s study.Progress) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state = s
	if p.quiet {
		return
	}
	if p.terminal {
		// The bar runs over the expected work of the points to simulate
		// (in thousandths), so its percentage and ETA weigh large points
		// more; points and cached points are in the description.
		if p.bar == nil {
			p.baseWork = s.WorkCached
			p.bar = progressbar.NewOptions(workScale, progressbar.OptionSetWriter(p.out), progressbar.OptionSetPredictTime(true),
				progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
		}
		p.bar.Describe(fmt.Sprintf("%d/%d points, %d cached", s.Done, s.Total, s.Cached))
		if left := s.Work - p.baseWork; left > 0 {
			p.bar.Set(int(workScale * (s.WorkDone - p.baseWork) / left))
		}
		return
	}
	if s.Done == s.Total {
		fmt.Fprintln(p.out, p.line(s, time.Now()))
	}
}

// line describes s at time now: counts, simulation rate and ETA.
func (p *studyProgress) line(s study.Progress, now time.Time) string {
	elapsed := now.Sub(p.start)
	simulated := s.Done - s.Cached
	l := fmt.Sprintf("gpunetsim: %d/%d points (%d cached, %d simulated) in %s", s.Done, s.Total, s.Cached, simulated, elapsed.Round(time.Second))
	if simulated > 0 && elapsed > 0 {
		rate := float64(simulated) / elapsed.Seconds()
		l += fmt.Sprintf(", %.3g points/s", rate)
		// The ETA weighs the points left by their expected work, at the
		// rate the simulated work went so far.
		if left := s.Work - s.WorkDone; s.Total > s.Done && left > 0 && s.WorkDone > s.WorkCached {
			workRate := (s.WorkDone - s.WorkCached) / elapsed.Seconds()
			eta := time.Duration(left / workRate * float64(time.Second))
			l += ", ETA " + eta.Round(time.Second).String()
		}
	}
	return l
}

// close removes the bar from the terminal, or stops the plain lines.
func (p *studyProgress) close() {
	if p == nil {
		return
	}
	p.closeOnce.Do(func() {
		if p.stop != nil {
			close(p.stop)
			p.stopped.Wait()
		}
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
		p.bar.Clear()
	}
}

// interruptNote is what an interrupted study says (see
// session.onInterrupt): how far it got and how to resume. Finished points
// are already in the cache (each entry whole), the running ones are lost.
// It stops the progress display first.
func (p *studyProgress) interruptNote(cacheDir string) string {
	if p == nil {
		return fmt.Sprintf("the points finished, if any, are in the cache %s; run the same command again to resume", cacheDir)
	}
	p.close()
	p.mu.Lock()
	s := p.state
	p.mu.Unlock()
	if s.Total == 0 { // interrupted while the cache was read: earlier runs' points may be in it
		return fmt.Sprintf("no point finished in this run; run the same command again to resume from the cache %s", cacheDir)
	}
	return fmt.Sprintf("%d of %d points are in the cache %s; run the same command again to resume", s.Done, s.Total, cacheDir)
}
