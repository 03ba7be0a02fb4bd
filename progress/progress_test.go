package progress_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/imgflow/imgflow/internal/testutil"
	"github.com/imgflow/imgflow/progress"
)

func TestPlainLinesEvery10PercentOr10Seconds(t *testing.T) {
	var out bytes.Buffer
	c := testutil.NewClock(time.Unix(0, 0))
	no := false
	p := progress.New(&out, progress.Options{Terminal: &no, Now: c.Now})
	tr := p.Start("upload https://a.blob.core.windows.net/c/disk.vhd", 100<<20)
	for range 100 {
		c.Advance(100 * time.Millisecond)
		tr.Add(1 << 20)
	}
	tr.End(nil)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	assert.Equal(t, "upload https://a.blob.core.windows.net/c/disk.vhd: 100.0 MiB to transfer", lines[0])
	assert.Len(t, lines, 11, "start, 10%…90%, end:\n%s", out.String())
	assert.Contains(t, lines[1], " 10% 10.0 MiB/100.0 MiB 10.0 MiB/s ETA 9s")
	assert.Equal(t, "upload https://a.blob.core.windows.net/c/disk.vhd: 100.0 MiB in 10s (10.0 MiB/s)", lines[10])
	assert.NotContains(t, out.String(), "\x1b", "no escape codes in logs")

	// A slow transfer prints every 10 s even without 10 % more.
	out.Reset()
	tr = p.Start("copy x", 1<<30)
	for range 3 {
		c.Advance(6 * time.Second)
		tr.Add(1 << 20)
	}
	tr.End(errors.New("boom"))
	lines = strings.Split(strings.TrimSpace(out.String()), "\n")
	assert.Len(t, lines, 3, out.String())
	assert.Contains(t, lines[1], "copy x   0% 2.0 MiB/1.00 GiB")
	assert.Equal(t, "copy x: failed after 18s, 3.0 MiB of 1.00 GiB", lines[2])
}

func TestTerminalBars(t *testing.T) {
	var out bytes.Buffer
	c := testutil.NewClock(time.Unix(0, 0))
	yes := true
	p := progress.New(&out, progress.Options{Terminal: &yes, Now: c.Now})
	a := p.Start("upload a.vhd", 8<<20)
	b := p.Start("upload "+strings.Repeat("x", 80)+".vhd", 8<<20)
	c.Advance(time.Second)
	a.Add(4 << 20)
	c.Advance(time.Second)
	b.Add(2 << 20)
	a.End(nil)
	b.End(nil)
	s := out.String()
	assert.Contains(t, s, "upload a.vhd [============            ]  50% 4.0 MiB/8.0 MiB 4.0 MiB/s ETA 1s")
	assert.Contains(t, s, "\x1b[2A\r\x1b[J", "two bars redrawn in place")
	assert.Contains(t, s, "upload …"+strings.Repeat("x", 36)+".vhd [======", "long names keep the verb and their end")
	assert.Contains(t, s, "upload a.vhd: 4.0 MiB in 2s (2.0 MiB/s)\n")
}

func TestNilReporter(t *testing.T) {
	tr := progress.Of(nil).Start("x", 10)
	tr.Add(5)
	tr.End(nil)
}

func TestNoRateForATransferUnderASecond(t *testing.T) {
	var out bytes.Buffer
	c := testutil.NewClock(time.Unix(0, 0))
	no := false
	p := progress.New(&out, progress.Options{Terminal: &no, Now: c.Now})
	tr := p.Start("copy a to b (server-side)", 1<<30)
	c.Advance(20 * time.Millisecond)
	tr.Add(1 << 30)
	tr.End(nil)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	assert.Equal(t, "copy a to b (server-side): 1.00 GiB in 0s", lines[len(lines)-1])
}

func TestWaitSaysEveryIntervalThatAnOperationGoesOn(t *testing.T) {
	var out testutil.SyncBuffer
	no := false
	p := progress.New(&out, progress.Options{Terminal: &no, WaitInterval: 20 * time.Millisecond})
	end := p.Wait("create image version aksgallery/ubuntu2204/2026.1.2")
	time.Sleep(110 * time.Millisecond)
	end()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	assert.GreaterOrEqual(t, len(lines), 2, "%q", out.String())
	for _, l := range lines {
		assert.Regexp(t, `^create image version aksgallery/ubuntu2204/2026\.1\.2: still running after \S+$`, l)
	}
	n := len(out.String())
	time.Sleep(60 * time.Millisecond)
	assert.Equal(t, n, len(out.String()), "a line after end")
	end() // twice is harmless

	// An operation shorter than the interval prints nothing.
	out.Reset()
	progress.New(&out, progress.Options{Terminal: &no, WaitInterval: time.Hour}).Wait("delete disk d")()
	assert.Empty(t, out.String())
}
