// Command upload is imgflow's side of the VHD upload benchmark: it uploads
// one fixed VHD to a page blob through the Azure target (cloud/azure), the
// way vhd_upload does: validate the footer, list the data ranges
// (SEEK_DATA/SEEK_HOLE), check the destination, ensure the container,
// UploadPageBlob. Defaults are the provider's (Parallel 8, no Content-MD5);
// progress goes to stderr. bench/vhd runs it under /usr/bin/time -v.
//
//	upload -endpoint http://127.0.0.1:10000/devstoreaccount1 -key KEY -container c -name x.vhd -file disk.vhd
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/progress"
	"github.com/imgflow/imgflow/vhd"
)

func main() {
	endpoint := flag.String("endpoint", "", "blob endpoint of the account, e.g. http://127.0.0.1:10000/devstoreaccount1")
	key := flag.String("key", "", "the account's shared key")
	container := flag.String("container", "bench", "container")
	name := flag.String("name", "", "blob name")
	file := flag.String("file", "", "fixed VHD to upload")
	parallel := flag.Int("parallel", 0, "chunks at once (0: the provider's default)")
	contentMD5 := flag.Bool("content-md5", false, "also store the whole content's MD5 (Options.ContentMD5)")
	quiet := flag.Bool("quiet", false, "no progress lines")
	flag.Parse()
	if err := run(*endpoint, *key, *container, *name, *file, *parallel, *contentMD5, *quiet); err != nil {
		fmt.Fprintln(os.Stderr, "upload:", err)
		os.Exit(1)
	}
}

func run(endpoint, key, container, name, file string, parallel int, contentMD5, quiet bool) error {
	ctx := context.Background()
	account := endpoint[strings.LastIndex(strings.TrimRight(endpoint, "/"), "/")+1:]
	opts := azure.Options{
		SubscriptionID: "00000000-0000-0000-0000-000000000000",
		Credential:     azure.StaticToken("unused: blobs use the shared key"),
		BlobEndpoint:   func(string) string { return endpoint },
		StorageKey:     func(string) (string, error) { return key, nil },
		Parallel:       parallel,
		ContentMD5:     contentMD5,
	}
	if !quiet {
		opts.Transfers = progress.New(os.Stderr, progress.Options{})
	}
	p, err := azure.New(ctx, opts)
	if err != nil {
		return err
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	info, err := vhd.Validate(f, st.Size())
	if err != nil {
		return err
	}
	ranges, err := vhd.DataRanges(f)
	if err != nil {
		return err
	}
	ref := cloud.BlobRef{Account: account, Container: container, Name: name, Endpoint: endpoint}
	if _, err := p.GetBlob(ctx, ref); err == nil {
		return fmt.Errorf("%s exists", name)
	} else if !cloud.IsNotFound(err) {
		return err
	}
	if err := p.EnsureContainer(ctx, account, container); err != nil {
		return err
	}
	b, err := p.UploadPageBlob(ctx, ref, cloud.PageSource{Reader: f, Size: info.FileSize, Ranges: ranges}, false)
	if err != nil {
		return err
	}
	fmt.Printf("%s %d %s\n", b.URL, b.Size, b.Digest)
	return nil
}
