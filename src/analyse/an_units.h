/* an_units.h - human-readable numbers for the text outputs: byte sizes
 * with binary units, counts with thousands separators, durations and
 * percentages.  Each writes into a caller buffer of AN_UNITS_BUF bytes and
 * returns it, so several can appear in one printf.
 */
#ifndef AN_UNITS_H
#define AN_UNITS_H

#include <stdint.h>

#define AN_UNITS_BUF 64

/* "0 B", "512 B", "1.5 KiB", "12.0 MiB" ... */
const char *an_units_bytes(uint64_t n, char *buf);
/* "1,234,567" */
const char *an_units_count(uint64_t n, char *buf);
/* A count and its noun, plural unless n is 1: "1 block", "2,048 blocks"
 * (every noun of the reports takes an "s"; a noun of up to 35 characters
 * fits beside the largest count). */
const char *an_units_noun(uint64_t n, const char *noun, char *buf);
/* "850 ns", "12.3 us", "4.56 ms", "1.234 s", "2 min 3.4 s" */
const char *an_units_time(uint64_t ns, char *buf);
/* part/whole as "40.5%", "<0.1%", "0%" when whole is 0 */
const char *an_units_percent(uint64_t part, uint64_t whole, char *buf);

#endif
