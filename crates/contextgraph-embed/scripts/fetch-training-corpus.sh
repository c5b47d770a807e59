#!/usr/bin/env bash
# Fetches the PyPI, npm and Debian part of the shipped model's training
# corpus into DEST (default: target/embed-corpus), one unpacked directory per
# package, named NAME-VERSION. The crates part is the local cargo registry
# (~/.cargo/registry/src/*), already on any machine that built the workspace.
#
# Packages are pinned; wheels (pure-Python source for the packages listed)
# come from PyPI with pip, tarballs from the npm registry with `npm pack`,
# Debian source packages (the Ruby, PHP, C#, Kotlin, Scala, Elixir, Haskell,
# Lua and shell sources) with `apt-get source NAME=VERSION`, which needs a
# `deb-src` line for bookworm in /etc/apt/sources.list.d and `apt-get update`.
# Licences are checked by the trainer (examples/train.rs), not here.
set -euo pipefail
DEST="${1:-target/embed-corpus}"
mkdir -p "$DEST/pypi" "$DEST/npm" "$DEST/deb" "$DEST/.archives" "$DEST/.deb-archives"
DEST="$(cd "$DEST" && pwd)"
HERE="$(cd "$(dirname "$0")" && pwd)"

while read -r spec; do
  [ -z "$spec" ] && continue
  case "$spec" in \#*) continue;; esac
  name="${spec%%==*}"; version="${spec##*==}"
  out="$DEST/pypi/$name-$version"
  [ -d "$out" ] && continue
  find_wheel() { ls "$DEST/.archives" | grep -i "^$(echo "$name" | tr '-' '_')-$version-.*\.whl$" | head -1; }
  if [ -z "$(find_wheel)" ]; then
    ( cd "$DEST/.archives" && pip download --quiet --no-deps --only-binary :all: "$spec" >/dev/null )
  fi
  wheel=$(find_wheel)
  mkdir -p "$out"
  python3 -m zipfile -e "$DEST/.archives/$wheel" "$out"
done < "$HERE/pypi-packages.txt"

while read -r spec; do
  [ -z "$spec" ] && continue
  case "$spec" in \#*) continue;; esac
  name="${spec%@*}"; version="${spec##*@}"
  flat="$(echo "$name" | tr '/' '-' | tr -d '@')"
  out="$DEST/npm/$flat-$version"
  [ -d "$out" ] && continue
  tarball="$flat-$version.tgz"
  if [ ! -f "$DEST/.archives/$tarball" ]; then
    tarball=$( cd "$DEST/.archives" && npm pack --silent "$spec" 2>/dev/null | tail -1 )
  fi
  mkdir -p "$out"
  tar -xzf "$DEST/.archives/$tarball" -C "$out"
done < "$HERE/npm-packages.txt"
# Debian: apt-get source unpacks NAME-UPSTREAM_VERSION beside its archives;
# the unpacked tree is moved to deb/NAME-VERSION (VERSION the pinned Debian
# version, epoch dropped) so the trainer sees one directory per package.
while read -r spec; do
  [ -z "$spec" ] && continue
  case "$spec" in \#*) continue;; esac
  name="${spec%%=*}"; version="${spec##*=}"; version="${version#*:}"
  out="$DEST/deb/$name-$version"
  [ -d "$out" ] && continue
  work="$DEST/.deb-archives/$name"
  rm -rf "$work"; mkdir -p "$work"
  ( cd "$work" && apt-get source --quiet "$spec" >/dev/null 2>&1 ) || { echo "apt-get source $spec failed" >&2; continue; }
  tree=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -1)
  [ -n "$tree" ] && mv "$tree" "$out"
  rm -rf "$work"
done < "$HERE/debian-packages.txt"
echo "corpus in $DEST/pypi, $DEST/npm and $DEST/deb"
