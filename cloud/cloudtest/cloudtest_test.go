package cloudtest_test

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/cloudtest"
	"github.com/imgflow/imgflow/vhd"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
	fatal  bool
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) FailNow() { r.fatal = true; panic(r) }

// check runs RequireError against a recorder and says what it reported.
func check(t *testing.T, err error, status int, code string, fragments ...string) (r *recorder, ce *cloud.Error) {
	r = &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != r {
				panic(p)
			}
		}()
		ce = cloudtest.RequireError(r, err, status, code, fragments...)
	}()
	return r, ce
}

func TestRequireErrorAcceptsTheNamedError(t *testing.T) {
	err := fmt.Errorf("get gallery g: %w", cloud.NotFound(cloud.CodeResourceNotFound, "/g", "gallery g was not found"))
	r, ce := check(t, err, http.StatusNotFound, cloud.CodeResourceNotFound, "was not found")
	assert.Empty(t, r.errors)
	assert.Equal(t, "/g", ce.Resource)
}

func TestRequireErrorFailsOnAnotherStatusCodeOrMessage(t *testing.T) {
	err := cloud.Conflict(cloud.CodePropertyChangeNotAllowed, "/d", "osState cannot change")
	r, _ := check(t, err, http.StatusBadRequest, cloud.CodePropertyChangeNotAllowed)
	assert.Len(t, r.errors, 1, "the status differs")
	r, _ = check(t, err, http.StatusConflict, cloud.CodeInvalidParameter)
	assert.Len(t, r.errors, 1, "the code differs")
	r, _ = check(t, err, http.StatusConflict, cloud.CodePropertyChangeNotAllowed, "osType")
	assert.Len(t, r.errors, 1, "the message lacks the fragment")
	assert.False(t, r.fatal)
}

func TestRequireErrorStopsOnAnErrorThatIsNoCloudError(t *testing.T) {
	r, ce := check(t, errors.New("boom"), http.StatusConflict, cloud.CodeConflict)
	assert.True(t, r.fatal)
	assert.Nil(t, ce)
	r, _ = check(t, nil, http.StatusConflict, cloud.CodeConflict)
	assert.True(t, r.fatal)
}

func TestFixturesAreValid(t *testing.T) {
	assert.NoError(t, cloud.ValidateImageDefinition(cloudtest.Definition("rg", "gal", "def", "sku"), false, time.Now()))
	assert.NoError(t, cloud.ValidateCommunityInfo(cloudtest.Community("imgflow")))
	data := cloudtest.FixedVHD(1 << 20)
	f, err := vhd.DecodeFooter(data[len(data)-vhd.FooterSize:])
	if assert.NoError(t, err) {
		assert.Equal(t, vhd.DiskTypeFixed, f.DiskType)
		assert.EqualValues(t, 1<<20, f.CurrentSize)
	}
	src := cloudtest.PageSource(data)
	rs, err := src.DataRanges()
	assert.NoError(t, err)
	assert.Equal(t, []vhd.Range{{Offset: 0, Length: int64(len(data))}}, rs)
}
