/* an_warnings.c - turn the profile's diagnostics into report warnings.
 *
 * Order (fixed, so reports are reproducible): truncation, not final,
 * newer minor version, skipped records, unknown frees, lost allocations,
 * shadow overwrites, inconsistent counters, then the collector's MESSAGE
 * records in file order.  Symbol warnings are appended later by the
 * report (an_symbols).
 */
#include "analyse/an_warnings.h"

#include "analyse/an_units.h"
#include "heapscope/profile.h"

int an_warnings_add(an_model_t *m)
{
    const pf_profile_t *p = m->prof;
    const an_summary_t *s = &m->sum;
    char a[AN_UNITS_BUF];
    int rc = 0;
    if (p->truncated)
        rc |= an_model_warn(m, "profile truncated: %s; the figures cover what came before",
                            p->truncated_why);
    if (!p->has_end && p->has_totals && (p->totals.flags & PF_TOTALS_SEALED))
        rc |= an_model_warn(m,
                            "profile ends early: the program installed a seccomp filter under "
                            "which heapscope could not write again (below), so \"leaked\" means "
                            "\"live at that moment\" (%s after start)",
                            an_units_time(s->run_time_ns, a));
    else if (!p->has_end)
        rc |= an_model_warn(m,
                            "profile not final: the program did not exit normally (killed, crashed "
                            "or still running), so \"leaked\" means \"live at the last snapshot\" "
                            "(%s after start)",
                            an_units_time(s->run_time_ns, a));
    if (p->major == PF_VERSION_MAJOR && p->minor > PF_VERSION_MINOR)
        rc |= an_model_warn(m,
                            "profile format %u.%u is newer than this heapscope (%d.%d): fields "
                            "it does not know were ignored",
                            (unsigned)p->major, (unsigned)p->minor, PF_VERSION_MAJOR,
                            PF_VERSION_MINOR);
    if (p->skipped)
        rc |= an_model_warn(m, "%s of unknown type skipped",
                            an_units_noun(p->skipped, "record", a));
    /* "what: count (why)", so that the sentence reads the same for 1 */
    if (s->unknown_frees)
        rc |= an_model_warn(m,
                            "frees of pointers heapscope never saw allocated: %s (allocated "
                            "before it started, or through a path it does not hook)",
                            an_units_count(s->unknown_frees, a));
    if (s->untracked_allocations)
        rc |= an_model_warn(m,
                            "allocations not tracked: %s (the collector could not map memory "
                            "to mark them live: address space exhausted); they are in no total "
                            "and their frees count as unknown frees",
                            an_units_count(s->untracked_allocations, a));
    if (s->lost_allocations)
        rc |= an_model_warn(m,
                            "allocations lost: %s (counted in the totals and on the stack "
                            "with no frames, without their own stack: the collector's call "
                            "tree or site table was full)",
                            an_units_count(s->lost_allocations, a));
    if (s->shadow_overwrites)
        rc |= an_model_warn(m,
                            "shadow overwrites: %s (allocations at an address heapscope still "
                            "held live: it missed a free); leak figures may be too high",
                            an_units_count(s->shadow_overwrites, a));
    if (m->overfreed)
        rc |= an_model_warn(m,
                            "counters with more frees than allocations: %s (snapshot taken "
                            "mid-update); their live figures count as 0",
                            an_units_count(m->overfreed, a));
    for (size_t i = 0; i < p->n_messages; i++)
        rc |= an_model_warn(m, "collector: %s", p->messages[i]);
    return rc ? PF_ENOMEM : 0;
}
