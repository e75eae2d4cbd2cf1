// Package jsonobj reads the top-level fields of a JSON object in one pass,
// and keeps sets of 64-bit id hashes, for the parsers whose records carry
// whole files (a tool call's arguments, a message): gjson finds a key
// by reading every byte before it, and such a record was looked into a
// dozen times. A value found is read exactly as gjson reads it, so what a
// field means is unchanged.
package jsonobj
