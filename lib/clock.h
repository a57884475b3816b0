/*
 * The monotonic clock of every daemon (CLOCK_MONOTONIC): for deadlines,
 * time-outs and durations, never for a timestamp the API shows (those are
 * wall-clock seconds, taken by the caller and passed to core/ as `now`).
 * Async-signal-safe.
 * Convention of lib/ (design.md §2.3): 0, or -1 with the reason in the
 * caller's err buffer (or where the function says); bool for a predicate.
 */
#ifndef ARPS_LIB_CLOCK_H
#define ARPS_LIB_CLOCK_H

#include <stdint.h>

/* Microseconds since an arbitrary fixed point (boot). */
int64_t clock_mono_us(void);
/* Milliseconds since the same point (clock_mono_us() / 1000). */
int64_t clock_mono_ms(void);

#endif
