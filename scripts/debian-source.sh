#!/usr/bin/env bash
# Fetches the upstream source of a Debian package (the .orig tarball in Debian's pool, its md5 checked
# against the archive's Sources index) and unpacks it into DEST, once. Used to build a dependency in a
# form Debian does not ship: oneTBB with -fsanitize=thread (scripts/tsan.sh); muparser, Box2D, Bullet,
# meshoptimizer and assimp compiled to WebAssembly (make web, docs/web.md). Upstream versions as Debian spells them
# (the tarball may add +dfsg, ~ds0 or .dfsg).
#
#   scripts/debian-source.sh SOURCE_PACKAGE UPSTREAM_VERSION DEST
# e.g. scripts/debian-source.sh muparser 2.3.3 build-web/deps/muparser
set -euo pipefail
pkg=$1 upstream=$2 dest=$3
[ -f "$dest/.eddy-source" ] && [ "$(cat "$dest/.eddy-source")" = "$pkg $upstream" ] && exit 0
work=$(dirname "$dest")
mkdir -p "$work"
index="http://deb.debian.org/debian/dists/bookworm/main/source/Sources.xz"
[ -s "$work/Sources.xz" ] || curl -fsS -o "$work/Sources.xz" "$index"
entry=$(xz -dc "$work/Sources.xz" | awk -v pkg="$pkg" -v v="$upstream" '
  $0 == "Package: " pkg {p = 1} p && /^Directory:/ {dir = $2} /^[A-Za-z]/ {f = 0}
  p && /^Files:/ {f = 1; next} p && f && /^ / && $3 ~ (pkg "_" v "([+~.][a-z0-9]+)?\\.orig\\.tar") {md5 = $1; file = $3}
  p && /^$/ {if (file && !done) {print dir "/" file, md5; done = 1} p = 0; f = 0}')
[ -n "$entry" ] || { echo "debian-source: $pkg $upstream not found in $index" >&2; exit 1; }
read -r path md5 <<< "$entry"
echo "debian-source: $pkg $upstream from Debian's $path"
curl -fsS -o "$work/$pkg.orig.tar" "http://deb.debian.org/debian/$path"
echo "$md5  $work/$pkg.orig.tar" | md5sum -c --quiet
rm -rf "$dest" && mkdir -p "$dest"
tar xf "$work/$pkg.orig.tar" -C "$dest" --strip-components=1
rm -f "$work/$pkg.orig.tar"
echo "$pkg $upstream" > "$dest/.eddy-source"
