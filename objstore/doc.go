// Package objstore reads and writes objects in S3-compatible storage for
// the rest of sandbox: a source of transcripts and archives (package
// parse/discover), and a place for snapshots and archives (the harness).
//
// It is a thin layer over the AWS SDK for Go v2, which takes credentials,
// region and endpoint from where users already keep them: the environment
// (AWS_ACCESS_KEY_ID, AWS_PROFILE, AWS_REGION, AWS_ENDPOINT_URL_S3 …), the
// shared config and credentials files, and profiles. A custom endpoint
// (MinIO and other S3-compatible stores) means path-style addressing.
//
// Every object is pinned by the ETag it had when it was listed or first
// looked at: each later read asks for that ETag (If-Match), so an object
// replaced while it is read is an error, never a mix of two versions.
// Every error names the s3:// URL it is about.
package objstore
