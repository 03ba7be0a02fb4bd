// Command vhd benchmarks imgflow's VHD upload against azcopy on Azurite,
// on the same files in one run, and measures the ceiling: Azurite's own
// ingest rate with the simplest parallel Put Page loop, over 512 MiB of
// 4 MiB calls and over each file's own data ranges (a file whose extents
// are small or scattered needs more, smaller calls, and Azurite pays per
// call).
//
//	go run ./bench/vhd [-runs 5] [-dir DIR] [-files dense,sparse25,contig25,sparse30g]
//
// (make bench-vhd; make bench-deps first installs azcopy and GNU time.)
//
// Files (fixed VHDs, random data, created fresh, so both tools read them
// from the page cache):
//   - dense: 512 MiB, every byte data (a file without holes);
//   - sparse25: 2 GiB, 25 % data (512 MiB) in extents of 64 KiB–8 MiB
//     scattered with random gaps, holes elsewhere (a used OS disk);
//   - contig25: 2 GiB, the first 512 MiB data, holes elsewhere (a freshly
//     installed OS disk);
//   - sparse30g: 30 GiB, 1 GiB of data scattered as in sparse25 (an OS
//     disk as packer captures it): memory must not grow with the size.
//
// Each run uploads every file with each tool, the order rotating from run
// to run, each to a new blob, under /usr/bin/time -v (wall time and peak
// RSS), and deletes the blobs. imgflow's side is bench/vhd/upload
// (cloud/azure, as vhd_upload calls it) with the default options
// ("imgflow") and, when asked, with Options.ContentMD5 ("imgflow-md5": the
// whole-blob Content-MD5 must hash the holes too); azcopy's
// is `azcopy copy FILE URL?SAS --blob-type PageBlob --from-to LocalBlob`
// with its defaults.
// The first upload of each tool and file is verified: the blob's sparse
// digest must equal the file's. Results are printed as Markdown.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/transfer"
	"github.com/imgflow/imgflow/vhd"
)

const (
	account       = azuritetest.DevAccount
	containerName = "bench"
	mib           = 1 << 20
	azcopyRel     = ".tools/azcopy/node_modules/@azure-tools/azcopy-linux/dist/bin/azcopy_linux_amd64"
)

type file struct {
	name    string
	path    string
	size    int64 // file size (virtual + footer)
	data    int64 // bytes of data
	ranges  []vhd.Range
	digest  string
	explain string
}

type sample struct {
	wall time.Duration
	rss  int64   // KiB
	cpu  float64 // user + system seconds
}

func main() {
	runs := flag.Int("runs", 5, "runs per tool and file (alternating)")
	dir := flag.String("dir", "", "work directory (default: a temporary one, removed at the end)")
	files := flag.String("files", "dense,sparse25,contig25,sparse30g", "files to upload")
	tools := flag.String("tools", "imgflow,azcopy",
		"tools to compare: imgflow, imgflow-md5 (Options.ContentMD5: also the whole content's MD5), azcopy")
	ceilingOnly := flag.Bool("ceiling-only", false, "only measure Azurite's ingest ceiling")
	flag.Parse()
	if err := run(*runs, *dir, strings.Split(*files, ","), strings.Split(*tools, ","), *ceilingOnly); err != nil {
		fmt.Fprintln(os.Stderr, "bench/vhd:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func run(runs int, dir string, names, tools []string, ceilingOnly bool) error {
	ctx := context.Background()
	root, err := repoRoot()
	if err != nil {
		return err
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "imgflow-bench-vhd-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	azcopy := filepath.Join(root, azcopyRel)
	if !ceilingOnly {
		for _, tool := range []string{azcopy, "/usr/bin/time"} {
			if _, err := os.Stat(tool); err != nil {
				return fmt.Errorf("%s missing: run make bench-deps", tool)
			}
		}
	}

	logf("starting Azurite")
	if err := os.MkdirAll(filepath.Join(dir, "azurite"), 0o755); err != nil {
		return err
	}
	az, err := azuritetest.Start(azuritetest.Options{Accounts: []string{account}, Dir: filepath.Join(dir, "azurite")})
	if err != nil {
		return err
	}
	defer az.Stop()
	endpoint := az.Endpoint(account)
	cred, err := azblob.NewSharedKeyCredential(account, azuritetest.DevKey)
	if err != nil {
		return err
	}
	cc, err := container.NewClientWithSharedKeyCredential(endpoint+"/"+containerName, cred, nil)
	if err != nil {
		return err
	}
	if _, err := cc.Create(ctx, nil); err != nil {
		return err
	}

	fmt.Printf("## VHD upload to Azurite (%s)\n\n", time.Now().UTC().Format("2006-01-02"))
	fmt.Printf("Machine: %s\n\n", machine())
	ceil, err := sweepCeiling(ctx, cc)
	if err != nil {
		return err
	}
	if ceilingOnly {
		fmt.Printf("Ceiling: **%.1f MiB/s** (P=%d, median of %s MiB/s).\n\n", ceil.rate(), ceil.par, joinRates(ceil.samples))
		return nil
	}

	logf("building bench/vhd/upload")
	upload := filepath.Join(dir, "upload")
	build := exec.Command("go", "build", "-o", upload, "./bench/vhd/upload")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build upload: %w", err)
	}
	var fs []*file
	for _, n := range names {
		f, err := makeFile(ctx, dir, n)
		if err != nil {
			return err
		}
		fs = append(fs, f)
	}

	sasQuery, err := containerSAS(cred)
	if err != nil {
		return err
	}
	p, err := azure.New(ctx, azure.Options{SubscriptionID: "bench", Credential: azure.StaticToken("x"),
		BlobEndpoint: func(string) string { return endpoint }, StorageKey: azuritetest.KeyFunc})
	if err != nil {
		return err
	}
	env := append(os.Environ(), "AZCOPY_LOG_LOCATION="+filepath.Join(dir, "azcopy-logs"),
		"AZCOPY_JOB_PLAN_LOCATION="+filepath.Join(dir, "azcopy-plans"), "AZCOPY_DISABLE_SYSLOG=true")

	results := map[string]map[string][]sample{}
	failures := map[string]int{} // by file/tool
	for _, f := range fs {
		results[f.name] = map[string][]sample{}
	}
	for i := range runs {
		// A ceiling sample per round: the same conditions as the uploads
		// (other load on the machine changes both).
		r, err := ceil.put(ctx, cc, ceil.par, fmt.Sprintf("ceiling-round-%d.vhd", i))
		if err != nil {
			return err
		}
		ceil.samples = append(ceil.samples, r)
		logf("run %d ceiling P=%d: %.1f MiB/s", i+1, ceil.par, r)
		for _, f := range fs {
			r, err := ceil.fileRate(ctx, cc, f, fmt.Sprintf("ceiling-%s-%d.vhd", f.name, i))
			if err != nil {
				return err
			}
			ceil.files[f.name] = append(ceil.files[f.name], r)
			logf("run %d ceiling %s: %.1f MiB/s of data", i+1, f.name, r)
			order := append(slices.Clone(tools[i%len(tools):]), tools[:i%len(tools)]...)
			for _, tool := range order {
				blobName := fmt.Sprintf("%s-%s-%d.vhd", f.name, tool, i)
				var argv []string
				switch tool {
				case "imgflow", "imgflow-md5":
					argv = []string{upload, "-endpoint", endpoint, "-key", azuritetest.DevKey, "-container", containerName, "-name", blobName, "-file", f.path}
					if tool == "imgflow-md5" {
						argv = append(argv, "-content-md5")
					}
				default:
					return fmt.Errorf("unknown tool %q", tool)
				case "azcopy":
					argv = []string{azcopy, "copy", f.path, endpoint + "/" + containerName + "/" + blobName + "?" + sasQuery,
						"--blob-type", "PageBlob", "--from-to", "LocalBlob"}
				}
				s, out, err := timed(argv, env)
				ref := cloud.BlobRef{Account: account, Container: containerName, Name: blobName, Endpoint: endpoint}
				if err != nil {
					// A failed upload is a result too (azcopy failed one
					// of 20 uploads of the 30 GiB file); it is reported,
					// not timed, and the runs go on.
					logf("run %d %-9s %-13s FAILED: %v\n%s", i+1, f.name, tool, err, lastLines(out, 15))
					failures[f.name+"/"+tool]++
					if err := p.DeleteBlob(ctx, ref); err != nil && !cloud.IsNotFound(err) {
						return err
					}
					continue
				}
				if i == 0 {
					if err := verify(ctx, p, cc, ref, f); err != nil {
						return fmt.Errorf("%s %s: %w", tool, f.name, err)
					}
				}
				if err := p.DeleteBlob(ctx, ref); err != nil {
					return err
				}
				results[f.name][tool] = append(results[f.name][tool], s)
				logf("run %d %-9s %-13s %6.2f s  %5.1f MiB/s of data  CPU %.2f s  peak RSS %d MiB", i+1, f.name, tool, s.wall.Seconds(),
					float64(f.data)/mib/s.wall.Seconds(), s.cpu, s.rss/1024)
			}
		}
	}
	fmt.Printf("Ceiling: **%.1f MiB/s** (P=%d, median of %d samples, one before and one in each round: %s MiB/s).\n\n",
		ceil.rate(), ceil.par, len(ceil.samples), joinRates(ceil.samples))
	report(fs, tools, results, failures, runs, ceil)
	return nil
}

// ceilingRun is Azurite's ingest rate: a 512 MiB page blob written with
// 4 MiB Put Page calls of random data (no MD5, nothing else) by par
// goroutines.
type ceilingRun struct {
	par     int
	samples []float64
	files   map[string][]float64 // fileRate samples by file
	data    []byte
}

func (c *ceilingRun) rate() float64 { return median(c.samples) }

func (c *ceilingRun) put(ctx context.Context, cc *container.Client, par int, name string) (float64, error) {
	const size = 512 * mib
	took, err := c.putPieces(ctx, cc, par, name, size, transfer.Pieces([]vhd.Range{{Offset: 0, Length: size}}, size, 0))
	return float64(size) / mib / took.Seconds(), err
}

// fileRate is the ceiling for one file: the same loop writing the file's
// own data ranges, each cut into 4 MiB Put Page calls (the fewest
// requests any tool needs for them without sending zeros).
func (c *ceilingRun) fileRate(ctx context.Context, cc *container.Client, f *file, name string) (float64, error) {
	took, err := c.putPieces(ctx, cc, c.par, name, f.size, transfer.Pieces(f.ranges, f.size, 0))
	return float64(f.data) / mib / took.Seconds(), err
}

// putPieces creates a page blob of size bytes and writes the pieces with
// random data from par goroutines, returning the time the writes took.
func (c *ceilingRun) putPieces(ctx context.Context, cc *container.Client, par int, name string, size int64, pieces iter.Seq[transfer.Chunk]) (time.Duration, error) {
	pc := cc.NewPageBlobClient(name)
	if _, err := pc.Create(ctx, size, nil); err != nil {
		return 0, err
	}
	defer pc.Delete(ctx, nil)
	next := make(chan vhd.Range)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	for range par {
		wg.Go(func() {
			for r := range next {
				_, err := pc.UploadPages(ctx, streaming.NopCloser(bytes.NewReader(c.data[:r.Length])), blob.HTTPRange{Offset: r.Offset, Count: r.Length}, nil)
				if err != nil {
					mu.Lock()
					firstErr = errors.Join(firstErr, err)
					mu.Unlock()
				}
			}
		})
	}
	for p := range pieces {
		next <- p.Data
	}
	close(next)
	wg.Wait()
	return time.Since(start), firstErr
}

// ceilingPar is the parallelism of the ceiling samples: imgflow's default
// (the sweep shows P ≥ 2 within noise of each other).
const ceilingPar = azure.DefaultParallel

// sweepCeiling measures the ceiling for several P (for the table), then
// once more with ceilingPar.
func sweepCeiling(ctx context.Context, cc *container.Client) (*ceilingRun, error) {
	c := &ceilingRun{data: make([]byte, 4*mib), par: ceilingPar, files: map[string][]float64{}}
	fillRandom(c.data, 42)
	fmt.Println("### Ceiling: Azurite's ingest rate")
	fmt.Println()
	fmt.Println("512 MiB of random data as 4 MiB Put Page calls from P goroutines (Go, azblob, no MD5), one run per P:")
	fmt.Println()
	fmt.Println("| P | MiB/s |")
	fmt.Println("|---|---|")
	for _, par := range []int{1, 2, 4, 8, 16} {
		r, err := c.put(ctx, cc, par, fmt.Sprintf("ceiling-p%d.vhd", par))
		if err != nil {
			return nil, err
		}
		logf("ceiling P=%d: %.1f MiB/s", par, r)
		fmt.Printf("| %d | %.1f |\n", par, r)
		if par == c.par {
			c.samples = append(c.samples, r)
		}
	}
	fmt.Println()
	return c, nil
}

func joinRates(rs []float64) string {
	var s []string
	for _, r := range rs {
		s = append(s, fmt.Sprintf("%.1f", r))
	}
	return strings.Join(s, ", ")
}

// makeFile creates one benchmark file in dir.
func makeFile(ctx context.Context, dir, name string) (*file, error) {
	f := &file{name: name, path: filepath.Join(dir, name+".vhd")}
	var virtual int64
	var extents []vhd.Range
	switch name {
	case "dense":
		virtual = 512 * mib
		extents = []vhd.Range{{Offset: 0, Length: virtual}}
		f.explain = "512 MiB fixed VHD, all data"
	case "sparse25":
		virtual = 2048 * mib
		extents = scattered(virtual, virtual/4, 7)
		f.explain = fmt.Sprintf("2 GiB fixed VHD, 512 MiB of data in %d extents of 64 KiB–8 MiB, random gaps", len(extents))
	case "contig25":
		virtual = 2048 * mib
		extents = []vhd.Range{{Offset: 0, Length: virtual / 4}}
		f.explain = "2 GiB fixed VHD, the first 512 MiB data"
	case "sparse30g":
		virtual = 30 << 30
		extents = scattered(virtual, 1<<30, 11)
		f.explain = fmt.Sprintf("30 GiB fixed VHD, 1 GiB of data in %d extents of 64 KiB–8 MiB, random gaps", len(extents))
	default:
		return nil, fmt.Errorf("unknown file %q: dense, sparse25, contig25 or sparse30g", name)
	}
	logf("creating %s: %s", name, f.explain)
	if _, err := vhd.CreateFixed(f.path, virtual, true); err != nil {
		return nil, err
	}
	out, err := os.OpenFile(f.path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	buf := make([]byte, 8*mib)
	seed := uint64(1)
	for _, e := range extents {
		for off := e.Offset; off < e.Offset+e.Length; off += int64(len(buf)) {
			b := buf[:min(int64(len(buf)), e.Offset+e.Length-off)]
			fillRandom(b, seed)
			seed++
			if _, err := out.WriteAt(b, off); err != nil {
				return nil, err
			}
			f.data += int64(len(b))
		}
	}
	if err := out.Sync(); err != nil {
		return nil, err
	}
	st, err := out.Stat()
	if err != nil {
		return nil, err
	}
	f.size = st.Size()
	f.data += vhd.FooterSize
	f.ranges, err = vhd.DataRanges(out)
	if err != nil {
		return nil, err
	}
	f.digest, err = transfer.SparseDigest(ctx, out, f.size, f.ranges)
	return f, err
}

// scattered places data bytes in extents of 64 KiB–8 MiB (4 KiB-aligned)
// over virtual bytes with random gaps.
func scattered(virtual, data int64, seed uint64) []vhd.Range {
	r := rand.New(rand.NewPCG(seed, seed))
	var sizes []int64
	for left := data; left > 0; {
		n := min(left, (16+r.Int64N(2033))*4096) // 64 KiB … ~8 MiB
		sizes = append(sizes, n)
		left -= n
	}
	weights := make([]float64, len(sizes)+1)
	var sum float64
	for i := range weights {
		weights[i] = r.Float64()
		sum += weights[i]
	}
	gapSpace := (virtual - data) / 4096
	var out []vhd.Range
	off := int64(0)
	for i, n := range sizes {
		off += int64(weights[i]/sum*float64(gapSpace)) * 4096
		out = append(out, vhd.Range{Offset: off, Length: n})
		off += n
	}
	return out
}

func fillRandom(b []byte, seed uint64) {
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), 1})
	_, _ = r.Read(b)
}

// timed runs argv under /usr/bin/time -v: wall time and peak RSS.
func timed(argv, env []string) (sample, string, error) {
	cmd := exec.Command("/usr/bin/time", append([]string{"-v"}, argv...)...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	s := sample{wall: time.Since(start)}
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "Maximum resident set size (kbytes): "); ok {
			s.rss, _ = strconv.ParseInt(v, 10, 64)
		}
		for _, prefix := range []string{"User time (seconds): ", "System time (seconds): "} {
			if v, ok := strings.CutPrefix(line, prefix); ok {
				secs, _ := strconv.ParseFloat(v, 64)
				s.cpu += secs
			}
		}
	}
	if err == nil && bytes.Contains(out.Bytes(), []byte("Final Job Status: Failed")) {
		err = errors.New("azcopy job failed")
	}
	return s, out.String(), err
}

// verify checks an uploaded blob: its size, and its sparse digest
// computed from its page ranges against the file's.
func verify(ctx context.Context, p *azure.Provider, cc *container.Client, ref cloud.BlobRef, f *file) error {
	b, err := p.GetBlob(ctx, ref)
	if err != nil {
		return err
	}
	if b.Size != f.size {
		return fmt.Errorf("blob has %d bytes, the file %d", b.Size, f.size)
	}
	var ranges []vhd.Range
	pager := cc.NewPageBlobClient(ref.Name).NewGetPageRangesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, r := range page.PageList.PageRange {
			ranges = append(ranges, vhd.Range{Offset: *r.Start, Length: *r.End - *r.Start + 1})
		}
	}
	if ranges == nil {
		ranges = []vhd.Range{}
	}
	d, err := transfer.SparseDigest(ctx, blobReader{ctx, p, ref}, b.Size, ranges)
	if err != nil {
		return err
	}
	if d != f.digest {
		return fmt.Errorf("blob digest %s, file %s", d, f.digest)
	}
	if b.Digest != "" && b.Digest != f.digest {
		return fmt.Errorf("stored digest %s, file %s", b.Digest, f.digest)
	}
	logf("verified %s (%d page ranges)", ref.Name, len(ranges))
	return nil
}

type blobReader struct {
	ctx context.Context
	p   *azure.Provider
	ref cloud.BlobRef
}

func (r blobReader) ReadAt(b []byte, off int64) (int, error) {
	data, err := r.p.ReadBlob(r.ctx, r.ref, off, int64(len(b)))
	n := copy(b, data)
	if err == nil && n < len(b) {
		err = io.EOF
	}
	return n, err
}

func containerSAS(cred *azblob.SharedKeyCredential) (string, error) {
	perms := sas.ContainerPermissions{Read: true, Add: true, Create: true, Write: true, Delete: true, List: true}
	qp, err := sas.BlobSignatureValues{
		Protocol:      sas.ProtocolHTTPSandHTTP,
		StartTime:     time.Now().Add(-time.Hour).UTC(),
		ExpiryTime:    time.Now().Add(24 * time.Hour).UTC(),
		Permissions:   perms.String(),
		ContainerName: containerName,
	}.SignWithSharedKey(cred)
	if err != nil {
		return "", err
	}
	return qp.Encode(), nil
}

// lastLines is the end of a tool's output, enough to say why it failed.
func lastLines(out string, n int) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func report(fs []*file, tools []string, results map[string]map[string][]sample, failures map[string]int, runs int, ceil *ceilingRun) {
	fmt.Printf("### imgflow vs azcopy (%d runs each, order rotating)\n\n", runs)
	for _, f := range fs {
		fmt.Printf("- `%s`: %s; file %s bytes, %.0f MiB of data.\n", f.name, f.explain, strconv.FormatInt(f.size, 10), float64(f.data)/mib)
	}
	fmt.Println()
	fmt.Println("The file's ceiling is the same Put Page loop over the file's own data ranges in 4 MiB pieces, one sample per round (median):")
	fmt.Println()
	for _, f := range fs {
		fmt.Printf("- `%s`: %.1f MiB/s of data (%s)\n", f.name, median(ceil.files[f.name]), joinRates(ceil.files[f.name]))
	}
	fmt.Println()
	fmt.Println("| file | tool | median wall (s) | runs (s) | failed runs | MiB/s of data | vs ceiling | vs file's ceiling | CPU (s, median) | peak RSS median / max (MiB) |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	walls := map[string]map[string]float64{}
	for _, f := range fs {
		walls[f.name] = map[string]float64{}
		for _, tool := range tools {
			ss := results[f.name][tool]
			if len(ss) == 0 {
				fmt.Printf("| %s | %s | - | - | %d | - | - | - | - | - |\n", f.name, tool, failures[f.name+"/"+tool])
				continue
			}
			var ws, rs, cpus []float64
			var maxRSS int64
			var each []string
			for _, s := range ss {
				ws = append(ws, s.wall.Seconds())
				rs = append(rs, float64(s.rss)/1024)
				cpus = append(cpus, s.cpu)
				maxRSS = max(maxRSS, s.rss)
				each = append(each, fmt.Sprintf("%.1f", s.wall.Seconds()))
			}
			w := median(ws)
			walls[f.name][tool] = w
			rate := float64(f.data) / mib / w
			fmt.Printf("| %s | %s | %.2f | %s | %d | %.1f | %.0f %% | %.0f %% | %.2f | %.0f / %.0f |\n", f.name, tool, w, strings.Join(each, " "), failures[f.name+"/"+tool], rate,
				100*rate/ceil.rate(), 100*rate/median(ceil.files[f.name]), median(cpus), median(rs), float64(maxRSS)/1024)
		}
	}
	fmt.Println()
	if !slices.Contains(tools, "azcopy") {
		return
	}
	fmt.Println("imgflow's speed-up over azcopy (azcopy's median wall / imgflow's):")
	fmt.Println()
	for _, f := range fs {
		w := walls[f.name]
		fmt.Printf("- `%s`:", f.name)
		for i, tool := range tools {
			if tool == "azcopy" || w[tool] == 0 {
				continue
			}
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Printf("%s %s **%.2f×**", sep, tool, w["azcopy"]/w[tool])
		}
		fmt.Println()
	}
	fmt.Println()
}

func machine() string {
	model := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for l := range strings.SplitSeq(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	mem := ""
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		if l, _, ok := strings.Cut(string(data), "\n"); ok {
			if kb, err := strconv.ParseInt(strings.Fields(l)[1], 10, 64); err == nil {
				mem = fmt.Sprintf(", %.0f GiB RAM", float64(kb)/(1<<20))
			}
		}
	}
	node, _ := exec.Command("node", "--version").Output()
	return fmt.Sprintf("%d vCPU %s%s, %s, node %s, Azurite 3.37.0 (disk persistence)", runtime.NumCPU(), model, mem, runtime.Version(),
		strings.TrimSpace(string(node)))
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from inside the repository")
		}
		dir = parent
	}
}
