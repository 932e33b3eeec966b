/* test_bpf.c - unit tests of the collector's reader of seccomp filters
 * (col_bpf.c): small classic BPF programs whose answers are worked out by
 * hand, one per kind of instruction, and the programs it must refuse to
 * judge (a load outside the data, a jump past the end, falling off it). */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/syscall.h>

#include "collect/col_internal.h"
#include "unit_check.h"


#define RUN(prog, d) col_bpf_run(prog, sizeof prog / sizeof *prog, d)
#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, v)
#define ALLOW SECCOMP_RET_ALLOW
#define KILL SECCOMP_RET_KILL_PROCESS

static struct seccomp_data call(int nr, uint64_t a0, uint64_t a1)
{
    struct seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64};
    d.args[0] = a0;
    d.args[1] = a1;
    return d;
}

/* openat with O_CREAT (bit 6 of args[2]'s low word) fails with EACCES;
 * every other call with a second argument above 10 is killed */
static void test_jumps(void)
{
    struct sock_filter prog[] = {
        LOAD(nr),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0100, 0, 4),
        RET(SECCOMP_RET_ERRNO | 13),
        LOAD(args[1]),
        BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 10, 0, 1),
        RET(KILL),
        RET(ALLOW),
    };
    struct seccomp_data d = call(SYS_openat, 0, 0);
    d.args[2] = 01101; /* O_WRONLY | O_CREAT | O_TRUNC */
    CHECK(RUN(prog, &d) == (SECCOMP_RET_ERRNO | 13));
    d.args[2] = 0; /* O_RDONLY */
    CHECK(RUN(prog, &d) == ALLOW);
    d = call(SYS_close, 3, 11);
    CHECK(RUN(prog, &d) == KILL);
    d = call(SYS_close, 3, 10);
    CHECK(RUN(prog, &d) == ALLOW);
    /* JGE and JA */
    struct sock_filter ge[] = {
        LOAD(args[0]),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 7, 1, 0),
        BPF_STMT(BPF_JMP | BPF_JA, 1),
        RET(KILL),
        RET(ALLOW),
    };
    d = call(SYS_close, 7, 0);
    CHECK(RUN(ge, &d) == KILL);
    d = call(SYS_close, 6, 0);
    CHECK(RUN(ge, &d) == ALLOW);
}

/* ((nr + 3) * 4 - 12) / 4 == nr, and the other operations, by X too:
 * ((((257 << 8) | 5) ^ 1) & 0xffffff) >> 8 == 257 */
static void test_alu(void)
{
    struct sock_filter prog[] = {
        LOAD(nr),
        BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 3),
        BPF_STMT(BPF_ALU | BPF_MUL | BPF_K, 4),
        BPF_STMT(BPF_ALU | BPF_SUB | BPF_K, 12),
        BPF_STMT(BPF_LDX | BPF_IMM, 4),
        BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
        BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 8),
        BPF_STMT(BPF_ALU | BPF_OR | BPF_K, 0x5),
        BPF_STMT(BPF_ALU | BPF_XOR | BPF_K, 0x1),
        BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xffffff),
        BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 8),
        BPF_STMT(BPF_RET | BPF_A, 0),
    };
    struct seccomp_data d = call(257, 0, 0);
    CHECK(RUN(prog, &d) == 257);
    struct sock_filter neg[] = {
        BPF_STMT(BPF_LD | BPF_IMM, 5),
        BPF_STMT(BPF_ALU | BPF_NEG, 0),
        BPF_STMT(BPF_RET | BPF_A, 0),
    };
    CHECK(RUN(neg, &d) == 0xfffffffbu);
    /* a division by an X of 0 ends the program with 0 (SECCOMP_RET_KILL_THREAD) */
    struct sock_filter div0[] = {
        BPF_STMT(BPF_LDX | BPF_IMM, 0),
        BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
        RET(ALLOW),
    };
    CHECK(RUN(div0, &d) == 0);
    /* a shift by X takes X's low 5 bits (33: by 1) */
    struct sock_filter shx[] = {
        BPF_STMT(BPF_LD | BPF_IMM, 6),
        BPF_STMT(BPF_LDX | BPF_IMM, 33),
        BPF_STMT(BPF_ALU | BPF_LSH | BPF_X, 0),
        BPF_STMT(BPF_RET | BPF_A, 0),
    };
    CHECK(RUN(shx, &d) == 12);
    /* what seccomp refuses: BPF_MOD, a shift by a constant of 32 */
    struct sock_filter mod[] = {BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, 3), RET(ALLOW)};
    CHECK(RUN(mod, &d) == -1);
    struct sock_filter sh32[] = {BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 32), RET(ALLOW)};
    CHECK(RUN(sh32, &d) == -1);
}

/* scratch memory, the A/X moves, comparisons with X, the data's length */
static void test_mem_and_x(void)
{
    struct sock_filter prog[] = {
        LOAD(args[0]),
        BPF_STMT(BPF_ST, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0),
        BPF_STMT(BPF_MISC | BPF_TAX, 0),
        BPF_STMT(BPF_STX, 5),
        BPF_STMT(BPF_LDX | BPF_MEM, 3),
        BPF_STMT(BPF_LD | BPF_MEM, 5),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 0, 1), /* len == args[0]? */
        RET(KILL),
        BPF_STMT(BPF_MISC | BPF_TXA, 0),
        BPF_STMT(BPF_RET | BPF_A, 0),
    };
    struct seccomp_data d = call(1, sizeof(struct seccomp_data), 0);
    CHECK(RUN(prog, &d) == KILL);
    d = call(1, 99, 0);
    CHECK(RUN(prog, &d) == 99);
}

/* what the kernel would refuse, or this reader does not take */
static void test_unknown(void)
{
    struct seccomp_data d = call(1, 0, 0);
    struct sock_filter past_data[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64), RET(ALLOW)};
    CHECK(RUN(past_data, &d) == -1);
    struct sock_filter unaligned[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2), RET(ALLOW)};
    CHECK(RUN(unaligned, &d) == -1);
    struct sock_filter half[] = {BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 0), RET(ALLOW)};
    CHECK(RUN(half, &d) == -1);
    struct sock_filter past_end[] = {BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 1, 1), RET(ALLOW)};
    CHECK(RUN(past_end, &d) == -1);
    struct sock_filter no_ret[] = {LOAD(nr)};
    CHECK(RUN(no_ret, &d) == -1);
    struct sock_filter mem[] = {BPF_STMT(BPF_ST, BPF_MEMWORDS), RET(ALLOW)};
    CHECK(RUN(mem, &d) == -1);
}

static void test_lets(void)
{
    CHECK(col_bpf_lets(SECCOMP_RET_ALLOW, 0));
    CHECK(col_bpf_lets(SECCOMP_RET_LOG, 0));
    CHECK(!col_bpf_lets(SECCOMP_RET_ERRNO | 1, 0));
    CHECK(col_bpf_lets(SECCOMP_RET_ERRNO | 1, 1));
    CHECK(!col_bpf_lets(SECCOMP_RET_ERRNO | 0, 1)); /* skipped, returns 0 */
    CHECK(!col_bpf_lets(SECCOMP_RET_TRAP, 1));
    CHECK(!col_bpf_lets(SECCOMP_RET_TRACE, 1));
    CHECK(!col_bpf_lets(SECCOMP_RET_USER_NOTIF, 1));
    CHECK(!col_bpf_lets(SECCOMP_RET_KILL_PROCESS, 1));
    CHECK(!col_bpf_lets(SECCOMP_RET_KILL_THREAD, 1));
    CHECK(!col_bpf_lets(-1, 1));
}

int main(void)
{
    test_jumps();
    test_alu();
    test_mem_and_x();
    test_unknown();
    test_lets();
    return unit_check_done("bpf");
}
