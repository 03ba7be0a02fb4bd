package conformance

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
)

// ReadOnly wraps the base of a dry run so that a write reaching it fails
// the test and is refused. Operations are told apart by name (IsRead), so
// a Provider method added later counts as a write unless it reads.
func ReadOnly(t testing.TB, base cloud.Provider) cloud.Provider {
	return cloud.Intercept(base, cloud.Hooks{Before: func(_ context.Context, op string) error {
		if IsRead(op) {
			return nil
		}
		t.Errorf("dry run: %s reached the base target", op)
		return fmt.Errorf("dry run: %s reached the base target", op)
	}})
}

// IsRead reports whether the Provider operation op (a method name) only
// reads: Get…, List… and ReadBlob.
func IsRead(op string) bool {
	return strings.HasPrefix(op, "Get") || strings.HasPrefix(op, "List") || op == "ReadBlob"
}

// stillEmpty checks that the base of a dry run is the empty subscription
// it was: no resource group, gallery or storage account the cases make.
func stillEmpty(t *testing.T, base cloud.Provider) {
	ctx := context.Background()
	gals, err := base.ListGalleries(ctx)
	require.NoError(t, err)
	assert.Empty(t, gals, "galleries in the base of a dry run")
	for _, rg := range []string{"rg", "rg2", "rg-twice", "rg-a"} {
		_, err := base.GetResourceGroup(ctx, rg)
		assert.True(t, cloud.IsNotFound(err), "resource group %s in the base of a dry run: %v", rg, err)
	}
}

// readsBack checks what a blob written in the case reads: the file's
// bytes, or in a dry run, which keeps no data, as many zeros.
func (e *env) readsBack(file *vhdFile, data []byte, msgAndArgs ...any) {
	e.t.Helper()
	if e.dry {
		assert.Len(e.t, data, len(file.content), msgAndArgs...)
		assert.Equal(e.t, -1, bytes.IndexFunc(data, func(r rune) bool { return r != 0 }), "a dry run's data reads as zeros")
		return
	}
	assert.True(e.t, bytes.Equal(file.content, data), msgAndArgs...)
}
