#!/usr/bin/env bash
# Builds a Debian 12 root filesystem with the ROCm user space from Debian's archive and wavejit from its release
# tarball — the image the Dockerfile describes, made without a registry or a container daemon (mmdebstrap) — and
# imports it into Docker or Podman where one runs.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: scripts/image.sh [--tarball FILE] [--out FILE.tar | --dir DIR] [--name NAME] [--no-import]

Makes a Debian 12 (bookworm) root filesystem from Debian's archive with mmdebstrap, holding
  hipcc libamdhip64-dev libhsa-runtime-dev rocm-device-libs rocminfo   (Debian's ROCm 5.2 user space)
  /opt/wavejit-VERSION-x86_64-linux-gnu and /usr/local/bin/wavejit      (from the release tarball)
then, unless --no-import or --dir, imports it as the image NAME (default wavejit:VERSION) with `docker import`
or `podman import`, whichever finds a running engine; without one the root filesystem tarball is left for you
(`docker import FILE.tar wavejit` on a machine with Docker).

  --tarball FILE   the wavejit release tarball to install (default: build one with scripts/package.sh)
  --out FILE.tar   where the root filesystem tarball goes (default: dist/wavejit-rootfs-VERSION.tar)
  --dir DIR        make the root filesystem as a directory DIR instead (enter it with chroot), no import
  --name NAME      the imported image's name
  --no-import      leave the tarball, import nothing

Needs mmdebstrap (scripts/setup.sh installs it), root or unprivileged user namespaces, and Debian's archive
over the network. The image's size is about 900 MB.
EOF
}

cd "$(dirname "$0")/.."
tarball= out= dir= name= import=1
while [ $# -gt 0 ]; do
    case "$1" in
        --tarball|--out|--dir|--name)
            [ $# -ge 2 ] || { echo "image.sh: $1 needs a value" >&2; exit 2; }
            case "$1" in --tarball) tarball=$2 ;; --out) out=$2 ;; --dir) dir=$2 ;; --name) name=$2 ;; esac
            shift 2 ;;
        --no-import) import=0; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "image.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ -z "$out" ] || [ -z "$dir" ] || { echo "image.sh: --out and --dir exclude each other" >&2; exit 2; }
command -v mmdebstrap >/dev/null || { echo "image.sh: mmdebstrap is not installed (apt-get install mmdebstrap)" >&2; exit 1; }

if [ -z "$tarball" ]; then
    tarball=$(bash scripts/package.sh | tail -n 1)
fi
[ -f "$tarball" ] || { echo "image.sh: no release tarball at $tarball" >&2; exit 1; }
tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")
release=$(basename "$tarball" .tar.gz)
version=${release#wavejit-}
version=${version%-x86_64-linux-gnu}

if [ -n "$dir" ]; then
    target=$dir
    [ ! -e "$dir" ] || [ -z "$(ls -A "$dir")" ] || { echo "image.sh: $dir exists and is not empty" >&2; exit 1; }
    import=0
else
    target=${out:-dist/wavejit-rootfs-$version.tar}
    mkdir -p "$(dirname "$target")"
fi

packages=ca-certificates,hipcc,libamdhip64-dev,libhsa-runtime-dev,rocm-device-libs,rocminfo
echo "image.sh: Debian 12 with $packages and $release -> $target" >&2
mmdebstrap --variant=apt --include="$packages" \
    --customize-hook="tar -xzf '$tarball' -C \"\$1/opt\"" \
    --customize-hook="ln -s /opt/$release/bin/wavejit \"\$1/usr/local/bin/wavejit\"" \
    bookworm "$target"

if [ "$import" = 1 ]; then
    image=${name:-wavejit:$version}
    for engine in docker podman; do
        if command -v "$engine" >/dev/null && "$engine" info >/dev/null 2>&1; then
            "$engine" import --change 'CMD ["/bin/bash"]' "$target" "$image" >&2
            echo "image.sh: imported as $image ($engine)" >&2
            echo "$image"
            exit 0
        fi
    done
    echo "image.sh: no running Docker or Podman here; the root filesystem is $target" >&2
fi
echo "$target"
