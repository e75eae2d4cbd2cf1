// Package bytesize reads sizes as people write them on a command line and in
// settings: 1073741824, 512K, 64M, 64MiB, 64MB, 1.5G.
//
// A unit without B (K, M, G, T) and an IEC unit (KiB, MiB, GiB, TiB, and Ki,
// Mi, Gi, Ti) are powers of 1024; an SI unit with B (KB, MB, GB, TB) is a
// power of 1000, as in GNU coreutils and Kubernetes. So a bare 64M keeps the
// binary meaning it has for Docker, Java and systemd, and a unit that says
// which it is means what it says.
package bytesize
