package recover

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
)

// jnode is a JSON value that keeps its object keys in order, so a notebook
// edited here differs from the original only where the edit is.
type jnode struct {
	kind byte // '{', '[', or 0 for a scalar
	keys []string
	vals []*jnode
	raw  json.RawMessage
}

func (n *jnode) get(key string) *jnode {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

func (n *jnode) set(key string, v *jnode) {
	for i, k := range n.keys {
		if k == key {
			n.vals[i] = v
			return
		}
	}
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
}

func scalar(v any) *jnode {
	b, _ := json.Marshal(v)
	return &jnode{raw: b}
}

func decodeJSON(d *json.Decoder) (*jnode, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &jnode{kind: byte(t)}
		for d.More() {
			if t == '{' {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				ks, _ := k.(string)
				n.keys = append(n.keys, ks)
			}
			v, err := decodeJSON(d)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		if _, err := d.Token(); err != nil {
			return nil, err
		}
		return n, nil
	case json.Number:
		return &jnode{raw: json.RawMessage(t.String())}, nil
	default:
		return scalar(t), nil
	}
}

// encode writes n like JSON.stringify(value, null, 1).
func (n *jnode) encode(b *bytes.Buffer, depth int) {
	ind := func(d int) { b.WriteByte('\n'); b.WriteString(strings.Repeat(" ", d)) }
	switch n.kind {
	case '{', '[':
		open, close := byte('{'), byte('}')
		if n.kind == '[' {
			open, close = '[', ']'
		}
		b.WriteByte(open)
		if len(n.vals) == 0 {
			b.WriteByte(close)
			return
		}
		for i, v := range n.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			ind(depth + 1)
			if n.kind == '{' {
				k, _ := json.Marshal(n.keys[i])
				b.Write(k)
				b.WriteString(": ")
			}
			v.encode(b, depth+1)
		}
		ind(depth)
		b.WriteByte(close)
	default:
		// Re-encode strings the way JavaScript does (no HTML escaping).
		var s string
		if len(n.raw) > 0 && n.raw[0] == '"' && json.Unmarshal(n.raw, &s) == nil {
			var out bytes.Buffer
			enc := json.NewEncoder(&out)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(s)
			b.Write(bytes.TrimRight(out.Bytes(), "\n"))
			return
		}
		b.Write(n.raw)
	}
}

// editNotebook applies a NotebookEdit cell operation to a notebook's JSON
// text: replace a cell's source (and type), insert a cell after another (or
// first), or delete one. Cells are found by id, or by the "cell-N" index
// form Claude Code also accepts.
func editNotebook(text string, c manifest.NotebookCell) (string, error) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	nb, err := decodeJSON(d)
	if err != nil {
		return "", fmt.Errorf("notebook is not JSON: %w", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return "", fmt.Errorf("notebook has trailing data")
	}
	cells := nb.get("cells")
	if nb.kind != '{' || cells == nil || cells.kind != '[' {
		return "", fmt.Errorf("notebook has no cells")
	}
	idx := -1
	if c.CellID != "" {
		for i, cell := range cells.vals {
			if id := cell.get("id"); id != nil && string(id.raw) == strconv.Quote(c.CellID) {
				idx = i
			}
		}
		if n, ok := strings.CutPrefix(c.CellID, "cell-"); ok && idx < 0 {
			if k, err := strconv.Atoi(n); err == nil && k >= 0 && k < len(cells.vals) {
				idx = k
			}
		}
		if idx < 0 {
			return "", fmt.Errorf("cell %q not found", c.CellID)
		}
	}
	mode := c.EditMode
	if mode == "" {
		mode = "replace"
	}
	switch mode {
	case "replace":
		if idx < 0 {
			return "", fmt.Errorf("replace needs a cell id")
		}
		cell := cells.vals[idx]
		cell.set("source", scalar(c.NewSource))
		if c.CellType != "" {
			cell.set("cell_type", scalar(c.CellType))
		}
		if t := cell.get("cell_type"); t != nil && string(t.raw) == `"code"` {
			cell.set("execution_count", &jnode{raw: json.RawMessage("null")})
			cell.set("outputs", &jnode{kind: '['})
		}
	case "insert":
		typ := c.CellType
		if typ == "" {
			typ = "code"
		}
		cell := &jnode{kind: '{'}
		cell.set("cell_type", scalar(typ))
		cell.set("metadata", &jnode{kind: '{'})
		cell.set("source", scalar(c.NewSource))
		if typ == "code" {
			cell.set("execution_count", &jnode{raw: json.RawMessage("null")})
			cell.set("outputs", &jnode{kind: '['})
		}
		at := idx + 1
		cells.vals = append(cells.vals[:at], append([]*jnode{cell}, cells.vals[at:]...)...)
	case "delete":
		if idx < 0 {
			return "", fmt.Errorf("delete needs a cell id")
		}
		cells.vals = append(cells.vals[:idx], cells.vals[idx+1:]...)
	default:
		return "", fmt.Errorf("unknown edit_mode %q", mode)
	}
	var b bytes.Buffer
	nb.encode(&b, 0)
	return b.String(), nil
}
