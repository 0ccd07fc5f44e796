#!/usr/bin/env bash
# The Kubernetes manifests (configs/kubernetes/) pass kubeconform -strict against the Kubernetes
# 1.33 schemas (tools/k8s_validate.sh), and the check bites: the same manifests with a misspelt
# field or a wrong type are refused. Their image is the one `make image` tags. (A real
# kube-apiserver's server-side dry run is not part of this yet.)
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "k8s_test: FAIL: $*" >&2; exit 1; }
tools/k8s_validate.sh > "$tmp/valid.out" 2>&1 || { cat "$tmp/valid.out" >&2; fail "configs/kubernetes/*.yaml do not validate"; }
grep -q "Invalid: 0, Errors: 0, Skipped: 0" "$tmp/valid.out" || { cat "$tmp/valid.out" >&2; fail "not every resource was validated"; }
sed 's/completionMode: Indexed/completionMod: Indexed/' configs/kubernetes/workers-indexed-job.yaml > "$tmp/misspelt.yaml"
if tools/k8s_validate.sh "$tmp/misspelt.yaml" > "$tmp/misspelt.out" 2>&1; then fail "a misspelt field passed: $(cat "$tmp/misspelt.out")"; fi
sed 's/completions: 4/completions: four/' configs/kubernetes/workers-indexed-job.yaml > "$tmp/type.yaml"
if tools/k8s_validate.sh "$tmp/type.yaml" > "$tmp/type.out" 2>&1; then fail "a wrong type passed: $(cat "$tmp/type.out")"; fi
version=$(grep -o 'kIofleetVersion\[\] = "[^"]*"' common/protocol_version.h | cut -d'"' -f2)
if grep -hE "^[[:space:]]*image:" configs/kubernetes/*.yaml | grep -v "localhost/iofleet:$version" > /dev/null; then
  fail "a manifest names another image than localhost/iofleet:$version (make image)"
fi
echo "k8s_test: configs/kubernetes: $(grep -o '[0-9]* resources found in [0-9]* files' "$tmp/valid.out"), all valid (kubeconform -strict, Kubernetes 1.33); a misspelt field and a wrong type are refused"
