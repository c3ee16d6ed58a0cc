#!/usr/bin/env bash
# splatc installed as a C library, checked the way its users meet it (ctest install_tree and
# install_deb run this):
#
#   check_install.sh tree BUILD SRC WORK LIBDIR VERSION CC [CFLAG...]
#       cmake --install BUILD into WORK, check what is where (the shared library's soname and
#       exports, the tool, the Python module), move the tree elsewhere (it must be relocatable),
#       and build and run tests/install/consumer.c against it.
#   check_install.sh deb BUILD SRC WORK LIBDIR VERSION CC [CFLAG...]
#       cpack -G DEB into WORK, check each package's fields (the Depends against what the
#       binaries load and what splatc.pc requires) and contents, unpack them into a folder and
#       build and run the consumer against that.
#
# The consumer is built four ways: pkg-config + CC, shared and static; a CMake project with
# find_package(splatc), shared and static. CFLAGs (the sanitizer build's) go to every compile and
# link. Any problem exits 1 with a message; nothing is skipped.
set -euo pipefail
mode=$1 build=$2 src=$3 work=$4 libdir=$5 version=$6 cc=$7
shift 7
cflags=("$@")
# The sanitizer build's runtime (LD_PRELOAD, tests/CMakeLists.txt) is for what runs splatc's code,
# not for the compilers and tools, whose leaks LeakSanitizer would report.
preload=${LD_PRELOAD:-}
unset LD_PRELOAD

die() {
    echo "check_install: $*" >&2
    exit 1
}
for tool in cmake pkg-config readelf ldd "$cc"; do
    command -v "$tool" >/dev/null || die "$tool is missing (scripts/deps.sh installs it)"
done
rm -rf "$work"
mkdir -p "$work"

# The consumer against the tree at PREFIX, four ways.
consumers() {
    local prefix=$1 out=$work/consumers
    mkdir -p "$out"
    local lib=$prefix/$libdir

    # pkg-config, from the tree's own splatc.pc (PKG_CONFIG_PATH is searched first)
    export PKG_CONFIG_PATH=$lib/pkgconfig
    [ "$(pkg-config --modversion splatc)" = "$version" ] || die "pkg-config finds splatc $(pkg-config --modversion splatc), not $version"
    [ "$(pkg-config --variable=libdir splatc)" -ef "$lib" ] || die "splatc.pc's libdir $(pkg-config --variable=libdir splatc) is not $lib"
    # shellcheck disable=SC2046 # word splitting is what pkg-config's output is for
    "$cc" "${cflags[@]}" "$src/tests/install/consumer.c" -o "$out/pc_shared" $(pkg-config --cflags --libs splatc) \
        -Wl,-rpath,"$(pkg-config --variable=libdir splatc)" -lm
    # static: the archive by name (with both libraries in one folder, -lsplatc is the shared one)
    local static_libs
    static_libs=$(pkg-config --static --libs splatc | sed 's/-lsplatc\b/-l:libsplatc.a/')
    # shellcheck disable=SC2046,SC2086
    "$cc" "${cflags[@]}" "$src/tests/install/consumer.c" -o "$out/pc_static" $(pkg-config --cflags splatc) $static_libs -lm
    unset PKG_CONFIG_PATH

    # CMake, from the tree's own package (CMAKE_PREFIX_PATH is searched before the system)
    local flags="${cflags[*]}"
    cmake -S "$src/tests/install" -B "$out/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
        -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_BUILD_TYPE=Release >"$out/cmake.log" 2>&1 ||
        { cat "$out/cmake.log"; die "the CMake consumer does not configure against $prefix"; }
    grep -q "splatc $version from $lib/cmake/splatc" "$out/cmake.log" ||
        { cat "$out/cmake.log"; die "find_package(splatc) did not find $version in $lib/cmake/splatc"; }
    cmake --build "$out/cmake" >"$out/build.log" 2>&1 || { cat "$out/build.log"; die "the CMake consumer does not build"; }

    local exe
    for exe in "$out/pc_shared" "$out/pc_static" "$out/cmake/consumer_shared" "$out/cmake/consumer_static"; do
        # the shared ones load the tree's libsplatc.so.N, the static ones none
        local loaded
        loaded=$(ldd "$exe" | awk '/libsplatc/ {print $3}')
        case $exe in
        *shared) [ -n "$loaded" ] && [ "$loaded" -ef "$lib/$(readelf -d "$lib/libsplatc.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')" ] ||
            die "$exe loads '${loaded:-no libsplatc}', not the one in $lib" ;;
        *) [ -z "$loaded" ] || die "$exe, linked statically, loads $loaded" ;;
        esac
        LD_PRELOAD=$preload "$exe" "$version" "$out" || die "$exe failed"
    done
}

# The Python module of the tree at PREFIX finds the tree's library by itself.
python_module() {
    local prefix=$1 pydir=$2
    local found
    found=$(env -u SPLATC_LIBRARY PYTHONPATH="$prefix/$pydir" LD_PRELOAD="$preload" \
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" /usr/bin/python3 -c \
        'import splatc; print(splatc.__version__); print(splatc.library_path())') || die "the installed Python module does not load"
    [ "$(sed -n 1p <<<"$found")" = "$version" ] || die "the Python module reports version $(sed -n 1p <<<"$found")"
    [ "$(sed -n 2p <<<"$found")" -ef "$prefix/$libdir/libsplatc.so" ] ||
        die "the Python module loaded $(sed -n 2p <<<"$found"), not the tree's library"
}

case $mode in
tree)
    cmake --install "$build" --prefix "$work/installed" >"$work/install.log"
    p=$work/installed
    for f in bin/splatc "$libdir/libsplatc.a" "$libdir/libsplatc.so" include/splatc.h "$libdir/pkgconfig/splatc.pc" \
        "$libdir/cmake/splatc/splatcConfig.cmake" "$libdir/cmake/splatc/splatcConfigVersion.cmake"; do
        [ -e "$p/$f" ] || die "cmake --install did not install $f"
    done
    soname=$(readelf -d "$p/$libdir/libsplatc.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
    [ "$soname" = "libsplatc.so.${version%%.*}" ] || die "libsplatc.so's soname is '$soname', not libsplatc.so.${version%%.*}"
    [ -L "$p/$libdir/libsplatc.so" ] && [ -L "$p/$libdir/$soname" ] && [ -f "$p/$libdir/libsplatc.so.$version" ] ||
        die "expected libsplatc.so -> $soname -> libsplatc.so.$version in $libdir"
    bash "$src/tests/check_arch.sh" exports "$src" "$p/$libdir/libsplatc.so" >"$work/exports.log" ||
        { cat "$work/exports.log"; die "the installed libsplatc.so exports other symbols than include/splatc.h declares"; }
    cmp -s "$p/include/splatc.h" "$src/include/splatc.h" || die "the installed splatc.h is not include/splatc.h"
    tool_version=$(LD_PRELOAD=$preload "$p/bin/splatc" --version)
    [ "$tool_version" = "splatc $version" ] || die "the installed tool says '$tool_version'"
    pydir=$(find "$p" -name __init__.py -path '*/splatc/__init__.py' -printf '%h\n' | sed "s|^$p/||; s|/splatc\$||")
    [ -n "$pydir" ] && [ -f "$p/$pydir/splatc/_install.py" ] || die "cmake --install did not install the Python module"
    # nothing in the tree names the folder it was installed in
    if grep -rIlF "$p" "$p" >"$work/absolute.log"; then
        cat "$work/absolute.log"
        die "these installed files name the install folder $p (the tree must be relocatable)"
    fi
    mv "$p" "$work/moved"
    consumers "$work/moved"
    python_module "$work/moved" "$pydir"
    echo "check_install: cmake --install tree OK (moved, pkg-config and CMake, shared and static, Python)"
    ;;
deb)
    for tool in cpack dpkg-deb dpkg-shlibdeps dpkg-query; do
        command -v "$tool" >/dev/null || die "$tool is missing (scripts/deps.sh --test installs dpkg-dev)"
    done
    cpack -G DEB -B "$work/pkg" --config "$build/CPackConfig.cmake" >"$work/cpack.log" 2>&1 ||
        { cat "$work/cpack.log"; die "cpack -G DEB failed"; }
    arch=$(dpkg --print-architecture)
    run_deb=$work/pkg/splatc_${version}_$arch.deb dev_deb=$work/pkg/libsplatc-dev_${version}_$arch.deb
    [ -f "$run_deb" ] && [ -f "$dev_deb" ] || { ls "$work/pkg"; die "expected $run_deb and $dev_deb"; }
    field() { dpkg-deb -f "$1" "$2"; }
    for deb in "$run_deb" "$dev_deb"; do
        echo "== dpkg-deb -I $(basename "$deb")"
        dpkg-deb -I "$deb"
        echo "== dpkg-deb -c $(basename "$deb")"
        dpkg-deb -c "$deb"
        [ "$(field "$deb" Version)" = "$version" ] || die "$deb: Version $(field "$deb" Version)"
        [ "$(field "$deb" Architecture)" = "$arch" ] || die "$deb: Architecture $(field "$deb" Architecture)"
    done
    # contents: each file in one package, where a user looks for it
    dpkg-deb -c "$run_deb" | awk '{print $6}' | sed 's|^\./|/|' | sort >"$work/run.files"
    dpkg-deb -c "$dev_deb" | awk '{print $6}' | sed 's|^\./|/|' | sort >"$work/dev.files"
    for f in /usr/bin/splatc "/usr/$libdir/libsplatc.so.$version" "/usr/$libdir/libsplatc.so.${version%%.*}"; do
        grep -qx "$f" "$work/run.files" || die "splatc package lacks $f"
    done
    grep -q '/splatc/__init__.py$' "$work/run.files" || die "splatc package lacks the Python module"
    for f in /usr/include/splatc.h "/usr/$libdir/libsplatc.a" "/usr/$libdir/libsplatc.so" "/usr/$libdir/pkgconfig/splatc.pc" \
        "/usr/$libdir/cmake/splatc/splatcConfig.cmake"; do
        grep -qx "$f" "$work/dev.files" || die "libsplatc-dev package lacks $f"
    done
    both=$(comm -12 <(grep -v '/$' "$work/run.files") <(grep -v '/$' "$work/dev.files"))
    [ -z "$both" ] || die "files in both packages: $both"

    dpkg-deb -x "$run_deb" "$work/root"
    dpkg-deb -x "$dev_deb" "$work/root"
    # Depends of splatc: the package of every library its binaries name (their NEEDED entries,
    # found where ldd says they load from, and their packages with dpkg -S: independently of
    # dpkg-shlibdeps, which wrote the field)
    depends=$(field "$run_deb" Depends)
    for bin in "$work/root/usr/bin/splatc" "$work/root/usr/$libdir/libsplatc.so.$version"; do
        for needed in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
            path=$(ldd "$bin" | awk -v n="$needed" '{m = split($1, a, "/")}
                $1 == n && $2 == "=>" {print $3} $2 != "=>" && m > 1 && a[m] == n {print $1}' | head -1)
            [ -n "$path" ] || die "$bin needs $needed, which ldd does not find"
            pkg=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(realpath "$path")" 2>/dev/null || true)
            pkg=${pkg%%:*}
            [ -n "$pkg" ] || die "$bin needs $path, which no installed package owns"
            grep -Eq "(^|, )$pkg( |,|$)" <<<"$depends" || die "$bin needs $path of $pkg; splatc's Depends ($depends) lacks it"
        done
    done
    # Depends of libsplatc-dev: splatc itself, and the package of every Requires.private of
    # splatc.pc (or a package that depends on it: libjpeg-dev on Debian's libjpeg62-turbo-dev)
    dev_depends=$(field "$dev_deb" Depends)
    grep -Eq "(^|, )splatc \(= $version\)" <<<"$dev_depends" || die "libsplatc-dev does not depend on splatc (= $version): $dev_depends"
    for mod in $(sed -n 's/^Requires.private://p' "$work/root/usr/$libdir/pkgconfig/splatc.pc"); do
        pc=$(pkg-config --path "$mod") || die "splatc.pc requires $mod, which pkg-config does not find here"
        pkg=$(dpkg -S "$pc" 2>/dev/null || dpkg -S "$(realpath "$pc")")
        pkg=${pkg%%:*}
        ok=0
        for d in $(sed 's/([^)]*)//g; s/[,|]/ /g' <<<"$dev_depends"); do
            if [ "$d" = "$pkg" ] || dpkg-query -W -f '${Depends}' "$d" 2>/dev/null | grep -Eq "(^|, )$pkg( |,|:|$)"; then ok=1; fi
        done
        [ $ok = 1 ] || die "splatc.pc requires $mod ($pc, package $pkg); libsplatc-dev's Depends ($dev_depends) do not bring it"
    done
    consumers "$work/root/usr"
    python_module "$work/root/usr" "$(sed -n 's|^/usr/\(.*\)/splatc/__init__.py$|\1|p' "$work/run.files")"
    echo "check_install: packages $(basename "$run_deb") and $(basename "$dev_deb") OK"
    ;;
*)
    die "usage: check_install.sh tree|deb BUILD SRC WORK LIBDIR VERSION CC [CFLAG...]"
    ;;
esac
