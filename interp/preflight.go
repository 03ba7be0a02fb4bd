package interp

import (
	"context"
	"errors"
	"fmt"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/overlay"
)

// preflighter is a dry-run view that can check, once the pass is over,
// what its target would refuse (overlay.Provider.Preflight).
type preflighter interface {
	Preflight(ctx context.Context) error
}

// preflight runs the dry-run view's checks after a successful pass and
// puts what they found in res.Err, reporting whether they found any. A
// storage account name taken elsewhere is reported at the param that sets
// it, with the --var that changes it.
func preflight(ctx context.Context, p cloud.Provider, res *Result, vars map[string]starlark.Value) bool {
	pf, ok := p.(preflighter)
	if !ok {
		return false
	}
	err := pf.Preflight(ctx)
	if err == nil {
		return false
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		out = append(out, atParam(e, res, vars))
	}
	res.Err = errors.Join(out...)
	return true
}

// atParam places a taken storage account name at the param whose value it
// is, naming the --var to set.
func atParam(err error, res *Result, vars map[string]starlark.Value) error {
	var ve *cloud.ValidationError
	if !errors.As(err, &ve) || ve.Field != overlay.FieldStorageAccountName {
		return &Error{Msg: err.Error(), Cause: err}
	}
	for _, p := range res.Params {
		v, given := vars[p.Name]
		if !given {
			v = p.Default
		}
		if s, ok := v.(starlark.String); ok && string(s) == ve.Value {
			fixed := *ve
			fixed.Fix = fmt.Sprintf("set param %s to a name of your own: --var %s=<3–24 lowercase letters and digits>", p.Name, p.Name)
			return &Error{Pos: p.Pos, Msg: fixed.Error(), Cause: &fixed}
		}
	}
	return &Error{Msg: err.Error(), Cause: err}
}
