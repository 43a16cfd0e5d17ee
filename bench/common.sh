# Shared by the bench scripts (sourced): the JDK, the release binary, and JVMs running
# MakeGarbage from pauselab-workloads.jar, the same workload the lab uses.

JDK=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
BIN=target/release/pauselab
WORKLOADS_JAR=java/workloads/target/pauselab-workloads.jar

bench_build() {
    cargo build --release -q -p pauselab
    if [ ! -f "$WORKLOADS_JAR" ]; then
        mvn -B -ntp -q -f java/pom.xml install -DskipTests
    fi
}

# start_garbage SECONDS SIZE RATE LIVE [JVM flag...]: MakeGarbage in the background (its
# pid is then in $!): SIZE arrays, RATE per second, LIVE kept live, for SECONDS.
start_garbage() {
    local seconds=$1 size=$2 rate=$3 live=$4
    shift 4
    "$JDK/bin/java" "$@" -cp "$WORKLOADS_JAR" pauselab.workload.MakeGarbage \
        --duration "${seconds}s" --size "$size" --rate "$rate" --live "$live" >/dev/null 2>&1 &
}
