package progress

import (
	"fmt"
	"sync"
	"time"
)

// Waiter is told about long operations that have no byte count (a gallery
// image version being created and replicated, a disk being granted
// access): a CI log that shows nothing for half an hour looks hung.
type Waiter interface {
	// Wait begins a wait for op (no secrets); call end when it is over.
	Wait(op string) (end func())
}

// WaitOf returns w, or a Waiter that reports nothing when w is nil.
func WaitOf(w Waiter) Waiter {
	if w == nil {
		return nopWaiter{}
	}
	return w
}

type nopWaiter struct{}

func (nopWaiter) Wait(string) func() { return func() {} }

// DefaultWaitInterval is how often a Printer says a wait goes on.
const DefaultWaitInterval = time.Minute

// Wait implements Waiter: a line "op: still running after 2m0s" every
// wait interval until end is called, so operations shorter than that
// print nothing (the step line has their duration). end returns once no
// more line can be printed.
func (p *Printer) Wait(op string) (end func()) {
	start := p.now()
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(p.waitInterval)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				p.printLine(fmt.Sprintf("%s: still running after %s", op, duration(p.now().Sub(start))))
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-stopped
		})
	}
}

// printLine prints a line of its own, above the bars on a terminal.
func (p *Printer) printLine(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		p.clearLocked()
	}
	fmt.Fprintln(p.w, line)
	if p.tty {
		p.drawLocked(true)
	}
}
