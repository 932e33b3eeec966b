/* col_dwarf_rule.c - from a pc to its unwind rule: binary search of the
 * .eh_frame_hdr table, then the FDE and its CIE, then the CFA program run
 * up to the pc (DWARF 5 §6.4, LSB "Exception Frames").  Only what the
 * unwinder needs is tracked: the CFA (register + offset), where rbp was
 * saved, and where the return address is.  Cold path: once per return
 * address per thread.  Never allocates; every read is bounds-checked. */
#define _GNU_SOURCE
#include <string.h>

#include "collect/col_dwarf.h"

enum {
    PE_OMIT = 0xff, PE_ABSPTR = 0x00, PE_ULEB = 0x01, PE_UDATA2 = 0x02, PE_UDATA4 = 0x03,
    PE_UDATA8 = 0x04, PE_SLEB = 0x09, PE_SDATA2 = 0x0a, PE_SDATA4 = 0x0b, PE_SDATA8 = 0x0c,
    PE_PCREL = 0x10, PE_DATAREL = 0x30, PE_INDIRECT = 0x80,
};

enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };

typedef struct rd {
    const uint8_t *p, *end;
    int bad;
} rd_t;

static uint64_t rd_bytes(rd_t *r, unsigned n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    memcpy(&v, r->p, n); /* x86-64: little endian */
    r->p += n;
    return v;
}

static uint64_t rd_uleb(rd_t *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        uint8_t b = (uint8_t)rd_bytes(r, 1);
        if (r->bad)
            return 0;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    r->bad = 1;
    return 0;
}

static int64_t rd_sleb(rd_t *r)
{
    int64_t v = 0;
    unsigned shift = 0;
    uint8_t b;
    do {
        b = (uint8_t)rd_bytes(r, 1);
        if (r->bad || shift >= 64) {
            r->bad = 1;
            return 0;
        }
        v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40))
        v |= -(int64_t)((uint64_t)1 << shift);
    return v;
}

/* A pointer in encoding enc; datarel is relative to `data` (the hdr). */
static uintptr_t rd_ptr(rd_t *r, uint8_t enc, uintptr_t data)
{
    if (enc == PE_OMIT)
        return 0;
    uintptr_t at = (uintptr_t)r->p, v;
    switch (enc & 0x0f) {
    case PE_ABSPTR: v = (uintptr_t)rd_bytes(r, 8); break;
    case PE_ULEB: v = (uintptr_t)rd_uleb(r); break;
    case PE_UDATA2: v = (uintptr_t)rd_bytes(r, 2); break;
    case PE_UDATA4: v = (uintptr_t)rd_bytes(r, 4); break;
    case PE_UDATA8: v = (uintptr_t)rd_bytes(r, 8); break;
    case PE_SLEB: v = (uintptr_t)rd_sleb(r); break;
    case PE_SDATA2: v = (uintptr_t)(int64_t)(int16_t)rd_bytes(r, 2); break;
    case PE_SDATA4: v = (uintptr_t)(int64_t)(int32_t)rd_bytes(r, 4); break;
    case PE_SDATA8: v = (uintptr_t)rd_bytes(r, 8); break;
    default: r->bad = 1; return 0;
    }
    switch (enc & 0x70) {
    case 0: break;
    case PE_PCREL: v += at; break;
    case PE_DATAREL: v += data; break;
    default: r->bad = 1; return 0;
    }
    if (enc & PE_INDIRECT)
        r->bad = 1; /* not used for pc ranges */
    return v;
}

/* The register state the unwinder cares about. */
typedef struct state {
    int cfa_reg;          /* REG_RSP / REG_RBP, -1 unsupported */
    int64_t cfa_off;
    int rbp_how;          /* 0 same value, 1 saved at CFA+off, -1 unsupported */
    int64_t rbp_off;
    int ra_how;           /* 1 saved at CFA+off, 2 undefined, -1 unsupported */
    int64_t ra_off;
} state_t;

typedef struct cie {
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_reg;
    uint8_t fde_enc;
    int signal;
    int z;            /* FDEs carry an augmentation length */
    rd_t insns;
} cie_t;

#define STATE_STACK 8

/* Run CFA instructions from r while the location is <= pc. */
static int run(rd_t *r, const cie_t *c, uintptr_t loc, uintptr_t pc, state_t *st,
               const state_t *init, uintptr_t data)
{
    state_t stack[STATE_STACK];
    int depth = 0;
    while (r->p < r->end && !r->bad) {
        uint8_t op = (uint8_t)rd_bytes(r, 1);
        uint8_t hi = op & 0xc0, low = op & 0x3f;
        uint64_t reg = 0, adv = 0;
        int64_t off = 0;
        if (hi == 0x40) { /* advance_loc */
            adv = low * c->code_align;
        } else if (hi == 0x80) { /* offset */
            reg = low;
            off = (int64_t)rd_uleb(r) * c->data_align;
            goto set_offset;
        } else if (hi == 0xc0) { /* restore */
            reg = low;
            goto restore;
        } else {
            switch (op) {
            case 0x00: continue; /* nop */
            case 0x01: { uintptr_t to = rd_ptr(r, c->fde_enc, data); if (to > pc) return 0; loc = to; continue; }
            case 0x02: adv = rd_bytes(r, 1) * c->code_align; break;
            case 0x03: adv = rd_bytes(r, 2) * c->code_align; break;
            case 0x04: adv = rd_bytes(r, 4) * c->code_align; break;
            case 0x05: reg = rd_uleb(r); off = (int64_t)rd_uleb(r) * c->data_align; goto set_offset;
            case 0x06: reg = rd_uleb(r); goto restore;
            case 0x07: /* undefined */
                reg = rd_uleb(r);
                if (reg == REG_RA) st->ra_how = 2;
                else if (reg == REG_RBP) st->rbp_how = -1;
                continue;
            case 0x08: /* same_value */
                reg = rd_uleb(r);
                if (reg == REG_RBP) st->rbp_how = 0;
                else if (reg == REG_RA) st->ra_how = -1;
                continue;
            case 0x09: /* register */
                reg = rd_uleb(r);
                rd_uleb(r);
                if (reg == REG_RBP) st->rbp_how = -1;
                else if (reg == REG_RA) st->ra_how = -1;
                continue;
            case 0x0a:
                if (depth == STATE_STACK) return -1;
                stack[depth++] = *st;
                continue;
            case 0x0b: /* restore_state: the whole row, CFA included */
                if (depth == 0) return -1;
                *st = stack[--depth];
                continue;
            case 0x0c: reg = rd_uleb(r); st->cfa_off = (int64_t)rd_uleb(r); goto set_cfa_reg;
            case 0x0d: reg = rd_uleb(r); goto set_cfa_reg;
            case 0x0e: st->cfa_off = (int64_t)rd_uleb(r); continue;
            case 0x0f: { /* def_cfa_expression: not expressible as a rule */
                uint64_t n = rd_uleb(r);
                if ((size_t)(r->end - r->p) < n) return -1;
                r->p += n;
                st->cfa_reg = -1;
                continue;
            }
            case 0x10: case 0x16: { /* expression, val_expression */
                reg = rd_uleb(r);
                uint64_t n = rd_uleb(r);
                if ((size_t)(r->end - r->p) < n) return -1;
                r->p += n;
                if (reg == REG_RBP) st->rbp_how = -1;
                else if (reg == REG_RA) st->ra_how = -1;
                continue;
            }
            case 0x11: reg = rd_uleb(r); off = rd_sleb(r) * c->data_align; goto set_offset;
            case 0x12: reg = rd_uleb(r); st->cfa_off = rd_sleb(r) * c->data_align; goto set_cfa_reg;
            case 0x13: st->cfa_off = rd_sleb(r) * c->data_align; continue;
            case 0x14: case 0x15: /* val_offset(_sf): the register's value is CFA+off */
                reg = rd_uleb(r);
                if (op == 0x14) rd_uleb(r); else rd_sleb(r);
                if (reg == REG_RBP) st->rbp_how = -1;
                else if (reg == REG_RA) st->ra_how = -1;
                continue;
            case 0x2e: rd_uleb(r); continue; /* GNU_args_size */
            case 0x2f: reg = rd_uleb(r); off = -(int64_t)rd_uleb(r) * c->data_align; goto set_offset;
            default: return -1;
            }
        }
        /* advance */
        if (loc + adv > pc)
            return 0;
        loc += adv;
        continue;
    set_offset:
        if (reg == REG_RBP) { st->rbp_how = 1; st->rbp_off = off; }
        else if (reg == REG_RA) { st->ra_how = 1; st->ra_off = off; }
        continue;
    restore:
        if (reg == REG_RBP) { st->rbp_how = init->rbp_how; st->rbp_off = init->rbp_off; }
        else if (reg == REG_RA) { st->ra_how = init->ra_how; st->ra_off = init->ra_off; }
        continue;
    set_cfa_reg:
        st->cfa_reg = (reg == REG_RSP || reg == REG_RBP) ? (int)reg : -1;
        continue;
    }
    return r->bad ? -1 : 0;
}

/* Parse the CIE at `at`; 0 on success. */
static int parse_cie(uintptr_t at, uintptr_t lo, uintptr_t hi, uintptr_t data, cie_t *c)
{
    rd_t r = {(const uint8_t *)at, (const uint8_t *)hi, 0};
    if (at < lo || at >= hi)
        return -1;
    uint64_t len = rd_bytes(&r, 4);
    if (len == 0 || len == 0xffffffffu || len > (uint64_t)(r.end - r.p))
        return -1;
    r.end = r.p + len;
    if (rd_bytes(&r, 4) != 0) /* CIE id */
        return -1;
    uint8_t version = (uint8_t)rd_bytes(&r, 1);
    if (version != 1 && version != 3)
        return -1;
    const char *aug = (const char *)r.p;
    size_t alen = strnlen(aug, (size_t)(r.end - r.p));
    if (alen == (size_t)(r.end - r.p))
        return -1;
    r.p += alen + 1;
    if (strstr(aug, "eh"))
        return -1;
    c->code_align = rd_uleb(&r);
    c->data_align = rd_sleb(&r);
    c->ra_reg = version == 1 ? rd_bytes(&r, 1) : rd_uleb(&r);
    c->fde_enc = PE_ABSPTR;
    c->signal = 0;
    c->z = aug[0] == 'z';
    if (c->z) {
        uint64_t n = rd_uleb(&r);
        if (n > (uint64_t)(r.end - r.p))
            return -1;
        rd_t a = {r.p, r.p + n, 0};
        r.p += n;
        for (const char *s = aug + 1; *s; s++) {
            if (*s == 'R') {
                c->fde_enc = (uint8_t)rd_bytes(&a, 1);
            } else if (*s == 'P') {
                uint8_t enc = (uint8_t)rd_bytes(&a, 1);
                rd_ptr(&a, enc & 0x7f, data); /* skip the personality */
            } else if (*s == 'L') {
                rd_bytes(&a, 1);
            } else if (*s == 'S') {
                c->signal = 1;
            } else if (*s != 'B' && *s != 'G') {
                return -1;
            }
        }
        if (a.bad)
            return -1;
    } else if (aug[0]) {
        return -1;
    }
    c->insns = r;
    return r.bad || c->ra_reg != REG_RA ? -1 : 0;
}

/* FDE address for pc from the hdr's sorted table, or 0 (*none set if the
 * table is sound and no entry starts at or below pc). */
static uintptr_t find_fde(uintptr_t pc, uintptr_t hdr, uintptr_t lo, uintptr_t hi, int *none)
{
    rd_t r = {(const uint8_t *)hdr, (const uint8_t *)hi, 0};
    if (hdr < lo || hdr + 4 > hi)
        return 0;
    uint8_t version = (uint8_t)rd_bytes(&r, 1);
    uint8_t eh_enc = (uint8_t)rd_bytes(&r, 1);
    uint8_t count_enc = (uint8_t)rd_bytes(&r, 1);
    uint8_t table_enc = (uint8_t)rd_bytes(&r, 1);
    if (version != 1 || table_enc != (PE_DATAREL | PE_SDATA4))
        return 0;
    rd_ptr(&r, eh_enc, hdr);
    uint64_t count = rd_ptr(&r, count_enc, hdr);
    if (r.bad || count == 0 || count > (uint64_t)(r.end - r.p) / 8)
        return 0;
    const uint8_t *table = r.p;
    uint64_t a = 0, b = count;
    while (b - a > 1) { /* last entry with initial_loc <= pc */
        uint64_t mid = (a + b) / 2;
        int32_t loc;
        memcpy(&loc, table + mid * 8, 4);
        if ((uintptr_t)((intptr_t)hdr + loc) <= pc)
            a = mid;
        else
            b = mid;
    }
    int32_t loc, fde;
    memcpy(&loc, table + a * 8, 4);
    memcpy(&fde, table + a * 8 + 4, 4);
    if ((uintptr_t)((intptr_t)hdr + loc) > pc) {
        *none = 1;
        return 0;
    }
    return (uintptr_t)((intptr_t)hdr + fde);
}

cfi_rule_t col_dwarf_rule_for(uintptr_t pc, uintptr_t hdr, uintptr_t lo, uintptr_t hi)
{
    cfi_rule_t rule = {0};
    int none = 0;
    uintptr_t fde = find_fde(pc, hdr, lo, hi, &none);
    if (none)
        rule.kind = CFI_RULE_NONE;
    if (!fde || fde < lo || fde + 8 > hi)
        return rule;
    rd_t r = {(const uint8_t *)fde, (const uint8_t *)hi, 0};
    uint64_t len = rd_bytes(&r, 4);
    if (len == 0 || len == 0xffffffffu || len > (uint64_t)(r.end - r.p))
        return rule;
    r.end = r.p + len;
    uintptr_t cie_field = (uintptr_t)r.p;
    uint32_t cie_off = (uint32_t)rd_bytes(&r, 4);
    cie_t c;
    if (cie_off == 0 || parse_cie(cie_field - cie_off, lo, hi, hdr, &c) < 0 || c.signal)
        return rule;
    uintptr_t begin = rd_ptr(&r, c.fde_enc, hdr);
    uintptr_t range = rd_ptr(&r, c.fde_enc & 0x0f, hdr);
    if (r.bad)
        return rule;
    if (pc < begin || pc - begin >= range) { /* the last FDE before pc ends before it */
        rule.kind = CFI_RULE_NONE;
        return rule;
    }
    if (c.z) {
        uint64_t aug_len = rd_uleb(&r);
        if (r.bad || aug_len > (uint64_t)(r.end - r.p))
            return rule;
        r.p += aug_len;
    }
    /* the CIE's program gives the initial row */
    rd_t ci = c.insns;
    state_t base = {REG_RSP, 8, 0, 0, 1, -8};
    if (run(&ci, &c, 0, UINTPTR_MAX, &base, &base, hdr) < 0)
        return rule;
    state_t st = base;
    if (run(&r, &c, begin, pc, &st, &base, hdr) < 0)
        return rule;
    if (st.ra_how == 2) {
        rule.kind = CFI_RULE_LAST;
        return rule;
    }
    if (st.cfa_reg < 0 || st.rbp_how < 0 || st.ra_how != 1 || st.ra_off != -8 ||
        st.cfa_off < 8 || st.cfa_off > INT32_MAX || st.rbp_off < INT16_MIN || st.rbp_off > INT16_MAX)
        return rule;
    rule.kind = CFI_RULE_OK;
    rule.cfa_rbp = st.cfa_reg == REG_RBP;
    rule.cfa_off = (int32_t)st.cfa_off;
    rule.rbp_saved = st.rbp_how == 1;
    rule.rbp_off = (int16_t)st.rbp_off;
    return rule;
}
