#!/usr/bin/env bash
# Fetches the PyPI and npm half of the shipped model's training corpus into
# DEST (default: target/embed-corpus), one unpacked directory per package,
# named NAME-VERSION. The crates half is the local cargo registry
# (~/.cargo/registry/src/*), already on any machine that built the workspace.
#
# Packages are pinned; wheels (pure-Python source for the packages listed)
# come from PyPI with pip, tarballs from the npm registry with `npm pack`.
# Licences are checked by the trainer (examples/train.rs), not here.
set -euo pipefail
DEST="${1:-target/embed-corpus}"
mkdir -p "$DEST/pypi" "$DEST/npm" "$DEST/.archives"
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
echo "corpus in $DEST/pypi and $DEST/npm"
