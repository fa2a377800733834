package goal

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// zeros is an endless stream of NUL bytes, as /dev/zero.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// newlineless is an endless stream of one line, as `tr -d '\n' < /dev/urandom | tr -d '\0'`.
type newlineless struct{}

func (newlineless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// A stream that is not GOAL text is refused after its first bytes
// instead of being spooled to the end (never, for /dev/zero); GOAL text
// passes through unchanged.
func TestSpoolRefusesNonText(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    io.Reader
		want string
	}{
		{"endless NULs", zeros{}, "NUL byte at offset 0"},
		{"a NUL later", strings.NewReader("num_ranks 2\nrank 0 {\x00"), "NUL byte at offset 20"},
		{"an endless line", newlineless{}, "a line longer than 4096 bytes"},
	} {
		_, err := io.Copy(io.Discard, &textReader{r: tc.r, max: 4096})
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a syntax error saying %q", tc.name, err, tc.want)
		}
	}
	if _, err := Open(zeros{}); !errors.Is(err, ErrSyntax) {
		t.Errorf("Open(/dev/zero): %v, want a syntax error", err)
	}
	text := "num_ranks 2\n" + "rank 0 {\n" + strings.Repeat(" ", 4096) + "\nl1: send 8b to 1 tag 0\n}\nrank 1 {\nl1: recv 8b from 0 tag 0\n}\n"
	var out bytes.Buffer
	if _, err := io.Copy(&out, &textReader{r: io.MultiReader(strings.NewReader(text[:100]), strings.NewReader(text[100:])), max: 4096}); err != nil || out.String() != text {
		t.Fatalf("GOAL text did not pass through: %v", err)
	}
}
