#!/usr/bin/env bash
# Consumer tests: install the build into a temporary directory (meson
# install --destdir), then build programs against it with nothing but
# pkg-config (PKG_CONFIG_PATH and PKG_CONFIG_SYSROOT_DIR pointing there) and
# run them:
#   consumer.c, consumer.cpp   the C and C++ consumers (consumer_checks.h)
#   blas_order.c               linked with -lgslcblas first: the library's
#                              BLAS calls must still reach the system BLAS
# and check the pkg-config file itself (--static lists the private libraries);
# then the installed Python package imports and runs (builds with Python).
#
#   run.sh SOURCE_ROOT BUILD_ROOT
set -euo pipefail
src=$1 build=$2
here=$src/tests/consumer
CC=${CC:-cc} CXX=${CXX:-c++}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

# Libraries, headers, pkg-config file and binary (not the man page).
meson install -C "$build" --no-rebuild --destdir "$tmp/root" --tags devel,runtime --quiet \
  >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; echo "FAIL: meson install"; exit 1; }
pc=$(find "$tmp/root" -name attnrank.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: no attnrank.pc installed"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$tmp/root
libdir=$(dirname "$(dirname "$pc")")   # the .pc lives in LIBDIR/pkgconfig
cflags=$(pkg-config --cflags attnrank)
libs=$(pkg-config --libs attnrank)
static=$(pkg-config --libs --static attnrank)
echo "pkg-config --cflags --libs: $cflags $libs"
echo "pkg-config --libs --static: $static"
case " $cflags $libs " in
  *" -I$tmp/root/"*" -L$tmp/root/"*) ok "pkg-config points into the installed tree" ;;
  *) bad "pkg-config does not point into $tmp/root" ;;
esac
missing=""
for l in -lattnrank -llapacke -lblas -lgsl -ljansson -lzip -lflint -lgmp -lmpfr -lm; do
  case " $static " in *" $l "*) ;; *) missing="$missing $l" ;; esac
done
[ -z "$missing" ] && ok "--static lists every private library" || bad "--static lacks$missing"
[ -f "$libdir/libattnrank.so" ] || bad "no libattnrank.so in $libdir"
soname=$(readelf -d "$libdir/libattnrank.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ -f "$libdir/$soname" ] && ok "soname $soname installed" || bad "soname '$soname' not installed"
export LD_LIBRARY_PATH=$libdir   # the installed library carries no RUNPATH

# C++: wrap the include in extern "C" only while some header lacks guards.
wrap=()
unguarded=$(cd "$tmp/root" && grep -L 'extern "C"' $(grep -l '^AR_API ' $(find . -path '*/include/attnrank/*.h')) || true)
if [ -n "$unguarded" ]; then
  wrap=(-DAR_CONSUMER_WRAP_EXTERN_C)
  echo "note: headers without extern \"C\" guards, C++ consumer wraps its include:" $(basename -a $unguarded)
fi

build_run() {  # build_run NAME COMPILER... : compile, link, run
  local name=$1; shift
  # shellcheck disable=SC2086 # pkg-config output is words
  if ! "$@" $cflags -o "$tmp/$name" $libs 2>"$tmp/$name.err"; then
    bad "$name does not build:"; head -20 "$tmp/$name.err"; return
  fi
  if "$tmp/$name" >"$tmp/$name.out" 2>&1; then ok "$name: $(tail -n 1 "$tmp/$name.out")"
  else cat "$tmp/$name.out"; bad "$name"; fi
}
build_run consumer_c "$CC" -std=c11 -Wall -Wextra -pedantic -Werror "$here/consumer.c" -lm
build_run consumer_cxx "$CXX" -std=c++11 -Wall -Wextra -pedantic -Werror "${wrap[@]}" "$here/consumer.cpp"

# Hostile link order: libgslcblas before libattnrank and the system BLAS,
# all kept (--no-as-needed), so GSL's cblas_* come first in the global scope.
# shellcheck disable=SC2086
if "$CC" -std=c11 "$here/blas_order.c" $cflags -o "$tmp/blas_order" \
     -Wl,--no-as-needed -lgslcblas $libs -lblas -ldl -lm 2>"$tmp/blas_order.err"; then
  readelf -d "$tmp/blas_order" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ' >"$tmp/needed"
  echo "blas_order NEEDED: $(cat "$tmp/needed")"
  if LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT=$tmp/bindings "$tmp/blas_order" >"$tmp/blas_order.out" 2>&1; then
    cat "$tmp/blas_order.out"
    cat "$tmp"/bindings.* >"$tmp/bindings.all"
    lib_bindings=$(grep -E "binding file [^ ]*libattnrank[^ ]* " "$tmp/bindings.all" || true)
    to_gsl=$(echo "$lib_bindings" | grep 'libgslcblas' || true)
    gemm=$(echo "$lib_bindings" | grep -E "symbol \`dgemm_'" | sed 's/.* to \([^ ]*\) .*/\1/' | head -n 1)
    echo "libattnrank's dgemm_ bound to: ${gemm:-nothing}"
    if [ -n "$to_gsl" ]; then bad "libattnrank binds into libgslcblas:"; echo "$to_gsl" | head -5
    elif [ -z "$gemm" ]; then bad "no binding of libattnrank's dgemm_ seen"
    else ok "with -lgslcblas first the library's BLAS is $(readlink -f "$gemm")"; fi
  else
    cat "$tmp/blas_order.out"; bad "blas_order"
  fi
else
  bad "blas_order does not build:"; head -20 "$tmp/blas_order.err"
fi

# The Python package, when this build has it: installed by meson install
# (meson 1.0 tags the extension runtime and the .py files python-runtime),
# Debian's python3 imports it from the installed tree alone (no build-tree
# path on sys.path, -P) and gets answers from it.
if compgen -G "$build/python/attnrank/_core*.so" >/dev/null; then
  meson install -C "$build" --no-rebuild --destdir "$tmp/py" --tags runtime,python-runtime --quiet \
    >"$tmp/py-install.log" 2>&1 || { cat "$tmp/py-install.log"; bad "meson install --tags runtime,python-runtime"; }
  init=$(find "$tmp/py" -path '*/attnrank/__init__.py' | head -n 1)
  if [ -z "$init" ]; then bad "no attnrank/__init__.py installed"
  elif out=$(cd "$tmp" && env -u PYTHONPATH PYTHONPATH="$(dirname "$(dirname "$init")")" \
               /usr/bin/python3 -P -c '
import numpy as np, attnrank
assert attnrank.__file__.startswith("'"$tmp/py"'"), attnrank.__file__
r = attnrank.spectrum(np.diag([3.0, 2.0, 0.0]))
assert r.rank == 2 and list(r.singular_values) == [3.0, 2.0, 0.0], r
print(attnrank.version(), attnrank.__file__)' 2>&1); then
    ok "installed Python package imports: $out"
  else echo "$out"; bad "import attnrank from the installed tree"; fi
fi

[ "$fail" -eq 0 ] || { echo "consumer: FAILED"; exit 1; }
echo "consumer: C and C++ consumers, pkg-config file and BLAS binding all pass"
