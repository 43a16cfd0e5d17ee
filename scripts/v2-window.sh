#!/bin/sh
# Runs a command on a hybrid cgroup host with the cgroup v1 cpu and blkio hierarchies
# unmounted, so the cpu and io controllers move to the cgroup2 mount (memory stays on v1),
# then puts everything back: the v1 mounts with their options, and every child group that
# had to go (only empty ones, with no task) with its settings. Restores on every exit path.
#
#   scripts/v2-window.sh [-n] [-c "cpu blkio"] -- COMMAND...
#     -n: record and check only, change nothing; -c: the v1 controllers to move (default both)
#
# A hierarchy some process holds open (an open file or directory in it) cannot be unmounted
# ("target is busy"): the window then does not open and everything is put back.
#
# Refuses before any change when a v1 group holds a task or the blkio root holds a throttle
# rule: someone is using the hierarchy.
set -eu

DRY=0
CONTROLLERS="cpu blkio"
[ "${1:-}" = "-n" ] && { DRY=1; shift; }
[ "${1:-}" = "-c" ] && { CONTROLLERS=$2; shift 2; }
[ "${1:-}" = "--" ] && shift
[ "$(id -u)" = 0 ] || { echo "v2-window: needs root" >&2; exit 1; }

V2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -n "$V2" ] || { echo "v2-window: no cgroup2 mount" >&2; exit 1; }
STATE=$(mktemp -d /tmp/v2-window.XXXXXX)

mount_of() { # controller -> "mount_point options" of its v1 hierarchy
    awk -v c="$1" '$9 == "cgroup" { n = split($NF, o, ","); for (i = 1; i <= n; i++) if (o[i] == c) print $5, $NF }' /proc/self/mountinfo
}

# Settings worth restoring: writable files, minus the ones that are events or membership.
settings_of() {
    find "$1" -maxdepth 1 -type f -perm -u=w | sort | while read -r f; do
        case "${f##*/}" in
            tasks | cgroup.procs | *reset_stats | release_agent | cgroup.event_control) continue ;;
        esac
        printf '%s\t' "${f##*/}"
        tr '\n' ';' <"$f" 2>/dev/null || true
        echo
    done
}

# --- record -------------------------------------------------------------------------------
: >"$STATE/mounts"
for c in $CONTROLLERS; do
    m=$(mount_of "$c")
    [ -n "$m" ] || { echo "v2-window: no v1 $c hierarchy" >&2; exit 1; }
    echo "$c $m" >>"$STATE/mounts"
    dir=${m%% *}
    # Parents before children: that is the order to recreate them in.
    find "$dir" -mindepth 1 -type d | sort >"$STATE/groups.$c"
    while read -r g; do
        if [ -s "$g/tasks" ]; then
            echo "v2-window: $g holds tasks ($(tr '\n' ' ' <"$g/tasks")); refusing" >&2
            exit 1
        fi
        settings_of "$g" >"$STATE/settings.$(echo "$g" | tr / _)"
    done <"$STATE/groups.$c"
done
if grep -q . /sys/fs/cgroup/blkio/blkio.throttle.*_device 2>/dev/null; then
    echo "v2-window: the blkio root holds throttle rules (a run is under way); refusing" >&2
    exit 1
fi
echo "v2-window: recorded in $STATE:"
cat "$STATE/mounts"
cat "$STATE"/groups.*
echo "v2 root $V2 offers: $(cat "$V2/cgroup.controllers")"
[ "$DRY" = 1 ] && exit 0

# --- restore (every exit path) --------------------------------------------------------------
restore() {
    status=$?
    trap - EXIT INT TERM HUP
    set +e
    # A controller enabled anywhere on v2 keeps it there: disable cpu and io, deepest first.
    find "$V2" -mindepth 0 -type d | sort -r | while read -r g; do
        for c in cpu io; do
            grep -qw "$c" "$g/cgroup.subtree_control" 2>/dev/null && echo "-$c" >"$g/cgroup.subtree_control"
        done
    done
    while read -r c dir opts; do
        grep -q " $dir " /proc/self/mountinfo && continue
        i=0
        # The v2 side lets go of the controller asynchronously.
        until mount -t cgroup -o "$opts" cgroup "$dir" 2>"$STATE/mount.err"; do
            i=$((i + 1))
            [ $i -ge 30 ] && { echo "v2-window: mount $dir failed: $(cat "$STATE/mount.err"); state kept in $STATE" >&2; break; }
            sleep 1
        done
    done <"$STATE/mounts"
    for c in $CONTROLLERS; do
        while read -r g; do
            [ -d "$g" ] || mkdir "$g"
            while IFS="$(printf '\t')" read -r name value; do
                [ "$(tr '\n' ';' <"$g/$name" 2>/dev/null)" = "$value" ] && continue
                echo "$value" | tr ';' '\n' | while read -r line; do
                    [ -n "$line" ] && echo "$line" >"$g/$name"
                done
                [ "$(tr '\n' ';' <"$g/$name" 2>/dev/null)" = "$value" ] ||
                    echo "v2-window: could not restore $g/$name ($value)" >&2
            done <"$STATE/settings.$(echo "$g" | tr / _)"
        done <"$STATE/groups.$c"
    done
    for c in $CONTROLLERS; do
        m=$(mount_of "$c")
        [ "$c ${m:-}" = "$(grep "^$c " "$STATE/mounts")" ] || echo "v2-window: $c is not back as it was: ${m:-unmounted}" >&2
    done
    echo "v2-window: restored; v2 root offers: $(cat "$V2/cgroup.controllers")"
    exit "$status"
}
trap restore EXIT
trap 'exit 130' INT TERM HUP

# --- open the window -------------------------------------------------------------------------
for c in $CONTROLLERS; do
    sort -r "$STATE/groups.$c" | while read -r g; do rmdir "$g"; done
    umount "$(mount_of "$c" | cut -d' ' -f1)"
done
i=0
moved() { # every controller of the window offered by the v2 root (blkio is io there)
    for c in $CONTROLLERS; do
        [ "$c" = blkio ] && c=io
        grep -qw "$c" "$V2/cgroup.controllers" || return 1
    done
}
until moved; do
    i=$((i + 1))
    [ $i -ge 20 ] && { echo "v2-window: $CONTROLLERS did not move to $V2: $(cat "$V2/cgroup.controllers")" >&2; exit 1; }
    sleep 0.5
done
echo "v2-window: open; v2 root $V2 offers: $(cat "$V2/cgroup.controllers")"
"$@"
