package localsim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/imgflow/imgflow/packer"
)

func TestSlowBuildStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := New(newCloud(t)).Slow(time.Hour).Build(ctx, packer.BuildRequest{TemplatePath: "never-read.json"})
	assert.ErrorIs(t, err, context.Canceled, "a cancelled build does not wait out its hour")
	assert.Nil(t, res)
}
