// Package shapes holds an interface with every method shape genintercept
// handles, for its tests.
package shapes

import (
	"context"
	stdtime "time"
)

// Base is embedded by Wide.
type Base interface {
	Get(ctx context.Context, name string) (*Item, error)
}

// Wide has one method of each shape.
type Wide interface {
	Base
	Name() string
	Delete(context.Context, string) error
	Pair(ctx context.Context, a, b int) (string, []Item, error)
	Collide(ctx context.Context, x, err string) (r0 int, e error)
	Many(ctx context.Context, wait stdtime.Duration, opts ...string) (map[string]Item, error)
	NoError(ctx context.Context) int
}

// Item is a value of the package.
type Item struct{ Name string }

type hooked struct{ w Wide }

func (h *hooked) before(context.Context, string) error { return nil }
func (h *hooked) after(context.Context, string) error  { return nil }

var _ Wide = (*hooked)(nil)
