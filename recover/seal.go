package recover

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// KeyFunc returns the key that seals every journal entry an apply writes,
// and that undo requires of a journal's entries: a journal planted in a
// destination (a cloned repository's .sandbox/journal) cannot steer undo
// into writing its "before-images" over the user's files. The command line
// gives the key kept in the state directory (SANDBOX_HOME). It is
// required: with none, no journal is written (and so nothing applied) and
// no journal is undone unless unsealed is asked for (ErrNoKey).
type KeyFunc func() ([]byte, error)

// ErrUnsealed is a journal whose entries carry no valid seal.
var ErrUnsealed = errors.New("not sealed by this sandbox")

// ErrNoKey is a journal to write, or to undo sealed, with no key given.
var ErrNoKey = errors.New("no journal key given: journals are sealed, and undo checks the seals")

// LoadKey returns the key in file, making a new random one (mode 0600)
// the first time. Two processes making it at once agree: the one that
// loses the race reads the winner's.
func LoadKey(file string) ([]byte, error) {
	if k, err := readKey(file); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, err
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".journal-key-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(hex.EncodeToString(k))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	// A link, not a rename: it fails when another process made the key
	// first, and then its key is the one.
	if err := os.Link(tmp.Name(), file); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return readKey(file)
}

func readKey(file string) ([]byte, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	k, err := hex.DecodeString(string(b))
	if err != nil || len(k) != 32 {
		return nil, fmt.Errorf("%s: not a journal key (64 hex digits)", file)
	}
	return k, nil
}

// seal returns e with its seal: an HMAC-SHA256, under key, of the
// journal's name and the entry without its seal.
func seal(key []byte, name string, e JournalEntry) (JournalEntry, error) {
	e.Seal = ""
	b, err := json.Marshal(e)
	if err != nil {
		return e, err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(name))
	m.Write([]byte{0})
	m.Write(b)
	e.Seal = hex.EncodeToString(m.Sum(nil))
	return e, nil
}

// sealed reports whether e carries the seal key gives it.
func sealed(key []byte, name string, e JournalEntry) bool {
	want, err := seal(key, name, e)
	return err == nil && e.Seal != "" && hmac.Equal([]byte(want.Seal), []byte(e.Seal))
}
