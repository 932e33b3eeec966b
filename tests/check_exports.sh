#!/bin/sh
# check_exports.sh LIB [NEED...] - fail if LIB exports a symbol outside the
# allowed set, or lacks one it must interpose (NEED: more of those).
# check_exports.sh --jemalloc LIB - the same for libheapscope-jemalloc.so,
# which exports jemalloc's five entry points and nothing else.
set -eu
base_needs='malloc free calloc realloc posix_memalign malloc_usable_size prctl syscall unshare setns pthread_create _Znwm _ZdlPv _ZdlPvm _ZnwmSt11align_val_t heapscope_ext_alloc heapscope_ext_free heapscope_ext_resize'
if [ "$1" = --jemalloc ]; then
    shift
    allowed='^(mallocx|rallocx|xallocx|dallocx|sdallocx)$'
    base_needs='mallocx rallocx xallocx dallocx sdallocx'
else
allowed='^(malloc|free|calloc|realloc|reallocarray|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|malloc_usable_size|dlopen|dlclose|execve|execv|execvp|execvpe|execl|execlp|execle|fexecve|_exit|_Exit|prctl|syscall|unshare|setns|pipe2|pthread_create|heapscope_[a-z_]+|_Zn[wa]m[A-Za-z0-9_]*|_Zd[la]Pv[A-Za-z0-9_]*)$'
fi
lib=$1
shift
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TWVDBiu]$/ {print $3}' | sed 's/@.*//' | sort -u)
bad=$(printf '%s\n' "$exported" | grep -Ev "$allowed" || true)
count=$(printf '%s\n' "$exported" | grep -Ec "$allowed" || true)
if [ -n "$bad" ]; then
    echo "unexpected exports from $lib:"; printf '  %s\n' $bad; exit 1
fi
for need in $base_needs "$@"; do
    printf '%s\n' "$exported" | grep -qx "$need" || { echo "missing export: $need"; exit 1; }
done
echo "exports ok: $count symbols"
