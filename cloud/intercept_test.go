package cloud

import (
	"context"
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/internal/genintercept"
)

// TestInterceptGenIsUpToDate fails when intercept_gen.go is not what the
// generator makes of the Provider interface today.
func TestInterceptGenIsUpToDate(t *testing.T) {
	want, err := genintercept.Generate(genintercept.Cloud)
	require.NoError(t, err)
	got, err := os.ReadFile(genintercept.Cloud.Output)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "cloud/intercept_gen.go is stale: run go generate ./cloud/")
}

// unreachable is a Provider every call of which panics: the embedded
// interface is nil.
type unreachable struct{ Provider }

// TestEveryOperationIsIntercepted calls each Provider method that takes a
// context through Intercept: Before sees the method's name and its error
// stops the call before the wrapped provider; without it the call goes
// through to the wrapped provider.
func TestEveryOperationIsIntercepted(t *testing.T) {
	stop := errors.New("stopped by Before")
	pt := reflect.TypeFor[Provider]()
	ctxType := reflect.TypeFor[context.Context]()
	hooked := 0
	for i := range pt.NumMethod() {
		m := pt.Method(i)
		if m.Type.NumIn() == 0 || m.Type.In(0) != ctxType {
			continue
		}
		hooked++
		args := []reflect.Value{reflect.ValueOf(context.Background())}
		for j := 1; j < m.Type.NumIn(); j++ {
			args = append(args, reflect.Zero(m.Type.In(j)))
		}

		var seen []string
		p := Intercept(unreachable{}, Hooks{Before: func(_ context.Context, op string) error {
			seen = append(seen, op)
			return stop
		}})
		out := reflect.ValueOf(p).MethodByName(m.Name).Call(args)
		err, _ := out[len(out)-1].Interface().(error)
		assert.ErrorIs(t, err, stop, m.Name)
		assert.Equal(t, []string{m.Name}, seen, m.Name)

		passed := Intercept(unreachable{}, Hooks{})
		assert.Panics(t, func() { reflect.ValueOf(passed).MethodByName(m.Name).Call(args) },
			"%s without a failing Before reaches the wrapped provider", m.Name)
	}
	assert.Greater(t, hooked, 30, "Provider's operations")
}

// fixed answers ListLocations; the rest of Provider is unreachable.
type fixed struct{ unreachable }

func (fixed) ListLocations(context.Context) ([]Location, error) {
	return []Location{{Name: "westeurope"}}, nil
}

func TestAfterRunsOnSuccessAndMayFailTheCall(t *testing.T) {
	late := errors.New("crashed after")
	var ops []string
	p := Intercept(fixed{}, Hooks{After: func(_ context.Context, op string) error {
		ops = append(ops, op)
		return late
	}})
	locs, err := p.ListLocations(context.Background())
	assert.ErrorIs(t, err, late)
	assert.Equal(t, []Location{{Name: "westeurope"}}, locs, "the result of the call that ran is kept")
	assert.Equal(t, []string{"ListLocations"}, ops)
}
