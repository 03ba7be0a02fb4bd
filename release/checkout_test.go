package release

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkout() records the repositories a release's jobs read, which imgflow
// ci clones, and returns the path for the jobs' vars.
func TestCheckoutRecordsTheRepositoryAndReturnsItsPath(t *testing.T) {
	src := "AB = checkout(\"//third_party/AgentBaker\", \"Azure/AgentBaker\")\n" +
		"checkout(\"//third_party/image-builder\", \"kubernetes-sigs/image-builder\", ref = \"v0.1.48\")\n" +
		"job(\"workflows/w.star\", id = AB.removeprefix(\"//third_party/\").lower())\n"
	r, err := Load(context.Background(), scratch(t, src), "releases/r.star")
	require.NoError(t, err)
	assert.Equal(t, []Checkout{
		{Path: "third_party/AgentBaker", Repository: "Azure/AgentBaker"},
		{Path: "third_party/image-builder", Repository: "kubernetes-sigs/image-builder", Ref: "v0.1.48"},
	}, r.Checkouts)
	assert.Equal(t, "agentbaker", r.Jobs[0].ID, "checkout() returns the path it was given")
}

func TestBadCheckoutsAreRefused(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`checkout("third_party/x", "a/b")`, `checkout: path "third_party/x": a directory in the workspace`},
		{`checkout("//../x", "a/b")`, `checkout: path "//../x"`},
		{`checkout("//x", "https://github.com/a/b")`, `checkout: repository "https://github.com/a/b": a GitHub repository owner/name`},
		{`checkout("//x", "a/b", ref = "main; rm -rf /")`, `checkout: ref "main; rm -rf /"`},
		{"checkout(\"//x\", \"a/b\")\ncheckout(\"//x\", \"c/d\")", `checkout: //x is already the checkout of a/b`},
	} {
		_, err := Load(context.Background(), scratch(t, c.src+"\njob(\"workflows/w.star\")\n"), "releases/r.star")
		require.Error(t, err, c.src)
		assert.Contains(t, err.Error(), c.want, c.src)
	}
}
