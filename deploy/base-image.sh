#!/usr/bin/env bash
# base-image.sh - make debian:bookworm-slim locally, from the Debian archive.
#
# No image registry is reachable from the machines that run the tests, so
# the Dockerfile's base image is built here with mmdebstrap and imported
# into the container engine.  The recipe follows the official image's
# (debuerreotype): variant minbase, merged /usr, the "slim" dpkg path
# excludes (debuerreotype/scripts/.slimify-excludes and .slimify-includes)
# and its apt settings (debuerreotype-minimizing-config: docker-clean,
# no-languages, gzip-indexes, autoremove-suggests).  Without the apt
# settings every "apt-get install" layer keeps its .deb files and indexes
# (the runtime image grows from ~87 MB to ~172 MB).
#
# usage: deploy/base-image.sh [OUT.tar]
#   prints the tarball's path on the last line of stdout.  The tarball is
#   cached: build/base/bookworm-slim-<key>.tar, where the key hashes this
#   recipe, the mirror and the archive's InRelease date (the day the archive
#   last changed), so a new point release or security update makes a new base.
# env:  MIRROR   Debian mirror (default: the host's, else deb.debian.org)
#       BASE_DIR cache directory (default: <repo>/build/base)
#       OFFLINE_KEY=1  key on the recipe only (no request to the archive)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
suite=bookworm
log() { echo "base-image: $*" >&2; }
die() { echo "base-image: FAIL: $*" >&2; exit 1; }

command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (apt-get install mmdebstrap)"

# The host's Debian mirror, so a machine behind its own mirror uses it too.
mirror=${MIRROR:-}
if [ -z "$mirror" ]; then
    mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
             awk '/^URIs:/ && $2 ~ /\/debian\/?$/ { print $2; exit }')
    [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ { print $2; exit }' \
                                  /etc/apt/sources.list 2>/dev/null || true)
    [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
fi
mirror=${mirror%/}
security=${mirror%/debian}/debian-security

# The slim variant's dpkg configuration: what dpkg never unpacks.
excludes=(
    /usr/share/doc/\* /usr/share/info/\* /usr/share/linda/\*
    /usr/share/lintian/overrides/\* /usr/share/locale/\* /usr/share/man/\*
    /usr/share/gnome/help/\*/\* /usr/share/doc/kde/HTML/\*/\* /usr/share/omf/\*/\*-\*.emf
)
includes=(
    /usr/share/doc/\*/copyright /usr/share/gnome/help/\*/C/\* /usr/share/doc/kde/HTML/C/\*
    /usr/share/omf/\*/\*-C.emf /usr/share/locale/locale.alias
)
dpkgopts=(--dpkgopt=force-unsafe-io)
for p in "${excludes[@]}"; do dpkgopts+=("--dpkgopt=path-exclude=$p"); done
for p in "${includes[@]}"; do dpkgopts+=("--dpkgopt=path-include=$p"); done

# The official image's apt settings: never keep downloaded .debs or the
# binary caches, fetch no translations, keep indexes compressed.
clean='rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true'
aptopts=(
    "--aptopt=DPkg::Post-Invoke { \"$clean\"; };"
    "--aptopt=APT::Update::Post-Invoke { \"$clean\"; };"
    '--aptopt=Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";'
    '--aptopt=Acquire::Languages "none";'
    '--aptopt=Acquire::GzipIndexes "true";'
    '--aptopt=Apt::AutoRemove::SuggestsImportant "false";'
)

# Cache key: the recipe (this file), the mirror and the archive's date.
date_key=recipe-only
if [ "${OFFLINE_KEY:-0}" != 1 ] && command -v curl >/dev/null; then
    for s in "$mirror/dists/$suite" "$mirror/dists/$suite-updates" "$security/dists/$suite-security"; do
        d=$(curl -fsS --max-time 20 "$s/InRelease" 2>/dev/null | sed -n 's/^Date: //p' | head -1) ||
            d=
        [ -n "$d" ] || { date_key=unreachable; break; }
        date_key="$date_key|$d"
    done
    if [ "$date_key" = unreachable ]; then
        # Reuse the newest cached base rather than fail (e.g. no network now).
        newest=$(ls -t "${BASE_DIR:-$repo/build/base}"/bookworm-slim-*.tar 2>/dev/null | head -1 || true)
        if [ -n "$newest" ]; then log "archive unreachable: reusing $newest"; echo "$newest"; exit 0; fi
        die "the Debian archive at $mirror is unreachable and no base is cached"
    fi
fi
key=$( { cat "${BASH_SOURCE[0]}"; echo "$mirror $date_key"; } | sha256sum | cut -c1-16)
cache=${BASE_DIR:-$repo/build/base}
out=${1:-$cache/bookworm-slim-$key.tar}
mkdir -p "$(dirname "$out")"
if [ -s "$out" ]; then
    log "cached: $out"
    echo "$out"
    exit 0
fi

log "mmdebstrap --variant=minbase $suite from $mirror (key $key)"
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
t0=$(date +%s)
mmdebstrap --variant=minbase --format=tar \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    "${dpkgopts[@]}" "${aptopts[@]}" \
    --customize-hook='rm -f "$1"/etc/hostname "$1"/etc/resolv.conf' \
    --customize-hook='rm -rf "$1"/var/log/apt/* "$1"/var/log/dpkg.log "$1"/var/cache/ldconfig/aux-cache' \
    "$suite" "$tmp" \
    "deb $mirror $suite main" \
    "deb $mirror $suite-updates main" \
    "deb $security $suite-security main" >&2
mv "$tmp" "$out"
# Drop older cached bases.
for f in "$cache"/bookworm-slim-*.tar; do
    [ "$f" = "$out" ] || rm -f "$f"
done
log "built $out ($(du -m "$out" | cut -f1) MB) in $(( $(date +%s) - t0 )) s"
echo "$out"
