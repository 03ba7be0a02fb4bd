package interp

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/imgflow/imgflow/internal/cachetrim"
	"go.starlark.net/starlark"
)

// A compiled module on disk (Programs.Dir) lets the next process skip
// parsing, resolving and compiling it: a plan loads a dozen library files,
// and compiling them was a fifth of `imgflow plan`'s time. An entry's name
// hashes everything compiling depends on: Programs.Salt (which imgflow
// binary: its Starlark dialect, its checks), the file's name (positions
// in errors), the predeclared names and the exact source. Only files that
// compiled are stored; a file with errors compiles anew each time, so
// its messages are always this binary's.

// diskFormat names the layout of an entry: a uvarint length, the JSON of
// the param() names, then starlark's own encoding of the program (which
// checks its own version).
const diskFormat = "imgflow compiled starlark 1"

type diskStatic struct {
	Names     []string `json:"names"`
	Described string   `json:"described"`
	Complete  bool     `json:"complete"`
}

// diskPath is where the entry for these inputs lives (k holds the
// source's hash).
func (c *Programs) diskPath(k programKey) string {
	h := sha256.New()
	for _, s := range []string{diskFormat, c.Salt, k.filename, k.predeclared} {
		io.WriteString(h, s)
		h.Write([]byte{0})
	}
	h.Write(k.src[:])
	var sum [sha256.Size]byte
	return filepath.Join(c.Dir, hex.EncodeToString(h.Sum(sum[:0])[:20]))
}

// maxStatic bounds the param() header an entry may claim, so a damaged
// length cannot ask for a huge buffer.
const maxStatic = 1 << 20

// readDisk returns the stored program, or nil when there is none or it
// does not decode (another version's, a torn write): it is then compiled
// and stored again. The program is decoded from the file as it is read:
// starlark.CompiledProgram reads its input whole itself, so reading the
// file first would hold it twice.
func readDisk(path string) *program {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 512)
	n, err := binary.ReadUvarint(r)
	if err != nil || n > maxStatic {
		return nil
	}
	header := make([]byte, n)
	if _, err := io.ReadFull(r, header); err != nil {
		return nil
	}
	var st diskStatic
	if json.Unmarshal(header, &st) != nil {
		return nil
	}
	prog, err := starlark.CompiledProgram(r)
	if err != nil {
		return nil
	}
	cachetrim.Used(f, time.Now())
	return &program{prog: prog, static: staticParams{names: st.Names, described: st.Described, complete: st.Complete}}
}

// writeDisk stores p, best effort: a cache that cannot be written only
// costs the next process the compile. The rename makes an entry appear
// whole or not at all.
func writeDisk(path string, p *program) {
	var buf bytes.Buffer
	st, err := json.Marshal(diskStatic{Names: p.static.names, Described: p.static.described, Complete: p.static.complete})
	if err != nil {
		return
	}
	buf.Write(binary.AppendUvarint(nil, uint64(len(st))))
	buf.Write(st)
	if p.prog.Write(&buf) != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(path), 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return
	}
	_, err = tmp.Write(buf.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
}
