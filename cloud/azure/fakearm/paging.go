package fakearm

import (
	"net/http"
	"strconv"
)

// ARM pages the answer of a list: each page holds some of the value and
// a nextLink, the same URL with a $skiptoken, until the last, which has
// none (RPC "Collection GET": nextLink; e.g. GalleryRP 2025-03-03
// Gallery_ListBySubscription.json and GalleryImage_ListByGallery.json
// answer {"value": […], "nextLink": "…"}). The fake's handlers answer a
// whole list; the transport cuts it into pages of Options.PageSize.

// DefaultPageSize is the page size of a Fake made without one: small, so
// that every list in a test crosses pages.
const DefaultPageSize = 2

// pageable are the list operations ARM pages (their SDK pagers follow
// nextLink). Subscription locations are answered in one page, as ARM
// does (the operation has no nextLink).
var pageable = map[string]bool{
	"AccountsClient.NewListPager":                           true,
	"GalleriesClient.NewListPager":                          true,
	"GalleryImagesClient.NewListByGalleryPager":             true,
	"GalleryImageVersionsClient.NewListByGalleryImagePager": true,
}

const skipToken = "$skiptoken"

func (f *Fake) pageSize() int {
	if f.opts.PageSize > 0 {
		return f.opts.PageSize
	}
	return DefaultPageSize
}

// page cuts a list answer to the page its request's $skiptoken asks for
// and links the next one.
func (f *Fake) page(req *http.Request, api string, resp *http.Response) *http.Response {
	if !pageable[api] || resp.StatusCode != http.StatusOK || resp.Body == nil {
		return resp
	}
	return editBody(resp, func(doc map[string]any) bool {
		all, _ := doc["value"].([]any)
		start, _ := strconv.Atoi(req.URL.Query().Get(skipToken))
		start = min(max(0, start), len(all))
		end := min(start+f.pageSize(), len(all))
		doc["value"] = append([]any{}, all[start:end]...)
		delete(doc, "nextLink")
		if end < len(all) {
			next := *req.URL
			q := next.Query()
			q.Set(skipToken, strconv.Itoa(end))
			next.RawQuery = q.Encode()
			doc["nextLink"] = next.String()
		}
		return true
	})
}
