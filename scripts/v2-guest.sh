#!/bin/sh
# Runs a command as root on a cgroup v2 host: Debian's 6.1 kernel booted under QEMU (TCG:
# no KVM needed, JVMs about 40x slower, so for function rather than timings), with this
# host's root shared read-only over 9p and made writable in the guest by an overlay on a
# tmpfs. The guest mounts only cgroup2, so every controller (cpu, io, memory) is on v2.
#
#   scripts/v2-guest.sh 'COMMAND'        (a shell command line, run in the guest)
#
# The command's output is the guest's console (stdout); /out in the guest is the host's
# ${V2_GUEST_OUT:-./v2-guest-out}, writable. Needs qemu-system-x86 and busybox-static
# (apt-get install --no-install-recommends qemu-system-x86 busybox-static); the kernel
# package is fetched with apt-get download into ${V2_GUEST_CACHE:-~/.cache/pauselab/v2-guest}.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 'COMMAND'" >&2; exit 2; }
CACHE=${V2_GUEST_CACHE:-$HOME/.cache/pauselab/v2-guest}
OUT=$(mkdir -p "${V2_GUEST_OUT:-./v2-guest-out}" && cd "${V2_GUEST_OUT:-./v2-guest-out}" && pwd)
mkdir -p "$CACHE"
cd "$CACHE"
if [ ! -d k/boot ]; then
    package=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/ { print $2; exit }')
    apt-get download "$package"
    dpkg -x "$package"_*.deb k
    busybox depmod -b "$CACHE/k" "$(ls k/lib/modules)"
fi
release=$(ls k/lib/modules)
modules=k/lib/modules/$release/kernel

# The initramfs: busybox, the modules needed to reach the 9p root, and an init that
# builds the overlay root and hands over to the guest script.
rm -rf initrd && mkdir -p initrd/bin initrd/mods initrd/proc initrd/sys initrd/dev \
    initrd/host initrd/up initrd/newroot initrd/lib/modules
cp "$(command -v busybox)" initrd/bin/
# In load order: each after the ones it needs (modules.dep).
for m in drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_modern_dev \
    drivers/virtio/virtio_pci_legacy_dev drivers/virtio/virtio_pci net/9p/9pnet \
    net/9p/9pnet_virtio fs/netfs/netfs fs/fscache/fscache fs/9p/9p; do
    cp "$modules/$m.ko" initrd/mods/
done
cat >initrd/init <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci 9pnet 9pnet_virtio netfs fscache 9p; do
    insmod /mods/\$m.ko
done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=524288,cache=loose host /host
mount --bind /host$CACHE/k/lib/modules /lib/modules
# ext4 needs crc32c to mount (ENOENT without it).
for m in overlay loop crc32c_generic ext4 virtio_blk; do modprobe \$m; done
mount -t tmpfs -o size=3000m tmpfs /up && mkdir -p /up/u /up/w
mount -t overlay overlay -o lowerdir=/host,upperdir=/up/u,workdir=/up/w /newroot
mkdir -p /newroot/lib/modules/$release
mount --bind /lib/modules/$release /newroot/lib/modules/$release
umount /proc /sys; mount --move /dev /newroot/dev
exec switch_root /newroot /bin/sh $CACHE/guest.sh
EOF
chmod +x initrd/init
(cd initrd && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) >initrd.gz
printf '%s\n' "$1" >command.sh
cat >guest.sh <<EOF
#!/bin/sh
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t tmpfs tmpfs /run
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mkdir -p /out && mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 out /out
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
echo "guest: \$(uname -r), cgroup2 controllers: \$(cat /sys/fs/cgroup/cgroup.controllers)"
cd /root && sh $CACHE/command.sh 2>&1
echo "guest: exit \$?"
sync; poweroff -f
EOF
[ -f disk.img ] || truncate -s 256M disk.img   # a block device for io.max tests
exec qemu-system-x86_64 -accel tcg,thread=multi -smp 2 -m 5G -nographic -no-reboot \
    -kernel k/boot/vmlinuz-"$release" -initrd initrd.gz \
    -append "console=ttyS0 rdinit=/init panic=-1 quiet loglevel=3" \
    -drive file=disk.img,if=virtio,format=raw \
    -virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap \
    -virtfs local,path="$OUT",mount_tag=out,security_model=none
