// Package docs_test checks that the recipes in docs/ still name the code
// as it is: a file, identifier or line a doc points at that moved or went
// fails here, not in a reader's first hour.
package docs_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exampleNames are the names of the recipe's worked example, an operation
// that does not exist ("snapshot a disk").
var exampleNames = map[string]bool{"SnapshotDisk": true, "disksBeginSnapshot": true}

var (
	backticked = regexp.MustCompile("`([^`\n]+)`")
	identRE    = regexp.MustCompile(`^(?:([A-Za-z_]\w*)\.)?([A-Za-z_]\w*)$`)
	lineRefRE  = regexp.MustCompile(`([\w./-]+\.go):(\d+):\d+: (.*)`)
	argumentRE = regexp.MustCompile(`in argument to (\w+)`)
)

func TestAddingAnAzureOperationNamesTheCodeAsItIs(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	src := goSources(t, root)
	doc, err := os.ReadFile("adding-an-azure-operation.md")
	require.NoError(t, err)

	var prose, blocks []string
	inBlock := false
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			blocks = append(blocks, line)
		} else {
			prose = append(prose, line)
		}
	}

	checked := 0
	for _, m := range backticked.FindAllStringSubmatch(strings.Join(prose, "\n"), -1) {
		tok := strings.TrimSuffix(m[1], "/")
		switch {
		case strings.ContainsAny(tok, " <>…*"):
			// a command, a pattern or a code fragment
		case strings.HasSuffix(tok, ".go") && !strings.Contains(tok, "/"):
			assert.True(t, src.hasFile(tok), "the doc names %s, which no package has", tok)
			checked++
		case strings.Contains(tok, "/"):
			_, err := os.Stat(filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(tok, "./"))))
			assert.NoError(t, err, "the doc names the path %s", tok)
			checked++
		case identRE.MatchString(tok) && !exampleNames[tok]:
			name := identRE.FindStringSubmatch(tok)[2]
			if exampleNames[name] {
				continue
			}
			assert.True(t, src.packages[tok] || src.declares(name), "the doc names %s, which no Go file declares", tok)
			checked++
		}
	}
	assert.Greater(t, checked, 30, "the scan finds the doc's references")

	for _, line := range blocks {
		m := lineRefRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m[1])))
		if !assert.NoError(t, err, "the doc's example error names %s", m[1]) {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		lines := strings.Split(string(data), "\n")
		if !assert.LessOrEqual(t, n, len(lines), "%s has no line %d", m[1], n) {
			continue
		}
		at := lines[n-1]
		if a := argumentRE.FindStringSubmatch(m[3]); a != nil {
			assert.Contains(t, at, a[1]+"(", "%s:%d no longer calls %s, as the doc's example error says", m[1], n, a[1])
		}
		if strings.Contains(m[3], "in return statement") {
			assert.Contains(t, at, "return", "%s:%d is no longer the return the doc's example error names", m[1], n)
		}
	}
}

type sources struct {
	files    map[string]bool
	packages map[string]bool
	names    map[string]bool
	text     string
}

func goSources(t *testing.T, root string) sources {
	t.Helper()
	s := sources{files: map[string]bool{}, packages: map[string]bool{}}
	var b strings.Builder
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "third_party" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		s.files[d.Name()] = true
		s.packages[filepath.Base(filepath.Dir(path))] = true
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			b.WriteString(sc.Text())
			b.WriteByte('\n')
		}
		return sc.Err()
	})
	require.NoError(t, err)
	s.text = b.String()
	s.collectNames()
	return s
}

func (s sources) hasFile(name string) bool { return s.files[name] }

// declares reports whether some Go file declares name: a function or
// method, a type, a package-level or block variable or constant, a field,
// or an interface method (a local variable does not count).
func (s sources) declares(name string) bool { return s.names[name] }

// declRE matches the declarations declares looks for; the first group
// that matched is the name.
var declRE = regexp.MustCompile(`(?m)func (?:\([^)]*\) )?(\w+)[\[(]|^[ \t]*(?:type |var |const )?(\w+)[ \t]*(?:[\w*\[(]|=)`)

// collectNames fills s.names from s.text, once.
func (s *sources) collectNames() {
	s.names = map[string]bool{}
	for _, m := range declRE.FindAllStringSubmatch(s.text, -1) {
		for _, g := range m[1:] {
			if g != "" {
				s.names[g] = true
				break
			}
		}
	}
}
