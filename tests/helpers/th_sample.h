/*
 * th_sample.h - how much of a large random sample a test runs.
 *
 * The number writers' tests (test_dtoa.c, test_fmt.c) compare a million
 * random values against strtod/printf: the numerical check, which the
 * plain build runs whole.  Under AddressSanitizer every conversion costs
 * 10-20x, and what the sanitizer build adds is the memory check, for
 * which a tenth of the sample reaches the same code: TH_SAMPLE(n) is n
 * there, n / 10 under ASan (gcc's __SANITIZE_ADDRESS__, clang's
 * __has_feature).  Header only: include it as "../helpers/th_sample.h".
 *
 * TH_ASSERT(expr, fmt, ...) is ck_assert_msg for such loops: Check's
 * asserts record every passing check's file and line with a write to its
 * message file (_mark_point), a system call per check that made these
 * tests spend as long in the kernel as in the code under test; this one
 * calls Check only when the check fails.
 */
#ifndef TH_SAMPLE_H
#define TH_SAMPLE_H

#if defined(__SANITIZE_ADDRESS__)
#define TH_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TH_SANITIZED 1
#endif
#endif

#ifdef TH_SANITIZED
#define TH_SAMPLE(n) ((n) / 10)
#else
#define TH_SAMPLE(n) (n)
#endif

#define TH_ASSERT(expr, ...)           \
    do {                               \
        if (!(expr))                   \
            ck_abort_msg(__VA_ARGS__); \
    } while (0)

#endif
