/*
 * ThreadSanitizer entry points that Rust's nightly LLVM emits but gcc 12's libtsan predates
 * (LLVM 16 added them): a call to the C function, which libtsan intercepts and checks like any
 * other memcpy/memset/memmove. Linked only into the ThreadSanitizer build of the C test
 * (.build/mk/sanitize.mk), so the instrumented libpolyflake and the gcc-instrumented test share gcc's
 * runtime.
 */
#include <string.h>

void *__tsan_memcpy(void *dst, const void *src, size_t n);
void *__tsan_memset(void *dst, int c, size_t n);
void *__tsan_memmove(void *dst, const void *src, size_t n);

void *__tsan_memcpy(void *dst, const void *src, size_t n) { return memcpy(dst, src, n); }
void *__tsan_memset(void *dst, int c, size_t n) { return memset(dst, c, n); }
void *__tsan_memmove(void *dst, const void *src, size_t n) { return memmove(dst, src, n); }
