package objstore

import "testing"

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		in             string
		bucket, key    string
		prefix, hasErr bool
	}{
		{"s3://b/k.jsonl", "b", "k.jsonl", false, false},
		{"s3://b/dir/", "b", "dir/", true, false},
		{"s3://b", "b", "", true, false},
		{"s3://b/", "b", "", true, false},
		{"s3://b/a/b/c.tar.gz", "b", "a/b/c.tar.gz", false, false},
		{"s3://", "", "", false, true},
		{"s3:///k", "", "", false, true},
		{"/tmp/x", "", "", false, true},
	} {
		l, err := ParseURL(c.in)
		if (err != nil) != c.hasErr {
			t.Errorf("%s: error %v", c.in, err)
			continue
		}
		if err != nil {
			continue
		}
		if l.Bucket != c.bucket || l.Key != c.key || l.IsPrefix() != c.prefix {
			t.Errorf("%s: %+v prefix=%v", c.in, l, l.IsPrefix())
		}
		if got, err := ParseURL(l.String()); err != nil || got != l {
			t.Errorf("%s: does not survive String: %v %v", c.in, got, err)
		}
	}
}
