/* col_bpf.c - what a seccomp filter would do with one system call.
 *
 * A seccomp filter is a classic BPF program run by the kernel on a struct
 * seccomp_data (the call's number, architecture, instruction pointer and
 * six arguments) at each system call; its return value says whether the
 * call runs, fails with an errno, or stops the thread (SIGSYS, a kill, a
 * tracer or supervisor).  col_seccomp.c runs a filter the program is about
 * to install on the calls the collector makes after start-up, to learn
 * before it goes in whether writing a profile would stop the program.
 *
 * Only the instructions the kernel accepts in a seccomp filter
 * (seccomp_check_filter): loads of the data's 32-bit words, its length,
 * immediates and scratch memory, stores, arithmetic, jumps, returns and
 * the A/X moves.  Anything else, a jump out of the program or a load out
 * of the data, is an answer of "unknown", which the caller takes as "it
 * may stop us".  Filters cannot loop (jumps go forward), so a run is at
 * most one pass over the program. */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "collect/col_internal.h"

/* A's value at a BPF_ALU instruction with operand v; 0 with *ok = 0 for
 * what the kernel would not run: an operation seccomp refuses (BPF_MOD
 * among them), or a division by 0, which ends a classic BPF program with
 * 0 (SECCOMP_RET_KILL_THREAD).  A shift by X uses its low 5 bits, as the
 * kernel's interpreter and JIT do (a constant of 32 or more is refused). */
static uint32_t alu(uint16_t code, uint32_t a, uint32_t v, int *ok)
{
    switch (BPF_OP(code)) {
    case BPF_ADD: return a + v;
    case BPF_SUB: return a - v;
    case BPF_MUL: return a * v;
    case BPF_DIV:
        if (v == 0)
            break;
        return a / v;
    case BPF_OR: return a | v;
    case BPF_AND: return a & v;
    case BPF_XOR: return a ^ v;
    case BPF_LSH:
    case BPF_RSH:
        if (BPF_SRC(code) == BPF_K && v >= 32)
            break;
        return BPF_OP(code) == BPF_LSH ? a << (v & 31) : a >> (v & 31);
    case BPF_NEG: return -a;
    }
    *ok = 0;
    return 0;
}

/* The filter's return value for d, or -1 if this reader cannot tell. */
int64_t col_bpf_run(const struct sock_filter *prog, unsigned len, const struct seccomp_data *d)
{
    uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};
    unsigned char data[sizeof *d];
    memcpy(data, d, sizeof data);
    for (unsigned pc = 0; pc < len; pc++) {
        const struct sock_filter *f = &prog[pc];
        uint32_t k = f->k;
        int ok = 1;
        switch (BPF_CLASS(f->code)) {
        case BPF_LD:
        case BPF_LDX: {
            uint32_t v;
            if (f->code == (BPF_LD | BPF_W | BPF_ABS)) {
                if (k % 4 != 0 || k > sizeof data - 4)
                    return -1;
                memcpy(&v, data + k, 4);
            } else if (BPF_MODE(f->code) == BPF_IMM) {
                v = k;
            } else if (BPF_MODE(f->code) == BPF_MEM && k < BPF_MEMWORDS) {
                v = mem[k];
            } else if (BPF_MODE(f->code) == BPF_LEN) {
                v = (uint32_t)sizeof data;
            } else {
                return -1;
            }
            if (BPF_CLASS(f->code) == BPF_LD)
                a = v;
            else
                x = v;
            break;
        }
        case BPF_ST:
        case BPF_STX:
            if (k >= BPF_MEMWORDS)
                return -1;
            mem[k] = BPF_CLASS(f->code) == BPF_ST ? a : x;
            break;
        case BPF_ALU:
            a = alu(f->code, a, BPF_SRC(f->code) == BPF_X ? x : k, &ok);
            if (!ok)
                return BPF_OP(f->code) == BPF_DIV && BPF_SRC(f->code) == BPF_X ? 0 : -1;
            break;
        case BPF_JMP: {
            uint32_t v = BPF_SRC(f->code) == BPF_X ? x : k;
            unsigned skip;
            switch (BPF_OP(f->code)) {
            case BPF_JA: skip = k; break;
            case BPF_JEQ: skip = a == v ? f->jt : f->jf; break;
            case BPF_JGT: skip = a > v ? f->jt : f->jf; break;
            case BPF_JGE: skip = a >= v ? f->jt : f->jf; break;
            case BPF_JSET: skip = (a & v) ? f->jt : f->jf; break;
            default: return -1;
            }
            if (skip >= len - pc - 1)
                return -1;
            pc += skip;
            break;
        }
        case BPF_RET:
            if (BPF_RVAL(f->code) == BPF_K)
                return k;
            if (BPF_RVAL(f->code) == BPF_A)
                return a;
            return -1;
        case BPF_MISC:
            if (BPF_MISCOP(f->code) == BPF_TAX)
                x = a;
            else if (BPF_MISCOP(f->code) == BPF_TXA)
                a = x;
            else
                return -1;
            break;
        default:
            return -1;
        }
    }
    return -1; /* fell off the end: the kernel refuses such a filter */
}

/* Does a filter returning r (col_bpf_run) let the call run (or log it),
 * or, with errno_ok, fail it with an errno?  Every other action stops the
 * thread or hands the call to someone else; SECCOMP_RET_ERRNO with an
 * errno of 0 skips the call and returns 0, as if it had worked. */
int col_bpf_lets(int64_t r, int errno_ok)
{
    if (r < 0)
        return 0;
    uint32_t action = (uint32_t)r & SECCOMP_RET_ACTION_FULL;
    return action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG ||
           (errno_ok && action == SECCOMP_RET_ERRNO && ((uint32_t)r & SECCOMP_RET_DATA) != 0);
}
