/* Timing helpers shared by the benchmark tools: a monotonic clock and the median of a sample.
   The includer defines _POSIX_C_SOURCE 200809L (for clock_gettime) before any header. */
#ifndef SWA_TOOLS_TIMING_H
#define SWA_TOOLS_TIMING_H

#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock: only differences mean anything. */
static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n), n >= 1; v is left sorted. */
static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
