// Package azuritetest runs Azurite, the Azure Storage emulator, for tests:
// the blob service only, started by PID on a free port with its data in a
// temporary directory, and stopped by PID.
//
// Azurite is installed by `make deps` (scripts/deps.sh) into
// .tools/azurite at the repository root. When it is missing, tests are
// skipped, or fail with "run make deps" when CI=true.
//
// A package's tests share one instance: call Shared from tests and Main
// from TestMain, which stops it when the tests end.
package azuritetest

import (
	"bufio"
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/internal/testtool"
	"github.com/imgflow/imgflow/packer/localsim"
)

// The emulator's well-known development account.
const (
	DevAccount = "devstoreaccount1"
	DevKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// DefaultAccounts are the storage accounts an instance knows unless
// Options.Accounts says otherwise (all with DevKey): the development
// account, the conformance suite's, the Azure target's tests', the Flatcar
// workflows' (flatcar0001 where plume uploads today, flatcar before) and
// the AKS workflows' classic VHD account. Main adds more
// to the Shared instance.
func DefaultAccounts() []string {
	return []string{DevAccount, "imgflowconf", "imgflowconf2", "imgflowtest", "imgflowtest2", "flatcar", "flatcar0001", "imgflowvhds", "aksvhdclassic"}
}

// StagingAccounts are the storage accounts the simulated packer builds of
// the repository's workflows create through ARM in subscription to stage
// their OS disks (localsim.StagingAccount of each build's resource group:
// the AKS builds', capz.star's and the Flatcar CAPI staging group).
// Azurite serves only the accounts it was started with (AZURITE_ACCOUNTS,
// read from its own environment), so an emulator or a test running those
// workflows on the fake ARM starts it with these too.
func StagingAccounts(subscription string) []string {
	var out []string
	for _, rg := range []string{"aks-vhd-build", "cluster-api-gallery", "flatcar-image-gallery-staging"} {
		out = append(out, localsim.StagingAccount(subscription, rg))
	}
	return out
}

// WorkflowAccounts are the storage accounts the repository's workflows
// use by default in subscription: lib/aks/gallery.star's and lib/flatcar.star's
// storage_account_name() prefixes with the subscription's hash (names are
// global across Azure, so the defaults are the subscription's own).
func WorkflowAccounts(subscription string) []string {
	var out []string
	for _, prefix := range []string{"aksvhdbuild", "aksvhdclassic", "flatcar"} {
		name, err := cloud.SubscriptionStorageAccountName(subscription, prefix)
		if err != nil {
			panic(err) // the prefixes above are valid
		}
		out = append(out, name)
	}
	return out
}

// MainScript is the blob service entry point, relative to the repository
// root (scripts/deps.sh installs it).
const MainScript = ".tools/azurite/node_modules/azurite/dist/src/blob/main.js"

// startTimeout bounds Azurite's start: about a second on 2 idle vCPUs,
// more than 30 s on the same machine busy with other builds. Waiting
// longer costs nothing when it starts at once.
const startTimeout = 2 * time.Minute

// Server is a running Azurite blob service.
type Server struct {
	// URL is the service root, e.g. http://127.0.0.1:41234; an account's
	// blob endpoint is URL/<account>.
	URL string
	// PID is the node process serving it.
	PID int
	// Dir holds its data.
	Dir string

	// roots trust an OAuth instance's certificate (nil: plain HTTP).
	roots   *x509.CertPool
	cmd     *exec.Cmd
	done    chan struct{}
	logPath string
	owned   bool
	stopped bool
	mu      sync.Mutex
}

// Options configure Start.
type Options struct {
	// Accounts are the storage accounts it serves, all with DevKey
	// (default DefaultAccounts).
	Accounts []string
	// Dir is the data directory (default: a new temporary directory,
	// removed by Stop).
	Dir string
	// OAuth serves HTTPS and bearer tokens (see oauth.go).
	OAuth bool
}

// Endpoint is the blob endpoint of an account.
func (s *Server) Endpoint(account string) string { return s.URL + "/" + account }

// Key is an account's shared key (every account has DevKey).
func Key(string) string { return DevKey }

// KeyFunc is Key in the form the Azure provider's Options.StorageKey takes.
func KeyFunc(string) (string, error) { return DevKey, nil }

// FindScript locates Azurite's blob service script from the working
// directory upwards (the repository root holds .tools/).
func FindScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, MainScript)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return "", fmt.Errorf("azurite is not installed (%s missing): run make deps", filepath.Join(dir, MainScript))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("azurite is not installed (no repository root found): run make deps")
		}
		dir = parent
	}
}

var listening = regexp.MustCompile(`listens on (https?://[0-9.]+:[0-9]+)`)

// Start starts Azurite's blob service on a free port of 127.0.0.1 and
// waits until it answers.
func Start(opts Options) (*Server, error) {
	script, err := FindScript()
	if err != nil {
		return nil, err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("azurite needs node on PATH: %w", err)
	}
	s := &Server{Dir: opts.Dir, done: make(chan struct{})}
	owned := s.Dir == ""
	if owned {
		if s.Dir, err = os.MkdirTemp("", "imgflow-azurite-"); err != nil {
			return nil, err
		}
	}
	accounts := opts.Accounts
	if len(accounts) == 0 {
		accounts = DefaultAccounts()
	}
	var acc []string
	for _, a := range accounts {
		acc = append(acc, a+":"+DevKey)
	}
	s.logPath = filepath.Join(s.Dir, "azurite.log")
	logf, err := os.Create(s.logPath)
	if err != nil {
		return nil, err
	}
	// node runs the script directly, so the PID is the server's (npx
	// would leave an orphan listening).
	args := []string{script,
		"--blobHost", "127.0.0.1", "--blobPort", "0",
		"--loose", "--skipApiVersionCheck", "--disableTelemetry", "--silent",
		"--location", filepath.Join(s.Dir, "data")}
	if opts.OAuth {
		more, roots, err := oauthArgs(s.Dir)
		if err != nil {
			logf.Close()
			if owned {
				os.RemoveAll(s.Dir)
			}
			return nil, fmt.Errorf("azurite's certificate: %w", err)
		}
		args, s.roots = append(args, more...), roots
	}
	s.cmd = exec.Command(node, args...)
	s.cmd.Env = append(os.Environ(), "AZURITE_ACCOUNTS="+strings.Join(acc, ";"))
	s.cmd.Stderr = logf
	dieWithParent(s.cmd)
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start azurite: %w", err)
	}
	s.PID = s.cmd.Process.Pid
	urlCh := make(chan string, 1)
	go func() {
		defer logf.Close()
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			if m := listening.FindStringSubmatch(line); m != nil && !sent {
				urlCh <- m[1]
				sent = true
			}
		}
		_, _ = io.Copy(logf, out)
	}()
	go func() {
		_ = s.cmd.Wait()
		close(s.done)
	}()
	fail := func(err error) (*Server, error) {
		s.kill()
		logData, _ := os.ReadFile(s.logPath)
		if owned {
			os.RemoveAll(s.Dir)
		}
		return nil, fmt.Errorf("%w\nazurite log:\n%s", err, logData)
	}
	select {
	case s.URL = <-urlCh:
	case <-s.done:
		return fail(errors.New("azurite exited before listening"))
	case <-time.After(startTimeout):
		return fail(fmt.Errorf("azurite did not listen within %s", startTimeout))
	}
	if err := waitHTTP(s.HTTPClient(), s.URL, startTimeout); err != nil {
		return fail(err)
	}
	s.owned = owned
	return s, nil
}

// waitHTTP waits until the service answers any HTTP request.
func waitHTTP(client *http.Client, u string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u+"/"+DevAccount+"?comp=list", nil)
		resp, err := client.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("azurite at %s does not answer: %w", u, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Server) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Stop stops the server by its PID and removes its data directory when
// Start made it. Stopping twice is harmless.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	s.stopped = true
	s.kill()
	if s.owned {
		return os.RemoveAll(s.Dir)
	}
	return nil
}

// Log returns what the server printed.
func (s *Server) Log() string {
	data, _ := os.ReadFile(s.logPath)
	return string(data)
}

// The test binary's one shared instance (see Shared and Main).
var (
	sharedMu    sync.Mutex
	shared      *Server
	sharedErr   error
	sharedExtra []string // accounts Main adds to DefaultAccounts
)

// Shared returns the package's Azurite instance, starting it on first use
// (stop it with Main). When Azurite is not installed the test is skipped,
// or fails when CI=true: CI must run these tests.
func Shared(t testing.TB) *Server {
	t.Helper()
	s, err := startShared()
	if err != nil {
		testtool.Unavailable(t, "azurite is not available: "+err.Error(), "`make deps` installs it")
	}
	return s
}

// startShared starts the shared instance unless it is running (or failed
// to start); a second caller waits for the first.
func startShared() (*Server, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil && sharedErr == nil {
		shared, sharedErr = Start(Options{Accounts: append(DefaultAccounts(), sharedExtra...)})
	}
	return shared, sharedErr
}

// Main runs the tests and then stops the shared instance; call it from
// TestMain: func TestMain(m *testing.M) { azuritetest.Main(m) }. The
// shared instance also serves extraAccounts.
func Main(m *testing.M, extraAccounts ...string) {
	os.Exit(Run(m, extraAccounts...))
}

// Run is Main without the exit: it returns the tests' exit code, for a
// TestMain that has more to clean up. When the whole package runs (no
// -run), Azurite starts at once in the background: its start (seconds of
// node) overlaps the tests that need no Azurite, and the first one that
// does waits for it in Shared.
func Run(m *testing.M, extraAccounts ...string) int {
	sharedMu.Lock()
	sharedExtra = extraAccounts
	sharedMu.Unlock()
	early := make(chan struct{})
	if wholePackage() {
		go func() {
			defer close(early)
			_, _ = startShared() // an error is Shared's to report, in the test that needs it
		}()
	} else {
		close(early)
	}
	code := m.Run()
	<-early
	sharedMu.Lock()
	if shared != nil {
		if err := shared.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop azurite: %v\n", err)
		}
		shared = nil
	}
	sharedMu.Unlock()
	return code
}

// wholePackage says whether every test of the package runs: no -run,
// -skip or -list, and not a -short run (which skips the slow ones).
func wholePackage() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	for _, name := range []string{"test.run", "test.skip", "test.list"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return !testing.Short()
}
