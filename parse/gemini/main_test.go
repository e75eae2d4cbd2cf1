package gemini

import (
	"context"
	"io"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
	"github.com/agentsandbox/sandbox/parse/internal/testhook"
)

// The parser's tests run with records poisoned once read (testhook.Poison):
// nothing it keeps may alias a record's bytes.
func TestMain(m *testing.M) { testhook.Main(m) }

// parse reads a whole session at once.
func parse(ctx context.Context, r io.Reader, file string, opts Options) (*golden.Parsed, error) {
	return golden.Parse(ctx, func(ctx context.Context, r io.Reader, file string, h emit.Handler) (manifest.Session, error) {
		return stream(ctx, r, file, opts, h)
	}, r, file)
}
