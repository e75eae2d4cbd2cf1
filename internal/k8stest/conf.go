package k8stest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// writeContainerdConfig writes the private containerd's configuration:
// its own socket, root and state under the cluster's folder; runc with
// cgroupfs (cgroup v1 here); the CNI bridge; and no negative
// oom_score_adj (runc cannot set one without CAP_SYS_RESOURCE, which a
// container machine may lack).
func (c *Cluster) writeContainerdConfig(sock string) error {
	run := filepath.Join(c.Dir, "run", "containerd")
	cni := filepath.Join(c.Dir, "conf", "cni")
	text := fmt.Sprintf(`version = 2
root = %q
state = %q
oom_score = 0

[grpc]
  address = %q

[ttrpc]
  address = %q

[metrics]
  address = ""

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = %q
    enable_selinux = false
    restrict_oom_score_adj = true
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = %q
      max_conf_num = 1
  [plugins."io.containerd.internal.v1.opt"]
    path = %q
`, filepath.Join(run, "root"), filepath.Join(run, "state"), sock, sock+".ttrpc", PauseImage, cni, filepath.Join(run, "opt"))
	if err := os.WriteFile(filepath.Join(c.Dir, "conf", "containerd.toml"), []byte(text), 0o644); err != nil {
		return err
	}
	// The pods' network: a bridge on the host, addresses from a fixed
	// range, no masquerading (the tests reach pods only from this host).
	net := fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "sandbox-k8stest",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "10.244.0.0/24"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": %q
      }
    }
  ]
}
`, bridge, filepath.Join(c.Dir, "run", "cni-ipam"))
	return os.WriteFile(filepath.Join(cni, "10-sandbox-k8stest.conflist"), []byte(net), 0o644)
}

// writeKubeletConfig writes the kubelet's configuration: webhook
// authentication and authorization, its serving certificate, the private
// containerd, cgroupfs on cgroup v1, and the host's iptables left alone.
func (c *Cluster) writeKubeletConfig(sock string, nodeIP net.IP, port, healthz int) error {
	p := c.pki.path
	text := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %q
authorization:
  mode: Webhook
address: %q
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
tlsCertFile: %q
tlsPrivateKeyFile: %q
cgroupDriver: cgroupfs
containerRuntimeEndpoint: %q
failSwapOn: false
makeIPTablesUtilChains: false
failCgroupV1: false
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
podLogsDir: %q
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "1%%"
  imagefs.available: "1%%"
  nodefs.inodesFree: "1%%"
serializeImagePulls: false
syncFrequency: 10s
nodeStatusReportFrequency: 1m
`, p("ca.crt"), nodeIP.String(), port, healthz, p("kubelet-serving.crt"), p("kubelet-serving.key"), "unix://"+sock,
		filepath.Join(c.Dir, "run", "pod-logs"))
	return os.WriteFile(filepath.Join(c.Dir, "conf", "kubelet.yaml"), []byte(text), 0o644)
}
