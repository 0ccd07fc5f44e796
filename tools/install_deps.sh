#!/usr/bin/env bash
# Installs the Debian packages iofleet needs, only those that are missing (a machine that has
# them all is not touched and needs no network):
#   tools/install_deps.sh run    what building and running need (`make run`)
#   tools/install_deps.sh deb    that and what building the Debian package needs (`make deb`)
#   tools/install_deps.sh test   all of it and what the tests need (`make test`; the default)
set -euo pipefail
mode=${1:-test}

# Building and running: the compiler and Bazel, and the libraries the binaries link.
run_packages=(
  bazel-bootstrap          # Bazel 4, offline (brings build-essential: g++, make)
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev liburing-dev libaio-dev prometheus-cpp-dev
  libnfs-dev               # the userspace NFS client behind ioengine=nfs and nfs:// paths
  libjemalloc-dev          # the controller's allocator (third_party/system/BUILD says why)
  libcurl4-openssl-dev     # the controller's scrapes of the target's Prometheus endpoints (--target-metrics)
  libbpf-dev clang-14      # the worker's block-stage tracing, a BPF program compiled with clang (--block-stages)
  pkg-config
)
# The tests: real peers, real targets, real tools to check the output with.
test_packages=(
  libgmock-dev libgtest-dev
  fio                      # the peer the equivalence tests and benchmarks compare against
  python3-pandas           # fio's fiologparser_hist.py (in the fio package) reads the hist logs in the tests
  xfsprogs e2fsprogs bindfs fuse3  # real targets in the tests (xfs and ext4 on loop devices, a FUSE mount)
  nfs-ganesha nfs-ganesha-vfs rpcbind libnfs-utils  # an NFS server for the tests (in a netns)
  prometheus-node-exporter # the NFS server host's metrics in the NFS-over-JuiceFS test (--target-metrics)
  curl                     # scripts wait for HTTP endpoints with it
  prometheus               # promtool checks the /metrics exposition in the tests
  chromium                 # renders the HTML report headless in the tests
  iproute2 openssl         # network namespaces and test certificates in the tests
  libclang-rt-14-dev       # libFuzzer (with clang-14) for the parsers' fuzz targets (tools/fuzz.sh)
  slurm-wlm munge          # a real 3-node Slurm cluster for --slurm (tests/launchers/slurm_test.sh)
  openmpi-bin              # mpirun-started workers (tests/launchers/mpi_test.sh)
  autoconf automake libtool libopenmpi-dev  # the real mdtest, built from ../shared/peers (tools/build_mdtest.sh)
  strace                   # the order of mdtest's and iofleet's tree operations (tests/peers/mdtest_equivalence_test.sh)
  openssh-server           # sshd in network namespaces for --ssh (tests/launchers/ssh_test.sh)
  linux-perf               # --profile samples with perf (tests/profile_test)
)
# The Debian package (make deb, and the tests that install it).
deb_packages=(
  dpkg-dev help2man lintian  # dpkg-shlibdeps for Depends:, man pages from --help, the package's lint
)
# The container image (make image, and the test that runs it).
image_packages=(
  podman buildah runc mmdebstrap  # rootful podman with runc; the Debian base made offline-first
)
# Kubernetes manifests' validation (tools/k8s_validate.sh builds kubeconform, fetches schemas).
k8s_packages=(
  golang-go python3-pip
)
case "$mode" in
  run) packages=("${run_packages[@]}") ;;
  k8s) packages=("${k8s_packages[@]}") ;;
  deb) packages=("${run_packages[@]}" "${deb_packages[@]}") ;;
  image) packages=("${run_packages[@]}" "${deb_packages[@]}" "${image_packages[@]}") ;;
  test) packages=("${run_packages[@]}" "${test_packages[@]}" "${deb_packages[@]}" "${image_packages[@]}") ;;
  *) echo "usage: tools/install_deps.sh [run|deb|image|k8s|test]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
# nfs-ganesha and rpcbind would start system services that listen on every address; the tests
# start their own inside network namespaces. Debian's policy-rc.d hook keeps services from
# starting during this install (only when the machine has no such hook of its own).
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod +x "$policy"
  trap '$sudo rm -f "$policy"' EXIT
fi
# For running, only what is asked for: recommended packages (avahi-daemon, desktop bits...) are
# left out. The tests' tools keep theirs (chromium's fonts, ganesha's helpers).
recommends=()
[ "$mode" = test ] || recommends=(--no-install-recommends)
$sudo apt-get install -y -q "${recommends[@]}" -o DPkg::Lock::Timeout=600 "${missing[@]}"
