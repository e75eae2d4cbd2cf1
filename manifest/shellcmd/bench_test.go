package shellcmd

import "testing"

// BenchmarkParse reads every Bash command of the corpus, as the parsers
// do for every Bash call of a transcript. "corpus" is what they pay;
// "parsed" is the commands the prefilter lets through; "noprefilter"
// parses every command, to show what the prefilter saves.
func BenchmarkParse(b *testing.B) {
	all := loadCorpus(b)
	var passed []string
	for _, c := range all {
		if mayWrite(c.Command) {
			passed = append(passed, c.Command)
		}
	}
	cmds := make([]string, len(all))
	for i, c := range all {
		cmds[i] = c.Command
	}
	for _, bc := range []struct {
		name  string
		cmds  []string
		parse func(string) Result
	}{
		{"corpus", cmds, Parse},
		{"parsed", passed, Parse},
		{"noprefilter", cmds, parseScript},
	} {
		b.Run(bc.name, func(b *testing.B) {
			size := 0
			for _, c := range bc.cmds {
				size += len(c)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for _, c := range bc.cmds {
					bc.parse(c)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(bc.cmds)), "ns/cmd")
		})
	}
}
