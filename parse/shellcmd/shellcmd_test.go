package shellcmd

import (
	"reflect"
	"testing"
)

func TestDetect(t *testing.T) {
	cases := []struct {
		script  string
		writes  bool
		targets []string
		heredoc map[string]string
	}{
		{"ls -la && cat README.md", false, nil, nil},
		{"sed -n '1,20p' a.go", false, nil, nil},
		{"echo 'a > b' | grep x", false, nil, nil},
		{"go test ./... 2>&1 | tail", false, nil, nil},
		{"make >/dev/null 2>&1", false, nil, nil},
		{"echo hi > out.txt", true, []string{"out.txt"}, nil},
		{"echo hi >> log.txt", true, []string{"log.txt"}, nil},
		{"cat <<'EOF' > wc.py\nif a > b:\n    pass\nEOF", true, []string{"wc.py"}, map[string]string{"wc.py": "if a > b:\n    pass\n"}},
		{"cat > x.txt <<EOF\n$HOME\nEOF", true, []string{"x.txt"}, nil},
		{"sed -i 's/a/b/' f1 f2", true, []string{"f1", "f2"}, nil},
		{"sed -i -e 's/a/b/' f1", true, []string{"f1"}, nil},
		{"perl -pi -e 's/a/b/' f", true, []string{"f"}, nil},
		{"rm -rf build", true, []string{"build"}, nil},
		{"mv a.txt b.txt", true, []string{"a.txt", "b.txt"}, nil},
		{"echo x | tee -a t1 t2", true, []string{"t1", "t2"}, nil},
		{"cd sub && echo x > y.txt", true, []string{"sub/y.txt"}, nil},
		{"gofmt -w main.go", true, []string{"main.go"}, nil},
		{"git checkout -- a.go", true, nil, nil},
		{"python3 - <<'PY'\nopen('x','w').write('y')\nPY", true, nil, nil},
		{"sudo FOO=1 touch new.txt", true, []string{"new.txt"}, nil},
	}
	for _, c := range cases {
		w, ok := Detect(c.script)
		if ok != c.writes || !reflect.DeepEqual(w.Targets, c.targets) || (c.heredoc != nil && !reflect.DeepEqual(w.Heredocs, c.heredoc)) {
			t.Errorf("Detect(%q) = %+v, %v", c.script, w, ok)
		}
	}
}
