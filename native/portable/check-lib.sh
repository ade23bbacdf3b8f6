#!/usr/bin/env bash
# Checks a libnetapprox.so as the jar ships it (docs/architecture.md, "The shipped native library"):
#   - its ELF machine is ARCH's;
#   - it needs no library beyond libc, libm, libpthread, libdl and the dynamic loader (readelf -d: NEEDED);
#   - the newest glibc symbol version it requires is at most GLIBC_2.17, and it requires no other versioned
#     library (GLIBCXX_, CXXABI_, GCC_: a dynamic C++ runtime) (readelf -V: version needs);
#   - it exports JNI_OnLoad, JNI_OnUnload and the na_* C API, and nothing else (readelf --dyn-syms).
#
#   native/portable/check-lib.sh LIBRARY x86_64|aarch64
#
# Exits 1 naming every violation. Uses readelf only (binutils), which reads both architectures.
set -euo pipefail
[ $# -eq 2 ] || {
  echo "usage: $0 LIBRARY x86_64|aarch64" >&2
  exit 2
}
LIB="$1"
ARCH="$2"
MAX_GLIBC=2.17
fail=()
[ -f "$LIB" ] || {
  echo "[check-lib] ERROR: $LIB does not exist" >&2
  exit 1
}

case "$ARCH" in
  x86_64) MACHINE="Advanced Micro Devices X86-64" LOADER="ld-linux-x86-64.so.2" ;;
  aarch64) MACHINE="AArch64" LOADER="ld-linux-aarch64.so.1" ;;
  *)
    echo "[check-lib] ERROR: unknown ARCH '$ARCH'" >&2
    exit 2
    ;;
esac
HEADER="$(readelf -h "$LIB")"
grep -qE "^ +Machine: +$MACHINE\$" <<<"$HEADER" || fail+=("ELF machine is not $MACHINE: $(grep Machine: <<<"$HEADER")")

NEEDED="$(readelf -d "$LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
for n in $NEEDED; do
  case "$n" in
    libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2 | "$LOADER") ;;
    *) fail+=("needs $n (allowed: libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 $LOADER)") ;;
  esac
done

# Version needs: "  0x0010:   Name: GLIBC_2.14  Flags: none  Version: 3" under each needed file.
VERSIONS="$(readelf -V -W "$LIB" | awk '/^Version needs section/ {f = 1; next} /^Version [a-z]+ section/ {f = 0}
  f && $2 == "Name:" {print $3}' | sort -u)"
OTHER="$(grep -vE '^GLIBC_[0-9]' <<<"$VERSIONS" || true)"
[ -z "$OTHER" ] || fail+=("requires non-glibc symbol versions: $(tr '\n' ' ' <<<"$OTHER")")
NEWEST="$(grep '^GLIBC_[0-9]' <<<"$VERSIONS" | sed 's/^GLIBC_//' | sort -V | tail -n 1)"
newer() { [ "$(printf '%s\n%s\n' "$1" "$MAX_GLIBC" | sort -V | tail -n 1)" != "$MAX_GLIBC" ]; }
if [ -n "$NEWEST" ] && newer "$NEWEST"; then
  NEWER=""
  while read -r sym ver; do
    if newer "$ver"; then NEWER+="$sym@GLIBC_$ver "; fi
  done < <(readelf --dyn-syms -W "$LIB" | sed -n 's/.* UND \([^@ ]*\)@GLIBC_\([0-9.]*\).*/\1 \2/p')
  fail+=("requires GLIBC_$NEWEST > GLIBC_$MAX_GLIBC: ${NEWER:-(see readelf -V)}")
fi

# Defined global symbols with default visibility (the dynamic exports).
EXPORTS="$(readelf --dyn-syms -W "$LIB" | awk '$7 != "UND" && $7 != "Ndx" && ($5 == "GLOBAL" || $5 == "WEAK") && $6 == "DEFAULT" {print $8}' \
  | sed 's/@.*//' | sort -u)"
EXTRA="$(grep -vE '^(na_[a-z0-9_]+|JNI_OnLoad|JNI_OnUnload)$' <<<"$EXPORTS" || true)"
[ -z "$EXTRA" ] || fail+=("exports more than the C API and JNI_OnLoad/JNI_OnUnload: $(head -n 20 <<<"$EXTRA" | tr '\n' ' ')")
for s in JNI_OnLoad JNI_OnUnload na_engine_open na_version; do
  grep -qx "$s" <<<"$EXPORTS" || fail+=("does not export $s")
done

if [ ${#fail[@]} -gt 0 ]; then
  echo "[check-lib] ERROR: $LIB (linux-$ARCH) is not portable:" >&2
  printf '[check-lib]   %s\n' "${fail[@]}" >&2
  exit 1
fi
echo "[check-lib] $LIB: linux-$ARCH, NEEDED $(tr '\n' ' ' <<<"$NEEDED")| newest GLIBC_$NEWEST (<= $MAX_GLIBC)" \
  "| exports $(wc -l <<<"$EXPORTS") symbols (na_*, JNI_OnLoad/OnUnload)"
