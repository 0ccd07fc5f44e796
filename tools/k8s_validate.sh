#!/usr/bin/env bash
# Validates Kubernetes manifests offline: kubeconform -strict against the Kubernetes 1.33 JSON
# schemas (unknown fields, wrong types and missing required fields are errors). kubeconform
# (v0.6.3: builds with Debian 12's Go 1.19) and the schemas (from PyPI's kubernetes-validate
# wheel, made local by tools/k8s/prep_schemas.py) are fetched once into ~/.cache/iofleet-k8s.
#   tools/k8s_validate.sh [FILE ...]     default: configs/kubernetes/*.yaml
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${IOFLEET_K8S_CACHE:-$HOME/.cache/iofleet-k8s}
kubeconform=$cache/bin/kubeconform-v0.6.3
schemas=$cache/schemas
mkdir -p "$cache/bin"
if [ ! -x "$kubeconform" ]; then
  go=$(command -v go || true)
  [ -n "$go" ] || { [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go; }
  if [ -z "$go" ]; then tools/install_deps.sh k8s; go=$(command -v go); fi
  GOBIN=$cache/gobin GOTOOLCHAIN=local GOFLAGS=-mod=mod "$go" install github.com/yannh/kubeconform/cmd/kubeconform@v0.6.3
  mv "$cache/gobin/kubeconform" "$kubeconform"
fi
if [ ! -d "$schemas/v1.33.0-local-strict" ]; then
  command -v pip3 > /dev/null || tools/install_deps.sh k8s
  pip3 download --quiet --no-deps kubernetes-validate==1.33.0 -d "$cache/pypi"
  python3 tools/k8s/prep_schemas.py "$cache"/pypi/kubernetes_validate-1.33.0-*.whl "$schemas.partial" v1.33.0 > /dev/null
  rm -rf "$schemas" && mv "$schemas.partial" "$schemas"
fi
[ $# -gt 0 ] || set -- configs/kubernetes/*.yaml
exec "$kubeconform" -summary -strict -kubernetes-version 1.33.0 \
  -schema-location "$schemas/{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$@"
