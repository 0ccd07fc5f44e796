# The README's two commands: `make run` and `make test`. Each installs what is missing first.
.PHONY: deps deps-run build run test bench deb image k8s-check clean

BAZEL ?= bazel

# What building and running need (make run), and that plus what the tests need (make test).
deps-run:
	@tools/install_deps.sh run

deps:
	@tools/install_deps.sh test

build: deps-run
	$(BAZEL) build //controller:iofleet //worker:iofleet-worker

# Two local workers on 127.0.0.1, configs/quickstart.fio in a temporary directory.
run: build
	bazel-bin/controller/iofleet run configs/quickstart.fio

test: deps
	tools/run_tests.sh

# The Debian package: iofleet_VERSION-1_amd64.deb here, lintian-clean (tools/build_deb.sh).
deb:
	@tools/build_deb.sh

# The container image localhost/iofleet:VERSION, from Debian packages and the .deb (podman).
image:
	@tools/build_image.sh

# configs/kubernetes/ through a real kube-apiserver's server-side dry run (its first build takes
# minutes: not part of make test, whose kubeconform check runs every time).
k8s-check:
	@tools/k8s_apiserver_check.sh

# iofleet against fio on the same job, and the histogram's cost per recorded IO.
bench: build
	bench/fio_compare.sh
	$(BAZEL) run //histogram:latency_histogram_bench

clean:
	$(BAZEL) clean
