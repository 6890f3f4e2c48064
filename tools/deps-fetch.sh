#!/bin/sh
# deps-fetch.sh DIR - unpack the libraries `nvhcq serve` needs (libmicrohttpd and jansson,
# headers, static and shared libraries) from this machine's Debian/Ubuntu packages into DIR,
# without installing them: `apt-get download` + `dpkg -x`. For a machine that reaches no
# package registry: carry DIR there and build with `make DEPS=DIR` (the .a files are linked
# statically; libmicrohttpd's GnuTLS is the system's libgnutls.so.30). docs/serve.md.
set -eu
[ $# -eq 1 ] || { echo "usage: tools/deps-fetch.sh DIR" >&2; exit 2; }
dir=$1
for t in apt-get dpkg; do
    command -v $t >/dev/null 2>&1 || { echo "deps-fetch.sh: $t not found (a Debian or Ubuntu machine is needed)" >&2; exit 1; }
done
mkdir -p "$dir/debs"
dir=$(cd "$dir" && pwd)
# the -dev packages hold the headers, the .a and the .so link; the runtime packages the .so.N
pkgs="libmicrohttpd-dev libmicrohttpd12 libjansson-dev libjansson4"
(cd "$dir/debs" && apt-get download $pkgs) || {
    echo "deps-fetch.sh: apt-get download $pkgs failed (apt-get update first?)" >&2
    exit 1
}
for d in "$dir"/debs/*.deb; do
    dpkg -x "$d" "$dir"
done
ls "$dir"/usr/include/microhttpd.h "$dir"/usr/include/jansson.h >/dev/null
echo "deps-fetch.sh: unpacked $(ls "$dir"/debs | tr '\n' ' ')into $dir; build with: make DEPS=$dir"
