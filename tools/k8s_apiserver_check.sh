#!/usr/bin/env bash
# make k8s-check: the Kubernetes manifests (configs/kubernetes/) through a real kube-apiserver's
# server-side dry run — admission, defaulting and validation as a cluster applies them, which
# catches what schemas miss (enum values such as restartPolicy). kube-apiserver v1.33 is built
# once from the Go module proxy into ~/.cache/iofleet-k8s (about 7 minutes on 2 cores and 2 GB of
# build cache: too long for every CI run, hence a target of its own; with Debian's Go 1.19 it
# first fetches Go 1.24 through the same proxy) and runs with Debian's etcd on 127.0.0.1 only,
# removed at the end. No kubelet: nothing is scheduled or run. Needs kubectl on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${IOFLEET_K8S_CACHE:-$HOME/.cache/iofleet-k8s}
apiserver=$cache/apiserver/bin/kube-apiserver
command -v etcd > /dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q etcd-server > /dev/null
command -v kubectl > /dev/null || { echo "k8s-check: kubectl is needed on PATH" >&2; exit 1; }
if [ ! -x "$apiserver" ]; then
  go=$(command -v go || true)
  [ -n "$go" ] || { [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go; } || true
  if [ -z "$go" ]; then tools/install_deps.sh k8s; go=$(command -v go); fi
  minor=$("$go" env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
  if [ "${minor:-0}" -lt 21 ]; then
    # Debian 12's Go (1.19) predates toolchain switching: fetch Go 1.24 as a module from the
    # proxy (how newer Go fetches toolchains itself), and build with it.
    dir=$(GOMODCACHE=$cache/gomod GOFLAGS=-modcacherw "$go" mod download -json golang.org/toolchain@v0.0.1-go1.24.5.linux-amd64 |
      sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
    chmod -R u+x "$dir/bin" "$dir/pkg/tool"  # module archives keep no execute bits
    go=$dir/bin/go
  fi
  mkdir -p "$cache/apiserver"
  cp tools/k8s/apiserver-build.go.mod "$cache/apiserver/go.mod"
  (cd "$cache/apiserver" && export GOMODCACHE=$cache/gomod GOCACHE=$cache/gocache GOFLAGS=-modcacherw GOTOOLCHAIN=auto &&
    V=v1.33.13 VP=k8s.io/component-base/version &&
    "$go" get "k8s.io/kubernetes/cmd/kube-apiserver@$V" &&
    nice -n 19 "$go" build -p 1 -trimpath -ldflags="-s -w -X $VP.gitVersion=$V -X $VP.gitMajor=1 -X $VP.gitMinor=33 -X $VP.gitTreeState=clean" \
      -o bin/kube-apiserver.partial k8s.io/kubernetes/cmd/kube-apiserver && mv bin/kube-apiserver.partial bin/kube-apiserver)
fi
run=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2> /dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$p" 2> /dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2> /dev/null || true
  done
  rm -rf "$run"
}
trap cleanup EXIT
mkdir -p "$run/etcd" "$run/pki" && chmod 700 "$run/etcd"
port=$((20000 + RANDOM % 20000))
etcd --name iofleet --data-dir "$run/etcd" --listen-client-urls "http://127.0.0.1:$port" --advertise-client-urls "http://127.0.0.1:$port" \
  --listen-peer-urls "http://127.0.0.1:$((port + 1))" --initial-advertise-peer-urls "http://127.0.0.1:$((port + 1))" \
  --initial-cluster "iofleet=http://127.0.0.1:$((port + 1))" < /dev/null > "$run/etcd.log" 2>&1 &
pids+=($!)
openssl genrsa -out "$run/pki/sa.key" 2048 2> /dev/null
openssl rsa -in "$run/pki/sa.key" -pubout -out "$run/pki/sa.pub" 2> /dev/null
token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$token,admin,admin,system:masters" > "$run/pki/tokens.csv"
for _ in $(seq 1 100); do curl -s "http://127.0.0.1:$port/health" | grep -q true && break; sleep 0.1; done
"$apiserver" --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port=$((port + 2)) --cert-dir="$run/pki" \
  --etcd-servers="http://127.0.0.1:$port" --service-cluster-ip-range=10.96.0.0/24 --authorization-mode=RBAC \
  --token-auth-file="$run/pki/tokens.csv" --service-account-issuer=https://kubernetes.default.svc \
  --service-account-key-file="$run/pki/sa.pub" --service-account-signing-key-file="$run/pki/sa.key" < /dev/null > "$run/apiserver.log" 2>&1 &
pids+=($!)
cat > "$run/kubeconfig" <<EOK
apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: "https://127.0.0.1:$((port + 2))", insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: "$token"}}]
contexts: [{name: local, context: {cluster: local, user: admin}}]
current-context: local
EOK
export KUBECONFIG=$run/kubeconfig
for _ in $(seq 1 600); do kubectl get --raw /readyz > /dev/null 2>&1 && break; sleep 0.1; done
kubectl get --raw /readyz > /dev/null || { tail -20 "$run/apiserver.log" >&2; echo "k8s-check: kube-apiserver did not become ready" >&2; exit 1; }
kubectl apply --dry-run=server -f configs/kubernetes/ || { echo "k8s-check: FAIL: the manifests were refused" >&2; exit 1; }
# The check bites: a value only the server knows to be wrong.
sed 's/restartPolicy: Never/restartPolicy: Sometimes/' configs/kubernetes/workers-indexed-job.yaml > "$run/bad.yaml"
if kubectl apply --dry-run=server -f "$run/bad.yaml" > "$run/bad.out" 2>&1; then
  echo "k8s-check: FAIL: restartPolicy: Sometimes was accepted" >&2
  exit 1
fi
echo "k8s-check: configs/kubernetes accepted by kube-apiserver $("$apiserver" --version | awk '{print $2}') (server-side dry run); restartPolicy: Sometimes refused"
