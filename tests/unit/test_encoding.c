/* test_encoding.c - unit tests of the profile's integer encoding
 * (ut_varint.h), of the collector's size keys (col_size_key) and of how
 * its narrow counters read whole (col_count_whole), against values worked
 * out by hand. */
#include <stdio.h>
#include <string.h>

#include "collect/col_internal.h"
#include "common/ut_varint.h"
#include "format/pf_check.h"
#include "unit_check.h"


static void test_varint(void)
{
    uint8_t buf[UT_VARINT_MAX];
    /* known encodings */
    CHECK(ut_varint_put(buf, 0) == 1 && buf[0] == 0);
    CHECK(ut_varint_put(buf, 127) == 1 && buf[0] == 0x7f);
    CHECK(ut_varint_put(buf, 128) == 2 && buf[0] == 0x80 && buf[1] == 0x01);
    CHECK(ut_varint_put(buf, 300) == 2 && buf[0] == 0xac && buf[1] == 0x02);
    CHECK(ut_varint_put(buf, UINT64_MAX) == 10 && buf[9] == 0x01);
    /* round trips */
    const uint64_t values[] = {0, 1, 127, 128, 16383, 16384, 1ull << 32, (1ull << 63) + 5, UINT64_MAX};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        size_t n = ut_varint_put(buf, values[i]);
        const uint8_t *p = buf;
        uint64_t v = 0;
        CHECK(ut_varint_get(&p, buf + n, &v) == 0 && v == values[i] && p == buf + n);
        /* one byte short is truncated */
        p = buf;
        CHECK(ut_varint_get(&p, buf + n - 1, &v) == -1);
    }
    /* 11 continuation bytes, and a 10th byte above 1, do not fit 64 bits */
    uint8_t over[11];
    memset(over, 0xff, sizeof over);
    const uint8_t *p = over;
    uint64_t v;
    CHECK(ut_varint_get(&p, over + sizeof over, &v) == -1);
    uint8_t big[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    p = big;
    CHECK(ut_varint_get(&p, big + 10, &v) == -1);
    /* zigzag */
    CHECK(ut_zigzag(0) == 0 && ut_zigzag(-1) == 1 && ut_zigzag(1) == 2 && ut_zigzag(-2) == 3);
    CHECK(ut_unzigzag(ut_zigzag(INT64_MIN)) == INT64_MIN);
    CHECK(ut_unzigzag(ut_zigzag(INT64_MAX)) == INT64_MAX);
    /* FNV-1a 32 of "a" is 0xe40c292c */
    CHECK(ut_fnv32(UT_FNV32_INIT, "a", 1) == 0xe40c292cu);
    /* a record's check: 1.x FNV-1a over the type's 4 bytes and the
     * payload; 2.x XXH32 of the payload seeded with the type (XXH32 of "a",
     * seed 0, is 0x550d7456, xxhash's own test value) */
    CHECK(pf_check(1, 0x0201, "a", 1) ==
          ut_fnv32(ut_fnv32(UT_FNV32_INIT, "\x01\x02\x00\x00", 4), "a", 1));
    CHECK(pf_check(2, 0, "a", 1) == 0x550d7456u);
    CHECK(pf_check(2, 1, "a", 1) != pf_check(2, 2, "a", 1));
    CHECK(pf_check(2, 1, "", 0) != pf_check(1, 1, "", 0));
}

static void test_size_key(void)
{
    CHECK(col_size_key(0) == 0);
    CHECK(col_size_key(24) == 24);
    CHECK(col_size_key(8192) == 8192);
    /* 16 buckets of 512 in [8192, 16384); the first starts above the exact
     * sizes, so that 8193..8703 are never counted with the blocks of 8192
     * (regression: they shared size key 8192, and the profile said
     * size_hi 8192 for them) */
    CHECK(col_size_key(8193) == 8193);
    CHECK(col_size_key(8703) == 8193);
    CHECK(col_size_key(8704) == 8704);
    CHECK(col_size_key(16383) == 16384 - 512);
    CHECK(col_size_key(100000) == 98304);   /* [98304, 102399], step 4096 */
    CHECK(col_size_key(300000) == 294912);  /* [294912, 311295], step 16384 */
    /* the highest size of each key's bucket, as the profile writes it */
    CHECK(col_size_key_hi(8192) == 8192);
    CHECK(col_size_key_hi(8193) == 8703);
    CHECK(col_size_key_hi(8704) == 9215);
    CHECK(col_size_key_hi(98304) == 102399);
    CHECK(col_size_key_hi(294912) == 311295);
    CHECK(col_size_key(col_size_key_hi(294912)) == 294912);
    CHECK(col_size_key(col_size_key_hi(294912) + 1) == 311296);
}

/* The low bits and parity of count c in a counter bits wide, and its carry
 * n, as the owner leaves them between events. */
static uint32_t narrow_low(uint64_t c, unsigned bits)
{
    return (uint32_t)((((c >> bits) & 1) << bits) | (c & COL_COUNT_LOW(bits)));
}

static void test_count_whole(void)
{
    const unsigned widths[] = {COL_COUNT_BITS, COL_TEMP_BITS, 4, 2};
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        unsigned bits = widths[w];
        uint64_t fill = 1ull << bits;
        const uint64_t counts[] = {0, 1, fill - 1, fill, fill + 1, 2 * fill - 1, 2 * fill,
                                   2 * fill + 3, 7 * fill + 5, (uint64_t)UINT32_MAX * fill};
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
            uint64_t c = counts[i];
            /* settled: the carry holds every fill */
            CHECK(col_count_whole((uint32_t)(c >> bits), narrow_low(c, bits), bits) == c);
            /* the owner's last event filled the low bits: it has stored them
             * clear with the parity flipped, and not yet the carry */
            if (c >= fill && (c & (fill - 1)) == 0)
                CHECK(col_count_whole((uint32_t)((c >> bits) - 1), narrow_low(c, bits), bits) == c);
        }
    }
    /* by hand, 31 bits: 3 fills and 5 (parity 1), and the window of the
     * fourth fill (parity 0, carry still 3) */
    CHECK(col_count_whole(3, 0x80000005u, 31) == 3ull * 0x80000000u + 5);
    CHECK(col_count_whole(3, 0, 31) == 4ull * 0x80000000u);
    CHECK(col_count_whole(4, 0, 31) == 4ull * 0x80000000u);
    /* 15 bits: a temporary count of 100,000 is 3 fills and 1,696 */
    CHECK(col_count_whole(3, 0x8000u | 1696u, 15) == 100000);
}

int main(void)
{
    test_varint();
    test_size_key();
    test_count_whole();
    return unit_check_done("encoding");
}
