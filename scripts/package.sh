#!/usr/bin/env bash
# Builds wavejit's release tarball: dist/wavejit-VERSION-x86_64-linux-gnu.tar.gz, unpacked anywhere a working
# `bin/wavejit` (the command, with the drop-in HSA runtime and the emulated kernel driver in lib/wavejit/, found
# relative to the binary; no build paths, no cargo, no checkout needed).
set -euo pipefail

usage() {
    cat <<'EOF'
usage: scripts/package.sh [--out DIR] [--no-build]

Builds the release binaries (cargo build --release -p wavejit-tools -p runtime-shim -p wavejit-driver) and
writes DIR/wavejit-VERSION-x86_64-linux-gnu.tar.gz (DIR: dist/ in the checkout), holding
  bin/wavejit                        the command line
  lib/wavejit/libhsa_runtime64.so    the drop-in HSA runtime (exec --driver hsa)
  lib/wavejit/libwavejit_driver.so   the emulated kernel driver (exec --driver kfd)
  share/doc/wavejit/                 README.md and docs/
Debug information is stripped. VERSION is the workspace's version; `bin/wavejit --version` also names the
commit the binaries were built from. The tarball's path is the last line printed.

  --out DIR    write the tarball into DIR instead of dist/
  --no-build   package target/release (\$CARGO_TARGET_DIR/release) as it is: it must hold all three builds
EOF
}

cd "$(dirname "$0")/.."
out=dist
build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --out) [ $# -ge 2 ] || { echo "package.sh: --out needs a directory" >&2; exit 2; }; out=$2; shift 2 ;;
        --no-build) build=0; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "package.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done

version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
[ -n "$version" ] || { echo "package.sh: no version in Cargo.toml's [workspace.package]" >&2; exit 1; }
arch=$(uname -m)
name="wavejit-$version-$arch-linux-gnu"

if [ "$build" = 1 ]; then
    command -v cargo >/dev/null || { echo "package.sh: cargo is not installed (https://rustup.rs)" >&2; exit 1; }
    echo "building the release binaries" >&2
    cargo build --release --locked -p wavejit-tools -p runtime-shim -p wavejit-driver
fi
release="${CARGO_TARGET_DIR:-target}/release"
for f in wavejit libhsa_runtime64.so libwavejit_driver.so; do
    [ -f "$release/$f" ] || { echo "package.sh: $release/$f is missing (run without --no-build)" >&2; exit 1; }
done

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/$name"
mkdir -p "$root/bin" "$root/lib/wavejit" "$root/share/doc/wavejit"
cp "$release/wavejit" "$root/bin/"
cp "$release/libhsa_runtime64.so" "$release/libwavejit_driver.so" "$root/lib/wavejit/"
strip --strip-debug "$root/bin/wavejit" "$root/lib/wavejit/"*.so
cp README.md "$root/share/doc/wavejit/"
cp -r docs "$root/share/doc/wavejit/docs"

mkdir -p "$out"
tarball="$(cd "$out" && pwd)/$name.tar.gz"
tar -C "$stage" --owner=0 --group=0 -czf "$tarball" "$name"
echo "$("$root/bin/wavejit" --version), $(du -h "$tarball" | cut -f1)" >&2
echo "$tarball"
