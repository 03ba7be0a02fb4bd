package packer

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/imgflow/imgflow/internal/redact"
)

// Builder ids of the artifacts imgflow looks at.
const (
	AzureARMBuilderID = "Azure.ResourceManagement.VMImage"
	FileBuilderID     = "packer.file"
	NullBuilderID     = "fnoeding.null"
)

// Result is what a packer build produced.
//
// The typed Azure fields come from the first azure-arm artifact that sets
// them; every artifact of every build stays available in Builds.
type Result struct {
	Builds []BuildArtifacts
	// ManagedImageID is the ARM id of the captured managed image.
	ManagedImageID string
	// GalleryImageVersionID is the ARM id of the image version published to
	// shared_image_gallery_destination.
	GalleryImageVersionID string
	// OSDiskVHDURL is the captured OS disk VHD (VHD mode), without any SAS.
	OSDiskVHDURL string
	// ResourceGroup is the managed image's resource group
	// (ManagedImageResourceGroupName); empty in VHD mode.
	ResourceGroup string
	// Downloads are the files the template's download provisioners
	// fetched from the build VM, by name in the downloads directory
	// (filled by the caller that made the directory, imgflow's
	// packer_build).
	Downloads map[string]string
}

// BuildArtifacts is what one build (one builder of the template) reported.
type BuildArtifacts struct {
	// Name is the build name (the machine-readable target).
	Name      string
	Artifacts []Artifact
	// Errors are the build's machine-readable error lines (redacted).
	Errors []string
	// BuildResourceGroup is the azure-arm build's resource group, when seen:
	// the temporary one it created, or build_resource_group_name.
	BuildResourceGroup string
	// TemporaryResourceGroup is the resource group the azure-arm build
	// created for itself (not one it reused), which its cleanup deletes.
	TemporaryResourceGroup string
	// TemporaryResourceGroupDeleted: packer said it deleted that group,
	// or started deleting it without waiting (async_resourcegroup_delete).
	TemporaryResourceGroupDeleted bool
}

// Artifact is one artifact of a build, from packer's artifact lines.
// Strings are redacted: no secret value and no SAS signature.
type Artifact struct {
	Index     int
	BuilderID string
	ID        string
	// String is the artifact's human description (multi-line).
	String string
	Files  []string
	// Azure is the parsed String of an azure-arm artifact, else nil.
	Azure *AzureARMArtifact
}

// AzureAdditionalDisk is one data disk of a VHD-mode azure-arm artifact.
type AzureAdditionalDisk struct {
	URI string
	// ReadOnlySAS has its signature redacted.
	ReadOnlySAS string
}

// AzureARMArtifact is the azure-arm builder's artifact, parsed from its
// String().
//
// Format (packer v1.6.6, builder/azure/arm/artifact.go, Artifact.String;
// the format strings below are present verbatim in Debian's packer 1.6.6
// binary):
//
//	Azure.ResourceManagement.VMImage:
//
//	OSType: %s
//	-- managed image mode (ManagedImageResourceGroupName != ""):
//	ManagedImageResourceGroupName: %s
//	ManagedImageName: %s
//	ManagedImageId: %s
//	ManagedImageLocation: %s
//	ManagedImageOSDiskSnapshotName: %s        (only when set)
//	ManagedImageDataDiskSnapshotPrefix: %s    (only when set)
//	ManagedImageSharedImageGalleryId: %s      (only with a SIG destination)
//	-- otherwise VHD mode:
//	StorageAccountLocation: %s
//	OSDiskUri: %s
//	OSDiskUriReadOnlySas: %s
//	TemplateUri: %s
//	TemplateUriReadOnlySas: %s
//	AdditionalDiskUri (datadisk-%d): %s
//	AdditionalDiskUriReadOnlySas (datadisk-%d): %s
//
// The azure plugin (hashicorp/packer-plugin-azure; 1.4.0 is bundled with
// packer 1.9.5) adds SharedImageGallery{ResourceGroup,Name,ImageName,
// ImageVersion,ReplicatedRegions} lines after ManagedImageSharedImageGalleryId,
// and a build published straight to the gallery (no managed image, no VHD)
// prints only OSType and those lines. 2.x writes the VHD as "VHDOSDiskUri".
// VHDOSDiskUri is read as OSDiskURI and unknown keys are kept in Extra.
type AzureARMArtifact struct {
	OSType string

	ManagedImageResourceGroupName      string
	ManagedImageName                   string
	ManagedImageID                     string
	ManagedImageLocation               string
	ManagedImageOSDiskSnapshotName     string
	ManagedImageDataDiskSnapshotPrefix string
	// ManagedImageSharedImageGalleryID is the ARM id of the gallery image
	// version the build published.
	ManagedImageSharedImageGalleryID string

	StorageAccountLocation string
	OSDiskURI              string
	// OSDiskURIReadOnlySAS has its SAS query redacted (?<redacted>).
	OSDiskURIReadOnlySAS string
	TemplateURI          string
	// TemplateURIReadOnlySAS has its signature redacted.
	TemplateURIReadOnlySAS string
	AdditionalDisks        []AzureAdditionalDisk

	// Extra holds lines this parser does not know, by key.
	Extra map[string]string
}

var additionalDiskRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(AdditionalDiskUri|AdditionalDiskUriReadOnlySas) \(datadisk-(\d+)\)$`)
})

// ParseAzureARMArtifact parses the String() of an azure-arm artifact (see
// AzureARMArtifact for the format). SAS signatures are redacted.
func ParseAzureARMArtifact(s string) (*AzureARMArtifact, error) {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != AzureARMBuilderID+":" {
		return nil, fmt.Errorf("not an azure-arm artifact string: first line is not %q", AzureARMBuilderID+":")
	}
	a := &AzureARMArtifact{}
	for _, line := range lines[1:] {
		if strings.TrimSpace(line) == "" {
			continue
		}
		// Keys never contain ": ", URIs do not start with a space: split on
		// the first ": " (or a trailing ":" when the value is empty).
		key, val, ok := strings.Cut(line, ": ")
		if !ok {
			k, found := strings.CutSuffix(line, ":")
			if !found {
				return nil, fmt.Errorf("azure-arm artifact: unexpected line %q", redact.SAS(line))
			}
			key = k
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "OSType":
			a.OSType = val
		case "ManagedImageResourceGroupName":
			a.ManagedImageResourceGroupName = val
		case "ManagedImageName":
			a.ManagedImageName = val
		case "ManagedImageId":
			a.ManagedImageID = val
		case "ManagedImageLocation":
			a.ManagedImageLocation = val
		case "ManagedImageOSDiskSnapshotName":
			a.ManagedImageOSDiskSnapshotName = val
		case "ManagedImageDataDiskSnapshotPrefix":
			a.ManagedImageDataDiskSnapshotPrefix = val
		case "ManagedImageSharedImageGalleryId":
			a.ManagedImageSharedImageGalleryID = val
		case "StorageAccountLocation":
			a.StorageAccountLocation = val
		case "OSDiskUri", "VHDOSDiskUri":
			a.OSDiskURI = val
		case "OSDiskUriReadOnlySas":
			a.OSDiskURIReadOnlySAS = redact.SAS(val)
		case "TemplateUri":
			a.TemplateURI = val
		case "TemplateUriReadOnlySas":
			a.TemplateURIReadOnlySAS = redact.SAS(val)
		default:
			if m := additionalDiskRE().FindStringSubmatch(key); m != nil {
				n, _ := strconv.Atoi(m[2])
				if n < 1 || n > 64 {
					return nil, fmt.Errorf("azure-arm artifact: bad data disk number in %q", key)
				}
				for len(a.AdditionalDisks) < n {
					a.AdditionalDisks = append(a.AdditionalDisks, AzureAdditionalDisk{})
				}
				if m[1] == "AdditionalDiskUri" {
					a.AdditionalDisks[n-1].URI = val
				} else {
					a.AdditionalDisks[n-1].ReadOnlySAS = redact.SAS(val)
				}
				continue
			}
			if a.Extra == nil {
				a.Extra = map[string]string{}
			}
			a.Extra[key] = redact.SAS(val)
		}
	}
	return a, nil
}

// IsManagedImage reports whether the build captured a managed image (as
// opposed to a VHD in a storage account).
func (a *AzureARMArtifact) IsManagedImage() bool { return a.ManagedImageResourceGroupName != "" }

// VHDURL returns the OS disk VHD URI without any query (no SAS): OSDiskUri,
// or the read-only SAS URL stripped of its query when only that is known.
func (a *AzureARMArtifact) VHDURL() string {
	u := a.OSDiskURI
	if u == "" {
		u = a.OSDiskURIReadOnlySAS
	}
	if u == "" {
		return ""
	}
	if p, err := url.Parse(u); err == nil {
		p.RawQuery, p.ForceQuery, p.Fragment = "", false, ""
		return p.String()
	}
	return redact.SAS(u)
}

// redactAzure masks secrets in every field of a parsed artifact.
func redactAzure(a *AzureARMArtifact, r *redactor) {
	for _, f := range []*string{
		&a.OSType, &a.ManagedImageResourceGroupName, &a.ManagedImageName, &a.ManagedImageID,
		&a.ManagedImageLocation, &a.ManagedImageOSDiskSnapshotName, &a.ManagedImageDataDiskSnapshotPrefix,
		&a.ManagedImageSharedImageGalleryID, &a.StorageAccountLocation, &a.OSDiskURI,
		&a.OSDiskURIReadOnlySAS, &a.TemplateURI, &a.TemplateURIReadOnlySAS,
	} {
		*f = r.redact(*f)
	}
	for i := range a.AdditionalDisks {
		a.AdditionalDisks[i].URI = r.redact(a.AdditionalDisks[i].URI)
		a.AdditionalDisks[i].ReadOnlySAS = r.redact(a.AdditionalDisks[i].ReadOnlySAS)
	}
	for k, v := range a.Extra {
		a.Extra[k] = r.redact(v)
	}
}

// result assembles a Result from what the collector gathered.
func (c *collector) result() *Result {
	res := &Result{}
	for _, b := range c.builds {
		res.Builds = append(res.Builds, *b)
		for _, a := range b.Artifacts {
			az := a.Azure
			if az == nil {
				continue
			}
			if res.ManagedImageID == "" {
				res.ManagedImageID = az.ManagedImageID
			}
			if res.GalleryImageVersionID == "" {
				res.GalleryImageVersionID = az.ManagedImageSharedImageGalleryID
			}
			if res.OSDiskVHDURL == "" {
				res.OSDiskVHDURL = az.VHDURL()
			}
			if res.ResourceGroup == "" {
				res.ResourceGroup = az.ManagedImageResourceGroupName
			}
		}
	}
	return res
}
