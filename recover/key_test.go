package recover

// testKey seals the journals of the package's tests, as the command line's
// key in the state directory seals the user's.
var testKey KeyFunc = func() ([]byte, error) { return []byte("the journal key of recover's tests"), nil }
