package builtins

import (
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/imgflow/imgflow/packer"
)

// Downloads are journaled with their packer_build step, so a resumed run
// has them without the build VM; a journal is read whole on resume and
// its records are JSON-escaped, so each download is kept up to
// maxDownloadSize, and all of a build's up to maxDownloadsSize.
const (
	maxDownloadSize  = 1 << 20
	maxDownloadsSize = 2 << 20
)

// readDownloads reads what the build downloaded into dir, by name, with
// the secrets packer was given redacted (a build log may echo them). A
// download provisioner whose file is missing fails the build, as packer
// does when the remote file does not exist. A log or text file over
// maxDownloadSize keeps its end (where a build log says what went
// wrong), marked as cut; any other file that large is an error.
func readDownloads(dir string, want []packer.Download, secrets []string) (map[string]string, error) {
	out := map[string]string{}
	if dir == "" {
		return out, nil
	}
	total := 0
	for _, d := range want {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(d.Name)))
		if err != nil {
			if os.IsNotExist(err) && (len(d.Only) > 0 || len(d.Except) > 0) {
				continue // the provisioner did not run for this build
			}
			return nil, fmt.Errorf("download %s of %s: %w", d.Name, d.Source, err)
		}
		if len(data) > maxDownloadSize {
			switch path.Ext(d.Name) {
			case ".log", ".txt":
				cut := len(data) - maxDownloadSize
				data = append([]byte(fmt.Sprintf("[imgflow: the first %d bytes of %s are cut; its last %d follow]\n", cut, d.Source, maxDownloadSize)), data[cut:]...)
			default:
				return nil, fmt.Errorf("download %s of %s is %d KiB: packer_build returns downloads of up to %d KiB; download less or compress it on the VM", d.Name, d.Source, len(data)>>10, maxDownloadSize>>10)
			}
		}
		if total += len(data); total > maxDownloadsSize {
			return nil, fmt.Errorf("downloads: %s of %s brings them to %d KiB: packer_build returns up to %d KiB from a build; download less", d.Name, d.Source, total>>10, maxDownloadsSize>>10)
		}
		out[d.Name] = redactValues(string(data), secrets)
	}
	return out, nil
}
