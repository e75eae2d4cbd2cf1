package recover

import "github.com/agentsandbox/sandbox/manifest"

// The front every pipeline shares (Prepare, ToBranch, Export,
// ApplyManifest): the sessions' headers, where their directories land on
// the host (hostRules), and where the files they began from are (--base,
// baseMapper).

// headersOf returns what each source says of its session before its
// operations are read.
func headersOf(sources []Source) []manifest.Session {
	headers := make([]manifest.Session, len(sources))
	for i, src := range sources {
		headers[i] = src.Header()
	}
	return headers
}

// sessionsOf returns the sources' sessions, once their operations are read.
func sessionsOf(sources []Source) []manifest.Session {
	sessions := make([]manifest.Session, len(sources))
	for i, src := range sources {
		sessions[i] = src.Session()
	}
	return sessions
}

// hostRules maps the sessions' directories onto the host: the --map rules,
// then each session's directory onto the destination (destRules).
func hostRules(sessions []manifest.Session, opts Options) ([]Rule, error) {
	dr, err := destRules(sessions, opts)
	if err != nil {
		return nil, err
	}
	return append(append([]Rule{}, opts.Maps...), dr...), nil
}

// baseMapper maps the sessions' directories onto --base, the files as they
// were when the sessions started (with the --map rules first); without
// --base, the files began where they land, and m is returned.
func baseMapper(sessions []manifest.Session, opts Options, m *Mapper) (*Mapper, error) {
	if opts.Base == "" {
		return m, nil
	}
	rules := append([]Rule{}, opts.Maps...)
	for _, s := range sessions {
		if s.Cwd != "" {
			rules = append(rules, Rule{From: s.Cwd, To: opts.Base})
		}
	}
	return NewMapper(dedupRules(rules))
}

// baseName names the copies the files began from in the report: "--base"
// when it is given, otherwise the host (the default).
func baseName(opts Options) string {
	if opts.Base != "" {
		return BaseDir
	}
	return ""
}
