// Package progress shows long transfers advancing: bytes, rate and time
// left. On a terminal it redraws a bar per running transfer; elsewhere
// (CI logs, files) it prints a plain line every 10 seconds or 10 %,
// whichever comes first, and one when a transfer ends. Long operations
// without a byte count (Waiter) get a line every minute they go on.
//
// Providers take a Reporter through their options and call it for every
// transfer; a nil Reporter (see Of) reports nothing. Output goes to the
// writer given to New, normally stderr: never stdout, which carries the
// results.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
)

// Reporter is told about transfers.
type Reporter interface {
	// Start begins a transfer named op (no secrets: a redacted URL) of
	// total bytes.
	Start(op string, total int64) Tracker
}

// Tracker is one transfer.
type Tracker interface {
	// Add counts n more bytes done. Safe for concurrent use.
	Add(n int64)
	// End ends the transfer; err is nil when it succeeded.
	End(err error)
}

// Of returns r, or a Reporter that reports nothing when r is nil.
func Of(r Reporter) Reporter {
	if r == nil {
		return nop{}
	}
	return r
}

type nop struct{}

func (nop) Start(string, int64) Tracker { return nop{} }
func (nop) Add(int64)                   {}
func (nop) End(error)                   {}

// Defaults of a Printer.
const (
	// DefaultInterval is the longest time between plain lines.
	DefaultInterval = 10 * time.Second
	// DefaultStep is the progress (in percent) that prints a plain line.
	DefaultStep = 10
	// redraw is the shortest time between two terminal redraws.
	redraw = 100 * time.Millisecond
	// barWidth is the bar's width in cells.
	barWidth = 24
	// opWidth is the longest operation name shown; longer ones keep
	// their end (the blob name).
	opWidth = 48
)

// Options tune a Printer.
type Options struct {
	// Terminal forces the terminal (true) or plain (false) output;
	// default: whether the writer is a terminal (and TERM is not dumb).
	Terminal *bool
	// Interval and Step bound the plain lines (defaults DefaultInterval
	// and DefaultStep).
	Interval time.Duration
	Step     int
	// WaitInterval is how often Wait prints a line (default
	// DefaultWaitInterval).
	WaitInterval time.Duration
	// Now is the clock (tests).
	Now func() time.Time
}

// Printer is a Reporter writing to a terminal or a log. It is safe for
// concurrent use by several transfers.
type Printer struct {
	w            io.Writer
	tty          bool
	interval     time.Duration
	step         int
	waitInterval time.Duration
	now          func() time.Time

	mu     sync.Mutex
	active []*task
	drawn  int       // terminal lines the bars use
	last   time.Time // last terminal redraw
}

// New returns a Printer writing to w (stderr, normally).
func New(w io.Writer, o Options) *Printer {
	p := &Printer{w: w, interval: o.Interval, step: o.Step, waitInterval: o.WaitInterval, now: o.Now}
	if o.Terminal != nil {
		p.tty = *o.Terminal
	} else if f, ok := w.(*os.File); ok && os.Getenv("TERM") != "dumb" {
		p.tty = isatty.IsTerminal(f.Fd())
	}
	if p.interval <= 0 {
		p.interval = DefaultInterval
	}
	if p.step <= 0 {
		p.step = DefaultStep
	}
	if p.waitInterval <= 0 {
		p.waitInterval = DefaultWaitInterval
	}
	if p.now == nil {
		p.now = time.Now
	}
	return p
}

type task struct {
	p        *Printer
	op       string
	total    int64
	start    time.Time
	done     int64
	lastLine time.Time // plain: when the last line was printed
	lastPct  int       // plain: its percentage
	ended    bool
}

// Start implements Reporter.
func (p *Printer) Start(op string, total int64) Tracker {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	t := &task{p: p, op: op, total: max(total, 0), start: now, lastLine: now}
	p.active = append(p.active, t)
	if p.tty {
		p.drawLocked(true)
	} else {
		fmt.Fprintf(p.w, "%s: %s to transfer\n", op, Bytes(t.total))
	}
	return t
}

// Add implements Tracker.
func (t *task) Add(n int64) {
	p := t.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.ended {
		return
	}
	t.done += n
	now := p.now()
	if p.tty {
		p.drawLocked(false)
		return
	}
	pct := t.percent()
	if now.Sub(t.lastLine) >= p.interval || pct/p.step > t.lastPct/p.step && pct < 100 {
		t.lastLine, t.lastPct = now, pct
		fmt.Fprintln(p.w, t.line(now, false))
	}
}

// End implements Tracker.
func (t *task) End(err error) {
	p := t.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.ended {
		return
	}
	t.ended = true
	now := p.now()
	if p.tty {
		p.clearLocked()
	}
	for i, a := range p.active {
		if a == t {
			p.active = append(p.active[:i], p.active[i+1:]...)
			break
		}
	}
	el := now.Sub(t.start)
	if err != nil {
		fmt.Fprintf(p.w, "%s: failed after %s, %s of %s\n", t.op, duration(el), Bytes(t.done), Bytes(t.total))
	} else if el < time.Second {
		// A rate over less than a second (a server-side copy that
		// completes at once) says nothing.
		fmt.Fprintf(p.w, "%s: %s in %s\n", t.op, Bytes(t.done), duration(el))
	} else {
		fmt.Fprintf(p.w, "%s: %s in %s (%s)\n", t.op, Bytes(t.done), duration(el), rate(t.done, el))
	}
	if p.tty {
		p.drawLocked(true)
	}
}

func (t *task) percent() int {
	if t.total <= 0 {
		return 100
	}
	return int(min(t.done*100/t.total, 100))
}

// line is a task's status: op, percentage, bytes, rate and time left;
// with bar, a bar too.
func (t *task) line(now time.Time, bar bool) string {
	var b strings.Builder
	pct := t.percent()
	if !bar {
		b.WriteString(t.op)
	} else {
		b.WriteString(shorten(t.op))
		fill := pct * barWidth / 100
		fmt.Fprintf(&b, " [%s%s]", strings.Repeat("=", fill), strings.Repeat(" ", barWidth-fill))
	}
	el := now.Sub(t.start)
	fmt.Fprintf(&b, " %3d%% %s/%s %s", pct, Bytes(t.done), Bytes(t.total), rate(t.done, el))
	if t.done > 0 && t.done < t.total && el > 0 {
		left := time.Duration(float64(el) * float64(t.total-t.done) / float64(t.done))
		fmt.Fprintf(&b, " ETA %s", duration(left))
	}
	return b.String()
}

// drawLocked redraws the terminal bars (at most every 100 ms unless
// force).
func (p *Printer) drawLocked(force bool) {
	now := p.now()
	if !force && now.Sub(p.last) < redraw {
		return
	}
	p.last = now
	p.clearLocked()
	for _, t := range p.active {
		fmt.Fprintf(p.w, "%s\x1b[K\n", t.line(now, true))
	}
	p.drawn = len(p.active)
}

// clearLocked moves the cursor up over the drawn bars and clears them.
func (p *Printer) clearLocked() {
	if p.drawn > 0 {
		fmt.Fprintf(p.w, "\x1b[%dA\r\x1b[J", p.drawn)
		p.drawn = 0
	}
}

// shorten fits op in opWidth for a bar: its first word (the verb) and
// the end of the rest (the blob name).
func shorten(op string) string {
	r := []rune(op)
	if len(r) <= opWidth {
		return op
	}
	verb, rest, ok := strings.Cut(op, " ")
	if !ok || len([]rune(verb)) > opWidth/2 {
		return "…" + string(r[len(r)-opWidth+1:])
	}
	rr := []rune(rest)
	return verb + " …" + string(rr[len(rr)-(opWidth-len([]rune(verb))-2):])
}

// Bytes formats a byte count in binary units.
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func rate(n int64, d time.Duration) string {
	if d <= 0 {
		return "-/s"
	}
	return Bytes(int64(float64(n)/d.Seconds())) + "/s"
}

func duration(d time.Duration) string {
	switch {
	case d >= time.Hour:
		return d.Round(time.Minute).String()
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= 10*time.Second:
		return d.Round(time.Second).String()
	}
	return d.Round(100 * time.Millisecond).String()
}
