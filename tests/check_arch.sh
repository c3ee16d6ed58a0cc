#!/usr/bin/env bash
# The architecture of docs/DESIGN.md, checked on the build's object files with nm (so it sees
# the calls the compiler emitted, not what the comments say):
#
#   check_arch.sh layers SRC_DIR OBJ...   every call and every #include points down the layer
#                                         picture; no two files call each other in a loop; only
#                                         src/api (and src/view, the viewer's entry points, above
#                                         it) define public (splat_) symbols
#   check_arch.sh exports SRC_DIR LIB.so  the shared library exports exactly the functions of
#                                         include/splatc.h
#
# Exits 1 and prints each violation when there is one.
set -euo pipefail
mode=$1
src=$2
shift 2

# Which layers a layer may use (itself included). io and ref sit beside the stack on core.
allowed() {
    case $1 in
    core) echo "core" ;;
    gpu) echo "core gpu" ;;
    sort) echo "core gpu sort" ;;
    render) echo "core gpu sort render" ;;
    train) echo "core gpu sort render io train" ;;
    api) echo "core gpu sort render io ref train api" ;;
    view) echo "core gpu sort render io ref train api view" ;;
    io) echo "core io" ;;
    ref) echo "core ref" ;;
    *) echo "" ;;
    esac
}

fail=0
case $mode in
layers)
    # The file an object was compiled from, relative to src/ ("train/loop.c"); the generated
    # SPIR-V table belongs to gpu.
    table=$(mktemp)
    trap 'rm -f "$table"' EXIT
    for o in "$@"; do
        case $o in
        */src/*) f=${o##*/src/} ;;
        */splat__spirv_table.c.o) f=gpu/spirv_table.c.o ;;
        */splat__view_files.c.o) f=view/files.c.o ;;
        *) echo "check_arch: cannot place $o" >&2; exit 2 ;;
        esac
        f=${f%.o}
        nm "$o" | awk -v f="$f" '$1 == "U" {print f, "U", $2} NF == 3 && $2 ~ /^[TDBRC]$/ {print f, "D", $3}'
    done >"$table"

    # Public names defined outside src/api, and internal ones that break the prefix rule.
    while read -r f kind sym; do
        [ "$kind" = D ] || continue
        case $sym in
        __* | .*) ;; # the compiler's and the sanitizers' own (ASan's __odr_asan.*)
        splat__*) ;;
        splat_viewer_*) case $f in view/*) ;; *) echo "public symbol $sym defined in src/$f (the viewer's entry points are src/view's)"; fail=1 ;; esac ;;
        splat_*) case $f in api/*) ;; *) echo "public symbol $sym defined in src/$f (only src/api implements the public API)"; fail=1 ;; esac ;;
        *) echo "symbol $sym of src/$f has no splat__ prefix"; fail=1 ;;
        esac
    done <"$table"

    # Calls between files: from the user to the file that defines the symbol.
    edges=$(awk '$2 == "D" {def[$3] = $1} $2 == "U" {use[++n] = $1 " " $3}
                 END {for (i = 1; i <= n; i++) {split(use[i], a, " "); if ((a[2] in def) && def[a[2]] != a[1]) print a[1], def[a[2]], a[2]}}' "$table" | sort -u)
    while read -r from to sym; do
        [ -n "$from" ] || continue
        lf=${from%%/*} lt=${to%%/*}
        case " $(allowed "$lf") " in
        *" $lt "*) ;;
        *) echo "src/$from ($lf) calls $sym of src/$to ($lt): $lf may use only $(allowed "$lf")"; fail=1 ;;
        esac
    done <<<"$edges"

    # Loops in the file graph (depth-first search; a back edge closes a loop).
    loops=$(awk '{adj[$1] = adj[$1] " " $2; node[$1]; node[$2]}
        function visit(v,   k, n, w, list) {
            state[v] = 1; stack[++depth] = v
            n = split(adj[v], list, " ")
            for (k = 1; k <= n; k++) {
                w = list[k]
                if (state[w] == 1) {
                    s = ""; for (i = depth; i >= 1 && stack[i] != w; i--) s = stack[i] " -> " s
                    print w " -> " s w
                } else if (state[w] == 0) visit(w)
            }
            depth--; state[v] = 2
        }
        END {for (v in node) if (state[v] == 0) visit(v)}' <<<"$(awk '{print $1, $2}' <<<"$edges" | sort -u)")
    if [ -n "$loops" ]; then
        echo "files of src/ that call each other in a loop:"
        echo "$loops" | sed 's/^/  /'
        fail=1
    fi

    # Includes: "layer/file.h" only from the layers allowed; the CLI includes only the public header.
    while IFS=: read -r file _ inc; do
        rel=${file#"$src"/src/}
        l=${rel%%/*}
        target=$(sed -n 's/.*#include "\([a-z_]*\)\/.*/\1/p' <<<"$inc")
        [ -n "$target" ] || continue
        if [ "$l" = cli ]; then
            echo "src/$rel includes $target/: the CLI uses the public API only"; fail=1; continue
        fi
        case " $(allowed "$l") " in
        *" $target "*) ;;
        *) echo "src/$rel includes $target/: $l may use only $(allowed "$l")"; fail=1 ;;
        esac
    done < <(grep -rn '#include "[a-z_]*/' "$src/src" --include='*.c' --include='*.h' || true)
    ;;
exports)
    lib=$1
    header=$src/include/splatc.h
    exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRV]$/ {print $3}' | sort -u)
    declared=$(grep -o '\bsplat_[a-z0-9_]*(' "$header" | tr -d '(' | sort -u)
    for s in $exported; do
        grep -qx "$s" <<<"$declared" || { echo "$lib exports $s, which include/splatc.h does not declare"; fail=1; }
    done
    for s in $declared; do
        grep -qx "$s" <<<"$exported" || { echo "include/splatc.h declares $s, which $lib does not export"; fail=1; }
    done
    echo "$lib exports $(wc -w <<<"$exported") symbols"
    ;;
*)
    echo "usage: check_arch.sh layers SRC_DIR OBJ... | exports SRC_DIR LIB.so" >&2
    exit 2
    ;;
esac
[ $fail -eq 0 ] && echo "architecture: OK"
exit $fail
