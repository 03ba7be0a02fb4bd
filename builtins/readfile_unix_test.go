//go:build unix

package builtins_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
)

// read_text and read_json refuse what would hang or exhaust a run: a named
// pipe (reading it would wait for a writer forever), a directory, and a
// file over builtins.MaxReadSize (a sparse file: no disk is used).
func TestReadRefusesPipesAndLargeFiles(t *testing.T) {
	s := newSnippetSandbox(t)
	s.write("data/ok.txt", "ok")
	pipe := filepath.Join(s.ws.Root, "data", "fifo")
	require.NoError(t, syscall.Mkfifo(pipe, 0o600))
	big, err := os.Create(filepath.Join(s.ws.Root, "data", "big.json"))
	require.NoError(t, err)
	require.NoError(t, big.Truncate(builtins.MaxReadSize+1))
	require.NoError(t, big.Close())

	done := make(chan string, 1)
	go func() { done <- s.mustFail(`read_text("//data/fifo")`, nil) }()
	select {
	case msg := <-done:
		assert.Contains(t, msg, "read_text data/fifo: not a regular file")
	case <-time.After(10 * time.Second):
		t.Fatal("read_text of a named pipe blocked")
	}
	msg := s.mustFail(`read_json("//data/big.json")`, nil)
	assert.Contains(t, msg, "read_json data/big.json: 16777217 bytes is more than the 16 MiB a workflow may read")
	msg = s.mustFail(`read_text("//data")`, nil)
	assert.Contains(t, msg, "not a regular file")
	res := s.execFile("flows/main.star", `output("ok", read_text("//data/ok.txt"))`, nil, true)
	require.NoError(t, res.Err)
}
