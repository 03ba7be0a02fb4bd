// Command imgflow-emulator runs imgflow's Azure target locally: the fake
// Azure Resource Manager (cloud/azure/fakearm) and Azurite's blob service,
// so `imgflow run --target azure` works without a subscription.
//
//	imgflow-emulator [--background] [--arm-port N] [--blob-port N] [--azurite DIR] [--accounts a,b] [--data DIR]
//
// It prints the environment to export, then serves until Ctrl-C or
// SIGTERM, when it stops Azurite (its whole process group) and removes
// the temporary data. With --background it returns once the emulator is
// ready, printing the environment and the pid to kill.
//
// It is a command of its own rather than `imgflow emulator`: the fake
// ARM is test machinery, kept out of the binary that talks to real
// subscriptions.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "imgflow-emulator:", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	armPort, blobPort int
	azurite           string // .tools/azurite, or "" to search
	accounts          []string
	data              string
	background        bool
	// denyActions are actions the caller lacks (the permissions API lists
	// "*" with these as notActions); takenNames are storage account names
	// someone else has. Both for trying the validation pass's checks.
	denyActions, takenNames []string
}

func parse(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("imgflow-emulator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.IntVar(&c.armPort, "arm-port", 0, "port of the fake ARM endpoint on 127.0.0.1 (0: any free port)")
	fs.IntVar(&c.blobPort, "blob-port", 0, "port of the blob endpoint on 127.0.0.1 (0: any free port)")
	fs.StringVar(&c.azurite, "azurite", "", "Azurite's install `dir` (default: .tools/azurite of the repository around the working directory, as make deps installs it)")
	// The repository's workflows' accounts, and the ones their simulated
	// packer builds stage OS disks in (the emulator's subscription is the
	// fake's default).
	defaults := append(azuritetest.DefaultAccounts(), azuritetest.StagingAccounts(fakearm.DefaultSubscriptionID)...)
	defaults = append(defaults, azuritetest.WorkflowAccounts(fakearm.DefaultSubscriptionID)...)
	accounts := fs.String("accounts", strings.Join(defaults, ","), "storage account names Azurite serves (workflows may only use these)")
	deny := fs.String("deny-actions", "", "comma-separated ARM actions the caller may not perform, e.g. Microsoft.Compute/galleries/share/action (default: everything allowed)")
	taken := fs.String("taken-storage-names", "", "comma-separated storage account names another subscription has (checkNameAvailability answers AlreadyExists)")
	fs.StringVar(&c.data, "data", "", "Azurite's data directory, kept after exit (default: a temporary directory, removed)")
	fs.BoolVar(&c.background, "background", false, "start in the background: print the environment and "+EnvEmulatorPID+" once ready, then return: eval \"$(imgflow-emulator --background)\", and kill $"+EnvEmulatorPID+" stops it")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	c.denyActions, c.takenNames = splitList(*deny), splitList(*taken)
	for _, a := range strings.Split(*accounts, ",") {
		if a = strings.TrimSpace(a); a != "" {
			c.accounts = append(c.accounts, a)
		}
	}
	return c, nil
}

// run starts both services, prints the environment and serves until ctx
// ends.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if c.background {
		return startInBackground(withoutBackground(args), stdout)
	}
	script, err := findAzurite(c.azurite)
	if err != nil {
		return err
	}
	az, err := startAzurite(script, c.accounts, c.data)
	if err != nil {
		return err
	}
	defer func() {
		if err := az.stop(); err != nil {
			fmt.Fprintln(stderr, "imgflow-emulator: stop azurite:", err)
		}
	}()
	blobLn, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", c.blobPort))
	if err != nil {
		return fmt.Errorf("blob endpoint: %w", err)
	}
	blobURL := "http://" + blobLn.Addr().String()
	endpoint := func(account string) string { return blobURL + "/" + account }
	fake := fakearm.New(fakearm.Options{Blob: &fakearm.BlobBackend{Endpoint: endpoint, Key: azuritetest.Key,
		Options: &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{PerCallPolicies: []policy.Policy{fakearm.InternalPolicy()}}}}})
	fake.ServeOnlyAccounts(c.accounts...)
	for _, name := range c.takenNames {
		fake.TakeStorageAccountName(name)
	}
	if len(c.denyActions) > 0 {
		fake.SetPermissions(cloud.Permission{Actions: []string{"*"}, NotActions: c.denyActions, DataActions: []string{"*"}})
	}
	gate, err := fake.BlobGate(az.url)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", c.armPort))
	if err != nil {
		return fmt.Errorf("fake ARM: %w", err)
	}
	srv := &http.Server{Handler: fake.Handler(), ReadHeaderTimeout: 10 * time.Second}
	blobSrv := &http.Server{Handler: gate, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 2)
	go func() { served <- srv.Serve(ln) }()
	go func() { served <- blobSrv.Serve(blobLn) }()

	armURL := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "export %s=%s\n", azure.EnvARMEndpoint, armURL)
	fmt.Fprintf(stdout, "export %s=%s\n", azure.EnvBlobEndpoint, blobURL+"/{account}")
	fmt.Fprintf(stdout, "export %s=%s\n", azure.EnvStorageKey, azuritetest.DevKey)
	fmt.Fprintf(stdout, "export %s=%s\n", azure.EnvSubscription, fake.SubscriptionID())
	fmt.Fprintf(stdout, "export IMGFLOW_PACKER=simulate\n")
	fmt.Fprintf(stdout, "# azurite pid %d (process group %d), storage accounts: %s\n", az.pid, az.pid, strings.Join(c.accounts, ", "))
	fmt.Fprintf(stdout, "# ready: imgflow run --target azure WORKFLOW; Ctrl-C stops the emulator\n")

	select {
	case <-ctx.Done():
	case err := <-served:
		_ = srv.Close()
		_ = blobSrv.Close()
		return fmt.Errorf("serve: %w", err)
	case <-az.exited:
		_ = srv.Close()
		_ = blobSrv.Close()
		return errors.New("azurite exited")
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	_ = blobSrv.Shutdown(sctx)
	return nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
