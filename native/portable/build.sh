#!/usr/bin/env bash
# Builds the libnetapprox.so that approx-core's jar ships (docs/architecture.md, "The shipped native library"):
# for linux-<arch> against a glibc 2.17 baseline, with libsodium and the C++ runtime (libc++, libc++abi, libunwind,
# compiler-rt) linked statically, so that it needs nothing beyond libc/libm/libpthread/libdl/ld-linux.
#
#   native/portable/build.sh ARCH BUILD_DIR OUT_DIR      ARCH: x86_64 | aarch64
#
# Toolchain: Zig (`zig cc` / `zig c++ -target ARCH-linux-gnu.2.17`), from the pinned ziglang wheel
# (zig-requirements.txt). libsodium: built from the source in the pinned PyNaCl sdist (libsodium-requirements.txt)
# with the same target. Both are checked against their sha256 and cached under build/native-portable (or
# NETAPPROX_PORTABLE_CACHE), so only the first build downloads and builds them; libnetapprox itself is an
# incremental CMake/Ninja build in BUILD_DIR. The result is checked (check-lib.sh) and copied to
# OUT_DIR/libnetapprox.so; BUILD_DIR also holds capi_smoke, the C test of the library (scripts/test.sh runs it).
set -euo pipefail

die() {
  echo "[native-portable] ERROR: $*" >&2
  exit 1
}
log() { echo "[native-portable] $*"; }

[ $# -eq 3 ] || die "usage: $0 x86_64|aarch64 BUILD_DIR OUT_DIR"
ARCH="$1"
BUILD_DIR="$2"
OUT_DIR="$3"
case "$ARCH" in
  x86_64 | aarch64) ;;
  *) die "unsupported ARCH '$ARCH' (x86_64 or aarch64)" ;;
esac
GLIBC_BASELINE=2.17
TARGET="$ARCH-linux-gnu.$GLIBC_BASELINE"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NATIVE="$(cd "$HERE/.." && pwd)"
ROOT="$(cd "$NATIVE/.." && pwd)"
CACHE="${NETAPPROX_PORTABLE_CACHE:-$ROOT/build/native-portable}"
JOBS="${NETAPPROX_JOBS:-2}"
mkdir -p "$CACHE/toolchain" "$CACHE/src" "$BUILD_DIR"
CACHE="$(cd "$CACHE" && pwd)"
BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"

# One build at a time per cache (two Maven builds of the same checkout would otherwise race on it).
exec 9>"$CACHE/.lock"
flock 9

pinned() { sed -n "s/^$1==\([0-9][0-9.]*\).*/\1/p" "$2"; }
ZIG_VERSION="$(pinned ziglang "$HERE/zig-requirements.txt")"
PYNACL_VERSION="$(pinned pynacl "$HERE/libsodium-requirements.txt")"
PYNACL_SHA256="$(sed -n 's/.*--hash=sha256:\([0-9a-f]\{64\}\).*/\1/p' "$HERE/libsodium-requirements.txt")"
[ -n "$ZIG_VERSION" ] && [ -n "$PYNACL_VERSION" ] && [ -n "$PYNACL_SHA256" ] || die "cannot read the pins in $HERE"

# --- Zig ----------------------------------------------------------------------------------------------------------
ZIG_DIR="$CACHE/toolchain/ziglang-$ZIG_VERSION"
ZIG="$ZIG_DIR/ziglang/zig"
if [ ! -x "$ZIG" ]; then
  log "installing ziglang==$ZIG_VERSION (pip, hash-checked) into $ZIG_DIR"
  tmp="$(mktemp -d "$CACHE/toolchain/.ziglang.XXXXXX")"
  python3 -m pip install --disable-pip-version-check -q --no-deps --require-hashes --target "$tmp" \
    -r "$HERE/zig-requirements.txt" </dev/null || die "pip could not install ziglang==$ZIG_VERSION"
  rm -rf "$ZIG_DIR"
  mv "$tmp" "$ZIG_DIR"
fi
[ "$("$ZIG" version)" = "$ZIG_VERSION" ] || die "$ZIG is not zig $ZIG_VERSION"
# Zig's caches (its libc++/glibc-stub builds per target, compiled objects) live in the cache too.
export ZIG_GLOBAL_CACHE_DIR="$CACHE/zig-cache" ZIG_LOCAL_CACHE_DIR="$CACHE/zig-cache"

# Compiler wrappers: CMake and autoconf want one executable per compiler.
BIN="$CACHE/toolchain/bin-zig-$ZIG_VERSION"
mkdir -p "$BIN"
wrapper() {  # name, zig subcommand and arguments
  local f="$BIN/$1"
  shift
  printf '#!/bin/sh\nexport ZIG_GLOBAL_CACHE_DIR="%s" ZIG_LOCAL_CACHE_DIR="%s"\nexec "%s" %s "$@"\n' \
    "$ZIG_GLOBAL_CACHE_DIR" "$ZIG_LOCAL_CACHE_DIR" "$ZIG" "$*" >"$f.tmp"
  chmod +x "$f.tmp"
  mv "$f.tmp" "$f"
}
wrapper "$TARGET-cc" cc -target "$TARGET"
wrapper "$TARGET-c++" c++ -target "$TARGET"
wrapper zig-ar ar
wrapper zig-ranlib ranlib

# --- libsodium source (PyNaCl sdist) -----------------------------------------------------------------------------
SDIST="$CACHE/src/pynacl-$PYNACL_VERSION.tar.gz"
if [ ! -f "$SDIST" ]; then
  log "downloading the pynacl==$PYNACL_VERSION sdist (pip, hash-checked) for its bundled libsodium source"
  tmp="$(mktemp -d "$CACHE/src/.pynacl.XXXXXX")"
  python3 -m pip download --disable-pip-version-check -q --no-deps --no-binary pynacl --require-hashes \
    -r "$HERE/libsodium-requirements.txt" -d "$tmp" </dev/null || die "pip could not download pynacl==$PYNACL_VERSION"
  mv "$tmp/pynacl-$PYNACL_VERSION.tar.gz" "$SDIST"
  rm -rf "$tmp"
fi
echo "$PYNACL_SHA256  $SDIST" | sha256sum -c --quiet - || die "$SDIST does not match the pinned sha256; delete it"
SODIUM_SRC="$CACHE/src/libsodium-pynacl-$PYNACL_VERSION"
if [ ! -x "$SODIUM_SRC/configure" ]; then
  tmp="$(mktemp -d "$CACHE/src/.libsodium.XXXXXX")"
  tar -xzf "$SDIST" -C "$tmp" --strip-components=3 "pynacl-$PYNACL_VERSION/src/libsodium"
  rm -rf "$SODIUM_SRC"
  mv "$tmp" "$SODIUM_SRC"
fi
SODIUM_VERSION="$(sed -n "s/^PACKAGE_VERSION='\(.*\)'$/\1/p" "$SODIUM_SRC/configure")"

# --- libsodium (static, PIC, same target) ------------------------------------------------------------------------
SODIUM_CFLAGS="-O2"
SODIUM_PREFIX="$CACHE/libsodium-$SODIUM_VERSION-$TARGET"
STAMP="libsodium $SODIUM_VERSION from pynacl $PYNACL_VERSION ($PYNACL_SHA256), zig $ZIG_VERSION -target $TARGET, CFLAGS=$SODIUM_CFLAGS"
if [ ! -f "$SODIUM_PREFIX/lib/libsodium.a" ] || [ "$(cat "$SODIUM_PREFIX/.stamp" 2>/dev/null)" != "$STAMP" ]; then
  log "building $STAMP (once; cached in $SODIUM_PREFIX)"
  SODIUM_BUILD="$CACHE/build-libsodium-$TARGET"
  rm -rf "$SODIUM_PREFIX" "$SODIUM_BUILD"
  mkdir -p "$SODIUM_BUILD"
  (
    cd "$SODIUM_BUILD"
    "$SODIUM_SRC/configure" --host="$ARCH-linux-gnu" --prefix="$SODIUM_PREFIX" --disable-shared --enable-static \
      --with-pic --disable-dependency-tracking CC="$BIN/$TARGET-cc" AR="$BIN/zig-ar" RANLIB="$BIN/zig-ranlib" \
      CFLAGS="$SODIUM_CFLAGS" && make -j"$JOBS" && make install
  ) </dev/null >"$SODIUM_BUILD/build.log" 2>&1 || {
    tail -n 40 "$SODIUM_BUILD/build.log" >&2
    die "libsodium build failed (full log: $SODIUM_BUILD/build.log)"
  }
  echo "$STAMP" >"$SODIUM_PREFIX/.stamp"
  rm -rf "$SODIUM_BUILD"
fi

# --- libnetapprox.so ---------------------------------------------------------------------------------------------
cat >"$BUILD_DIR/zig-toolchain.cmake.tmp" <<EOF
# Generated by native/portable/build.sh: zig $ZIG_VERSION for $TARGET.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR $ARCH)
set(CMAKE_C_COMPILER "$BIN/$TARGET-cc")
set(CMAKE_CXX_COMPILER "$BIN/$TARGET-c++")
set(CMAKE_AR "$BIN/zig-ar" CACHE FILEPATH "" FORCE)
set(CMAKE_RANLIB "$BIN/zig-ranlib" CACHE FILEPATH "" FORCE)
# No DWARF in the shipped library (zig's libc++ and libsodium carry it: 8 MB instead of 0.8 MB); .symtab stays, so
# a crash report (hs_err) still names functions.
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,--strip-debug")
EOF
# Rewritten only when it changes, so that an unchanged toolchain does not reconfigure the build.
if cmp -s "$BUILD_DIR/zig-toolchain.cmake.tmp" "$BUILD_DIR/zig-toolchain.cmake"; then
  rm "$BUILD_DIR/zig-toolchain.cmake.tmp"
else
  mv "$BUILD_DIR/zig-toolchain.cmake.tmp" "$BUILD_DIR/zig-toolchain.cmake"
  rm -f "$BUILD_DIR/CMakeCache.txt"
fi
cmake -S "$NATIVE" -B "$BUILD_DIR" -G Ninja --log-level=WARNING \
  -DCMAKE_TOOLCHAIN_FILE="$BUILD_DIR/zig-toolchain.cmake" \
  -DCMAKE_BUILD_TYPE="${NETAPPROX_PORTABLE_BUILD_TYPE:-Release}" \
  -DNETAPPROX_SODIUM_ROOT="$SODIUM_PREFIX" \
  -DNETAPPROX_TESTS=OFF -DNETAPPROX_SANITIZE=OFF -DNETAPPROX_FUZZ=OFF
cmake --build "$BUILD_DIR" --parallel "$JOBS" --target netapprox capi_smoke
bash "$HERE/check-lib.sh" "$BUILD_DIR/libnetapprox.so" "$ARCH"
install -D -m 0755 "$BUILD_DIR/libnetapprox.so" "$OUT_DIR/libnetapprox.so"
log "linux-$ARCH: $OUT_DIR/libnetapprox.so (zig $ZIG_VERSION, glibc $GLIBC_BASELINE, libsodium $SODIUM_VERSION static)"
